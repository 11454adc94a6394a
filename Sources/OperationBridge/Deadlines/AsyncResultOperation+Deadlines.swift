import Foundation

extension AsyncResultOperation where Success: Sendable {
    /// Waits, within a time limit (if any), until the outcome is final; returns the success
    /// value or throws what `mapping` makes of the rest, or of the time running out.
    ///
    /// When the time is up, the timer times the operation out unless its outcome was decided
    /// first; a decided outcome — a finish that raced the timer, a cancellation that came
    /// before it — is answered as it is, even when the wait stopped before the finish.
    func awaitValue<Mapping: FailureMapping>(
        in queue: OperationQueue? = nil,
        onTaskCancellation: OperationWaiter.TaskCancellation,
        mapping: Mapping.Type,
        timeout: WaitTimeout?
    ) async throws(Mapping.Thrown) -> Success where Mapping.Failure == Failure {
        let final = await OperationWaiter.waitForFinish(
            of: self, in: queue, until: .outcome, onTaskCancellation: onTaskCancellation, timeout: timeout)
        if isTimedOut { throw mapping.timedOut() }
        // The timer has run: the outcome is decided, whether or not the wait saw the finish.
        let decided = final || timeout?.fired == true
        return try valueAfterWaiting(final: decided, onTaskCancellation: onTaskCancellation, mapping: mapping)
    }

    /// The operation's success value, if its outcome is final within `timeout`; throws a typed
    /// ``OperationFailure`` otherwise — ``OperationFailure/timedOut`` when the time ran out.
    ///
    /// ```swift
    /// let record = try await lookup.outcomeValue(timeout: .seconds(5))
    /// // throws(OperationFailure<LookupError>): .failed, .cancelled, .upstreamFailed or .timedOut
    /// ```
    ///
    /// For every `Failure`. Otherwise as ``outcomeValue``: works whether the operation is queued,
    /// started by hand, finished or not queued yet, and never blocks a thread.
    ///
    /// - Parameters:
    ///   - timeout: How long to wait, measured on `clock` from now. Zero or negative: the time
    ///     is up at once (an outcome that is already final is still answered).
    ///   - clock: The clock that measures it; `ContinuousClock` unless you pass another (a test
    ///     clock, for example).
    ///   - onTimeout: What happens when the time is up (see ``TimeoutBehavior``). Either way
    ///     the operation is cancelled.
    /// - Throws: ``OperationFailure/timedOut`` when the time ran out first — an operation that
    ///   someone else had cancelled before reports ``OperationFailure/cancelled``; otherwise as
    ///   ``outcomeValue``.
    ///
    /// ## Cancellation
    /// Cancelling the awaiting task stops the wait at once and throws
    /// ``OperationFailure/cancelled``; the operation is not cancelled. When the time is up, the
    /// operation is cancelled, for every task awaiting it. No timer outlives the await.
    public func outcomeValue<C: Clock<Duration>>(
        timeout: Duration,
        clock: C = ContinuousClock(),
        onTimeout: TimeoutBehavior = .cancelAndReturn
    ) async throws(OperationFailure<Failure>) -> Success {
        try await awaitValue(
            onTaskCancellation: .stopWaiting, mapping: WrappedFailure<Failure>.self,
            timeout: WaitTimeout(timeout: timeout, clock: clock, behavior: onTimeout))
    }

    /// The operation's success value, if its outcome is final by `deadline`; throws a typed
    /// ``OperationFailure`` otherwise — ``OperationFailure/timedOut`` when the time ran out.
    ///
    /// As ``outcomeValue(timeout:clock:onTimeout:)``, with an instant of `clock` instead of a
    /// duration: a deadline already passed means the time is up at once.
    ///
    /// ## Cancellation
    /// Cancelling the awaiting task stops the wait at once and throws
    /// ``OperationFailure/cancelled``; the operation is not cancelled. When the time is up, the
    /// operation is cancelled. No timer outlives the await.
    public func outcomeValue<C: Clock<Duration>>(
        deadline: C.Instant,
        clock: C = ContinuousClock(),
        onTimeout: TimeoutBehavior = .cancelAndReturn
    ) async throws(OperationFailure<Failure>) -> Success {
        try await awaitValue(
            onTaskCancellation: .stopWaiting, mapping: WrappedFailure<Failure>.self,
            timeout: WaitTimeout(deadline: deadline, clock: clock, behavior: onTimeout))
    }
}

extension AsyncResultOperation where Success: Sendable {
    /// Not available: `Failure` cannot express a timeout.
    ///
    /// Use ``outcomeValue(timeout:clock:onTimeout:)`` (throws ``OperationFailure``, with
    /// ``OperationFailure/timedOut``), or adopt ``TimeoutRepresentable`` in `Failure`.
    @available(
        *, unavailable,
        message:
            "Failure cannot express a timeout: use 'try await op.outcomeValue(timeout:)' (throws OperationFailure<Failure>, with .timedOut), or adopt TimeoutRepresentable in Failure"
    )
    public func value<C: Clock<Duration>>(
        timeout: Duration,
        clock: C = ContinuousClock(),
        onTimeout: TimeoutBehavior = .cancelAndReturn
    ) async throws(Failure) -> Success {
        fatalError("unavailable")
    }
}

extension AsyncResultOperation where Success: Sendable, Failure: TimeoutRepresentable {
    /// The operation's success value, if its outcome is final within `timeout`; throws its typed
    /// failure otherwise — `Failure.timeout` when the time ran out.
    ///
    /// ```swift
    /// let page = try await fetch.value(timeout: .seconds(10))   // throws(FetchError)
    /// ```
    ///
    /// Otherwise as ``value-19ebr``. See ``outcomeValue(timeout:clock:onTimeout:)`` for the
    /// parameters.
    ///
    /// - Throws: `Failure.timeout` when the time ran out first; the operation's failure;
    ///   `Failure.cancellation` when it ended cancelled (also when someone else cancelled it
    ///   before the time was up).
    ///
    /// ## Cancellation
    /// Cancelling the awaiting task stops the wait at once and throws `Failure.cancellation`;
    /// the operation is not cancelled. When the time is up, the operation is cancelled. No timer
    /// outlives the await.
    public func value<C: Clock<Duration>>(
        timeout: Duration,
        clock: C = ContinuousClock(),
        onTimeout: TimeoutBehavior = .cancelAndReturn
    ) async throws(Failure) -> Success {
        try await awaitValue(
            onTaskCancellation: .stopWaiting, mapping: OwnFailure<Failure>.self,
            timeout: WaitTimeout(timeout: timeout, clock: clock, behavior: onTimeout))
    }

    /// The operation's success value, if its outcome is final by `deadline`; throws its typed
    /// failure otherwise — `Failure.timeout` when the time ran out.
    ///
    /// As the `timeout:` variant, with an instant of `clock`: a deadline already passed means the
    /// time is up at once.
    ///
    /// ## Cancellation
    /// Cancelling the awaiting task stops the wait at once and throws `Failure.cancellation`;
    /// the operation is not cancelled. When the time is up, the operation is cancelled.
    public func value<C: Clock<Duration>>(
        deadline: C.Instant,
        clock: C = ContinuousClock(),
        onTimeout: TimeoutBehavior = .cancelAndReturn
    ) async throws(Failure) -> Success {
        try await awaitValue(
            onTaskCancellation: .stopWaiting, mapping: OwnFailure<Failure>.self,
            timeout: WaitTimeout(deadline: deadline, clock: clock, behavior: onTimeout))
    }
}

extension AsyncResultOperation where Success: Sendable, Failure == any Error {
    /// The operation's success value, if its outcome is final within `timeout`; throws its
    /// failure otherwise — an ``OperationTimeoutError`` when the time ran out.
    ///
    /// Otherwise as ``value-5w731``. See ``outcomeValue(timeout:clock:onTimeout:)`` for the
    /// parameters.
    ///
    /// ## Cancellation
    /// Cancelling the awaiting task stops the wait at once and throws `CancellationError`; the
    /// operation is not cancelled. When the time is up, the operation is cancelled. No timer
    /// outlives the await.
    public func value<C: Clock<Duration>>(
        timeout: Duration,
        clock: C = ContinuousClock(),
        onTimeout: TimeoutBehavior = .cancelAndReturn
    ) async throws -> Success {
        try await awaitValue(
            onTaskCancellation: .stopWaiting, mapping: UntypedFailure.self,
            timeout: WaitTimeout(timeout: timeout, clock: clock, behavior: onTimeout))
    }

    /// The operation's success value, if its outcome is final by `deadline`; throws its failure
    /// otherwise — an ``OperationTimeoutError`` when the time ran out.
    ///
    /// ## Cancellation
    /// Cancelling the awaiting task stops the wait at once and throws `CancellationError`; the
    /// operation is not cancelled. When the time is up, the operation is cancelled.
    public func value<C: Clock<Duration>>(
        deadline: C.Instant,
        clock: C = ContinuousClock(),
        onTimeout: TimeoutBehavior = .cancelAndReturn
    ) async throws -> Success {
        try await awaitValue(
            onTaskCancellation: .stopWaiting, mapping: UntypedFailure.self,
            timeout: WaitTimeout(deadline: deadline, clock: clock, behavior: onTimeout))
    }
}

extension AsyncResultOperation where Success: Sendable {
    /// The operation's result once its outcome is final, within `timeout`.
    ///
    /// When the time is up first, the operation is timed out (``AsyncOperation/isTimedOut``) and
    /// the call answers what it then holds: `Failure.timeout` (``TimeoutRepresentable``), an
    /// ``OperationTimeoutError`` (`any Error`), or `nil` when `Failure` can express no timeout.
    /// Otherwise as ``outcome``. See ``outcomeValue(timeout:clock:onTimeout:)`` for the
    /// parameters.
    ///
    /// ## Cancellation
    /// Cancelling the awaiting task stops the wait at once and returns `nil`; the operation is
    /// not cancelled. When the time is up, the operation is cancelled. No timer outlives the
    /// await.
    public func outcome<C: Clock<Duration>>(
        timeout: Duration,
        clock: C = ContinuousClock(),
        onTimeout: TimeoutBehavior = .cancelAndReturn
    ) async -> Result<Success, Failure>? {
        await awaitOutcome(timeout: WaitTimeout(timeout: timeout, clock: clock, behavior: onTimeout))
    }

    /// The operation's result once its outcome is final, by `deadline`; as
    /// ``outcome(timeout:clock:onTimeout:)``, with an instant of `clock`.
    ///
    /// ## Cancellation
    /// Cancelling the awaiting task stops the wait at once and returns `nil`; the operation is
    /// not cancelled. When the time is up, the operation is cancelled.
    public func outcome<C: Clock<Duration>>(
        deadline: C.Instant,
        clock: C = ContinuousClock(),
        onTimeout: TimeoutBehavior = .cancelAndReturn
    ) async -> Result<Success, Failure>? {
        await awaitOutcome(timeout: WaitTimeout(deadline: deadline, clock: clock, behavior: onTimeout))
    }

    private func awaitOutcome(timeout: WaitTimeout) async -> Result<Success, Failure>? {
        let final = await OperationWaiter.waitForFinish(
            of: self, until: .outcome, onTaskCancellation: .stopWaiting, timeout: timeout)
        return final || timeout.fired ? result : nil
    }
}
