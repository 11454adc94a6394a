import Foundation
import OperationBridge
import Testing

// Scenarios from ProcedureKit's GroupTests (adding to a running group, before it is queued, from
// an observer of another child, children produced by a child, additional children of a
// cancelled group) and AdvancedOperation's GroupOperationTests (testAddingOperationWhileExecuting).

/// A classic `AsyncOperation` that adds an operation to its group from its own `main()`, through
/// a weak reference it was given.
private final class ProducingOperation: AsyncOperation, @unchecked Sendable {
    weak var group: GroupOperation<Void, any Error>?
    let produced: Operation
    let addError = LockedBox<GroupOperationError?>(nil)

    init(producing produced: Operation) {
        self.produced = produced
        super.init()
    }

    override func main() {
        do throws(GroupOperationError) {
            try group?.addChild(produced)
        } catch {
            addError.withLock { $0 = error }
        }
        finish()
    }
}

/// Adds `child` to `group` when the observed operation is about to run.
private struct AddWhenExecuting<Observed: AsyncOperation>: OperationObserver {
    let group: GroupOperation<Void, any Error>
    let child: Operation

    func willExecute(_ operation: Observed) {
        try? group.addChild(child)
    }
}

@Suite("Group children added while it runs")
struct GroupAddChildTests {
    @Test("A child added to a running group runs, and the group finishes only after it")
    func addToRunningGroup() async throws {
        let gate = Gate()
        let first = ProbeResultOperation<PlainError>(.whenOpened(gate, .success(1)))
        let group = try GroupOperation<Void, any Error>([first])
        let queue = OperationQueue()
        queue.addOperation(group)
        await first.started.wait()
        let extra = ProbeResultOperation<PlainError>(.byTest)
        try group.addChild(extra)
        #expect(group.children.count == 2 && group.children[1] === extra)
        gate.open()
        await extra.started.wait()
        try await first.bridge.waitForCompletion()
        #expect(!group.isFinished)  // the added child still runs
        extra.finish(with: .success(2))
        try await group.bridge.waitForCompletion()
        #expect(extra.mainCalls.value == 1)
        #expect(try group.result?.get() != nil)
    }

    @Test("Children added before the group is queued (an empty group included) run when it starts")
    func addBeforeQueued() async throws {
        let group = try GroupOperation<Void, any Error>([])
        let child = ProbeResultOperation<PlainError>(.inMain(.success(1)))
        let block = BlockOperation {}
        let after = BlockOperation {}
        after.addDependency(block)
        try group.addChildren([child, block, after])
        #expect(child.mainCalls.value == 0 && !block.isFinished)  // nothing runs before the group
        try await OperationQueue().run(group)
        #expect(child.mainCalls.value == 1 && block.isFinished && after.isFinished)
        #expect(group.children.count == 3)
    }

    @Test("A child adds an operation to its group while it runs (AdvancedOperation: adding while executing)")
    func childProducesOperation() async throws {
        let produced = BlockOperation {}
        let producer = ProducingOperation(producing: produced)
        let group = try GroupOperation<Void, any Error>([producer])
        producer.group = group
        try await OperationQueue().run(group)
        #expect(producer.addError.current == nil)
        #expect(produced.isFinished)
        #expect(group.children.count == 2 && group.children.contains { $0 === produced })
    }

    @Test("A TaskOperation child reaches its group through a weak capture; the group waits for what it adds")
    func taskChildAddsDependentWork() async throws {
        let released = try await Self.runGroupWhoseChildAddsWork()
        #expect(released.object == nil)  // the weak capture makes no cycle: the group is freed
    }

    private static func runGroupWhoseChildAddsWork() async throws -> WeakBox<GroupOperation<Void, any Error>> {
        let gate = Gate()
        let group = try GroupOperation<Void, any Error>([])
        let produced = ProbeResultOperation<PlainError>(.whenOpened(gate, .success(7)))
        let producer = TaskOperation { [weak group] () async throws -> Void in
            try group?.addChild(produced)
        }
        try group.addChild(producer)
        let queue = OperationQueue()
        queue.addOperation(group)
        await produced.started.wait()
        try await producer.bridge.waitForCompletion()
        #expect(!group.isFinished)  // ProcedureKit: does not finish before produced operations
        gate.open()
        try await group.bridge.waitForCompletion()
        #expect(produced.result == .success(7))
        #expect(group.children.count == 2)
        return WeakBox(group)
    }

    @Test("A child added from an observer of another child joins before that child runs")
    func addFromObserverOfAnotherChild() async throws {
        let first = ProbeResultOperation<PlainError>(.inMain(.success(1)))
        let added = ProbeResultOperation<PlainError>(.inMain(.success(2)))
        let group = try GroupOperation<Void, any Error>([first])
        first.bridge.addObserver(AddWhenExecuting(group: group, child: added))
        try await OperationQueue().run(group)
        #expect(first.mainCalls.value == 1 && added.mainCalls.value == 1)
        #expect(group.children.map(ObjectIdentifier.init) == [first, added].map(ObjectIdentifier.init))
    }

    @Test("Adding after the group finished throws .finished and leaves the operation untouched")
    func addAfterFinished() async throws {
        let group = try GroupOperation<Void, any Error>([BlockOperation {}])
        try await OperationQueue().run(group)
        let late = ProbeResultOperation<PlainError>(.inMain(.success(1)))
        #expect(throws: GroupOperationError.self) { try group.addChild(late) }
        do {
            try group.addChildren([late])
            Issue.record("added to a finished group")
        } catch {
            guard case .finished = error else { throw error }
            #expect("\(error)".contains("takes no more children"))
        }
        #expect(!late.isCancelled && !late.isFinished && !late.isExecuting && late.mainCalls.value == 0)
        #expect(group.children.count == 1)
    }

    @Test("A cancelled group that has not finished takes the child and cancels it: it never runs")
    func addWhileCancelling() async throws {
        let stubborn = ManualResultOperation<Int, CancellationError>()
        let group = try GroupOperation<Void, any Error>([stubborn])
        let queue = OperationQueue()
        queue.addOperation(group)
        await stubborn.started.wait()
        group.cancel()
        await stubborn.cancelRequested.wait()
        let extra = ProbeResultOperation<PlainError>(.inMain(.success(1)))
        try group.addChild(extra)
        try await extra.bridge.waitForCompletion()
        #expect(extra.isCancelled && extra.mainCalls.value == 0)
        #expect(!group.isFinished)  // the stubborn child still runs
        stubborn.finish()
        try await group.bridge.waitForCompletion()
        #expect(group.isCancelled)

        // Cancelled before it was queued: the same, and the group finishes when its queue starts it.
        let pending = try GroupOperation<Void, any Error>([])
        pending.cancel()
        let child = ProbeResultOperation<PlainError>(.inMain(.success(1)))
        try pending.addChild(child)
        try await child.bridge.waitForCompletion()
        #expect(child.isCancelled && child.mainCalls.value == 0)
        try await queue.runUntilFinished(pending)
        #expect(pending.isCancelled)
    }

    @Test("A time-limited group times out the children added after its time ran out")
    func addAfterTimeout() async throws {
        let stubborn = ManualResultOperation<Int, CancellationError>()
        let group = try GroupOperation<Void, any Error>([stubborn])
        let clock = TestClock()
        group.bridge.limitRunningTime(to: .seconds(10), clock: clock)
        let queue = OperationQueue()
        queue.addOperation(group)
        await stubborn.started.wait()
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(10))
        await stubborn.cancelRequested.wait()
        let extra = ProbeResultOperation<PlainError>(.inMain(.success(1)))
        try group.addChild(extra)
        try await extra.bridge.waitForCompletion()
        #expect(extra.bridge.isTimedOut && extra.mainCalls.value == 0)
        stubborn.finish()
        try await group.bridge.waitForCompletion()
        #expect(group.bridge.isTimedOut)
    }

    @Test("cancelAll: a child added after a failure is cancelled; the group fails with the first failure")
    func cancelAllAppliesToAddedChildren() async throws {
        let gate = Gate()
        let failing = ProbeResultOperation<PlainError>(.whenOpened(gate, .failure(.boom(1))))
        let stubborn = ManualResultOperation<Int, CancellationError>()
        let group = try GroupOperation<Void, any Error>([failing, stubborn], failurePolicy: .cancelAll)
        OperationQueue().addOperation(group)
        await stubborn.started.wait()
        gate.open()
        await stubborn.cancelRequested.wait()  // the failure cancelled it
        let extra = ProbeResultOperation<PlainError>(.inMain(.success(2)))
        try group.addChild(extra)
        try await extra.bridge.waitForCompletion()
        #expect(extra.isCancelled && extra.mainCalls.value == 0)
        stubborn.finish()
        try await group.bridge.waitForCompletion()
        #expect(group.firstFailure?.operation === failing)
        #expect((group.result?.failureValue as? PlainError) == .boom(1))
    }

    @Test("cancelDependents: an added package step depending on a failed child is stopped with its failure")
    func addedDependentOfFailedChildIsStopped() async throws {
        let gate = Gate()
        let failing = ProbeResultOperation<StepError>(.inMain(.failure(.planned(1))))
        let running = ProbeResultOperation<StepError>(.whenOpened(gate, .success(1)))
        let group = try GroupOperation<Void, any Error>([failing, running])
        OperationQueue().addOperation(group)
        try await failing.bridge.waitForCompletion()
        await running.started.wait()
        // Added after the failure: stopped at once, as if it had been there.
        let late = TaskOperation { () async -> Int in 1 }
        late.addDependency(failing)
        // Added before its dependency fails: stopped when it does.
        let failingLater = ProbeResultOperation<StepError>(.byTest)
        let waiting = TaskOperation { () async -> Int in 2 }
        waiting.addDependency(failingLater)
        // Not the package's: runs as Foundation runs it, whatever the outcome.
        let glue = BlockOperation {}
        glue.addDependency(failing)
        try group.addChildren([late, failingLater, waiting, glue])
        try await late.bridge.waitForCompletion()
        #expect(late.result == nil && late.bridge.upstreamFailure != nil && !late.isCancelled)
        await failingLater.started.wait()
        failingLater.finish(with: .failure(.planned(2)))
        try await waiting.bridge.waitForCompletion()
        #expect(waiting.bridge.upstreamFailure != nil && waiting.result == nil)
        try await glue.bridge.waitForCompletion()
        #expect(!glue.isCancelled)
        gate.open()
        try await group.bridge.waitForCompletion()
        #expect(group.firstFailure?.operation === failing)
    }

    @Test(
        "The collecting result includes added children's values in the order they joined; a failure of one fails the group"
    )
    func collectingIncludesAddedChildren() async throws {
        let gate = Gate()
        let first = ProbeResultOperation<PlainError>(.whenOpened(gate, .success(1)))
        let group = try GroupOperation(collecting: [first, first])  // listed twice: its value twice
        let queue = OperationQueue()
        queue.addOperation(group)
        await first.started.wait()
        try group.addChildren([
            ProbeResultOperation<PlainError>(.inMain(.success(2))), BlockOperation {},
            ProbeResultOperation<PlainError>(.inMain(.success(3))),
        ])
        gate.open()
        #expect(try await queue.runForOutcomeValue(group) == [1, 1, 2, 3])

        let failingGroup = try GroupOperation(collecting: [ProbeResultOperation<PlainError>(.inMain(.success(1)))])
        try failingGroup.addChild(ProbeResultOperation<PlainError>(.inMain(.failure(.boom(9)))))
        #expect(await queue.runForOutcome(failingGroup)?.failureValue == .boom(9))
        #expect(failingGroup.firstFailure?.index == 1)

        let aggregate = try GroupOperation<Void, any Error>([BlockOperation {}])
        let cancelledGlue = BlockOperation {}
        cancelledGlue.cancel()
        try aggregate.addChild(cancelledGlue)
        let outcome = await queue.runForOutcome(aggregate)
        #expect(outcome?.failureValue is UpstreamFailedError)
    }

    @Test("The progress grows by one unit per added child, its Foundation view included, and completes")
    func progressGrows() async throws {
        let gate = Gate()
        let first = ProbeResultOperation<PlainError>(.whenOpened(gate, .success(1)))
        let group = try GroupOperation<Void, any Error>([first, BlockOperation {}])
        let progress = group.bridge.operationProgress
        let view = group.progress
        #expect(progress.totalUnitCount == 2 && view.totalUnitCount == 2)
        let queue = OperationQueue()
        queue.addOperation(group)
        await first.started.wait()
        try group.addChildren([BlockOperation {}, ProbeResultOperation<PlainError>(.inMain(.success(2)))])
        #expect(progress.totalUnitCount == 4 && view.totalUnitCount == 4)
        gate.open()
        try await group.bridge.waitForCompletion()
        let snapshot = progress.snapshot
        #expect(snapshot.totalUnitCount == 4 && snapshot.completedUnitCount == 4 && snapshot.isFinished)
        #expect(view.fractionCompleted == 1)
    }

    @Test("childEvents reports added children with their index, and ends only when the group finishes")
    func childEventsOfAddedChildren() async throws {
        let gate = Gate()
        let first = ProbeResultOperation<PlainError>(.whenOpened(gate, .success(1)))
        let group = try GroupOperation<Void, any Error>([first])
        let early = group.childEvents  // subscribed before the addition
        let queue = OperationQueue()
        queue.addOperation(group)
        await first.started.wait()
        let added = ProbeResultOperation<PlainError>(.inMain(.success(2)))
        let glue = BlockOperation {}
        try group.addChildren([added, glue])
        gate.open()
        try await group.bridge.waitForCompletion()
        for events in [early, group.childEvents] {
            var seen: [String] = []
            for await event in events { seen.append("\(event.index):\(event.event)") }
            #expect(seen.filter { $0.hasPrefix("0:") } == ["0:started", "0:finished"])
            #expect(seen.filter { $0.hasPrefix("1:") } == ["1:started", "1:finished"])
            #expect(seen.filter { $0.hasPrefix("2:") } == ["2:finished"])
        }

        // An empty group's sequence stays open until the group finishes: children may still join.
        let empty = try GroupOperation<Void, any Error>([])
        let events = empty.childEvents
        try empty.addChild(BlockOperation {})
        try await queue.run(empty)
        var count = 0
        for await _ in events { count += 1 }
        #expect(count == 1)
    }

    @Test("An operation already a child is left as it is; the group itself or a cycle throws and adds nothing")
    func duplicatesAndCycles() async throws {
        let child = BlockOperation {}
        let group = try GroupOperation<Void, any Error>([child])
        try group.addChild(child)
        try group.addChildren([child, child])
        #expect(group.children.count == 1)
        #expect(throws: GroupOperationError.self) { try group.addChild(group) }
        let a = BlockOperation {}
        let b = BlockOperation {}
        a.addDependency(b)
        b.addDependency(a)
        do {
            try group.addChildren([BlockOperation {}, a, b])
            Issue.record("a cycle was added")
        } catch {
            guard case .dependencyCycle(let operations) = error else { throw error }
            #expect(Set(operations.map(ObjectIdentifier.init)) == Set([a, b].map(ObjectIdentifier.init)))
        }
        // Through a child: the added operation depends on a child that depends on it. (In a
        // group of its own, never run: Linux's Foundation leaves an operation not ready after
        // `removeDependency(_:)`, so the cycles are only broken to free the operations.)
        let other = try GroupOperation<Void, any Error>([])
        let pendingChild = ProbeResultOperation<PlainError>(.inMain(.success(1)))
        try other.addChild(pendingChild)
        let loop = BlockOperation {}
        pendingChild.addDependency(loop)
        loop.addDependency(pendingChild)
        #expect(throws: GroupOperationError.self) { try other.addChild(loop) }
        #expect(other.children.count == 1)
        for (operation, dependency) in [(pendingChild, loop), (loop, pendingChild), (a, b), (b, a)] {
            operation.removeDependency(dependency)
        }
        #expect(group.children.count == 1)
        try await OperationQueue().run(group)
    }

    @Test("maxConcurrentChildren also limits added children")
    func widthAppliesToAddedChildren() async throws {
        let level = HighWaterMark()
        func child() -> TaskOperation<Int, Never> {
            TaskOperation { () async -> Int in
                level.enter()
                await Task.yield()
                level.leave()
                return 1
            }
        }
        let group = try GroupOperation(collecting: [child()], maxConcurrentChildren: 2)
        for _ in 0..<10 { try group.addChild(child()) }
        let values = await OperationQueue().run(group)
        #expect(values?.count == 11)
        #expect(level.maximum <= 2)
    }
}
