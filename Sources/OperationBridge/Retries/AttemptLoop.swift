import Foundation

/// The loop shared by ``RetryingOperation`` and ``RepeatingOperation``: fresh operations, made one
/// after another on behalf of an owner, each run to its end, with a wait on a clock between two,
/// until the owner's judge ends the loop or the owner is cancelled.
///
/// - Each attempt is made by the factory on the owner's task, never concurrently with itself.
/// - It runs on behalf of the owner, which holds its queue slot: it goes to the package's queue
///   without a width limit (``SharedQueues/unbounded``), unless the package has queued it
///   already or it has started or finished — then it is awaited.
/// - An attempt may get a running-time limit of its own; with ``TimeoutBehavior/cancelAndReturn``
///   the loop moves on as soon as that limit has timed it out, without waiting for it to end.
/// - Cancelling the owner's task cancels the running attempt (the loop waits until it has ended),
///   or ends a wait at once, and makes no more attempts.
///
/// A value; every member is safe from any thread. The owner's state is the owner's to guard.
struct AttemptLoop<Success: Sendable, Failure: Error>: Sendable {
    /// What happens when an attempt runs out of its time limit.
    let onAttemptTimeout: TimeoutBehavior
    private let makeAttempt: @Sendable (Int) async -> AsyncResultOperation<Success, Failure>
    private let sleep: @Sendable (Duration) async throws -> Void
    /// Limits an attempt's running time; the closure passed runs once the limit timed it out.
    private let limitAttempt: (@Sendable (AsyncOperation, _ afterTimeOut: @escaping @Sendable () -> Void) -> Void)?

    /// A loop whose waits and attempt limits are measured on `clock`.
    init<C: Clock<Duration>>(
        clock: C,
        attemptTimeLimit: Duration?,
        onAttemptTimeout: TimeoutBehavior,
        makeAttempt: @escaping @Sendable (Int) async -> AsyncResultOperation<Success, Failure>
    ) {
        self.onAttemptTimeout = onAttemptTimeout
        self.makeAttempt = makeAttempt
        self.sleep = { delay in try await clock.sleep(for: delay) }
        if let attemptTimeLimit {
            self.limitAttempt = { attempt, afterTimeOut in
                attempt.setRunningTimeLimit(attemptTimeLimit, clock: clock, afterTimeOut: afterTimeOut)
            }
        } else {
            self.limitAttempt = nil
        }
    }

    /// What the owner does after an attempt has ended.
    enum Next<End> {
        /// Make the next attempt, after waiting `delay` (none when zero or negative).
        case again(after: Duration)
        /// End the loop with this.
        case end(End)
    }

    /// Runs attempts 1, 2, … for `owner`, on the owner's task: `started` is told the number of
    /// each attempt about to run, `judge` decides on each ended attempt (or one given up on when
    /// its time was up: its outcome is decided). Returns the end `judge` chose, or `nil` when the
    /// owner's task was cancelled — before an attempt, during a wait, or while one ran (that one
    /// was cancelled, and has ended or will finish without running).
    func run<End>(
        for owner: AsyncOperation,
        started: (Int) -> Void,
        judge: (AsyncResultOperation<Success, Failure>, Int) -> Next<End>
    ) async -> End? {
        var number = 1
        while true {
            guard !Task.isCancelled else { return nil }
            let attempt = await makeAttempt(number)
            guard !Task.isCancelled else {
                attempt.cancel()
                return nil
            }
            started(number)
            // Cancelled: this owner was cancelled (or timed out); the attempt was cancelled and has ended.
            guard await run(attempt, for: owner) != .cancelled else { return nil }
            // Ended, or timed out and given up on: either way its outcome is decided.
            switch judge(attempt, number) {
            case .end(let end):
                return end
            case .again(let delay):
                if delay > .zero {
                    do {
                        try await sleep(delay)
                    } catch {
                        return nil  // cancelled while waiting
                    }
                }
                number += 1
            }
        }
    }

    /// How the wait for an attempt ended.
    private enum AttemptWait {
        /// The attempt has finished.
        case finished
        /// Its time limit timed it out, and ``TimeoutBehavior/cancelAndReturn`` gave up on it: its
        /// outcome (the timeout) is decided, but it may still run.
        case abandoned
        /// The owner was cancelled first: the attempt is cancelled, and has ended (or will finish
        /// without running).
        case cancelled
    }

    /// Hands `attempt` to the attempts queue unless it is pending in a queue or has started
    /// already, and waits until it has finished — or, with ``TimeoutBehavior/cancelAndReturn``,
    /// until its time limit timed it out.
    private func run(
        _ attempt: AsyncResultOperation<Success, Failure>,
        for owner: AsyncOperation
    ) async -> AttemptWait {
        if attempt.qualityOfService == .default { attempt.qualityOfService = owner.qualityOfService }
        var timeout: WaitTimeout?
        if let limitAttempt {
            let timeUp = AttemptTimeUp()
            limitAttempt(attempt, timeUp.fire)
            if onAttemptTimeout == .cancelAndReturn {
                // The attempt's own limit (measured from its start) stops the wait, not a timer of
                // the wait's: `WaitTimeout` only gives up on the attempt, already timed out.
                timeout = WaitTimeout(behavior: .cancelAndReturn, schedule: timeUp.arm)
            }
        }
        let finished = await OperationWaiter.waitForFinish(
            of: attempt, in: SharedQueues.unbounded, onTaskCancellation: .cancelOperation, timeout: timeout,
            admitting: true)
        if finished { return .finished }
        return timeout?.fired == true ? .abandoned : .cancelled
    }
}

/// How an attempt of an ``AttemptLoop`` ended, as its owner judges it.
enum AttemptEnding<Success, Failure: Error> {
    /// It succeeded.
    case succeeded(Success)
    /// It failed with a failure of its own — `cancelledByOthers`: it was cancelled by someone but
    /// the owner, and this is its cancellation failure.
    case failed(Failure, cancelledByOthers: Bool)
    /// Its time limit ran out, and its `Failure` could not say so: no result.
    case timedOut
    /// Someone but the owner cancelled it, and its `Failure` could not say so: no result.
    case cancelled
    /// A dependency of its failed, so it did not run.
    case upstreamFailed(UpstreamFailedError)

    /// How `attempt`, whose outcome is decided, ended.
    init(of attempt: AsyncResultOperation<Success, Failure>) {
        let timedOut = attempt.bridge.isTimedOut
        switch attempt.result {
        case .success(let value):
            self = .succeeded(value)
        case .failure(let error):
            self = .failed(error, cancelledByOthers: attempt.isCancelled && !timedOut)
        case nil:
            if let upstream = attempt.bridge.upstreamFailure {
                self = .upstreamFailed(upstream)
            } else if timedOut {
                self = .timedOut
            } else {
                self = .cancelled
            }
        }
    }

    /// The failure to record, as the owner's `failedAttempts` lists it; `nil` for a success.
    var failure: OperationFailure<Failure>? {
        switch self {
        case .succeeded: nil
        case .failed(let error, _): .failed(error)
        case .timedOut: .timedOut
        case .cancelled: .cancelled
        case .upstreamFailed(let error): .upstreamFailed(error)
        }
    }
}

/// How the owner of an ``AttemptLoop`` ends, other than by a cancellation of its own.
enum AttemptLoopEnd<Success, Failure: Error> {
    case succeed(Success)
    case fail(Failure)
    /// An attempt was cancelled by someone else; its cancellation failure, if it has one.
    case cancel(Failure?)
    case timeOut
    case upstreamFailed(UpstreamFailedError)

    /// Finishes `owner` with this end.
    func finish(_ owner: AsyncResultOperation<Success, Failure>) {
        switch self {
        case .succeed(let value):
            owner.finish(with: .success(value))
        case .fail(let error):
            owner.finish(with: .failure(error))
        case .cancel(let error):
            if let error { owner.cancel(with: error) } else { owner.cancel() }
            owner.finish()
        case .timeOut:
            owner.timeOut()
            owner.finish()
        case .upstreamFailed(let error):
            owner.finishWithoutRunning(reporting: error, onlyIfPending: false)
        }
    }
}

/// Tells the wait for an attempt that the attempt's time limit has timed it out: a one-shot
/// trigger that a ``WaitTimeout`` arms as its timer.
///
/// Safety: `fired` and `action` are only touched while holding `lock`.
private final class AttemptTimeUp: @unchecked Sendable {
    private let lock = NSLock()
    private var fired = false
    private var action: (@Sendable () -> Void)?

    /// The limit timed the attempt out: runs the armed action, or the one armed later.
    func fire() {
        let action = lock.withCriticalSection { () -> (@Sendable () -> Void)? in
            fired = true
            return self.action.take()
        }
        action?()
    }

    /// Arms `action`: it runs when the limit times the attempt out — at once when it has already.
    func arm(_ action: @escaping @Sendable () -> Void) -> DeadlineTimer {
        let firedAlready = lock.withCriticalSection { () -> Bool in
            if !fired { self.action = action }
            return fired
        }
        if firedAlready { action() }
        return DeadlineTimer.manual(onCancel: { [weak self] in
            guard let self else { return }
            let dropped = lock.withCriticalSection { self.action.take() }
            withExtendedLifetime(dropped) {}  // released after the lock
        })
    }
}
