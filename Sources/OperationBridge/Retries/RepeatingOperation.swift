import Foundation

/// An operation that runs fresh iterations of some work — a classic operation or an async
/// closure — one after another, with a wait between two, until a value says it is done: polling.
///
/// Operations cannot be restarted, so a repeating operation takes a factory that makes one fresh
/// operation per iteration (ProcedureKit's `RepeatProcedure`). It is an ``AsyncResultOperation``
/// itself: queue it, depend on it, chain it with `then`, put it in a ``Pipeline`` or await it
/// like any other. Its result is the **last iteration's value**; dependents see only that.
///
/// ```swift
/// let export = RepeatingOperation(
///     maxIterations: 20,
///     wait: .constant(.seconds(2)),
///     until: { $0 == .ready }
/// ) { _ in
///     ExportStatusOperation(job)  // a classic AsyncResultOperation<ExportStatus, ExportError> subclass
/// }
/// let status = try await queue.run(export)  // .ready — or the 20th status, if it never was
/// ```
///
/// ## Iterations
/// The first iteration is made when the operation starts. After each one:
/// - A value for which `until` is `true` ends the operation with that value.
/// - So does the value of iteration `maxIterations`, whatever `until` says: the operation
///   succeeds with the last value (ask `until` again, or compare ``iterationCount`` with
///   ``maxIterations``, to tell "done" from "gave up").
/// - A failure ends the operation with that failure — unless `continuingAfter` accepts it and
///   iterations are left: the failure is recorded in ``failedIterations`` and the next iteration
///   comes after the usual wait. The last iteration's failure always ends the operation with it,
///   even after earlier values: the result is the last iteration's outcome.
/// - Otherwise the operation waits as `wait` says — a sleep on `clock`, no blocked thread; a
///   ``Backoff`` is given the number of iterations so far — and makes the next one.
///
/// Only the last value is kept. To keep every value, collect them in `until`, which sees each one
/// in order on the operation's task.
///
/// The iterations run as a ``RetryingOperation``'s attempts do, with the same machinery: each
/// on behalf of the repeating operation, which holds its queue slot (also during the waits);
/// an iteration the package has queued already is awaited, not queued again; `iterationTimeLimit`
/// bounds one iteration from its start, and `onIterationTimeout` says whether a timed-out
/// iteration that ignores its cancellation is given up on at once or waited for
/// (``TimeoutBehavior``). A timed-out iteration is a failure like any other:
/// `Failure.timeout` (``TimeoutRepresentable``) or ``OperationFailure/timedOut``, which
/// `continuingAfter` may accept; when it does not, the operation ends with that failure, or —
/// where `Failure` cannot express a timeout — timed out (``Bridge/isTimedOut``), without a result.
/// An iteration cancelled by anyone but the repeating operation ends it cancelled; one that did
/// not run because a dependency of its own failed ends it with that failure.
///
/// ## Progress
/// The operation's ``Bridge/operationProgress`` counts iterations: its total is
/// `maxIterations` (unknown without one), and each ended iteration completes a unit; an
/// operation that ends early (its value was done) completes its progress when it finishes.
///
/// ## Cancellation and time limits
/// Cancelling the repeating operation (or the task that owns it, through `run`) cancels the
/// running iteration, or ends the wait between two at once, and makes no more; it finishes,
/// cancelled, once the running iteration has ended — its value does not count. To bound the
/// whole polling, waits included, call ``Bridge/limitRunningTime(to:clock:)`` or
/// ``Bridge/limitRunningTime(until:clock:)`` on the repeating operation, or await it with a
/// time limit: it then ends timed out.
public final class RepeatingOperation<Success: Sendable, Failure: Error>: AsyncResultOperation<Success, Failure>,
    @unchecked Sendable
{
    /// The most iterations made, at least 1; `nil` for no limit (until a value is done, a failure,
    /// a cancellation or a time limit). Immutable: safe from any thread.
    public let maxIterations: Int?
    /// The wait between an iteration and the next. Immutable: safe from any thread.
    public let wait: Backoff
    /// What happens when an iteration runs out of its time limit: move on at once (the default),
    /// or wait until the cancelled iteration has ended. Immutable: safe from any thread.
    public let onIterationTimeout: TimeoutBehavior
    /// Makes, runs and waits for the iterations, shared with ``RetryingOperation``.
    private let loop: AttemptLoop<Success, Failure>
    private let isDone: @Sendable (Success) -> Bool
    private let continues: @Sendable (OperationFailure<Failure>) -> Bool
    // Safety: guarded by the inherited `lock`.
    private var iterations = 0
    private var failures: [OperationFailure<Failure>] = []

    /// Creates an operation that repeats the operations `makeIteration` makes.
    ///
    /// ## Cancellation and threading
    /// Safe from any thread. Nothing runs until the operation starts; cancelling it cancels the
    /// running iteration or ends the wait between two (see the type's documentation).
    ///
    /// - Parameters:
    ///   - maxIterations: The most iterations, the first included; `nil` (the default) for no
    ///     limit. Zero or less is a programmer error: it traps, with a message.
    ///   - wait: The wait between two iterations; ``Backoff/none`` (the default) repeats at once.
    ///     A backoff's delay after `n` iterations is the one it gives after `n` failed attempts.
    ///   - clock: The clock the waits and `iterationTimeLimit` are measured on;
    ///     `ContinuousClock` unless you pass another (a test clock, for example).
    ///   - iterationTimeLimit: How long one iteration may run, from its start (see
    ///     ``Bridge/limitRunningTime(to:clock:)``); `nil` (the default) for no limit.
    ///   - onIterationTimeout: When an iteration's time is up: ``TimeoutBehavior/cancelAndReturn``
    ///     (the default) cancels it and moves on at once, leaving it to end on its own;
    ///     ``TimeoutBehavior/cancelAndWait`` cancels it and waits until it has ended.
    ///   - continuingAfter: Whether a failed iteration is followed by another (when iterations are
    ///     left) rather than ending the operation; none is, unless you say otherwise. It sees
    ///     ``OperationFailure/failed(_:)`` with the iteration's failure, or
    ///     ``OperationFailure/timedOut`` for a timeout its `Failure` cannot express. Called on the
    ///     operation's task.
    ///   - until: Whether a value is the one waited for: `true` ends the operation with it. Called
    ///     on the operation's task with each iteration's value, in order, never concurrently.
    ///   - makeIteration: Makes iteration number `n` (1, 2, …): return a fresh operation. It may
    ///     be `async`. Called on the operation's task, never concurrently with itself; when the
    ///     repeating operation is cancelled while it runs, the operation it returns is cancelled
    ///     and never started.
    public init<C: Clock<Duration>>(
        maxIterations: Int? = nil,
        wait: Backoff = .none,
        clock: C = ContinuousClock(),
        iterationTimeLimit: Duration? = nil,
        onIterationTimeout: TimeoutBehavior = .cancelAndReturn,
        continuingAfter: @escaping @Sendable (OperationFailure<Failure>) -> Bool = { _ in false },
        until: @escaping @Sendable (Success) -> Bool,
        makingIteration makeIteration: @escaping @Sendable (Int) async -> AsyncResultOperation<Success, Failure>
    ) {
        if let maxIterations, maxIterations < 1 {
            // `fatalError`, not `preconditionFailure`: the message must survive release builds.
            fatalError(
                "RepeatingOperation needs maxIterations of at least 1 (1 runs the work once), or nil for no limit, "
                    + "not \(maxIterations)")
        }
        self.maxIterations = maxIterations
        self.wait = wait
        self.onIterationTimeout = onIterationTimeout
        self.loop = AttemptLoop(
            clock: clock, attemptTimeLimit: iterationTimeLimit, onAttemptTimeout: onIterationTimeout,
            makeAttempt: makeIteration)
        self.isDone = until
        self.continues = continuingAfter
        super.init()
    }

    /// Creates an operation that repeats an async closure: each iteration is a ``TaskOperation``
    /// running `body` with the iteration's number (1, 2, …).
    ///
    /// ```swift
    /// let ready = RepeatingOperation(maxIterations: 10, wait: .constant(.seconds(1)), until: { $0 }) {
    ///     (_: Int) async throws(ExportError) -> Bool in
    ///     try await service.isExportReady(job)
    /// }
    /// ```
    ///
    /// Write the closure's signature with its typed error, as above, so that Swift infers
    /// `Failure`. A closure that returns an operation is a factory: use
    /// ``init(maxIterations:wait:clock:iterationTimeLimit:onIterationTimeout:continuingAfter:until:makingIteration:)``
    /// (a throwing one that returns an operation traps, with a message). The parameters are those
    /// of the factory initializer.
    ///
    /// ## Cancellation and threading
    /// Safe from any thread. `body` runs in a new `Task` per iteration; cancelling the repeating
    /// operation cancels the `Task` running the current iteration. Two never run at once, except
    /// when an iteration whose time is up ignores its cancellation and `onIterationTimeout` is
    /// ``TimeoutBehavior/cancelAndReturn`` (the default): the next one starts meanwhile.
    @_disfavoredOverload
    public convenience init<C: Clock<Duration>>(
        maxIterations: Int? = nil,
        wait: Backoff = .none,
        clock: C = ContinuousClock(),
        iterationTimeLimit: Duration? = nil,
        onIterationTimeout: TimeoutBehavior = .cancelAndReturn,
        continuingAfter: @escaping @Sendable (OperationFailure<Failure>) -> Bool = { _ in false },
        until: @escaping @Sendable (Success) -> Bool,
        _ body: @escaping @Sendable (_ iteration: Int) async throws(Failure) -> Success
    ) {
        // An async closure returning an operation, not the value: the factory initializer was meant.
        guard !(Success.self is Operation.Type) else {
            fatalError(
                "RepeatingOperation: the closure returns an operation (\(Success.self)): a factory must not throw — "
                    + "use init(maxIterations:until:makingIteration:) with a closure that returns a fresh operation")
        }
        self.init(
            maxIterations: maxIterations, wait: wait, clock: clock, iterationTimeLimit: iterationTimeLimit,
            onIterationTimeout: onIterationTimeout, continuingAfter: continuingAfter, until: until
        ) { iteration in
            TaskOperation { () async throws(Failure) -> Success in try await body(iteration) }
        }
    }

    /// How many iterations have been made so far (started or awaited). Thread-safe.
    public var iterationCount: Int {
        lock.withCriticalSection { iterations }
    }

    /// The failures of the iterations that failed so far, in order — the last one included when
    /// it ended the operation. A timeout without a failure of its own appears as
    /// ``OperationFailure/timedOut``, a cancelled iteration as ``OperationFailure/cancelled``.
    /// Thread-safe; read it after the operation has finished for the whole story.
    public var failedIterations: [OperationFailure<Failure>] {
        lock.withCriticalSection { failures }
    }

    /// The package's own step: a failed dependency stops it, whatever `Failure` can say.
    override var skipsAfterUpstreamFailure: Bool { true }

    /// Makes and awaits the iterations. Called by `start()`; do not call it yourself.
    public override func main() {
        runAttachedTask { [self] in
            await runIterations()
        }
    }

    /// The iterations, one after another, and the waits between them; ends by finishing.
    private func runIterations() async {
        let progress = bridge.operationProgress
        progress.totalUnitCount = Int64(maxIterations ?? -1)
        var generator = wait.makeGenerator()
        let end = await loop.run(for: self) { number in
            lock.withCriticalSection { iterations = number }
        } judge: { iteration, number -> AttemptLoop<Success, Failure>.Next<AttemptLoopEnd<Success, Failure>> in
            let ending = AttemptEnding(of: iteration)
            if let failure = ending.failure { lock.withCriticalSection { failures.append(failure) } }
            let isLast = number == maxIterations
            switch ending {
            case .succeeded(let value):
                progress.advance()
                if isLast || isDone(value) { return .end(.succeed(value)) }
            case .failed(let error, let cancelledByOthers):
                if cancelledByOthers { return .end(.cancel(error)) }
                guard !isLast && continues(.failed(error)) else { return .end(.fail(error)) }
                progress.advance()
            case .timedOut:
                guard !isLast && continues(.timedOut) else { return .end(.timeOut) }
                progress.advance()
            case .cancelled:
                return .end(.cancel(nil))
            case .upstreamFailed(let error):
                return .end(.upstreamFailed(error))
            }
            return .again(after: wait.delay(afterFailedAttempts: number, using: &generator))
        }
        // No end: this operation was cancelled (or timed out), and its running iteration has ended.
        guard let end else { return finish() }
        end.finish(self)
    }
}

extension RepeatingOperation: CustomReflectable {
    /// A mirror of the operation's public state (name, whether it is executing, finished or
    /// cancelled, its result), not of its stored properties: on Linux those reach its queue and,
    /// through Foundation's, other operations that threads free meanwhile, and Swift Testing
    /// reflects the values of a failed expectation (Design.md, "Reflection"). Thread-safe.
    public var customMirror: Mirror {
        operationMirror(of: self)
    }
}
