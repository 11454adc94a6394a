import Foundation
import OperationBridge
import Testing

// Scenarios from ProcedureKit's ProcedureObserver and BlockObserver tests (will-execute before the
// work, will-finish with the errors before the finish, did-add-child from groups, observers of
// cancelled procedures) and its GroupTests (the group does not finish before its children: every
// child has finished in the group's will-finish).

/// What an observer saw at `willFinish` of a `ManualResultOperation<Int, PlainError>`.
private struct SeenAtWillFinish: Sendable, Equatable {
    var result: Result<Int, PlainError>?
    var isFinished: Bool
    var isExecuting: Bool
    var awaiterReturned: Bool
    var dependentStarted: Bool
    var whenFinishedCalled: Bool
}

/// Records the moments of a `ManualResultOperation<Int, PlainError>` and what was visible then.
private struct RecordingObserver: OperationObserver {
    let events: Recorder<String>
    let seen: LockedBox<SeenAtWillFinish?>
    let awaiterReturned: LockedBox<Bool>
    let dependentStarted: LockedBox<Bool>
    let whenFinishedCalled: LockedBox<Bool>

    func willExecute(_ operation: ManualResultOperation<Int, PlainError>) {
        events.append("willExecute(executing: \(operation.isExecuting))")
    }

    func willFinish(_ operation: ManualResultOperation<Int, PlainError>) {
        events.append("willFinish")
        seen.withLock {
            $0 = SeenAtWillFinish(
                result: operation.result, isFinished: operation.isFinished, isExecuting: operation.isExecuting,
                awaiterReturned: awaiterReturned.current, dependentStarted: dependentStarted.current,
                whenFinishedCalled: whenFinishedCalled.current)
        }
    }
}

/// An observer for operations of any class, holding a token whose release the tests watch.
private struct CountingObserver<Observed: AsyncOperation>: OperationObserver {
    final class Token: Sendable {}
    let token = Token()
    let counts = LockedBox<[String: Int]>([:])

    func willExecute(_ operation: Observed) { counts.withLock { $0["willExecute", default: 0] += 1 } }
    func willFinish(_ operation: Observed) { counts.withLock { $0["willFinish", default: 0] += 1 } }
}

/// Records the children a group is told of, and whether they had all finished at its finish.
private struct ChildObserver: OperationObserver {
    let told = Recorder<ObjectIdentifier>()
    let unfinishedAtFinish = LockedBox<Int?>(nil)

    func didAddChild(_ child: Operation, to group: GroupOperation<Void, any Error>) {
        told.append(ObjectIdentifier(child))
    }

    func willFinish(_ group: GroupOperation<Void, any Error>) {
        unfinishedAtFinish.withLock { $0 = group.children.filter { !$0.isFinished }.count }
    }
}

/// Cancels the operation it observes as its work is about to run.
private struct CancelOnExecute: OperationObserver {
    func willExecute(_ operation: CancellationProbe) { operation.cancel() }
}

/// Records whether its work saw its cancellation.
private final class CancellationProbe: AsyncOperation, @unchecked Sendable {
    let sawCancellation = LockedBox<Bool?>(nil)
    override func main() {
        sawCancellation.withLock { $0 = isCancelled }
        finish()
    }
}

@Suite("Operation observers")
struct OperationObserverTests {
    @Test("willExecute runs on the starting thread, executing, right before main()")
    func willExecuteBeforeMain() async throws {
        let events = Recorder<String>()
        let operation = ManualResultOperation<Int, PlainError>(events: events)
        operation.bridge.addObserver(
            RecordingObserver(
                events: events, seen: LockedBox(nil), awaiterReturned: LockedBox(false),
                dependentStarted: LockedBox(false), whenFinishedCalled: LockedBox(false)))
        operation.start()  // by hand: the observer runs inside this call
        #expect(events.all == ["willExecute(executing: true)", "main"])
        operation.finish(with: .success(1))
        #expect(events.all == ["willExecute(executing: true)", "main", "willFinish"])
    }

    @Test("willFinish has the final result before isFinished, awaiters, dependents and whenFinished")
    func willFinishOrdering() async throws {
        let events = Recorder<String>()
        let seen = LockedBox<SeenAtWillFinish?>(nil)
        let awaiterReturned = LockedBox(false)
        let dependentStarted = LockedBox(false)
        let whenFinishedCalled = LockedBox(false)
        let operation = ManualResultOperation<Int, PlainError>(events: events)
        operation.bridge.addObserver(
            RecordingObserver(
                events: events, seen: seen, awaiterReturned: awaiterReturned, dependentStarted: dependentStarted,
                whenFinishedCalled: whenFinishedCalled))
        let dependent = BlockOperation { dependentStarted.withLock { $0 = true } }
        dependent.addDependency(operation)
        let told = Gate()
        operation.bridge.whenFinished(on: .dispatchQueue(.global())) {
            whenFinishedCalled.withLock { $0 = true }
            told.open()
        }
        let queue = OperationQueue()
        queue.addOperation(operation)
        queue.addOperation(dependent)
        let awaiter = Task {
            let outcome = await operation.bridge.outcome
            awaiterReturned.withLock { $0 = true }
            return outcome
        }
        await operation.started.wait()
        operation.finish(with: .success(42))
        #expect(await awaiter.value == .success(42))
        try await dependent.bridge.waitForCompletion()
        await told.wait()
        #expect(
            seen.current
                == SeenAtWillFinish(
                    result: .success(42), isFinished: false, isExecuting: true, awaiterReturned: false,
                    dependentStarted: false, whenFinishedCalled: false))
        #expect(events.all.filter { $0 == "willFinish" }.count == 1)
    }

    @Test("An operation cancelled before it starts: no willExecute, willFinish with the cancellation")
    func cancelledBeforeStart() async throws {
        let observer = CountingObserver<ManualResultOperation<Int, CancellationError>>()
        let operation = ManualResultOperation<Int, CancellationError>()
        operation.bridge.addObserver(observer)
        operation.cancel()
        try await OperationQueue().runUntilFinished(operation)
        #expect(observer.counts.current == ["willFinish": 1])
        #expect(operation.mainRunCount == 0)
        #expect(operation.result?.failureValue != nil)
    }

    @Test("A generic observer works for any class; the operation lets go of it once finished")
    func genericObserverReleased() async throws {
        let (counts, token) = try await Self.observeTaskOperation()
        #expect(counts == ["willExecute": 1, "willFinish": 1])
        #expect(token.object == nil)
    }

    private static func observeTaskOperation() async throws -> (
        [String: Int], WeakBox<CountingObserver<TaskOperation<Int, Never>>.Token>
    ) {
        let observer = CountingObserver<TaskOperation<Int, Never>>()
        let token = WeakBox(observer.token)
        let operation = TaskOperation { () async -> Int in 7 }
        operation.bridge.addObserver(observer)
        #expect(await OperationQueue().run(operation) == 7)
        return (observer.counts.current, token)
    }

    @Test("An observer registered on a finished operation is told nothing and not kept")
    func registeredAfterFinish() async throws {
        let operation = ProbeOperation()
        try await OperationQueue().runUntilFinished(operation)
        var observer: CountingObserver<ProbeOperation>? = CountingObserver<ProbeOperation>()
        let token = WeakBox(observer!.token)
        let counts = observer!.counts
        operation.bridge.addObserver(observer!)
        observer = nil
        #expect(counts.current.isEmpty)
        #expect(token.object == nil)
    }

    @Test("Cancelling from willExecute: the work sees the cancellation")
    func cancelFromWillExecute() async throws {
        let operation = CancellationProbe()
        operation.bridge.addObserver(CancelOnExecute())
        try await OperationQueue().runUntilFinished(operation)
        #expect(operation.sawCancellation.current == true)
        #expect(operation.isCancelled)
    }

    @Test("didAddChild: the children so far at registration, then each added one exactly once, even added concurrently")
    func didAddChild() async throws {
        let first = BlockOperation {}
        let gate = Gate()
        let second = ProbeResultOperation<PlainError>(.whenOpened(gate, .success(1)))  // keeps the group running
        let group = try GroupOperation<Void, any Error>([first, second])
        let observer = ChildObserver()
        group.bridge.addObserver(observer)
        #expect(observer.told.all == [ObjectIdentifier(first), ObjectIdentifier(second)])
        let added = (0..<200).map { _ in BlockOperation {} }
        let queue = OperationQueue()
        queue.addOperation(group)
        let late = ChildObserver()  // registered while children are being added
        DispatchQueue.concurrentPerform(iterations: added.count) { index in
            if index == added.count / 2 { group.bridge.addObserver(late) }
            try? group.addChild(added[index])
        }
        gate.open()
        try await group.bridge.waitForCompletion()
        let expected = [ObjectIdentifier(first), ObjectIdentifier(second)] + added.map(ObjectIdentifier.init)
        #expect(observer.told.all.count == expected.count)
        #expect(Set(observer.told.all) == Set(expected))
        #expect(late.told.all.count == expected.count && Set(late.told.all) == Set(expected))
        #expect(observer.unfinishedAtFinish.current == 0)  // ProcedureKit: not before every child
    }
}
