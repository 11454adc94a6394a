import Foundation
import OperationBridge
import Testing

/// Records what a group's observer saw at its `willFinish`.
private final class FinishRecord: @unchecked Sendable {
    private let lock = NSLock()
    private var finishes = 0
    private var unfinishedChildrenAtFinish = 0
    private var childrenAtFinish = 0

    func record(children: [Operation]) {
        let unfinished = children.filter { !$0.isFinished }.count
        lock.withLock {
            finishes += 1
            unfinishedChildrenAtFinish += unfinished
            childrenAtFinish = children.count
        }
    }

    var snapshot: (finishes: Int, unfinished: Int, children: Int) {
        lock.withLock { (finishes, unfinishedChildrenAtFinish, childrenAtFinish) }
    }
}

private struct FinishRecorder: OperationObserver {
    let record: FinishRecord
    func willFinish(_ group: GroupOperation<Void, any Error>) { record.record(children: group.children) }
}

/// The outcome of one addition from outside the group.
private enum Addition {
    case accepted(Operation)
    case refused(Operation)
}

@Suite("Group children added while it runs: stress")
struct GroupAddChildStressTests {
    /// Additions from outside race the last child's finish (and, in some rounds, a cancellation);
    /// children add work to their own group while they run. Every round: the group finishes
    /// exactly once, after every child that joined; an addition either joined (and ran or was
    /// cancelled, finishing before the group) or was refused with `.finished` (and was left
    /// untouched); additions from a running child are never refused; `childEvents` reports one
    /// finish per child. Thousands of rounds; `OPERATIONBRIDGE_STRESS_SCALE` scales them and
    /// `OPERATIONBRIDGE_STRESS_SEED` replays a run.
    @Test func additionsRaceTheLastFinish() async throws {
        var generator = Stress.generator(for: "GroupAddChildStressTests.additionsRaceTheLastFinish")
        let queue = OperationQueue()
        var refusedTotal = 0
        var acceptedTotal = 0
        for _ in 0..<Stress.iterations(2_000) {
            let producedRefused = LockedBox(0)
            let initialCount = Int.random(in: 1...3, using: &generator)
            let group = try GroupOperation<Void, any Error>([])
            var initial: [Operation] = []
            for index in 0..<initialCount {
                if index == 0 && Bool.random(using: &generator) {
                    // A child that adds work to its own group while it runs.
                    let produced = BlockOperation {}
                    initial.append(
                        TaskOperation { [weak group] () async -> Void in
                            do throws(GroupOperationError) {
                                try group?.addChild(produced)
                            } catch {
                                producedRefused.withLock { $0 += 1 }
                            }
                        })
                } else {
                    initial.append(BlockOperation {})
                }
            }
            try group.addChildren(initial)
            let record = FinishRecord()
            group.bridge.addObserver(FinishRecorder(record: record))
            let events = group.childEvents
            let additions = Int.random(in: 1...4, using: &generator)
            let cancels = Int.random(in: 0..<8, using: &generator) == 0
            let outcomes = LockedBox<[Addition]>([])
            let adderDone = Gate()
            // The adder starts as the group starts, so that its additions meet the children's
            // finishes.
            let adder: @Sendable () -> Void = {
                for index in 0..<additions {
                    let child: Operation =
                        index % 2 == 0 ? BlockOperation {} : ProbeResultOperation<PlainError>(.inMain(.success(index)))
                    do throws(GroupOperationError) {
                        try group.addChild(child)
                        outcomes.withLock { $0.append(.accepted(child)) }
                    } catch {
                        guard case .finished = error else { preconditionFailure("unexpected \(error)") }
                        outcomes.withLock { $0.append(.refused(child)) }
                    }
                }
                adderDone.open()
            }
            let adderStarted = LockedBox(false)
            let startAdder: @Sendable () -> Void = {
                guard
                    adderStarted.withLock({ started in
                        !started
                            && {
                                started = true; return true
                            }()
                    })
                else { return }
                DispatchQueue.global().async(execute: adder)
            }
            group.bridge.addObserver(StartHook(action: startAdder))
            queue.addOperation(group)
            if cancels { group.cancel() }
            try await group.bridge.waitForCompletion()
            // A group cancelled before it started never ran: its adder runs now, and is refused.
            startAdder()
            await adderDone.wait()

            let snapshot = record.snapshot
            #expect(snapshot.finishes == 1)
            #expect(snapshot.unfinished == 0)
            #expect(producedRefused.current == 0)
            let children = group.children
            #expect(snapshot.children == children.count)
            for outcome in outcomes.current {
                switch outcome {
                case .accepted(let child):
                    acceptedTotal += 1
                    #expect(child.isFinished)
                    #expect(children.contains { $0 === child })
                case .refused(let child):
                    refusedTotal += 1
                    #expect(!child.isFinished && !child.isExecuting && !child.isCancelled)
                    #expect(!children.contains { $0 === child })
                }
            }
            var finishedEvents = 0
            for await event in events where event.event == .finished { finishedEvents += 1 }
            #expect(finishedEvents == children.count)
            if !group.isCancelled {
                #expect(group.result != nil && group.firstFailure == nil)
                #expect(children.allSatisfy { !$0.isCancelled })
            }
        }
        print("GroupAddChildStressTests: \(acceptedTotal) additions joined, \(refusedTotal) refused after the finish")
    }
}

/// Calls `action` as the group is about to run its children.
private struct StartHook: OperationObserver {
    let action: @Sendable () -> Void
    func willExecute(_ group: GroupOperation<Void, any Error>) { action() }
}
