import Dispatch

/// A one-shot timer: calls an action once a clock reaches a deadline, unless cancelled first.
///
/// - `ContinuousClock` deadlines share one ``TimerHeap``, `SuspendingClock` deadlines another,
///   each keeping its deadlines on its own clock (``DispatchTimerClock``): arming and cancelling
///   cost a lock and a heap update, no task and no sleeping thread, so that an await with a time
///   limit stays cheap, and a cancelled timer leaves nothing behind. A `ContinuousClock` deadline
///   counts the time the device sleeps, as the clock does: the heap is also woken by the wall
///   clock, so a 30 s limit ends 30 s of real time later even if the device slept meanwhile, not
///   30 s of uptime later. A `SuspendingClock` deadline does not count sleep, as that clock
///   does not.
/// - Any other clock (a test clock, for example) gets a task sleeping with
///   `clock.sleep(until:tolerance:)`, cancelled with the timer: the clock decides when it wakes.
///
/// The action runs on a private dispatch queue or in that task; it must not block.
struct DeadlineTimer: Sendable {
    private enum Kind: Sendable {
        case continuous(TimerHeap<DispatchTimerClock<ContinuousClock>>.Entry)
        case suspending(TimerHeap<DispatchTimerClock<SuspendingClock>>.Entry)
        case task(Task<Void, Never>)
        /// Fired by hand, not by a clock; cancelling it calls this.
        case manual(@Sendable () -> Void)
    }

    /// The serial queue both heaps are woken on and run their actions on.
    private static let queue = DispatchQueue(label: "OperationBridge.DeadlineTimer")

    /// The pending `ContinuousClock` deadlines.
    static let continuousHeap = TimerHeap(
        clock: DispatchTimerClock(ContinuousClock(), countsSleep: true, queue: queue))

    /// The pending `SuspendingClock` deadlines.
    static let suspendingHeap = TimerHeap(
        clock: DispatchTimerClock(SuspendingClock(), countsSleep: false, queue: queue))

    private let kind: Kind

    /// Arms a timer that calls `action` when `clock` reaches `deadline` — at once (on another
    /// thread) when it has already passed.
    static func schedule<C: Clock>(
        at deadline: C.Instant,
        on clock: C,
        _ action: @escaping @Sendable () -> Void
    ) -> DeadlineTimer where C.Duration == Duration {
        // A metatype comparison first: cheap for every clock, and a clock of another type whose
        // `Instant` happens to be one of these still sleeps on its own terms.
        if C.self == ContinuousClock.self, let deadline = deadline as? ContinuousClock.Instant {
            return DeadlineTimer(kind: .continuous(continuousHeap.schedule(at: deadline, action)))
        }
        if C.self == SuspendingClock.self, let deadline = deadline as? SuspendingClock.Instant {
            return DeadlineTimer(kind: .suspending(suspendingHeap.schedule(at: deadline, action)))
        }
        let task = Task {
            do {
                try await clock.sleep(until: deadline, tolerance: nil)
            } catch {
                return  // cancelled
            }
            action()
        }
        return DeadlineTimer(kind: .task(task))
    }

    /// A timer fired by its owner rather than a clock (see `AttemptTimeUp`): `onCancel` runs when
    /// it is cancelled.
    static func manual(onCancel: @escaping @Sendable () -> Void) -> DeadlineTimer {
        DeadlineTimer(kind: .manual(onCancel))
    }

    /// Stops the timer. The action is not called afterwards, unless it is already running.
    func cancel() {
        switch kind {
        case .continuous(let entry): Self.continuousHeap.cancel(entry)
        case .suspending(let entry): Self.suspendingHeap.cancel(entry)
        case .task(let task): task.cancel()
        case .manual(let onCancel): onCancel()
        }
    }
}
