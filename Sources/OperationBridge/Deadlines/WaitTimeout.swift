import Foundation

/// The time limit of one await: when the time is up before the wait has ended, it cancels the
/// operation and — as ``TimeoutBehavior`` says — stops the wait.
///
/// One per await, made by the public APIs and handed to ``OperationWaiter``, which arms it once
/// it has registered the wait and cancels the timer when the wait ends, so that no timer
/// outlives the await.
///
/// Safety: `firedFlag` is only touched while holding `lock`; everything else is immutable.
@usableFromInline
final class WaitTimeout: @unchecked Sendable {
    let behavior: TimeoutBehavior
    private let schedule: @Sendable (_ action: @escaping @Sendable () -> Void) -> DeadlineTimer
    private let lock = NSLock()
    private var firedFlag = false

    /// Called when the time is up, before the operation is timed out: a run's time limit times
    /// the whole run out.
    private let onFire: (@Sendable () -> Void)?

    /// A time limit that `schedule` arms.
    init(
        behavior: TimeoutBehavior,
        schedule: @escaping @Sendable (_ action: @escaping @Sendable () -> Void) -> DeadlineTimer,
        onFire: (@Sendable () -> Void)? = nil
    ) {
        self.behavior = behavior
        self.schedule = schedule
        self.onFire = onFire
    }

    convenience init<C: Clock>(deadline: C.Instant, clock: C, behavior: TimeoutBehavior) where C.Duration == Duration {
        self.init(behavior: behavior) { action in DeadlineTimer.schedule(at: deadline, on: clock, action) }
    }

    convenience init<C: Clock>(timeout: Duration, clock: C, behavior: TimeoutBehavior) where C.Duration == Duration {
        self.init(deadline: clock.now.advanced(by: timeout), clock: clock, behavior: behavior)
    }

    /// Whether the time ran out before the wait ended. The timer then timed the operation out
    /// (``AsyncOperation/timeOut()``) — unless its outcome was decided already, a cancellation
    /// included: a cancellation is never reported as a timeout.
    @usableFromInline var fired: Bool { lock.withCriticalSection { firedFlag } }

    /// Starts the timer for a wait on `operation`; `stopWaiting` ends the wait as if the awaiting
    /// task had given up.
    func arm(for operation: Operation, stopWaiting: @escaping @Sendable () -> Void) -> DeadlineTimer {
        schedule { [self] in
            onFire?()
            guard !operation.isFinished else { return }
            lock.withCriticalSection { firedFlag = true }
            OperationWaiter.giveUp(
                on: operation, cancelling: true, timingOut: true, waitForRunningWork: behavior == .cancelAndWait,
                stopWaiting: stopWaiting)
        }
    }
}
