import Foundation

extension AsyncResultOperation where Success: Sendable {
    /// Waits — within `timeout`, if any — until the outcome is final and returns the success value,
    /// or throws what `mapping` makes of the operation's failure, cancellation or upstream
    /// failure, or of the time running out. The one path behind every value-reading await.
    ///
    /// When the awaiting task was cancelled first: with ``OperationWaiter/TaskCancellation/stopWaiting``
    /// it throws `mapping.cancelled()`; with ``OperationWaiter/TaskCancellation/cancelOperation``
    /// the operation was cancelled, and its own outcome (usually its cancellation failure) is
    /// answered. When the time is up, the timer times the operation out unless its outcome was
    /// decided first; a decided outcome — a finish that raced the timer, a cancellation that came
    /// before it — is answered as it is, even when the wait stopped before the finish.
    ///
    /// With `admitting`, the wait hands the operation, which the awaiting task owns, to `queue`
    /// once it is registered (see
    /// ``OperationWaiter/waitForFinish(of:in:until:onTaskCancellation:timeout:admitting:)``).
    @inlinable
    func awaitValue<Mapping: FailureMapping>(
        in queue: OperationQueue? = nil,
        admitting: Bool = false,
        onTaskCancellation: OperationWaiter.TaskCancellation,
        mapping: Mapping.Type,
        timeout: WaitTimeout? = nil
    ) async throws(Mapping.Thrown) -> Success where Mapping.Failure == Failure {
        let final = await OperationWaiter.waitForFinish(
            of: self, in: queue, until: .outcome, onTaskCancellation: onTaskCancellation, timeout: timeout,
            admitting: admitting)
        guard let timeout else {
            return try valueAfterWaiting(final: final, onTaskCancellation: onTaskCancellation, mapping: mapping)
        }
        if bridge.isTimedOut { throw mapping.timedOut() }
        // The timer has run: the outcome is decided, whether or not the wait saw the finish.
        return try valueAfterWaiting(
            final: final || timeout.fired, onTaskCancellation: onTaskCancellation, mapping: mapping)
    }

    /// Waits — within `timeout`, if any — until the outcome is final and returns the result: `nil`
    /// when the wait ended first (without an operation cancelled by the awaiting task or by the
    /// time limit, whose own result is answered) or the operation ended without one.
    @inlinable
    func awaitOutcome(
        in queue: OperationQueue? = nil,
        admitting: Bool = false,
        onTaskCancellation: OperationWaiter.TaskCancellation,
        timeout: WaitTimeout? = nil
    ) async -> Result<Success, Failure>? {
        let final = await OperationWaiter.waitForFinish(
            of: self, in: queue, until: .outcome, onTaskCancellation: onTaskCancellation, timeout: timeout,
            admitting: admitting)
        // Given up because the task was cancelled before the operation started, with the
        // operation cancelled: the answer is its own result, whether or not the queue got to
        // finish it first.
        return final || timeout?.fired == true || onTaskCancellation == .cancelOperation ? result : nil
    }

    /// What ``awaitValue(in:onTaskCancellation:mapping:timeout:)`` answers once the wait has ended:
    /// `final` tells whether the outcome is final.
    @inlinable
    func valueAfterWaiting<Mapping: FailureMapping>(
        final: Bool,
        onTaskCancellation: OperationWaiter.TaskCancellation,
        mapping: Mapping.Type
    ) throws(Mapping.Thrown) -> Success where Mapping.Failure == Failure {
        guard final || onTaskCancellation == .cancelOperation else { throw mapping.cancelled() }
        // Stopped by a failed condition, with no result or a stand-in: said as such.
        if let condition = conditionFailureWithoutOwnResult { throw mapping.conditionFailed(condition) }
        switch result {
        case .success(let value):
            return value
        case .failure(let error):
            throw mapping.failed(error)
        case nil:
            if let cause = bridge.upstreamFailure { throw mapping.upstreamFailed(cause) }
            if bridge.isTimedOut { throw mapping.timedOut() }
            throw mapping.cancelled()
        }
    }
}

extension AsyncResultOperation {
    /// The failed condition that stopped the operation, when its result does not say it in
    /// `Failure` itself: `Failure` stores no result for it, or the cancellation stand-in (see
    /// ``ConditionFailureRepresentable``). Thread-safe.
    @usableFromInline
    var conditionFailureWithoutOwnResult: ConditionFailedError? {
        // The operation's own record first, read directly (a lock and a load; through `bridge`
        // it would instantiate the generic `Bridge<Self>`'s metadata): asking whether `Failure`
        // can say it is a conformance lookup and a dynamic cast, made on every await before,
        // though almost no operation is stopped by a condition.
        guard let failure = lock.withCriticalSection({ rare?.conditionFailure }),
            !FailureConversion.expressesConditionFailure(Failure.self)
        else { return nil }
        return failure
    }
}
