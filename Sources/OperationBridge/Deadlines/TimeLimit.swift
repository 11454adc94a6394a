import Foundation

/// How long an await may take: a duration or a deadline on a clock, and what happens when the
/// time is up (``TimeoutBehavior``).
///
/// Every await of an operation takes one as `within:` — `op.bridge.value(within:)`,
/// `outcome(within:)`, `outcomeValue(within:)`, `waitForCompletion(within:)`, and the queue's
/// `run(_:within:)`, `runForOutcome(_:within:)`, `runForOutcomeValue(_:within:)`,
/// `runUntilFinished(_:within:)`:
///
/// ```swift
/// let price = try await queue.run(quote, within: .timeout(.seconds(3)))
/// let page = try await fetch.bridge.value(within: .deadline(start + .seconds(10)))
/// let report = try await queue.run(export, within: .timeout(.seconds(30), onTimeout: .cancelAndWait))
/// ```
///
/// When the time is up the operation is cancelled as timed out (``Bridge/isTimedOut``) and the
/// await returns at once (``TimeoutBehavior/cancelAndReturn``, the default) or once the work has
/// ended (``TimeoutBehavior/cancelAndWait``). What the await then reports depends on the
/// operation's `Failure`: see each await.
///
/// A `TimeLimit` is a description: a `timeout` is measured from the moment an await begins, not
/// from when the value was made, so one value can serve several awaits.
public struct TimeLimit: Sendable {
    /// Makes the limit of one await, when it begins.
    @usableFromInline let makeWaitTimeout: @Sendable () -> WaitTimeout

    /// A limit of `duration`, measured on `clock` from the moment the await begins.
    ///
    /// - Parameters:
    ///   - duration: How long the await may take. Zero or negative: the time is up at once (an
    ///     outcome that is already final is still answered).
    ///   - clock: The clock that measures it; `ContinuousClock` (which counts time asleep) unless
    ///     you pass another — a test clock, for example.
    ///   - onTimeout: What the await does when the time is up; either way the operation is
    ///     cancelled.
    public static func timeout<C: Clock<Duration>>(
        _ duration: Duration,
        clock: C = ContinuousClock(),
        onTimeout: TimeoutBehavior = .cancelAndReturn
    ) -> TimeLimit {
        TimeLimit { WaitTimeout(timeout: duration, clock: clock, behavior: onTimeout) }
    }

    /// A limit at `deadline`, an instant of `clock`: a deadline already passed means the time is
    /// up at once.
    ///
    /// - Parameters:
    ///   - deadline: When the time is up.
    ///   - clock: The clock `deadline` belongs to; `ContinuousClock` unless you pass another.
    ///   - onTimeout: What the await does when the time is up; either way the operation is
    ///     cancelled.
    public static func deadline<C: Clock<Duration>>(
        _ deadline: C.Instant,
        clock: C = ContinuousClock(),
        onTimeout: TimeoutBehavior = .cancelAndReturn
    ) -> TimeLimit {
        TimeLimit { WaitTimeout(deadline: deadline, clock: clock, behavior: onTimeout) }
    }
}
