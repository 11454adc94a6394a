import Foundation

/// An operation that runs fresh attempts of some work — a classic operation or an async closure —
/// until one succeeds, a failure is not worth retrying, or the attempts run out.
///
/// Operations cannot be restarted, so a retrying operation takes a factory that makes one fresh
/// attempt per try. It is an ``AsyncResultOperation`` itself: queue it, depend on it, chain it
/// with `then`, put it in a ``Pipeline`` or await it like any other. Dependents see only its
/// final outcome.
///
/// ```swift
/// let fetch = RetryingOperation(
///     maxAttempts: 4,
///     backoff: .exponential(initial: .milliseconds(200), maximum: .seconds(2)).jittered(),
///     attemptTimeLimit: .seconds(5),
///     retryingWhen: { $0.isTransient }
/// ) { _ in
///     FetchOperation(url)  // a classic AsyncResultOperation<Data, FetchError> subclass
/// }
/// let data = try await queue.run(fetch)  // throws(FetchError): the last attempt's failure
/// ```
///
/// ## Attempts
/// The first attempt is made when the operation starts. When an attempt fails with a failure
/// that `retryingWhen` accepts and attempts are left, the operation waits as `backoff` says — a
/// sleep on `clock`, no blocked thread — and makes the next one. The outcome is that of the
/// last attempt: its success, or its typed failure. ``attemptCount`` and ``failedAttempts`` say
/// what happened, for logging.
///
/// - Each attempt runs on behalf of the retrying operation, which holds its queue slot: the
///   attempt goes to a queue of the package's without a width limit (so a queue with one slot
///   never waits for itself), which starts it once its own dependencies, if any, have finished.
///   An attempt that the package has already queued elsewhere (with `addTask`, `run`, a
///   pipeline…), or that has started or finished, is awaited rather than queued again: its
///   outcome counts as the attempt's. Return a fresh operation from the factory: returning the
///   same one again reports the same outcome again, and one that your own code added to a queue
///   cannot be told from a fresh one (as with `run`) — Foundation traps when it is queued twice.
/// - An attempt that runs out of `attemptTimeLimit` is timed out (``Bridge/isTimedOut``):
///   its `Failure.timeout` goes to `retryingWhen` like any failure; where `Failure` cannot
///   express a timeout, a timed-out attempt is always retried, and when it was the last one the
///   retrying operation ends timed out, without a result.
/// - What happens to an attempt whose time is up but that ignores its cancellation is
///   `onAttemptTimeout`'s choice, as for an await with a time limit (``TimeoutBehavior``). With
///   ``TimeoutBehavior/cancelAndReturn`` (the default) the limit bounds the attempt: the retrying
///   operation moves on at once — to the next attempt, or, after the last one, to its end, timed
///   out — and leaves the cancelled attempt to end on its own. That attempt still runs until it
///   notices the cancellation: the next attempt may run alongside it, the retrying operation may
///   finish (and its dependents start) before it ends, and its slot stays taken until then (in
///   the package's queue of attempts, which has no width limit — or in your queue, if you queued
///   it). Nothing waits for it, and nothing it reports afterwards counts: its outcome was the
///   timeout. With ``TimeoutBehavior/cancelAndWait``, each timed-out attempt is waited for until
///   it has ended, so attempts never overlap and none outlives the retrying operation — but an
///   attempt that ignores cancellation keeps it waiting for as long as it runs.
/// - An attempt cancelled by anyone but the retrying operation is not retried: the retrying
///   operation ends cancelled, with the attempt's cancellation failure if it has one.
///
/// ## Cancellation and time limits
/// Cancelling the retrying operation (or the task that owns it, through `run`) cancels the
/// running attempt, or ends the wait between two attempts at once, and makes no more attempts;
/// it finishes once the running attempt has ended, so the running attempt does not outlive it
/// (an earlier attempt given up on when its time was up may; see `onAttemptTimeout`). To bound one
/// attempt, pass `attemptTimeLimit`; to bound all of them, backoff included, call
/// ``Bridge/limitRunningTime(to:clock:)`` on the retrying operation or await it with a
/// time limit: it then ends timed out.
///
/// The queue slot stays taken during the waits between attempts (the operation is running).
public final class RetryingOperation<Success: Sendable, Failure: Error>: AsyncResultOperation<Success, Failure>,
    @unchecked Sendable
{
    /// The most attempts made, at least 1. Immutable: safe from any thread.
    public let maxAttempts: Int
    /// The wait between a failed attempt and the next one. Immutable: safe from any thread.
    public let backoff: Backoff
    /// What happens when an attempt runs out of its time limit: move on at once (the default), or
    /// wait until the cancelled attempt has ended (see the type's documentation). Immutable: safe
    /// from any thread.
    public let onAttemptTimeout: TimeoutBehavior
    /// Makes, runs and waits for the attempts, shared with ``RepeatingOperation``.
    private let loop: AttemptLoop<Success, Failure>
    private let shouldRetry: @Sendable (Failure) -> Bool
    // Safety: guarded by the inherited `lock`.
    private var startedAttempts = 0
    private var failures: [OperationFailure<Failure>] = []

    /// Creates an operation that retries the operations `makeAttempt` makes.
    ///
    /// ## Cancellation and threading
    /// Safe from any thread. Nothing runs until the operation starts; cancelling it cancels the
    /// running attempt or ends the wait between attempts (see the type's documentation).
    ///
    /// - Parameters:
    ///   - maxAttempts: The most attempts, the first included: 1 runs the work once and never
    ///     retries. Zero or less is a programmer error: it traps, with a message.
    ///   - backoff: The wait between attempts; ``Backoff/none`` (the default) retries at once.
    ///   - clock: The clock the waits and `attemptTimeLimit` are measured on; `ContinuousClock`
    ///     unless you pass another (a test clock, for example).
    ///   - attemptTimeLimit: How long one attempt may run, from its start (see
    ///     ``Bridge/limitRunningTime(to:clock:)``); `nil` (the default) for no limit.
    ///   - onAttemptTimeout: When an attempt's time is up: ``TimeoutBehavior/cancelAndReturn``
    ///     (the default) cancels it and moves on at once, leaving it to end on its own;
    ///     ``TimeoutBehavior/cancelAndWait`` cancels it and waits until it has ended.
    ///   - retryingWhen: Whether a failure is worth another attempt (transient); every failure
    ///     is, unless you say otherwise. Called on the operation's task, once per failed attempt
    ///     that has a successor left.
    ///   - makeAttempt: Makes attempt number `n` (1, 2, …): return a fresh operation. It may be
    ///     `async` (to fetch a token first, say). Called on the operation's task, never
    ///     concurrently with itself; when the retrying operation is cancelled while it runs, the
    ///     attempt it returns is cancelled and never started.
    public init<C: Clock<Duration>>(
        maxAttempts: Int,
        backoff: Backoff = .none,
        clock: C = ContinuousClock(),
        attemptTimeLimit: Duration? = nil,
        onAttemptTimeout: TimeoutBehavior = .cancelAndReturn,
        retryingWhen: @escaping @Sendable (Failure) -> Bool = { _ in true },
        makingAttempt makeAttempt: @escaping @Sendable (_ attempt: Int) async -> AsyncResultOperation<Success, Failure>
    ) {
        guard maxAttempts >= 1 else {
            // `fatalError`, not `preconditionFailure`: the message must survive release builds.
            fatalError("RetryingOperation needs maxAttempts of at least 1 (1 runs the work once), not \(maxAttempts)")
        }
        self.maxAttempts = maxAttempts
        self.backoff = backoff
        self.onAttemptTimeout = onAttemptTimeout
        self.loop = AttemptLoop(
            clock: clock, attemptTimeLimit: attemptTimeLimit, onAttemptTimeout: onAttemptTimeout,
            makeAttempt: makeAttempt)
        self.shouldRetry = retryingWhen
        super.init()
    }

    /// Creates an operation that retries an async closure: each attempt is a ``TaskOperation``
    /// running `body` with the attempt's number (1, 2, …).
    ///
    /// ```swift
    /// let quote = RetryingOperation(maxAttempts: 3, backoff: .constant(.seconds(1))) {
    ///     (_: Int) async throws(QuoteError) -> Price in
    ///     try await service.quote()
    /// }
    /// ```
    ///
    /// Write the closure's signature with its typed error, as above: Swift infers `Failure` from
    /// it (an untyped `throw` inside a closure without a signature makes the compiler complain
    /// about the factory initializer instead). A closure that returns an operation is a factory:
    /// use ``init(maxAttempts:backoff:clock:attemptTimeLimit:onAttemptTimeout:retryingWhen:makingAttempt:)``
    /// (a throwing one that returns an operation traps, with a message). The parameters are those
    /// of the factory initializer.
    ///
    /// ## Cancellation and threading
    /// Safe from any thread. `body` runs in a new `Task` per attempt; cancelling the retrying
    /// operation cancels the `Task` running the current attempt. Two never run at once, except
    /// when an attempt whose time is up ignores its cancellation and `onAttemptTimeout` is
    /// ``TimeoutBehavior/cancelAndReturn`` (the default): the next one starts meanwhile.
    @_disfavoredOverload
    public convenience init<C: Clock<Duration>>(
        maxAttempts: Int,
        backoff: Backoff = .none,
        clock: C = ContinuousClock(),
        attemptTimeLimit: Duration? = nil,
        onAttemptTimeout: TimeoutBehavior = .cancelAndReturn,
        retryingWhen: @escaping @Sendable (Failure) -> Bool = { _ in true },
        _ body: @escaping @Sendable (_ attempt: Int) async throws(Failure) -> Success
    ) {
        // An async closure returning an operation, not the value: the factory initializer was meant
        // (it is chosen for a closure that cannot throw; a throwing one lands here).
        guard !(Success.self is Operation.Type) else {
            fatalError(
                "RetryingOperation: the closure returns an operation (\(Success.self)): a factory must not throw — "
                    + "use init(maxAttempts:makingAttempt:) with a closure that returns a fresh operation")
        }
        self.init(
            maxAttempts: maxAttempts, backoff: backoff, clock: clock, attemptTimeLimit: attemptTimeLimit,
            onAttemptTimeout: onAttemptTimeout, retryingWhen: retryingWhen
        ) { attempt in
            TaskOperation { () async throws(Failure) -> Success in try await body(attempt) }
        }
    }

    /// How many attempts have been made so far (started or awaited). Thread-safe.
    public var attemptCount: Int {
        lock.withCriticalSection { startedAttempts }
    }

    /// The failures of the attempts that failed so far, in order — the last one included when
    /// it ended the operation. An attempt that timed out without a failure of its own appears as
    /// ``OperationFailure/timedOut``, a cancelled one as ``OperationFailure/cancelled``.
    /// Thread-safe; read it after the operation has finished for the whole story.
    public var failedAttempts: [OperationFailure<Failure>] {
        lock.withCriticalSection { failures }
    }

    /// The package's own step: a failed dependency stops it, whatever `Failure` can say.
    override var skipsAfterUpstreamFailure: Bool { true }

    /// Makes and awaits the attempts. Called by `start()`; do not call it yourself.
    public override func main() {
        runAttachedTask { [self] in
            await runAttempts()
        }
    }

    /// The attempts, one after another, and the waits between them; ends by finishing.
    private func runAttempts() async {
        var generator = backoff.makeGenerator()
        let end = await loop.run(for: self) { number in
            lock.withCriticalSection { startedAttempts = number }
        } judge: { attempt, number -> AttemptLoop<Success, Failure>.Next<AttemptLoopEnd<Success, Failure>> in
            let ending = AttemptEnding(of: attempt)
            if let failure = ending.failure { lock.withCriticalSection { failures.append(failure) } }
            let isLast = number == maxAttempts
            switch ending {
            case .succeeded(let value):
                return .end(.succeed(value))
            case .failed(let error, let cancelledByOthers):
                if cancelledByOthers { return .end(.cancel(error)) }
                guard !isLast && shouldRetry(error) else { return .end(.fail(error)) }
                return .again(after: backoff.delay(afterFailedAttempts: number, using: &generator))
            case .timedOut:
                // A timeout that `Failure` cannot express is always transient.
                if isLast { return .end(.timeOut) }
                return .again(after: backoff.delay(afterFailedAttempts: number, using: &generator))
            case .cancelled:
                return .end(.cancel(nil))
            case .upstreamFailed(let error):
                return .end(.upstreamFailed(error))
            }
        }
        // No end: this operation was cancelled (or timed out), and its running attempt has ended.
        guard let end else { return finish() }
        end.finish(self)
    }
}

extension RetryingOperation: CustomReflectable {
    /// A mirror of the operation's public state (name, whether it is executing, finished or
    /// cancelled, its result), not of its stored properties: on Linux those reach its queue and,
    /// through Foundation's, other operations that threads free meanwhile, and Swift Testing
    /// reflects the values of a failed expectation (Design.md, "Reflection"). Thread-safe.
    public var customMirror: Mirror {
        operationMirror(of: self)
    }
}
