import Foundation

extension OperationQueue {
    /// Runs `operation` on this queue and returns its success value, if its outcome is final
    /// within `timeout`; throws its typed failure otherwise — `Failure.timeout` when the time
    /// ran out.
    ///
    /// ```swift
    /// let page = try await queue.run(FetchOperation(url), timeout: .seconds(10))   // throws(FetchError)
    /// ```
    ///
    /// Enqueuing as in ``run(_:)-(AsyncResultOperation<Success,Failure>)``. The time is
    /// measured from the call, so it includes the time the operation waits for its queue and
    /// its dependencies.
    ///
    /// - Parameters:
    ///   - operation: The operation to run; one already pending, started or finished is only
    ///     awaited.
    ///   - timeout: How long to wait, measured on `clock` from now. Zero or negative: the time
    ///     is up at once (an outcome that is already final is still answered).
    ///   - clock: The clock that measures it; `ContinuousClock` unless you pass another.
    ///   - onTimeout: What happens when the time is up (see ``TimeoutBehavior``). Either way the
    ///     operation is cancelled; with ``TimeoutBehavior/cancelAndReturn`` (the default) the
    ///     call returns at once even if the operation ignores cancellation, and the operation
    ///     keeps its queue slot until it really ends.
    /// - Throws: `Failure.timeout` when the time ran out first; otherwise as
    ///   ``run(_:)-(AsyncResultOperation<Success,Failure>)``.
    ///
    /// ## Cancellation
    /// The awaiting task owns the operation: cancelling the task cancels the operation, as in
    /// ``run(_:)-(AsyncResultOperation<Success,Failure>)``. No timer outlives the call.
    public func run<Success: Sendable, Failure: TimeoutRepresentable, C: Clock<Duration>>(
        _ operation: AsyncResultOperation<Success, Failure>,
        timeout: Duration,
        clock: C = ContinuousClock(),
        onTimeout: TimeoutBehavior = .cancelAndReturn
    ) async throws(Failure) -> Success {
        try await runOwned(
            operation, mapping: OwnFailure<Failure>.self,
            limit: WaitTimeout(timeout: timeout, clock: clock, behavior: onTimeout))
    }

    /// Not available: `Failure` cannot express a timeout.
    ///
    /// Use ``runForOutcomeValue(_:timeout:clock:onTimeout:)`` (throws ``OperationFailure``, with
    /// ``OperationFailure/timedOut``), or adopt ``TimeoutRepresentable`` in `Failure`.
    @available(
        *, unavailable,
        message:
            "Failure cannot express a timeout: use 'try await queue.runForOutcomeValue(op, timeout:)' (throws OperationFailure<Failure>, with .timedOut), or adopt TimeoutRepresentable in Failure"
    )
    public func run<Success: Sendable, Failure, C: Clock<Duration>>(
        _ operation: AsyncResultOperation<Success, Failure>,
        timeout: Duration,
        clock: C = ContinuousClock(),
        onTimeout: TimeoutBehavior = .cancelAndReturn
    ) async throws(Failure) -> Success {
        fatalError("unavailable")
    }

    /// Runs `operation` on this queue and returns its success value, if its outcome is final by
    /// `deadline`; throws its typed failure otherwise — `Failure.timeout` when the time ran out.
    ///
    /// As ``run(_:timeout:clock:onTimeout:)-(AsyncResultOperation<Success,Failure>,_,_,_)``,
    /// with an instant of `clock`: a deadline already passed means the time is up at once.
    ///
    /// ## Cancellation
    /// Cancelling the awaiting task cancels the operation. No timer outlives the call.
    public func run<Success: Sendable, Failure: TimeoutRepresentable, C: Clock<Duration>>(
        _ operation: AsyncResultOperation<Success, Failure>,
        deadline: C.Instant,
        clock: C = ContinuousClock(),
        onTimeout: TimeoutBehavior = .cancelAndReturn
    ) async throws(Failure) -> Success {
        try await runOwned(
            operation, mapping: OwnFailure<Failure>.self,
            limit: WaitTimeout(deadline: deadline, clock: clock, behavior: onTimeout))
    }

    /// Runs `operation`, whose `Failure` is `any Error`, on this queue and returns its success
    /// value, if its outcome is final by `deadline`; throws its failure otherwise — an
    /// ``OperationTimeoutError`` when the time ran out.
    ///
    /// ## Cancellation
    /// Cancelling the awaiting task cancels the operation. No timer outlives the call.
    public func run<Success: Sendable, C: Clock<Duration>>(
        _ operation: AsyncResultOperation<Success, any Error>,
        deadline: C.Instant,
        clock: C = ContinuousClock(),
        onTimeout: TimeoutBehavior = .cancelAndReturn
    ) async throws -> Success {
        try await runOwned(
            operation, mapping: UntypedFailure.self,
            limit: WaitTimeout(deadline: deadline, clock: clock, behavior: onTimeout))
    }

    /// Runs `operation` on this queue and returns its success value, if its outcome is final
    /// within `timeout`; throws its failure otherwise — an ``OperationTimeoutError`` when the
    /// time ran out.
    ///
    /// As ``run(_:timeout:clock:onTimeout:)-(AsyncResultOperation<Success,Failure>,_,_,_)``,
    /// for operations whose `Failure` is `any Error`.
    ///
    /// ## Cancellation
    /// Cancelling the awaiting task cancels the operation. No timer outlives the call.
    public func run<Success: Sendable, C: Clock<Duration>>(
        _ operation: AsyncResultOperation<Success, any Error>,
        timeout: Duration,
        clock: C = ContinuousClock(),
        onTimeout: TimeoutBehavior = .cancelAndReturn
    ) async throws -> Success {
        try await runOwned(
            operation, mapping: UntypedFailure.self,
            limit: WaitTimeout(timeout: timeout, clock: clock, behavior: onTimeout))
    }

    /// Runs `operation` on this queue and returns its success value, if its outcome is final
    /// within `timeout`; throws a typed ``OperationFailure`` otherwise —
    /// ``OperationFailure/timedOut`` when the time ran out.
    ///
    /// For every `Failure`. As ``runForOutcomeValue(_:)``, with the time limit of
    /// ``run(_:timeout:clock:onTimeout:)-(AsyncResultOperation<Success,Failure>,_,_,_)``.
    ///
    /// ## Cancellation
    /// Cancelling the awaiting task cancels the operation, and the call throws
    /// ``OperationFailure/cancelled``. No timer outlives the call.
    public func runForOutcomeValue<Success: Sendable, Failure, C: Clock<Duration>>(
        _ operation: AsyncResultOperation<Success, Failure>,
        timeout: Duration,
        clock: C = ContinuousClock(),
        onTimeout: TimeoutBehavior = .cancelAndReturn
    ) async throws(OperationFailure<Failure>) -> Success {
        try await runOwned(
            operation, mapping: WrappedFailure<Failure>.self,
            limit: WaitTimeout(timeout: timeout, clock: clock, behavior: onTimeout))
    }

    /// Runs `operation` on this queue and returns its success value, if its outcome is final by
    /// `deadline`; throws a typed ``OperationFailure`` otherwise —
    /// ``OperationFailure/timedOut`` when the time ran out.
    ///
    /// As ``runForOutcomeValue(_:timeout:clock:onTimeout:)``, with an instant of `clock`: a
    /// deadline already passed means the time is up at once.
    ///
    /// ## Cancellation
    /// Cancelling the awaiting task cancels the operation, and the call throws
    /// ``OperationFailure/cancelled``. No timer outlives the call.
    public func runForOutcomeValue<Success: Sendable, Failure, C: Clock<Duration>>(
        _ operation: AsyncResultOperation<Success, Failure>,
        deadline: C.Instant,
        clock: C = ContinuousClock(),
        onTimeout: TimeoutBehavior = .cancelAndReturn
    ) async throws(OperationFailure<Failure>) -> Success {
        try await runOwned(
            operation, mapping: WrappedFailure<Failure>.self,
            limit: WaitTimeout(deadline: deadline, clock: clock, behavior: onTimeout))
    }

    /// Runs `operation` on this queue and returns its result once its outcome is final, within
    /// `timeout`: when the time is up first, the result the timed-out operation holds
    /// (`Failure.timeout`, an ``OperationTimeoutError``, or `nil` when `Failure` can express no
    /// timeout; ``AsyncOperation/isTimedOut`` tells). For every `Failure`.
    ///
    /// As ``runForOutcome(_:)``, with the time limit of
    /// ``run(_:timeout:clock:onTimeout:)-(AsyncResultOperation<Success,Failure>,_,_,_)``.
    ///
    /// ## Cancellation
    /// Cancelling the awaiting task cancels the operation. No timer outlives the call.
    public func runForOutcome<Success: Sendable, Failure, C: Clock<Duration>>(
        _ operation: AsyncResultOperation<Success, Failure>,
        timeout: Duration,
        clock: C = ContinuousClock(),
        onTimeout: TimeoutBehavior = .cancelAndReturn
    ) async -> Result<Success, Failure>? {
        await runForOutcome(operation, limit: WaitTimeout(timeout: timeout, clock: clock, behavior: onTimeout))
    }

    /// Runs `operation` on this queue and returns its result once its outcome is final, by
    /// `deadline`; as ``runForOutcome(_:timeout:clock:onTimeout:)``, with an instant of `clock`.
    ///
    /// ## Cancellation
    /// Cancelling the awaiting task cancels the operation. No timer outlives the call.
    public func runForOutcome<Success: Sendable, Failure, C: Clock<Duration>>(
        _ operation: AsyncResultOperation<Success, Failure>,
        deadline: C.Instant,
        clock: C = ContinuousClock(),
        onTimeout: TimeoutBehavior = .cancelAndReturn
    ) async -> Result<Success, Failure>? {
        await runForOutcome(operation, limit: WaitTimeout(deadline: deadline, clock: clock, behavior: onTimeout))
    }

    /// Admits `operation`, owned by the awaiting task, and awaits its value within `limit`.
    private func runOwned<Success: Sendable, Failure, Mapping: FailureMapping>(
        _ operation: AsyncResultOperation<Success, Failure>,
        mapping: Mapping.Type,
        limit: WaitTimeout
    ) async throws(Mapping.Thrown) -> Success where Mapping.Failure == Failure {
        admitOwned(operation)
        return try await operation.awaitValue(
            in: self, onTaskCancellation: .cancelOperation, mapping: mapping, timeout: limit)
    }

    private func runForOutcome<Success: Sendable, Failure>(
        _ operation: AsyncResultOperation<Success, Failure>,
        limit: WaitTimeout
    ) async -> Result<Success, Failure>? {
        admitOwned(operation)
        _ = await OperationWaiter.waitForFinish(
            of: operation, in: self, until: .outcome, onTaskCancellation: .cancelOperation, timeout: limit)
        return operation.result
    }
}
