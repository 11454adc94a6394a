import Foundation
import OperationBridge
import Testing

/// The bridge does not keep finished operations alive: once the awaiting is over and the test
/// drops its references, the operation is released — for the package's operations (observed
/// directly), for foreign ones (observed through a sentinel operation), and when the waiter
/// was cancelled before the operation finished.
///
/// Each operation holds a ``ReleaseProbe``; the test waits for its signal (no polling), then
/// checks a weak reference.
@Suite(.timeLimit(Stress.timeLimit(minutes: 1)))
struct AwaitingLifetimeTests {
    enum Kind: String, CaseIterable, Sendable {
        /// An `AsyncResultOperation` subclass: observed directly.
        case resultOperation
        /// A hand-written `Operation` subclass: observed through a sentinel.
        case legacySubclass
        /// A `BlockOperation`: observed through a sentinel.
        case blockOperation
    }

    /// An operation of `kind` that cannot finish before `release()` is called. No thread is
    /// blocked meanwhile.
    struct Subject {
        let operation: Operation
        let release: @Sendable () -> Void

        init(_ kind: Kind, probe: ReleaseProbe) {
            switch kind {
            case .resultOperation:
                let operation = ManualResultOperation<Int, TransferError>(probe: probe)
                self.operation = operation
                // Called before the operation has started, the finish is honoured by `start()`.
                release = { [weak operation] in operation?.finish(with: .success(1)) }
            case .legacySubclass:
                let gate = Gate()
                operation = LegacyAsyncOperation(gate: gate, probe: probe)
                release = { gate.open() }
            case .blockOperation:
                let hold = Hold()
                operation = hold.hold(BlockOperation { withExtendedLifetime(probe) {} })
                release = { hold.release() }
            }
        }
    }

    @Test("Released after it was awaited to the end", arguments: Kind.allCases)
    func releasedAfterAwaiting(kind: Kind) async throws {
        let released = OneShotSignal()
        let weak: WeakBox<Operation>
        do {
            let subject = Subject(kind, probe: ReleaseProbe(released))
            weak = WeakBox(subject.operation)
            let operation = subject.operation
            let awaiter = Task { try await operation.bridge.waitForCompletion() }
            OperationQueue().addOperation(operation)
            subject.release()
            try await awaiter.value
        }
        #expect(await released.wait())
        #expect(weak.object == nil)
    }

    @Test("Released after run-and-await", arguments: Kind.allCases)
    func releasedAfterRunAndAwait(kind: Kind) async throws {
        let released = OneShotSignal()
        let weak: WeakBox<Operation>
        do {
            let subject = Subject(kind, probe: ReleaseProbe(released))
            weak = WeakBox(subject.operation)
            let operation = subject.operation
            let queue = OperationQueue()
            let runner = Task { try await queue.runUntilFinished(operation) }
            subject.release()
            try await runner.value
        }
        #expect(await released.wait())
        #expect(weak.object == nil)
    }

    @Test("Released when the waiter was cancelled before the operation finished", arguments: Kind.allCases)
    func releasedAfterWaiterCancelledBeforeFinish(kind: Kind) async {
        let released = OneShotSignal()
        let weak: WeakBox<Operation>
        do {
            let subject = Subject(kind, probe: ReleaseProbe(released))
            weak = WeakBox(subject.operation)
            let operation = subject.operation
            let queue = OperationQueue()
            queue.addOperation(operation)
            let awaiter = Task { try await operation.bridge.waitForCompletion() }
            awaiter.cancel()
            await #expect(throws: CancellationError.self) { try await awaiter.value }
            #expect(!operation.isFinished)
            // The operation ends after its waiter has gone.
            let finished = Task { try await operation.bridge.waitForCompletion() }
            subject.release()
            try? await finished.value
        }
        #expect(await released.wait())
        #expect(weak.object == nil)
    }

    @Test("Released when it was never queued and its waiter was cancelled", arguments: Kind.allCases)
    func releasedNeverQueuedAfterWaiterCancelled(kind: Kind) async {
        let released = OneShotSignal()
        let weak: WeakBox<Operation>
        do {
            let subject = Subject(kind, probe: ReleaseProbe(released))
            weak = WeakBox(subject.operation)
            let operation = subject.operation
            let awaiter = Task { try await operation.bridge.waitForCompletion() }
            awaiter.cancel()
            await #expect(throws: CancellationError.self) { try await awaiter.value }
        }
        #expect(await released.wait())
        #expect(weak.object == nil)
    }

    @Test("Released after run-and-await was cancelled on a suspended queue", arguments: Kind.allCases)
    func releasedAfterRunCancelledOnSuspendedQueue(kind: Kind) async {
        let released = OneShotSignal()
        let weak: WeakBox<Operation>
        let queue = OperationQueue()
        queue.isSuspended = true
        do {
            let subject = Subject(kind, probe: ReleaseProbe(released))
            weak = WeakBox(subject.operation)
            let operation = subject.operation
            let runner = Task { try await queue.runUntilFinished(operation) }
            runner.cancel()
            await #expect(throws: CancellationError.self) { try await runner.value }
            #expect(operation.isCancelled)
        }
        queue.isSuspended = false  // the queue finishes the cancelled operation without running it
        #expect(await released.wait())
        #expect(weak.object == nil)
    }

    @Test("Many operations awaited by many tasks are all released")
    func manyAwaitedOperationsReleased() async {
        let count = 200
        let allReleased = CountdownSignal(count)
        var weakReferences: [WeakBox<ManualResultOperation<Int, TransferError>>] = []
        do {
            let queue = OperationQueue()
            let operations = (0..<count).map { _ in
                ManualResultOperation<Int, TransferError>(probe: ReleaseProbe { allReleased.arrive() })
            }
            weakReferences = operations.map { WeakBox($0) }
            let answers = await withTaskGroup(of: AwaitAnswer.self) { group in
                for (index, operation) in operations.enumerated() {
                    let style = AwaitStyle.allCases[index % AwaitStyle.allCases.count]
                    group.addTask { await style.answer(from: operation) }
                    queue.addOperation(operation)
                }
                for (index, operation) in operations.enumerated() {
                    await operation.started.wait()
                    operation.finish(with: .success(index))
                }
                var answers: [AwaitAnswer] = []
                for await answer in group { answers.append(answer) }
                return answers
            }
            #expect(answers.count == count)
        }
        #expect(await allReleased.wait())
        #expect(weakReferences.allSatisfy { $0.object == nil })
    }
}
