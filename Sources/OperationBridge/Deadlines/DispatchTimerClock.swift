import Dispatch

/// `ContinuousClock` or `SuspendingClock` as the clock of a ``TimerHeap``, woken by dispatch
/// timer sources.
///
/// Readings are the clock's own (`clock.now`, as nanoseconds since the instant this object was
/// made), so a deadline means what it means on that clock. Dispatch has no timer on either clock
/// that the Swift overlay exposes, so the heap is woken by two sources that approximate it, and
/// re-reads the clock whenever one fires:
///
/// - An uptime source (`DispatchTime`), armed for the time left. Uptime stops while the device
///   sleeps (Darwin; `CLOCK_MONOTONIC` on Linux): exactly `SuspendingClock`, so for that clock it
///   is all there is.
/// - For a clock that counts sleep (`ContinuousClock`: `mach_continuous_time` on Darwin,
///   `CLOCK_BOOTTIME` on Linux), also a wall-clock source (`DispatchWallTime`), armed for the
///   same time left. The wall clock goes on while the device sleeps, so after a sleep that passed
///   the deadline it fires on wake instead of the time slept later. A wall clock set forward
///   fires it early: the heap finds nothing due and re-arms both. A wall clock set backward
///   delays it, and the uptime source fires on time unless the device also slept.
///
/// A wait longer than a day is armed as a day (a wake-up with nothing due re-arms), so that no
/// conversion to dispatch's time can overflow and neither source drifts far from the clock.
///
/// Safety: every stored property is immutable; dispatch sources may be scheduled from any thread,
/// and the heap calls ``arm(for:now:)`` under its lock, one call at a time.
final class DispatchTimerClock<C: Clock>: TimerHeapClock, @unchecked Sendable where C.Duration == Duration {
    private let clock: C
    private let origin: C.Instant
    private let uptimeSource: any DispatchSourceTimer
    /// The wall-clock source, for a clock that counts the time the device sleeps.
    private let wallSource: (any DispatchSourceTimer)?

    /// The longest time a source is armed for: a day.
    private static var longestArming: UInt64 { 86_400 * 1_000_000_000 }

    /// A clock whose sources call the heap's wake-up on `queue`; `countsSleep` adds the
    /// wall-clock source (for `ContinuousClock`).
    init(_ clock: C, countsSleep: Bool, queue: DispatchQueue) {
        self.clock = clock
        origin = clock.now
        uptimeSource = DispatchSource.makeTimerSource(queue: queue)
        wallSource = countsSleep ? DispatchSource.makeTimerSource(queue: queue) : nil
    }

    /// Whether the heap is also woken by the wall clock, which goes on while the device sleeps.
    var countsSleep: Bool { wallSource != nil }

    func reading(at instant: C.Instant) -> UInt64 {
        let (seconds, attoseconds) = origin.duration(to: instant).components
        if seconds < 0 || (seconds == 0 && attoseconds <= 0) { return 0 }
        let limit = UInt64.max / 2
        guard seconds < Int64(limit / 1_000_000_000) else { return limit }
        return min(limit, UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000))
    }

    var now: UInt64 { reading(at: clock.now) }

    func start(wake: @escaping @Sendable () -> Void) {
        uptimeSource.setEventHandler(handler: wake)
        uptimeSource.activate()
        wallSource?.setEventHandler(handler: wake)
        wallSource?.activate()
    }

    func arm(for deadline: UInt64, now: UInt64) {
        let left = Int(min(deadline > now ? deadline - now : 0, Self.longestArming))
        uptimeSource.schedule(deadline: .now() + .nanoseconds(left), leeway: .milliseconds(1))
        wallSource?.schedule(wallDeadline: .now() + .nanoseconds(left), leeway: .milliseconds(1))
    }
}
