import Foundation

extension OperationQueue {
    /// Runs `operation` on this queue and returns its success value once its outcome is final.
    ///
    /// ```swift
    /// let url = try await queue.run(UnfurlURLOperation(shortURL: link))   // throws(UnfurlError)
    /// ```
    ///
    /// An operation is never added twice: one that is already pending in a queue (added by the
    /// package, or by your own `addOperation(_:)` to this queue) is only awaited, and so is one
    /// that has started or finished. See "Queue admission"
    /// in <doc:Design> for how the package tells.
    ///
    /// - Throws: The operation's typed failure; `Failure.cancellation` when it ended cancelled.
    ///   When the time limit ran out first: `Failure.timeout` where `Failure` adopts
    ///   ``TimeoutRepresentable``, otherwise `Failure.cancellation` with the operation timed out
    ///   (``Bridge/isTimedOut`` tells the two apart).
    ///
    /// - Parameters:
    ///   - operation: The operation to run; one already in a queue, started or finished is only
    ///     awaited.
    ///   - limit: A time limit (see ``TimeLimit``): when the time is up first, the operation is
    ///     cancelled as timed out and the call returns at once
    ///     (``TimeoutBehavior/cancelAndReturn``) or once the work has ended
    ///     (``TimeoutBehavior/cancelAndWait``). No timer outlives the call.
    ///
    /// ## Cancellation
    /// The awaiting task owns the operation: cancelling the task cancels the operation, and the
    /// task gets the operation's own cancellation failure. If the operation has not started it
    /// is answered at once (the queue later finishes it without running it); if it is running,
    /// the call returns when it has finished, so no work outlives the task. Cancelling the
    /// operation itself does not cancel the task: the call then answers the operation's
    /// cancellation failure once the operation has finished (at once if it had not started).
    @inlinable
    public func run<Success: Sendable, Failure: CancellationRepresentable>(
        _ operation: AsyncResultOperation<Success, Failure>,
        within limit: TimeLimit? = nil
    ) async throws(Failure) -> Success {
        try await operation.awaitValue(
            in: self, admitting: true, onTaskCancellation: .cancelOperation, mapping: OwnFailure<Failure>.self,
            timeout: limit?.makeWaitTimeout())
    }

    /// Runs `operation` on this queue and returns its success value once its outcome is final.
    ///
    /// Same as ``run(_:within:)-(AsyncResultOperation<Success,Failure>,_)`` for operations whose
    /// `Failure` is `any Error`.
    ///
    /// - Throws: The operation's failure; `CancellationError` when it ended cancelled without
    ///   a result; the ``UpstreamFailedError`` when an upstream failure kept it from running; an
    ///   ``OperationTimeoutError`` when the time limit ran out first.
    ///
    /// - Parameters:
    ///   - operation: The operation to run; one already in a queue, started or finished is only
    ///     awaited.
    ///   - limit: A time limit (see ``TimeLimit``): when the time is up first, the operation is
    ///     cancelled as timed out and the call returns at once
    ///     (``TimeoutBehavior/cancelAndReturn``) or once the work has ended
    ///     (``TimeoutBehavior/cancelAndWait``). No timer outlives the call.
    ///
    /// ## Cancellation
    /// Cancelling the awaiting task cancels the operation, and the task gets the operation's own
    /// cancellation failure (answered at once if it has not started, otherwise when it ends).
    @inlinable
    public func run<Success: Sendable>(
        _ operation: AsyncResultOperation<Success, any Error>,
        within limit: TimeLimit? = nil
    ) async throws -> Success {
        try await operation.awaitValue(
            in: self, admitting: true, onTaskCancellation: .cancelOperation, mapping: UntypedFailure.self,
            timeout: limit?.makeWaitTimeout())
    }

    /// Runs `operation` on this queue and returns its success value once its outcome is final;
    /// throws a typed ``OperationFailure`` that tells its failure, a cancellation and an upstream
    /// failure apart.
    ///
    /// For every `Failure` — and the way to run operations whose `Failure` can express neither
    /// cancellation nor an upstream failure (most legacy error enums), for which `run(_:within:)` is not
    /// available: no `cancelled` case has to be added to them.
    ///
    /// ```swift
    /// do {
    ///     let record = try await queue.runForOutcomeValue(lookup)   // throws(OperationFailure<LookupError>)
    /// } catch .failed(.notFound) {
    ///     showEmpty()
    /// } catch {
    ///     // .cancelled, or .upstreamFailed(let cause)
    /// }
    /// ```
    ///
    /// Enqueuing as in ``run(_:within:)-(AsyncResultOperation<Success,Failure>,_)``.
    ///
    /// - Throws: ``OperationFailure/failed(_:)``, ``OperationFailure/cancelled``,
    ///   ``OperationFailure/upstreamFailed(_:)``, ``OperationFailure/conditionFailed(_:)`` (a failed
    ///   condition that `Failure` does not say itself), or ``OperationFailure/timedOut`` when the
    ///   time limit ran out first.
    ///
    /// - Parameters:
    ///   - operation: The operation to run; one already in a queue, started or finished is only
    ///     awaited.
    ///   - limit: A time limit (see ``TimeLimit``): when the time is up first, the operation is
    ///     cancelled as timed out and the call returns at once
    ///     (``TimeoutBehavior/cancelAndReturn``) or once the work has ended
    ///     (``TimeoutBehavior/cancelAndWait``). No timer outlives the call.
    ///
    /// ## Cancellation
    /// The awaiting task owns the operation: cancelling it cancels the operation, and the call
    /// throws ``OperationFailure/cancelled`` — at once if the operation has not started,
    /// otherwise when it has finished.
    @inlinable
    public func runForOutcomeValue<Success: Sendable, Failure>(
        _ operation: AsyncResultOperation<Success, Failure>,
        within limit: TimeLimit? = nil
    ) async throws(OperationFailure<Failure>) -> Success {
        try await operation.awaitValue(
            in: self, admitting: true, onTaskCancellation: .cancelOperation, mapping: WrappedFailure<Failure>.self,
            timeout: limit?.makeWaitTimeout())
    }

    /// Not available: `Failure` can express neither cancellation nor an upstream failure.
    ///
    /// Use ``runForOutcomeValue(_:within:)`` (throws ``OperationFailure``), ``runForOutcome(_:within:)`` (a
    /// `Result?`), or adopt ``CancellationRepresentable`` in `Failure`.
    @available(
        *, unavailable,
        message:
            "Failure cannot express cancellation: use 'try await queue.runForOutcomeValue(op)' (throws OperationFailure<Failure>) or 'await queue.runForOutcome(op)', or adopt CancellationRepresentable in Failure"
    )
    public func run<Success: Sendable, Failure>(
        _ operation: AsyncResultOperation<Success, Failure>,
        within limit: TimeLimit? = nil
    ) async throws(Failure) -> Success {
        fatalError("unavailable")
    }

    /// Runs `operation`, which cannot fail, on this queue and returns its value once its outcome
    /// is final; `nil` when it ended without one (it was cancelled before its work stored a value:
    /// before it ran, or while it ran — the first outcome wins).
    ///
    /// ```swift
    /// let count = await queue.run(TaskOperation { await index.count() })   // Int?
    /// ```
    ///
    /// Enqueuing as in ``run(_:within:)-(AsyncResultOperation<Success,Failure>,_)``. When the time
    /// limit runs out first, the call returns `nil` and the operation is timed out
    /// (``Bridge/isTimedOut``).
    ///
    /// - Parameters:
    ///   - operation: The operation to run; one already in a queue, started or finished is only
    ///     awaited.
    ///   - limit: A time limit (see ``TimeLimit``): when the time is up first, the operation is
    ///     cancelled as timed out and the call returns at once
    ///     (``TimeoutBehavior/cancelAndReturn``) or once the work has ended
    ///     (``TimeoutBehavior/cancelAndWait``). No timer outlives the call.
    ///
    /// ## Cancellation
    /// The awaiting task owns the operation: cancelling it cancels the operation; the call
    /// returns `nil` at once if the operation had not started, otherwise once it has finished.
    @inlinable
    public func run<Success: Sendable>(
        _ operation: AsyncResultOperation<Success, Never>,
        within limit: TimeLimit? = nil
    ) async -> Success? {
        try? await operation.awaitValue(
            in: self, admitting: true, onTaskCancellation: .cancelOperation, mapping: WrappedFailure<Never>.self,
            timeout: limit?.makeWaitTimeout())
    }

    /// Runs `operation` on this queue and returns its result once its outcome is final.
    ///
    /// Use it when you want the `Result` itself. Enqueuing as in
    /// ``run(_:within:)-(AsyncResultOperation<Success,Failure>,_)``.
    ///
    /// - Returns: The result, or `nil` when the operation ended without one (cancelled, timed
    ///   out, or stopped by an upstream failure, and its `Failure` cannot express that; see
    ///   ``CancellationRepresentable``, ``TimeoutRepresentable`` and ``Bridge/upstreamFailure``).
    ///
    /// - Parameters:
    ///   - operation: The operation to run; one already in a queue, started or finished is only
    ///     awaited.
    ///   - limit: A time limit (see ``TimeLimit``): when the time is up first, the operation is
    ///     cancelled as timed out and the call returns at once
    ///     (``TimeoutBehavior/cancelAndReturn``) or once the work has ended
    ///     (``TimeoutBehavior/cancelAndWait``). No timer outlives the call.
    ///
    /// ## Cancellation
    /// Cancelling the awaiting task cancels the operation. If it has not started, the call
    /// returns at once with the operation's own cancellation failure (`nil` when `Failure`
    /// cannot express one); if it is running, the call returns its result when it has finished.
    @inlinable
    public func runForOutcome<Success: Sendable, Failure>(
        _ operation: AsyncResultOperation<Success, Failure>,
        within limit: TimeLimit? = nil
    ) async -> Result<Success, Failure>? {
        await operation.awaitOutcome(
            in: self, admitting: true, onTaskCancellation: .cancelOperation, timeout: limit?.makeWaitTimeout())
    }

    /// Runs any operation on this queue and returns once it has finished.
    ///
    /// The counterpart of ``run(_:within:)-(AsyncResultOperation<Success,Failure>,_)`` for operations
    /// without a typed result: `BlockOperation`, your own `Operation` subclasses. An operation
    /// already pending in a queue, started or finished is only awaited (for operations that are
    /// not the package's, this looks through the queue's list: linear in its length).
    ///
    /// - Throws: `CancellationError` when the awaiting task was cancelled before the operation
    ///   finished.
    ///
    /// ## Cancellation
    /// Cancelling the awaiting task cancels the operation. If it has not started, the call
    /// throws at once; if it is running, it waits until the operation has finished, then
    /// returns normally (the operation did end).
    public func runUntilFinished(_ operation: Operation) async throws(CancellationError) {
        guard
            await OperationWaiter.waitForFinish(
                of: operation, in: self, onTaskCancellation: .cancelOperation, admitting: true)
        else {
            throw CancellationError()
        }
    }

    /// Runs any operation on this queue and returns once it has finished, within `limit`.
    ///
    /// As ``runUntilFinished(_:)``; when the time is up first, the operation is cancelled (the
    /// package's operations as timed out) and the call throws an ``OperationTimeoutError``.
    ///
    /// - Parameters:
    ///   - operation: The operation to run; one already in a queue, started or finished is only
    ///     awaited.
    ///   - limit: A time limit (see ``TimeLimit``): when the time is up first, the operation is
    ///     cancelled as timed out and the call returns at once
    ///     (``TimeoutBehavior/cancelAndReturn``) or once the work has ended
    ///     (``TimeoutBehavior/cancelAndWait``). No timer outlives the call.
    ///
    /// - Throws: ``OperationTimeoutError`` when the time ran out first; `CancellationError` when
    ///   the awaiting task was cancelled before the operation started. Untyped, as the `any Error`
    ///   awaits: it throws one of two errors.
    ///
    /// ## Cancellation
    /// As ``runUntilFinished(_:)``: cancelling the awaiting task cancels the operation.
    public func runUntilFinished(
        _ operation: Operation,
        within limit: TimeLimit
    ) async throws {
        try await OperationWaiter.waitForCompletion(
            of: operation, in: self, onTaskCancellation: .cancelOperation, limit: limit, admitting: true)
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
        QueueSlots.checkDrain(of: self)
        let watchdog = StuckAwaitWatchdog.watchDrain(of: self)
        defer { watchdog?.cancel() }
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

    /// Admits an operation that is not the package's and that the caller's wait observes,
    /// releasing the admission registry's claim when it finishes (see
    /// ``OperationWaiter/waitForFinish(of:in:until:onTaskCancellation:timeout:admitting:)``).
    ///
    /// The observation may fire before the claim is taken — the operation, pending in a queue the
    /// package cannot name or started by hand, finished in between — and would then never
    /// release it: a claim left on a finished operation is released here. Releasing twice is
    /// harmless.
    func admit(observed operation: Operation) {
        admit(operation, releasingForeignClaimOnFinish: false)
        if operation.isFinished { Self.releaseForeignClaim(on: operation) }
    }
}

/// The operation ``Foundation/OperationQueue/waitForAllOperations()`` passes through a queue to
/// wait for its barrier blocks. It does nothing; cancelled, it finishes at once, and when released
/// it unlinks itself from the barriers it was waiting for (see ``AsyncOperation``).
private final class QueueMarker: AsyncOperation, @unchecked Sendable {
    /// The package's own marker is no work of the user's: it does not count toward the queue's progress.
    override var countsTowardQueueProgress: Bool { false }

    override func main() {
        finish()
    }
}
