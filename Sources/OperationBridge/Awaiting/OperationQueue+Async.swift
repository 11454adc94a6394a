import Foundation

extension OperationQueue {
    /// Adds `operation` to the queue and returns its success value once it has finished.
    ///
    /// ```swift
    /// let url = try await queue.run(UnfurlURLOperation(shortURL: link))
    /// ```
    ///
    /// An operation that has already started or finished is not added again; its outcome is
    /// awaited. Adding an operation that is pending in another queue is a programmer error
    /// that Foundation traps on.
    ///
    /// - Throws: The operation's typed failure; `Failure.cancellation` when it ended cancelled.
    ///
    /// ## Cancellation
    /// The awaiting task owns the operation: cancelling the task cancels the operation, and the
    /// task gets the operation's own cancellation failure. If the operation has not started it
    /// is answered at once (the queue later finishes it without running it); if it is running,
    /// the call returns when it has finished, so no work outlives the task.
    public func run<Success: Sendable, Failure: CancellationRepresentable>(
        _ operation: AsyncResultOperation<Success, Failure>
    ) async throws(Failure) -> Success {
        enqueueUnlessStarted(operation)
        return try await operation.awaitValue(onTaskCancellation: .cancelOperation, cancellation: .cancellation)
    }

    /// Adds `operation` to the queue and returns its success value once it has finished.
    ///
    /// Same as ``run(_:)-(AsyncResultOperation<Success,Failure>)`` for operations whose
    /// `Failure` is `any Error`.
    ///
    /// - Throws: The operation's failure; `CancellationError` when it ended cancelled without
    ///   a result.
    ///
    /// ## Cancellation
    /// Cancelling the awaiting task cancels the operation, and the task gets the operation's own
    /// cancellation failure (answered at once if it has not started, otherwise when it ends).
    public func run<Success: Sendable>(_ operation: AsyncResultOperation<Success, any Error>) async throws -> Success {
        enqueueUnlessStarted(operation)
        return try await operation.awaitValue(onTaskCancellation: .cancelOperation, cancellation: CancellationError())
    }

    /// Adds `operation` to the queue and returns its result once it has finished.
    ///
    /// Use it for operations whose `Failure` cannot express cancellation.
    ///
    /// - Returns: The result, or `nil` when the operation was cancelled without a result (its
    ///   `Failure` cannot express cancellation, see ``CancellationRepresentable``).
    ///
    /// ## Cancellation
    /// Cancelling the awaiting task cancels the operation. If it has not started, the call
    /// returns at once with the operation's own cancellation failure (`nil` when `Failure`
    /// cannot express one); if it is running, the call returns its result when it has finished.
    public func runForOutcome<Success: Sendable, Failure>(
        _ operation: AsyncResultOperation<Success, Failure>
    ) async -> Result<Success, Failure>? {
        enqueueUnlessStarted(operation)
        // Finished, or given up because the task was cancelled before the operation started:
        // either way the answer is the operation's own result, so it does not depend on whether
        // the queue got to finish the cancelled operation first.
        _ = await OperationWaiter.waitForFinish(of: operation, onTaskCancellation: .cancelOperation)
        return operation.result
    }

    /// Adds any operation to the queue and returns once it has finished.
    ///
    /// The counterpart of ``run(_:)-(AsyncResultOperation<Success,Failure>)`` for operations
    /// without a typed result: `BlockOperation`, your own `Operation` subclasses.
    ///
    /// - Throws: `CancellationError` when the awaiting task was cancelled before the operation
    ///   finished.
    ///
    /// ## Cancellation
    /// Cancelling the awaiting task cancels the operation. If it has not started, the call
    /// throws at once; if it is running, it waits until the operation has finished, then
    /// returns normally (the operation did end).
    public func runUntilFinished(_ operation: Operation) async throws(CancellationError) {
        enqueueUnlessStarted(operation)
        guard await OperationWaiter.waitForFinish(of: operation, onTaskCancellation: .cancelOperation) else {
            throw CancellationError()
        }
    }

    /// Suspends until every operation in the queue has finished, barrier blocks included, and
    /// also the operations added while waiting — the async counterpart of Foundation's blocking
    /// `waitUntilAllOperationsAreFinished()`, which Swift 6 forbids in async code.
    ///
    /// Named differently from the blocking call on purpose: adding the package to a target must
    /// not change which function existing code calls (Swift 5 clients included).
    ///
    /// Never blocks a thread. A suspended queue is waited for until it is resumed and drained.
    ///
    /// ```swift
    /// try await queue.waitForAllOperations()
    /// ```
    ///
    /// ## How it waits
    /// It awaits the operations the queue lists, then passes a marker operation of its own through
    /// the queue: barrier blocks are not listed, but an operation added after a barrier block
    /// runs only once the barrier has run, on Linux and Apple platforms alike. It repeats until
    /// the marker finds nothing left. It adds no barrier block of its own: on Linux, a barrier
    /// block that `cancelAllOperations()` cancels while an asynchronous operation is running is
    /// freed while that operation still refers to it, and crashes the queue when the operation
    /// finishes (see <doc:Design>).
    ///
    /// - Throws: `CancellationError` when the awaiting task is cancelled first. The queue's
    ///   operations are not cancelled.
    public func waitForAllOperations() async throws(CancellationError) {
        waiting: while true {
            let pending = operations.filter { !$0.isFinished }
            if !pending.isEmpty {
                try await pending.waitForCompletion()
                continue
            }
            let marker = QueueMarker()
            let passed = CompletionSlot<Bool>()
            // A callback, not a waiter: callbacks run once the queue has unlisted the marker.
            _ = FinishObservation.observe(marker) { passed.fulfill(true) }
            addOperation(marker)
            let finished = await withTaskCancellationHandler {
                await passed.wait()
            } onCancel: {
                passed.fulfill(false)
            }
            guard finished else { throw CancellationError() }
            // Cancelled by `cancelAllOperations()`, the marker finished without waiting for the
            // barrier blocks before it: look again.
            if marker.isCancelled { continue }
            // Finished operations stay listed until the queue's bookkeeping, which runs right
            // after their finish notifications, has removed them.
            while true {
                let listed = operations
                if listed.isEmpty { return }
                if listed.contains(where: { !$0.isFinished }) { continue waiting }
                await Task.yield()
                if Task.isCancelled { throw CancellationError() }
            }
        }
    }

    private func enqueueUnlessStarted(_ operation: Operation) {
        guard !operation.hasBeenStarted else { return }
        // The awaiting task owns the operation. When it is already cancelled, cancel the
        // operation before the queue can start it: the cancellation handler installed next would
        // come too late if a worker thread picked the operation up at once, and its work would run.
        if Task.isCancelled { operation.cancel() }
        addOperation(operation)
    }
}

/// The operation ``Foundation/OperationQueue/waitForAllOperations()`` passes through a queue to
/// wait for its barrier blocks. It does nothing; cancelled, it finishes at once, and when released
/// it unlinks itself from the barriers it was waiting for (see ``AsyncOperation``).
private final class QueueMarker: AsyncOperation, @unchecked Sendable {
    override func main() {
        finish()
    }
}
