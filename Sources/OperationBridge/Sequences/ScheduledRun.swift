import Foundation

/// One run of a set of operations through the ``GraphScheduler``, with its finished positions
/// handed to a single consumer. Shared by ``OperationResults`` and ``Pipeline``.
///
/// Safety: `started`, `consumerAttached`, `pendingTimeLimit`, `limitClaimed`, `timeLimit`
/// and `progress` are guarded by `lock`; the scheduler and the hand-off are thread-safe.
final class ScheduledRun: @unchecked Sendable {
    let scheduler: GraphScheduler
    let positions: FinishedPositions
    /// For each node, the first position of its operation in the array the run was made from.
    private let firstPosition: [Int]
    private let lock = NSLock()
    private var started = false
    private var consumerAttached = false
    /// The time limit to arm when the run starts (see ``limitRunningTime(_:)``).
    private var pendingTimeLimit: (@Sendable () -> RunTimeLimit)?
    /// Whether a time limit has been taken to be armed: later ones are ignored.
    private var limitClaimed = false
    /// The armed time limit.
    private var timeLimit: RunTimeLimit?
    private var progress: OperationProgress?

    init(scheduler: GraphScheduler, order: ResultOrder) {
        self.scheduler = scheduler
        self.positions = FinishedPositions(count: scheduler.nodeOfPosition.count, order: order)
        var firstPosition = Array(repeating: -1, count: scheduler.operations.count)
        for (position, node) in scheduler.nodeOfPosition.enumerated() where firstPosition[node] < 0 {
            firstPosition[node] = position
        }
        self.firstPosition = firstPosition
    }

    /// The first step that failed on its own, by its first position.
    var firstFailure: StepFailure? {
        scheduler.firstFailure.map { node, reason in
            StepFailure(index: firstPosition[node], operation: scheduler.operations[node], reason: reason)
        }
    }

    /// The failure result of the first step that failed on its own, when that step is a result
    /// operation with this `Failure`: what a typed sequence reports when an operation only tells
    /// of an upstream failure, or was cancelled because of it.
    func firstFailure<Success, Failure>(of _: AsyncResultOperation<Success, Failure>.Type) -> Failure? {
        guard let operation = firstFailure?.operation as? AsyncResultOperation<Success, Failure>,
            case .failure(let error)? = operation.result
        else { return nil }
        return error
    }

    /// Whether the run has started. Thread-safe.
    var hasStarted: Bool { lock.withCriticalSection { started } }

    /// Starts scheduling. The first call wins; later calls do nothing and return `false`.
    @discardableResult
    func start() -> Bool {
        let first = lock.withCriticalSection {
            defer { started = true }
            return !started
        }
        guard first else { return false }
        armTimeLimit()
        // The later positions of operations listed twice.
        var laterPositions: [Int: [Int]] = [:]
        for (position, node) in scheduler.nodeOfPosition.enumerated() where firstPosition[node] != position {
            laterPositions[node, default: []].append(position)
        }
        let positions = self.positions
        // Without duplicates (a pipeline's, always), no lookup per finish.
        let later = laterPositions.isEmpty ? nil : laterPositions
        scheduler.start { [firstPosition] node in
            positions.finish(firstPosition[node], and: later?[node] ?? [])
        }
        return true
    }

    /// Claims the single consumer slot. Returns `false` when a consumer was attached already.
    func attachConsumer() -> Bool {
        lock.withCriticalSection {
            defer { consumerAttached = true }
            return !consumerAttached
        }
    }

    /// Limits the run's time to `limit`, measured on `clock` from the start of the run (from now
    /// when it has started); see ``limitRunningTime(_:)``.
    func limitRunningTime<C: Clock<Duration>>(to limit: Duration, clock: C, behavior: TimeoutBehavior) {
        limitRunningTime { RunTimeLimit(deadline: clock.now.advanced(by: limit), clock: clock, behavior: behavior) }
    }

    /// Limits the run's time to `deadline` on `clock`; see ``limitRunningTime(_:)``.
    func limitRunningTime<C: Clock<Duration>>(until deadline: C.Instant, clock: C, behavior: TimeoutBehavior) {
        limitRunningTime { RunTimeLimit(deadline: deadline, clock: clock, behavior: behavior) }
    }

    /// Limits the run's time: `resolve` makes the limit (its deadline) when the run starts — at
    /// once when it has. A later call replaces an earlier one that is not armed yet; once one is
    /// armed, later calls do nothing.
    private func limitRunningTime(_ resolve: @escaping @Sendable () -> RunTimeLimit) {
        // The limit replaced is dropped after the lock: its clock may be a class of the caller's.
        let (armNow, replaced) = lock.withCriticalSection { () -> (Bool, (@Sendable () -> RunTimeLimit)?) in
            guard !limitClaimed else { return (false, nil) }
            return (started, exchange(&pendingTimeLimit, with: resolve))
        }
        withExtendedLifetime(replaced) {}
        if armNow { armTimeLimit() }
    }

    /// The progress of the run's operations, each weighing one; the same object every time.
    /// Thread-safe.
    var operationProgress: OperationProgress {
        lock.withCriticalSection {
            if let progress { return progress }
            let progress = OperationProgress(aggregating: scheduler.operations)
            self.progress = progress
            return progress
        }
    }

    /// Whether the run's time limit ran out while operations were unfinished. Thread-safe.
    var isTimedOut: Bool { scheduler.isTimedOut }

    /// A time limit for one await on the run, with the run's deadline: when it runs out, the
    /// awaited operation times out and the await ends as the run's ``TimeoutBehavior`` says.
    /// `nil` without a limit.
    func waitTimeout() -> WaitTimeout? {
        guard let limit = lock.withCriticalSection({ timeLimit }) else { return nil }
        // The run times out first, whichever timer fires first: the awaited step is then one of
        // many timed out, and the run says so.
        return WaitTimeout(behavior: limit.behavior, schedule: limit.schedule) { self.timeUp(limit.behavior) }
    }

    private func armTimeLimit() {
        let resolve = lock.withCriticalSection { () -> (@Sendable () -> RunTimeLimit)? in
            defer { pendingTimeLimit = nil }
            if pendingTimeLimit != nil { limitClaimed = true }
            return pendingTimeLimit
        }
        guard let resolve else { return }
        // Resolved without the lock: it reads the caller's clock.
        let limit = resolve()
        lock.withCriticalSection { timeLimit = limit }
        // Strong: the run must time its operations out even when nobody holds it any more. The
        // timer is stopped once every operation has finished, so nothing outlives the run.
        let timer = limit.schedule { self.timeUp(limit.behavior) }
        scheduler.whenAllFinished { timer.cancel() }
    }

    /// The time is up: every unfinished operation times out; with ``TimeoutBehavior/cancelAndReturn``
    /// the consumer's iteration and the waits for the whole run end at once.
    private func timeUp(_ behavior: TimeoutBehavior) {
        // Nothing to do when everything has finished, or the run was cancelled (or timed out)
        // already: that is not a timeout, or not a new one. The scheduler records the timeout
        // as it marks the run cancelled, so the second of two timers firing together (the run's
        // and an await's) returns only after `isTimedOut` is true.
        let cancelled = scheduler.cancelAll(timingOut: true)
        guard cancelled else { return }
        if behavior == .cancelAndReturn {
            positions.terminate()
            scheduler.abandonWaiters()
        }
    }

    /// Cancels every unfinished operation and ends the consumer's iteration.
    func cancel() {
        scheduler.cancelAll()
        positions.terminate()
    }
}

/// Owns a ``ScheduledRun`` for one iterator: when iteration ends before every operation was
/// delivered — the iterating task was cancelled, or the iterator went away because the loop
/// exited early — the unfinished operations are cancelled.
final class IterationLifetime: Sendable {
    let run: ScheduledRun

    init(_ run: ScheduledRun) {
        self.run = run
    }

    /// The next finished position, or `nil` at the end. When the iterating task was cancelled,
    /// returns `nil` and cancels the operations that have not finished.
    func next() async -> Int? {
        guard let position = await run.positions.next() else {
            cancelIfIncomplete()
            return nil
        }
        return position
    }

    private func cancelIfIncomplete() {
        if !run.positions.allDelivered {
            run.cancel()
        }
    }

    deinit {
        cancelIfIncomplete()
    }
}

/// The time limit of a ``ScheduledRun``: a deadline on a clock, and what awaits do when it comes.
struct RunTimeLimit: Sendable {
    let behavior: TimeoutBehavior
    /// Arms a timer for the deadline.
    let schedule: @Sendable (_ action: @escaping @Sendable () -> Void) -> DeadlineTimer

    init<C: Clock<Duration>>(deadline: C.Instant, clock: C, behavior: TimeoutBehavior) {
        self.behavior = behavior
        self.schedule = { action in DeadlineTimer.schedule(at: deadline, on: clock, action) }
    }
}
