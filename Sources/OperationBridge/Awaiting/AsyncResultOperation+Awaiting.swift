import Foundation

extension AsyncResultOperation where Success: Sendable {
    /// The operation's result, once it is final.
    ///
    /// Works whether the operation is queued, started by hand, already finished, or not queued
    /// yet (it then waits until it is queued and finishes). An outcome decided before the
    /// operation started — it was cancelled, or given its result early — is answered at once,
    /// even if the operation is never queued. Never blocks a thread; raises the operation's
    /// quality of service to the awaiting task's priority.
    ///
    /// ```swift
    /// switch await download.outcome {
    /// case .success(let data)?: show(data)
    /// case .failure(let error)?: report(error)
    /// case nil: break  // cancelled, and the error type cannot express cancellation
    /// }
    /// ```
    ///
    /// - Returns: The result, or `nil` when the operation ended without one: it was cancelled,
    ///   or an upstream failure kept it from running (see
    ///   ``AsyncOperation/upstreamFailure``), and its `Failure` cannot express that.
    ///
    /// ## Cancellation
    /// Cancelling the awaiting task stops the wait at once and returns `nil`; the operation is
    /// not cancelled (other tasks may be waiting for it). To tie the operation to the task, use
    /// ``Foundation/OperationQueue/runForOutcome(_:)``.
    public var outcome: Result<Success, Failure>? {
        get async {
            await OperationWaiter.waitForFinish(of: self, until: .outcome, onTaskCancellation: .stopWaiting)
                ? result : nil
        }
    }

    /// The operation's success value, once its outcome is final; throws a typed
    /// ``OperationFailure`` that tells its failure, a cancellation and an upstream failure apart.
    ///
    /// For every `Failure` — and the way to await operations whose `Failure` can express neither
    /// cancellation nor an upstream failure (most legacy error enums), for which `value` is not
    /// available: no `cancelled` case has to be added to them.
    ///
    /// ```swift
    /// do {
    ///     let record = try await lookup.outcomeValue  // throws(OperationFailure<LookupError>)
    /// } catch .failed(let error) {
    ///     report(error)
    /// } catch {
    ///     // .cancelled, or .upstreamFailed(let cause)
    /// }
    /// ```
    ///
    /// Works whether the operation is queued, started by hand, already finished, or not queued
    /// yet; an outcome decided before it started is answered at once. Never blocks a thread;
    /// raises the operation's quality of service to the awaiting task's priority.
    ///
    /// - Throws: ``OperationFailure/failed(_:)`` with the operation's failure;
    ///   ``OperationFailure/cancelled`` when it ended cancelled;
    ///   ``OperationFailure/upstreamFailed(_:)`` when an upstream failure kept it from running.
    ///
    /// ## Cancellation
    /// Cancelling the awaiting task stops the wait at once and throws
    /// ``OperationFailure/cancelled``; the operation is not cancelled.
    public var outcomeValue: Success {
        get async throws(OperationFailure<Failure>) {
            try await awaitValue(onTaskCancellation: .stopWaiting, mapping: WrappedFailure<Failure>.self)
        }
    }

    /// Not available: `Failure` can express neither cancellation nor an upstream failure.
    ///
    /// Use ``outcomeValue`` (throws ``OperationFailure``), ``outcome`` (a `Result?`), or adopt
    /// ``CancellationRepresentable`` in `Failure`.
    @available(
        *, unavailable,
        message:
            "Failure cannot express cancellation: use 'try await op.outcomeValue' (throws OperationFailure<Failure>) or 'await op.outcome', or adopt CancellationRepresentable in Failure"
    )
    public var value: Success {
        get async throws(Failure) { fatalError("unavailable") }
    }

    /// Waits until the outcome is final and returns the success value, or throws what `mapping`
    /// makes of the operation's failure, cancellation or upstream failure.
    ///
    /// When the awaiting task was cancelled first: with ``OperationWaiter/TaskCancellation/stopWaiting``
    /// it throws `mapping.cancelled()`; with ``OperationWaiter/TaskCancellation/cancelOperation``
    /// the operation was cancelled, and its own outcome (usually its cancellation failure) is
    /// answered.
    func awaitValue<Mapping: FailureMapping>(
        in queue: OperationQueue? = nil,
        onTaskCancellation: OperationWaiter.TaskCancellation,
        mapping: Mapping.Type
    ) async throws(Mapping.Thrown) -> Success where Mapping.Failure == Failure {
        let final = await OperationWaiter.waitForFinish(
            of: self,
            in: queue,
            until: .outcome,
            onTaskCancellation: onTaskCancellation
        )
        return try valueAfterWaiting(final: final, onTaskCancellation: onTaskCancellation, mapping: mapping)
    }

    /// What ``awaitValue(in:onTaskCancellation:mapping:)`` answers once the wait has ended:
    /// `final` tells whether the outcome is final.
    func valueAfterWaiting<Mapping: FailureMapping>(
        final: Bool,
        onTaskCancellation: OperationWaiter.TaskCancellation,
        mapping: Mapping.Type
    ) throws(Mapping.Thrown) -> Success where Mapping.Failure == Failure {
        guard final || onTaskCancellation == .cancelOperation else { throw mapping.cancelled() }
        switch result {
        case .success(let value):
            return value
        case .failure(let error):
            throw mapping.failed(error)
        case nil:
            if let cause = upstreamFailure { throw mapping.upstreamFailed(cause) }
            if isTimedOut { throw mapping.timedOut() }
            throw mapping.cancelled()
        }
    }
}

extension AsyncResultOperation where Success: Sendable, Failure: CancellationRepresentable {
    /// The operation's success value, once its outcome is final; throws its typed failure.
    ///
    /// ```swift
    /// let url = try await unfurl.value   // throws(UnfurlError)
    /// ```
    ///
    /// Works whether the operation is queued, started by hand, already finished, or not queued
    /// yet; an outcome decided before it started (cancelled, or given its result early) is
    /// answered at once. Never blocks a thread; raises the operation's quality of service to the
    /// awaiting task's priority.
    ///
    /// - Throws: The operation's failure; `Failure.cancellation` when it ended cancelled.
    ///
    /// ## Cancellation
    /// Cancelling the awaiting task stops the wait at once and throws `Failure.cancellation`;
    /// the operation is not cancelled (other tasks may be waiting for it). To tie the operation
    /// to the task, use ``Foundation/OperationQueue/run(_:)-(AsyncResultOperation<Success,Failure>)``.
    public var value: Success {
        get async throws(Failure) {
            try await awaitValue(onTaskCancellation: .stopWaiting, mapping: OwnFailure<Failure>.self)
        }
    }
}

extension AsyncResultOperation where Success: Sendable, Failure == any Error {
    /// The operation's success value, once its outcome is final; throws its failure.
    ///
    /// Works whether the operation is queued, started by hand, already finished, or not queued
    /// yet; an outcome decided before it started is answered at once. Never blocks a thread;
    /// raises the operation's quality of service to the awaiting task's priority.
    ///
    /// - Throws: The operation's failure; `CancellationError` when it ended cancelled without
    ///   a result.
    ///
    /// ## Cancellation
    /// Cancelling the awaiting task stops the wait at once and throws `CancellationError`; the
    /// operation is not cancelled (other tasks may be waiting for it).
    public var value: Success {
        get async throws {
            try await awaitValue(onTaskCancellation: .stopWaiting, mapping: UntypedFailure.self)
        }
    }
}

extension AsyncResultOperation where Success: Sendable, Failure == Never {
    /// The operation's value, once its outcome is final; `nil` when it ended without one.
    ///
    /// For operations that cannot fail, such as `TaskOperation { 42 }` or `queue.addTask { … }`
    /// with a non-throwing closure. They can still be cancelled before their closure runs, and
    /// `Never` cannot say so: the value is then `nil`.
    ///
    /// ```swift
    /// let answer = await queue.addTask { 6 * 7 }.value   // Int?
    /// ```
    ///
    /// Works whether the operation is queued, started by hand, already finished, or not queued
    /// yet; an outcome decided before it started is answered at once. Never blocks a thread.
    ///
    /// ## Cancellation
    /// Cancelling the awaiting task stops the wait at once and returns `nil`; the operation is
    /// not cancelled.
    public var value: Success? {
        get async {
            try? await awaitValue(onTaskCancellation: .stopWaiting, mapping: WrappedFailure<Failure>.self)
        }
    }
}
