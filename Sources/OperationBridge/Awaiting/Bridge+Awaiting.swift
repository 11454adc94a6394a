import Foundation

// The awaits of a result operation. Each reads the outcome once it is final: it works whether
// the operation is queued, started by hand, already finished, or not queued yet (it then waits
// until it is queued and finishes); an outcome decided before the operation started — it was
// cancelled, or given its result early — is answered at once, even if it is never queued. None
// blocks a thread, and each raises the operation's quality of service to the awaiting task's
// priority. None owns the operation: cancelling the awaiting task stops the wait and cancels
// nothing (other tasks may be waiting). To tie the operation to the task, use the queue's
// `run(_:within:)` family.

extension Bridge where Base: AsyncResultOperationProtocol, Base.Success: Sendable {
    /// The operation's result, once it is final.
    ///
    /// ```swift
    /// switch await download.bridge.outcome {
    /// case .success(let data)?: show(data)
    /// case .failure(let error)?: report(error)
    /// case nil: break  // cancelled, and the error type cannot express cancellation
    /// }
    /// ```
    ///
    /// - Returns: The result, or `nil` when the operation ended without one: it was cancelled,
    ///   or an upstream failure or a failed condition kept it from running (see
    ///   ``upstreamFailure``, ``conditionFailure``), and its `Failure` cannot express that.
    ///
    /// ## Cancellation
    /// Cancelling the awaiting task stops the wait at once and returns `nil`; the operation is
    /// not cancelled. To tie the operation to the task, use
    /// ``Foundation/OperationQueue/runForOutcome(_:within:)``.
    @inlinable
    public var outcome: Result<Base.Success, Base.Failure>? {
        get async { await resultOperation.awaitOutcome(onTaskCancellation: .stopWaiting) }
    }

    /// The operation's result once its outcome is final, within `limit`.
    ///
    /// When the time is up first, the operation is timed out (``isTimedOut``) and the call
    /// answers what it then holds: `Failure.timeout` (``TimeoutRepresentable``), an
    /// ``OperationTimeoutError`` (`any Error`), or `nil` when `Failure` can express no timeout.
    /// Otherwise as ``outcome``.
    ///
    /// ## Cancellation
    /// Cancelling the awaiting task stops the wait at once and returns `nil`; the operation is
    /// not cancelled. When the time is up, the operation is cancelled, for every task awaiting
    /// it. No timer outlives the await.
    @inlinable
    public func outcome(within limit: TimeLimit) async -> Result<Base.Success, Base.Failure>? {
        await resultOperation.awaitOutcome(
            onTaskCancellation: .stopWaiting, timeout: limit.makeWaitTimeout())
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
    ///     let record = try await lookup.bridge.outcomeValue  // throws(OperationFailure<LookupError>)
    /// } catch .failed(let error) {
    ///     report(error)
    /// } catch {
    ///     // .cancelled, or .upstreamFailed(let cause)
    /// }
    /// ```
    ///
    /// - Throws: ``OperationFailure/failed(_:)`` with the operation's failure;
    ///   ``OperationFailure/cancelled`` when it ended cancelled;
    ///   ``OperationFailure/upstreamFailed(_:)`` when an upstream failure kept it from running;
    ///   ``OperationFailure/conditionFailed(_:)`` when a failed condition did and `Failure` does not
    ///   say it itself (see ``ConditionFailureRepresentable``).
    ///
    /// ## Cancellation
    /// Cancelling the awaiting task stops the wait at once and throws
    /// ``OperationFailure/cancelled``; the operation is not cancelled.
    @inlinable
    public var outcomeValue: Base.Success {
        get async throws(OperationFailure<Base.Failure>) {
            try await resultOperation.awaitValue(
                onTaskCancellation: .stopWaiting, mapping: WrappedFailure<Base.Failure>.self)
        }
    }

    /// The operation's success value, if its outcome is final within `limit`; throws a typed
    /// ``OperationFailure`` otherwise — ``OperationFailure/timedOut`` when the time ran out.
    ///
    /// ```swift
    /// let record = try await lookup.bridge.outcomeValue(within: .timeout(.seconds(5)))
    /// // throws(OperationFailure<LookupError>): .failed, .cancelled, .upstreamFailed or .timedOut
    /// ```
    ///
    /// - Throws: ``OperationFailure/timedOut`` when the time ran out first — an operation that
    ///   someone else had cancelled before reports ``OperationFailure/cancelled``; otherwise as
    ///   ``outcomeValue``.
    ///
    /// ## Cancellation
    /// Cancelling the awaiting task stops the wait at once and throws
    /// ``OperationFailure/cancelled``; the operation is not cancelled. When the time is up, the
    /// operation is cancelled, for every task awaiting it. No timer outlives the await.
    @inlinable
    public func outcomeValue(within limit: TimeLimit) async throws(OperationFailure<Base.Failure>) -> Base.Success {
        try await resultOperation.awaitValue(
            onTaskCancellation: .stopWaiting, mapping: WrappedFailure<Base.Failure>.self,
            timeout: limit.makeWaitTimeout())
    }

    /// Not available: `Failure` can express neither cancellation nor an upstream failure.
    ///
    /// Use ``outcomeValue`` (throws ``OperationFailure``), ``outcome`` (a `Result?`), or adopt
    /// ``CancellationRepresentable`` in `Failure`.
    @available(
        *, unavailable,
        message:
            "Failure cannot express cancellation: use 'try await op.bridge.outcomeValue' (throws OperationFailure<Failure>) or 'await op.bridge.outcome', or adopt CancellationRepresentable in Failure"
    )
    public var value: Base.Success {
        get async throws(Base.Failure) { fatalError("unavailable") }
    }

    /// Not available: `Failure` can express neither cancellation nor an upstream failure.
    ///
    /// Use ``outcomeValue(within:)`` (throws ``OperationFailure``, with
    /// ``OperationFailure/timedOut``), or adopt ``CancellationRepresentable`` (and
    /// ``TimeoutRepresentable``) in `Failure`.
    @available(
        *, unavailable,
        message:
            "Failure cannot express cancellation: use 'try await op.bridge.outcomeValue(within:)' (throws OperationFailure<Failure>, with .timedOut), or adopt CancellationRepresentable in Failure"
    )
    public func value(within limit: TimeLimit) async throws(Base.Failure) -> Base.Success {
        fatalError("unavailable")
    }
}

extension Bridge
where Base: AsyncResultOperationProtocol, Base.Success: Sendable, Base.Failure: CancellationRepresentable {
    /// The operation's success value, once its outcome is final; throws its typed failure.
    ///
    /// ```swift
    /// let url = try await unfurl.bridge.value   // throws(UnfurlError)
    /// ```
    ///
    /// - Throws: The operation's failure; `Failure.cancellation` when it ended cancelled.
    ///
    /// ## Cancellation
    /// Cancelling the awaiting task stops the wait at once and throws `Failure.cancellation`;
    /// the operation is not cancelled (other tasks may be waiting for it). To tie the operation
    /// to the task, use ``Foundation/OperationQueue/run(_:within:)-(AsyncResultOperation<Success,Failure>,_)``.
    @inlinable
    public var value: Base.Success {
        get async throws(Base.Failure) {
            try await resultOperation.awaitValue(
                onTaskCancellation: .stopWaiting, mapping: OwnFailure<Base.Failure>.self)
        }
    }

    /// The operation's success value, if its outcome is final within `limit`; throws its typed
    /// failure otherwise.
    ///
    /// ```swift
    /// let page = try await fetch.bridge.value(within: .timeout(.seconds(10)))   // throws(FetchError)
    /// ```
    ///
    /// - Throws: When the time ran out first, `Failure.timeout` if `Failure` adopts
    ///   ``TimeoutRepresentable``, otherwise `Failure.cancellation` — the operation is then timed
    ///   out (``isTimedOut`` is `true`), which is how to tell the two apart; the operation's
    ///   failure; `Failure.cancellation` when it ended cancelled (also when someone else
    ///   cancelled it before the time was up).
    ///
    /// ## Cancellation
    /// Cancelling the awaiting task stops the wait at once and throws `Failure.cancellation`;
    /// the operation is not cancelled. When the time is up, the operation is cancelled. No timer
    /// outlives the await.
    @inlinable
    public func value(within limit: TimeLimit) async throws(Base.Failure) -> Base.Success {
        try await resultOperation.awaitValue(
            onTaskCancellation: .stopWaiting, mapping: OwnFailure<Base.Failure>.self, timeout: limit.makeWaitTimeout())
    }
}

extension Bridge where Base: AsyncResultOperationProtocol, Base.Success: Sendable, Base.Failure == any Error {
    /// The operation's success value, once its outcome is final; throws its failure.
    ///
    /// - Throws: The operation's failure; `CancellationError` when it ended cancelled without
    ///   a result; the ``UpstreamFailedError`` when an upstream failure kept it from running.
    ///
    /// ## Cancellation
    /// Cancelling the awaiting task stops the wait at once and throws `CancellationError`; the
    /// operation is not cancelled (other tasks may be waiting for it).
    @inlinable
    public var value: Base.Success {
        get async throws {
            try await resultOperation.awaitValue(
                onTaskCancellation: .stopWaiting, mapping: UntypedFailure.self)
        }
    }

    /// The operation's success value, if its outcome is final within `limit`; throws its
    /// failure otherwise — an ``OperationTimeoutError`` when the time ran out.
    ///
    /// ## Cancellation
    /// Cancelling the awaiting task stops the wait at once and throws `CancellationError`; the
    /// operation is not cancelled. When the time is up, the operation is cancelled. No timer
    /// outlives the await.
    @inlinable
    public func value(within limit: TimeLimit) async throws -> Base.Success {
        try await resultOperation.awaitValue(
            onTaskCancellation: .stopWaiting, mapping: UntypedFailure.self, timeout: limit.makeWaitTimeout())
    }
}

extension Bridge where Base: AsyncResultOperationProtocol, Base.Success: Sendable, Base.Failure == Never {
    /// The operation's value, once its outcome is final; `nil` when it ended without one.
    ///
    /// For operations that cannot fail, such as `TaskOperation { 42 }` or `queue.addTask { … }`
    /// with a non-throwing closure. They can still be cancelled before their closure runs, and
    /// `Never` cannot say so: the value is then `nil`.
    ///
    /// ```swift
    /// let answer = await queue.addTask { 6 * 7 }.bridge.value   // Int?
    /// ```
    ///
    /// ## Cancellation
    /// Cancelling the awaiting task stops the wait at once and returns `nil`; the operation is
    /// not cancelled.
    @inlinable
    public var value: Base.Success? {
        get async {
            try? await resultOperation.awaitValue(
                onTaskCancellation: .stopWaiting, mapping: WrappedFailure<Never>.self)
        }
    }

    /// The operation's value, if its outcome is final within `limit`; `nil` otherwise — when the
    /// time ran out (``isTimedOut`` is then `true`) or it ended without a value.
    ///
    /// ## Cancellation
    /// Cancelling the awaiting task stops the wait at once and returns `nil`; the operation is
    /// not cancelled. When the time is up, the operation is cancelled. No timer outlives the
    /// await.
    @inlinable
    public func value(within limit: TimeLimit) async -> Base.Success? {
        try? await resultOperation.awaitValue(
            onTaskCancellation: .stopWaiting, mapping: WrappedFailure<Never>.self, timeout: limit.makeWaitTimeout())
    }
}

extension Bridge {
    /// Suspends until the operation has finished — the async counterpart of Foundation's
    /// blocking `waitUntilFinished()`, which Swift 6 forbids in async code.
    ///
    /// Works for any `Operation`: the package's, your own subclasses, `BlockOperation`. It uses
    /// neither KVO nor `completionBlock`. Never blocks a thread; raises the operation's quality
    /// of service to the awaiting task's priority. An operation that is never queued nor
    /// started is waited for until the awaiting task is cancelled.
    ///
    /// ```swift
    /// queue.addOperation(legacyImport)
    /// try await legacyImport.bridge.waitForCompletion()
    /// ```
    ///
    /// - Throws: `CancellationError` when the awaiting task is cancelled before the operation
    ///   has finished.
    ///
    /// ## Cancellation
    /// Cancelling the awaiting task stops the wait; the operation itself is not cancelled. To tie
    /// the operation to the task, use ``Foundation/OperationQueue/runUntilFinished(_:)``.
    public func waitForCompletion() async throws(CancellationError) {
        guard await OperationWaiter.waitForFinish(of: base, onTaskCancellation: .stopWaiting) else {
            throw CancellationError()
        }
    }

    /// Suspends until the operation has finished, within `limit`.
    ///
    /// As ``waitForCompletion()``; when the time is up first, the operation is cancelled (the
    /// package's operations as timed out) and the call throws an ``OperationTimeoutError`` (at
    /// once, or once the operation has ended with ``TimeoutBehavior/cancelAndWait``). The errors
    /// are those of the `any Error` awaits, and untyped for the same reason: two of them.
    ///
    /// - Throws: ``OperationTimeoutError`` when the time ran out first; `CancellationError` when
    ///   the awaiting task was cancelled first.
    ///
    /// ## Cancellation
    /// Cancelling the awaiting task stops the wait; the operation is not cancelled. When the time
    /// is up, the operation is cancelled. No timer outlives the await.
    public func waitForCompletion(within limit: TimeLimit) async throws {
        try await OperationWaiter.waitForCompletion(of: base, onTaskCancellation: .stopWaiting, limit: limit)
    }
}

extension OperationWaiter {
    /// Waits for `operation` to finish within `limit`: the path behind every time-limited wait for
    /// a finish. `admitting` as for ``waitForFinish(of:in:until:onTaskCancellation:timeout:admitting:)``.
    static func waitForCompletion(
        of operation: Operation,
        in queue: OperationQueue? = nil,
        onTaskCancellation: TaskCancellation,
        limit: TimeLimit,
        admitting: Bool = false
    ) async throws {
        let timeout = limit.makeWaitTimeout()
        let finished = await waitForFinish(
            of: operation, in: queue, onTaskCancellation: onTaskCancellation, timeout: timeout,
            admitting: admitting)
        if timeout.fired { throw OperationTimeoutError() }
        if !finished { throw CancellationError() }
    }
}

extension Sequence where Element: Operation {
    /// Suspends until every operation in the sequence has finished.
    ///
    /// Operations may finish in any order, and may be in different queues. Never blocks a
    /// thread.
    ///
    /// - Throws: `CancellationError` when the awaiting task is cancelled before all of them
    ///   have finished. The operations themselves are not cancelled.
    public func waitForCompletion() async throws(CancellationError) {
        for operation in self {
            try await operation.bridge.waitForCompletion()
        }
    }
}
