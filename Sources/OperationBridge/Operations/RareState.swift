import Foundation

/// The rarely used state of an ``AsyncOperation`` (see `AsyncOperation.rare`): created the
/// first time an operation needs one of these, so that the others stay small.
///
/// Safety: every property is only touched while holding the operation's `lock`.
final class RareState: @unchecked Sendable {
    /// Why the operation finished without running, when an upstream failure was the reason.
    var upstreamFailure: UpstreamFailedError?
    /// Why a chained step ran without its input: the failure of the upstream that was to provide
    /// it (``UpstreamFailurePolicy/runWithoutInput``).
    var missingInputCause: UpstreamFailedError?
    /// Why the operation finished without running, when a condition failed.
    var conditionFailure: ConditionFailedError?
    /// Why a silent condition cancelled the operation, when one did.
    var silencedConditionFailure: ConditionFailedError?
    /// Arms the running-time limit set with `limitRunningTime(to:clock:)`, if any.
    var armTimeLimit: ArmTimeLimit?
    /// The armed running-time limit, from the start until the operation finishes.
    var timeLimitTimer: DeadlineTimer?
    /// Whether the running-time limit's time is up already (a limit of zero or less, a deadline
    /// that has passed), asked when the operation starts: it then times out before its work runs.
    var timeLimitPassedAtStart: (@Sendable () -> Bool)?
    /// Whether the operation is held back from becoming ready (see `holdReadiness(releasedBy:)`).
    var isReadinessHeld = false
    /// Tells the holds apart, so that the timer of a replaced hold releases nothing.
    var readinessGeneration: UInt64 = 0
    /// The timer that ends the hold.
    var readinessTimer: DeadlineTimer?
    /// Whether ``Bridge/pause()`` holds the operation back.
    var isPaused = false
    /// The conditions and exclusivity keys checked before the operation becomes ready.
    var gate: ReadinessGate?
    /// Who is told of the operation's lifecycle events, until it finishes.
    var lifecycleObservers: [LifecycleObserver] = []
    /// The ``OperationObserver``s, told synchronously of the moments before the transitions,
    /// until the operation finishes.
    var operationObservers: [ErasedOperationObserver] = []
    /// The operation's progress (see ``Bridge/operationProgress``), once asked for —
    /// unless a closure reports on it, which keeps it (`AsyncOperation.bodyProgress`).
    var progress: OperationProgress?
    /// Whether `progress` was handed out, and so tied to the operation
    /// (`OperationProgress.link(to:)`): later reads skip the progress's lock.
    var isProgressLinked = false
    /// The queue the package admitted the operation to, as `AsyncOperation.admittedQueue`: kept
    /// here once the operation has rarely used state (`AsyncOperation.holdings`).
    var admittedQueue: OperationQueue?
    /// The `Task` running the operation's async work, as `AsyncOperation.attachedTask`: kept here
    /// once the operation has rarely used state.
    var attachedTask: Task<Void, Never>?

    /// What the readiness of an operation that is not cancelled depends on.
    enum Readiness {
        /// Held back (delayed, paused, its conditions or keys pending): not ready.
        case held
        /// Foundation's readiness: its dependencies.
        case foundation
        /// Its dependencies, then its conditions and keys, which are not checked yet.
        case gated
    }

    /// The readiness of the operation, not cancelled.
    var readiness: Readiness {
        if isHeldBack { return .held }
        guard let gate else { return .foundation }
        switch gate.stage {
        case .unchecked, .checked: return .gated
        case .checking, .waitingForKeys: return .held
        case .passed, .failed: return .foundation
        }
    }

    /// Delayed or paused.
    var isHeldBack: Bool { isReadinessHeld || isPaused }

    /// Tells the observers of `event`.
    func post(_ event: OperationEvent) {
        for observer in lifecycleObservers { observer.post(event) }
    }

    /// Starts a running-time limit: a closure over the caller's clock.
    typealias ArmTimeLimit = @Sendable (_ action: @escaping @Sendable () -> Void) -> DeadlineTimer

    /// What ``finished()`` hands back, for the caller to act on once the lock is released — and to
    /// let go of there: the limit to arm and the observers may hold the last references to
    /// objects of the user's (a clock, what a handler captured), whose `deinit` is not to run
    /// inside the operation's lock.
    struct Finished {
        /// The timers to stop.
        let timers: [DeadlineTimer]
        /// The exclusivity request whose keys to release.
        let keys: ExclusivityRequest?
        fileprivate let released: (ArmTimeLimit?, [LifecycleObserver], [ErasedOperationObserver])
    }

    /// The operation has finished: tells the observers and forgets them, forgets the limit to
    /// arm, and hands back what to do once the lock is released (see ``Finished``).
    func finished() -> Finished {
        post(.finished)
        defer {
            lifecycleObservers = []
            operationObservers = []
            timeLimitTimer = nil
            armTimeLimit = nil
            timeLimitPassedAtStart = nil
            readinessTimer = nil
            isReadinessHeld = false
            gate?.stage = .passed(nil)
        }
        return Finished(
            timers: [timeLimitTimer, readinessTimer].compactMap { $0 }, keys: gate?.request,
            released: (armTimeLimit, lifecycleObservers, operationObservers))
    }
}
