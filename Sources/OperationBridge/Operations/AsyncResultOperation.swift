import Foundation

/// An ``AsyncOperation`` that ends with a typed `Result`.
///
/// Subclass it, override ``AsyncOperation/main()``, and end the work with
/// ``finish(with:)``. The members match the classic hand-copied class (`result`,
/// `finish(with:)`, `cancel(with:)`), so existing subclasses compile unchanged.
///
/// ```swift
/// final class UnfurlOperation: AsyncResultOperation<URL, UnfurlError>, @unchecked Sendable {
///     let shortURL: URL
///     init(shortURL: URL) { self.shortURL = shortURL }
///     override func main() {
///         resolver.resolve(shortURL) { [self] url in
///             finish(with: url.map(Result.success) ?? .failure(.notFound))
///         }
///     }
/// }
/// let url = try await queue.run(UnfurlOperation(shortURL: link))
/// ```
///
/// ## Result
/// ``result`` is lock-protected and readable from any thread. The first result stored wins:
/// ``finish(with:)`` or ``cancel(with:)`` after a result exists are ignored (the lifecycle still
/// finishes). Calling ``finish()`` without a result on an operation that is not cancelled is a
/// programmer error and traps with a message naming the type.
///
/// ## Cancellation
/// `cancel()` never traps (the classic class trapped unless every subclass overrode it). The
/// first outcome wins: a cancellation after the result was stored changes nothing (`isCancelled`
/// stays `false`), and a result reported after the cancellation is ignored. A cancellation
/// records a cancellation failure as the result when `Failure` can express one — `Failure`
/// is `CancellationError`, a supertype such as `any Error`, or adopts
/// ``CancellationRepresentable`` — and otherwise leaves the result `nil`. A cancelled operation
/// that has not started finishes when its queue starts it; a running one finishes when its work
/// calls ``finish(with:)`` or ``finish()``.
open class AsyncResultOperation<Success, Failure: Error>: AsyncOperation, @unchecked Sendable {
    // Safety: guarded by the inherited `lock`, together with the lifecycle; so the runtime's
    // exclusivity check is skipped (Design.md, "CPU per operation").
    @usableFromInline @exclusivity(unchecked) final var slot = ResultSlot.open(onResult: nil)

    /// The result once stored, and until then the ``onResult`` callback: a callback is taken when
    /// the result is stored, so the two never need to be kept at once. One field, and the
    /// callback boxed, keep every result operation 16 to 32 bytes smaller than a result and a
    /// callback side by side (Design.md, "Memory per operation"); an operation that sets a
    /// callback pays for its box.
    @usableFromInline enum ResultSlot {
        case open(onResult: ResultCallback<Success, Failure>?)
        case stored(Result<Success, Failure>)
    }

    @inlinable final var storedResult: Result<Success, Failure>? {
        if case .stored(let result) = slot { return result }
        return nil
    }

    /// Creates a pending operation without a result.
    public override init() {
        super.init()
    }

    override func chainedInput<Input>(as type: Input.Type) -> ChainedInput<Input> {
        resultAsChainedInput(as: type)
    }

    /// The operation's result: `nil` until one is stored. Thread-safe.
    ///
    /// After the operation has finished, `nil` means it was cancelled and `Failure` cannot
    /// express cancellation, or timed out (``Bridge/isTimedOut``) and `Failure` cannot
    /// express a timeout.
    @inlinable public final var result: Result<Success, Failure>? {
        withLock { storedResult }
    }

    /// Called once with the result, on the thread that stores it (``finish(with:)``,
    /// ``cancel(with:)`` or `cancel()`), before the operation is marked finished — as in the
    /// classic hand-copied class. Thread-safe to set; set it before the operation starts.
    ///
    /// The operation lets go of the callback when it calls it. A callback set once the result is
    /// stored is never called, and not kept: reading `onResult` then gives `nil`.
    ///
    /// Prefer awaiting (`value`, `outcome`) in new code: this callback must not capture the
    /// operation strongly (the operation would keep itself alive).
    public var onResult: ((Result<Success, Failure>) -> Void)? {
        get {
            lock.withCriticalSection {
                guard case .open(let callback?) = slot else { return nil }
                return callback.call
            }
        }
        set {
            let callback = newValue.map(ResultCallback.init)
            // The replaced callback is released after the lock: it may hold the last reference
            // to an object whose `deinit` calls back into this operation (`cancel()`, say).
            let replaced = lock.withCriticalSection { () -> ResultCallback<Success, Failure>? in
                guard case .open(let replaced) = slot else { return callback }
                slot = .open(onResult: callback)
                return replaced
            }
            withExtendedLifetime(replaced) {}
        }
    }

    /// Stores `result` and finishes the operation.
    ///
    /// Only the first result is kept; later calls are ignored. Call it from any thread, once the
    /// work has ended. Called before the operation has started, the result is kept and the
    /// operation finishes as soon as it is started. Overridable for compatibility with classic
    /// subclasses; an override must call `super.finish(with:)`.
    @inlinable open func finish(with result: Result<Success, Failure>) {
        finishLifecycle { storeLocked(result) }
    }

    /// Finishes an operation that was cancelled and has no result to report.
    ///
    /// - Precondition: the operation is cancelled or already has a result. A result operation
    ///   that is running and not cancelled must end with ``finish(with:)``; calling `finish()`
    ///   then traps with a message naming the type.
    public final override func finish() {
        let hasResult = lock.withCriticalSection { outcomeDecidedLocked || lifecycleIsFinishingOrFinishedLocked }
        guard hasResult || isCancelled else {
            // `fatalError`, not `preconditionFailure`: the message must survive release builds.
            fatalError(
                "\(type(of: self)).finish() was called without a result on an operation that is not cancelled: "
                    + "call finish(with:) to provide a result."
            )
        }
        finishLifecycle()
    }

    /// Cancels the operation, recording the default cancellation failure as its result when
    /// `Failure` can express one (see ``CancellationRepresentable``).
    ///
    /// Safe to call at any time, from any thread, any number of times; it never finishes the
    /// operation by itself. Subclasses may override it to stop their work (calling
    /// ``cancel(with:)`` or `super.cancel()`).
    open override func cancel() {
        recordCancellation(storing: nil)
        super.cancel()
    }

    /// Cancels the operation, recording `error` as its result unless it already has one.
    ///
    /// Like `cancel()`, this does not finish the operation: the running work still calls
    /// ``finish()`` or ``finish(with:)`` (whose result is then ignored), and an operation that
    /// has not started finishes when it is started. Safe from any thread, any number of times.
    /// Overridable for compatibility; an override must call `super.cancel(with:)`. When a time
    /// limit is what cancels the operation (an override of `cancel()` calling this), the
    /// timeout failure is recorded instead of `error` (see ``Bridge/isTimedOut``).
    open func cancel(with error: Failure) {
        recordCancellation(storing: error)
        super.cancel()
    }

    /// Marks the operation cancelled and stores its failure (unless a result exists), in one step
    /// under the lock — or does neither when the operation has already begun to finish.
    ///
    /// The failure is the timeout failure when a time limit asked for the cancellation (none when
    /// `Failure` cannot express a timeout), otherwise `explicit` or the default cancellation
    /// failure. It is converted before the lock is taken (the conversion may run the `Failure`
    /// type's own code), and the cancellation is recorded as what was converted.
    private func recordCancellation(storing explicit: Failure?) {
        let timingOut = isTimeoutRequested
        let failure =
            timingOut
            ? FailureConversion.timeout(as: Failure.self)
            : explicit ?? FailureConversion.cancellation(as: Failure.self)
        let (onResult, decided) = lock.withCriticalSection {
            () -> ((() -> Void)?, [LifecycleStateMachine.Waiter]) in
            let cancellation = recordCancellationLocked(timedOut: timingOut)
            guard cancellation.recorded, let failure, !outcomeDecidedLocked else { return (nil, cancellation.decided) }
            return (setResultLocked(.failure(failure)), cancellation.decided)
        }
        onResult?()
        resumeDecided(decided)
    }

    /// Whether a result is stored: the slot's case, without copying the result out (which, in the
    /// package's unspecialized generic code, costs two more runtime metadata lookups and a copy of
    /// the value). Callers hold `lock`.
    override var outcomeDecidedLocked: Bool {
        if case .stored = slot { return true }
        return false
    }

    override func upstreamFailureResult(_ error: UpstreamFailedError) -> (() -> (() -> Void)?)? {
        guard let failure = FailureConversion.upstreamFailure(error, as: Failure.self) else { return nil }
        return { self.setResultLocked(.failure(failure)) }
    }

    override func conditionFailureResult(_ error: ConditionFailedError) -> (() -> (() -> Void)?)? {
        guard let failure = FailureConversion.conditionFailure(error, as: Failure.self) else { return nil }
        return { self.setResultLocked(.failure(failure)) }
    }

    /// Where `Failure` can say "the upstream failed" (``UpstreamFailureRepresentable``,
    /// `any Error`): the result then says why the operation did not run.
    override var skipsAfterUpstreamFailure: Bool {
        FailureConversion.canExpressUpstreamFailure(Failure.self)
    }

    override var hasOutcomeOfItsOwn: Bool { true }

    override var finishedUnsuccessfully: Bool {
        switch result {
        case .success: false
        case .failure: true
        case nil: super.finishedUnsuccessfully
        }
    }

    /// Stores `result` unless a result exists, the operation is already finishing, or it was
    /// cancelled (a cancelled operation ends with its cancellation failure, or without a result
    /// when `Failure` cannot express one). Callers hold `lock`.
    ///
    /// - Returns: The call of ``onResult`` to make once the lock is released, if a result was
    ///   stored and a callback is set.
    @inlinable final func storeLocked(_ result: Result<Success, Failure>) -> (() -> Void)? {
        // `outcomeOpenLocked`, with this class's part read here: no call into unspecialized code.
        guard lifecycleOutcomeOpenLocked, case .open = slot else { return nil }
        return setResultLocked(result)
    }

    /// Sets the result and takes ``onResult``; returns its call. Callers hold `lock` and have
    /// checked that the result may be set.
    @inlinable final func setResultLocked(_ result: Result<Success, Failure>) -> (() -> Void)? {
        let replaced = exchange(&slot, with: .stored(result))
        guard case .open(let callback?) = replaced else { return nil }
        return { callback.call(result) }
    }
}

/// An ``AsyncResultOperation/onResult`` callback, boxed: one word in the operation's result slot.
///
/// Immutable.
@usableFromInline final class ResultCallback<Success, Failure: Error> {
    @usableFromInline let call: (Result<Success, Failure>) -> Void

    @usableFromInline init(_ call: @escaping (Result<Success, Failure>) -> Void) {
        self.call = call
    }
}

extension AsyncResultOperation where Success: Sendable {
    /// Runs `work` in the operation's attached `Task` and finishes with what it returns or
    /// throws.
    ///
    /// The task holds the operation strongly, until `work` has returned and the operation has
    /// finished — no longer than the operation runs anyway, and the operation drops the task at
    /// its finish, so no cycle outlives the work. Not weakly: a weak reference gives every
    /// operation a side table (an allocation, and slower reference counting for the rest of its
    /// life).
    final func runAttachedWork(_ work: TaskBody<Success, Failure>) {
        runAttachedTask { [self] in
            let result = await work.run()
            finish(with: result)
        }
    }
}

extension AsyncResultOperation: ChainedOperationOutputProviding {
    /// The success value, if the operation succeeded; `nil` otherwise. Thread-safe.
    public var output: Any? {
        guard case .success(let value) = result else { return nil }
        return value
    }
}

extension AsyncResultOperation: ChainedInputProviding {
    /// What the operation provides to a chained operation expecting `Input`: its success value,
    /// or why there is none. Overrides `AsyncOperation.chainedInput(as:)`.
    func resultAsChainedInput<Input>(as _: Input.Type) -> ChainedInput<Input> {
        // A failed condition is a failure, never a cancellation: when `Failure` does not say it
        // itself (no result, or the cancellation stand-in), the condition's error is the cause.
        let conditionFailure = conditionFailureWithoutOwnResult
        switch result {
        case .success(let value):
            if let input = value as? Input { return .value(input) }
            return .notProvided
        case .failure(let error):
            guard Success.self is Input.Type else { return .notProvided }
            // Stopped by an upstream failure that `Failure` cannot carry: pass on the cause itself,
            // not what stands in for it (a cancellation failure), so that the root survives any
            // `Failure`. A failure that carries it is passed on as reported, with the cause.
            if let stoppedBy = bridge.upstreamFailure, !FailureConversion.canExpressUpstreamFailure(Failure.self) {
                return .unavailable(upstreamError(.failed(stoppedBy)))
            }
            if let conditionFailure { return .unavailable(upstreamError(.failed(conditionFailure))) }
            if isCancelled { return .unavailable(upstreamError(.cancelled)) }
            return .unavailable(upstreamError(.failed(error)))
        case nil:
            guard Success.self is Input.Type else { return .notProvided }
            if let stoppedBy = bridge.upstreamFailure { return .unavailable(upstreamError(.failed(stoppedBy))) }
            if let conditionFailure { return .unavailable(upstreamError(.failed(conditionFailure))) }
            guard isCancelled else { return .notProvided }
            return .unavailable(upstreamError(.cancelled))
        }
    }

    private func upstreamError(_ reason: UpstreamFailedError.Reason) -> UpstreamFailedError {
        UpstreamFailedError(describing: self, reason: reason)
    }
}
