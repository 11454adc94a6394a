import Foundation

/// An `Operation` whose work may outlive `main()`: it ends only when ``finish()`` is called.
///
/// Subclass it, override ``main()`` to start the work, and call ``finish()`` once the work has
/// ended — from any thread. This is the class that many codebases hand-copy; it keeps their
/// public members, so a copy can be deleted in favour of `import OperationBridge`.
///
/// ```swift
/// final class FetchOperation: AsyncOperation, @unchecked Sendable {
///     override func main() {
///         service.fetch { [self] _ in finish() }
///     }
/// }
/// ```
///
/// ## Lifecycle
/// The state (pending → executing → finished) lives in one lock-protected state machine.
/// `isExecuting`/`isFinished` change notifications are sent outside the lock, after the new
/// state is readable, so the Linux `OperationQueue` (which reads `isFinished` back
/// synchronously from `didChangeValue`) and KVO on Apple platforms both see a consistent value.
///
/// - An operation is never marked finished before it has been started. Calling ``finish()``
///   early is remembered and honoured by `start()`, which then skips ``main()``.
/// - A cancelled operation finishes when it is started, without running ``main()``; a queue
///   starts cancelled operations promptly, even when their dependencies have not finished.
/// - Calling `start()` a second time is ignored. Calling ``finish()`` twice is ignored.
/// - Once finished, the operation removes its dependencies (`dependencies` is then empty), before
///   its awaiters resume: a chain that has run holds no links, so releasing it never recurses
///   one stack level per step.
///
/// ## Cancellation
/// `cancel()` only sets `isCancelled`, as for any `Operation`; the running work should check
/// `isCancelled` and call ``finish()``. Cancellation never finishes an operation by itself,
/// so dependents never start while the work is still running.
///
/// ## Threading
/// Every member may be called from any thread. Awaiting an `AsyncOperation` from async code
/// (see ``Bridge/waitForCompletion()``) does not rely on KVO or `completionBlock`: the
/// operation notifies its awaiters directly when it finishes.
open class AsyncOperation: Operation, @unchecked Sendable {
    // Safety: every stored property below is only touched while holding `lock`. Subclasses in
    // this module keep their own mutable state under the same lock, so that a result and the
    // lifecycle change together.
    //
    // `lifecycle` and `holdings` skip the runtime's exclusivity checks, which the lock makes
    // redundant (Design.md, "CPU per operation").
    //
    // `lifecycle` comes before `lock`: on Linux the lock fits in the tail of the state machine's
    // layout (Design.md, "Memory per operation").
    @exclusivity(unchecked) private(set) var lifecycle = LifecycleStateMachine()
    let lock = OperationLock()
    /// The queue the package admitted the operation to, the `Task` running its async work, and
    /// what few operations have, in one word (Design.md, "Memory per operation").
    @exclusivity(unchecked) private var holdings = Holdings.none

    /// What an operation holds on to besides its lifecycle. Mostly one thing at a time: a pending
    /// operation its queue, a running one the `Task` running its work (the queue is not needed
    /// once the work has started). An operation with rarely used state keeps the other two in it.
    private enum Holdings {
        case none
        /// The queue the package added the operation to, or found it in.
        case queue(OperationQueue)
        /// The `Task` running the operation's async work; cancelled with the operation.
        case task(Task<Void, Never>)
        /// What few operations have: an upstream failure that stopped them, a running-time
        /// limit, a delay, conditions, observers, progress. Boxed: inline they would add some
        /// 100 bytes to every operation. It holds the queue and the task, if any.
        case rare(RareState)
    }

    /// The rarely used state, if the operation has any (see ``rareState()``). Callers hold `lock`.
    var rare: RareState? {
        if case .rare(let state) = holdings { return state }
        return nil
    }

    /// The `Task` running the operation's async work, if any. Callers hold `lock`.
    private var attachedTask: Task<Void, Never>? {
        get {
            switch holdings {
            case .task(let task): task
            case .rare(let state): state.attachedTask
            case .none, .queue: nil
            }
        }
        set {
            switch (holdings, newValue) {
            case (.rare(let state), _): state.attachedTask = newValue
            // The work has started: the queue it was admitted to is not needed any more (and was
            // taken already, see `runAttachedTask(_:)`).
            case (.none, let task?), (.queue, let task?), (.task, let task?): holdings = .task(task)
            case (.task, nil): holdings = .none
            case (.none, nil), (.queue, nil): break
            }
        }
    }

    /// The queue the package admitted the operation to, until the operation's async work starts
    /// or it finishes. Callers hold `lock`.
    private var admittedQueueLocked: OperationQueue? {
        get {
            switch holdings {
            case .queue(let queue): queue
            case .rare(let state): state.admittedQueue
            case .none, .task: nil
            }
        }
        set {
            switch (holdings, newValue) {
            case (.rare(let state), _): state.admittedQueue = newValue
            case (.none, let queue?), (.queue, let queue?): holdings = .queue(queue)
            case (.task, let queue?): rareState().admittedQueue = queue
            case (.queue, nil): holdings = .none
            case (.none, nil), (.task, nil): break
            }
        }
    }

    /// Creates a pending operation.
    public override init() {
        super.init()
    }

    deinit {
        // Foundation's storage would release the dependencies after this body, and a dependency
        // freed then frees its own: one stack level per link of a chain, enough to overflow the
        // 512 KiB stack of Darwin's secondary threads at a few thousand links. Taken out here,
        // they are dropped one at a time by `IterativeRelease` (Design.md, "Releasing long
        // chains"). Removing them also clears the unretained pointers Linux's Foundation keeps
        // from a dependency to its dependents, which an unfinished dependency would otherwise
        // touch after this operation is freed.
        //
        // `super.`: Foundation's own `dependencies` and `removeDependency(_:)`, never a subclass's
        // overrides, which must not run while the object is being deallocated.
        var dependencies = super.dependencies
        // Taken out of the binding where it is used: a binding that held it to the end of this
        // body would drop it there, one stack level per link.
        var link = takeLinkForRelease()
        if dependencies.count == 1, link == nil {
            // A chain's one link: held on its own, and the array let go of first, so that
            // Foundation edits its own array in place (a shared one it copies: an allocation per
            // step) and no work list is made for one reference.
            let only = dependencies[0]
            dependencies = []
            super.removeDependency(only)
            // Moved, not copied: the work list must hold the only reference this operation had.
            IterativeRelease.release(only: consume only)
        } else {
            var links: [AnyObject] = dependencies
            dependencies = []
            for dependency in links {
                super.removeDependency(unsafeDowncast(dependency, to: Operation.self))
            }
            if let link = link.take() { links.append(link) }
            // Moved, not copied: the work list must hold the only references this operation had.
            if !links.isEmpty { IterativeRelease.release(consume links) }
        }
        // Exclusivity keys granted to an operation that never ran (asked whether it was ready,
        // never started): nobody else would release them.
        if let request = rare?.gate?.request { ExclusivityCoordinator.shared.withdraw(request) }
    }

    /// What the operation provides to a chained operation expecting `Input`: nothing, unless it
    /// is a result operation (``AsyncResultOperation`` overrides it). A method of the class, so
    /// that a chained operation keeps its typed upstream as an `AsyncOperation`: one word, where
    /// an existential takes two (Design.md, "Memory per operation").
    func chainedInput<Input>(as _: Input.Type) -> ChainedInput<Input> { .notProvided }

    /// The package's own strong reference to another operation besides Foundation's
    /// `dependencies` (a chained operation's typed upstream), taken out of the operation as it
    /// is freed so that `IterativeRelease` drops it. Called from `deinit` only.
    func takeLinkForRelease() -> AnyObject? { nil }

    /// Always `true`: the operation ends when ``finish()`` is called, not when ``main()`` returns.
    open override var isAsynchronous: Bool { true }

    /// `true` from the moment the operation starts running ``main()`` until it has finished.
    /// Thread-safe.
    open override var isExecuting: Bool {
        lock.withCriticalSection { lifecycle.isExecuting }
    }

    /// `true` once the operation has been cancelled before its outcome was decided. Thread-safe.
    ///
    /// A `cancel()` that loses the race against ``finish()`` (or, for a result operation, against
    /// a stored result) leaves it `false`, as for any `Operation` cancelled after it ended.
    open override var isCancelled: Bool {
        lock.withCriticalSection { lifecycle.isCancellationRecorded }
    }

    /// `true` once ``finish()`` has completed. Thread-safe.
    open override var isFinished: Bool {
        lock.withCriticalSection {
            // Only while the finish notifications are being sent: which thread asks.
            if lifecycle.isSendingFinishNotifications {
                lifecycle.noteFinishedRead(bySendingThread: FinishNotifyingThread.isSending(self))
            }
            return lifecycle.isFinished
        }
    }

    /// Another thread read `isFinished` while this operation's finish notifications were being
    /// sent: Linux's queue may have counted the operation out of its dependents there, after
    /// the finish observers ran. For tests.
    var wasFinishReadElsewhere: Bool {
        lock.withCriticalSection { lifecycle.wasFinishReadElsewhere }
    }

    /// For a chained step that ran without its input because the upstream that was to provide it
    /// failed (``UpstreamFailurePolicy/runWithoutInput``): that failure. The error its dependents
    /// see keeps it (``UpstreamFailedError/causedBy``). Thread-safe.
    var missingInputCause: UpstreamFailedError? {
        lock.withCriticalSection { rare?.missingInputCause }
    }

    /// Records `cause` as ``missingInputCause``: the step runs without its input because of it.
    func recordMissingInputCause(_ cause: UpstreamFailedError) {
        lock.withCriticalSection { rareState().missingInputCause = cause }
    }

    /// Sets the running-time limit: see ``Bridge/limitRunningTime(to:clock:)``. `afterTimeOut`
    /// runs once the limit has timed the operation out (a retry moving on from a stubborn attempt).
    final func setRunningTimeLimit<C: Clock<Duration>>(
        _ limit: Duration,
        clock: C,
        afterTimeOut: (@Sendable () -> Void)? = nil
    ) {
        // No time at all: timed out when it starts (before `main()`), not by a timer racing it.
        let alwaysPassed: @Sendable () -> Bool = { true }
        setRunningTimeLimit(
            clock: clock, deadline: { clock.now.advanced(by: limit) },
            passedAtStart: limit <= .zero ? alwaysPassed : nil, afterTimeOut: afterTimeOut)
    }

    /// Sets a running-time limit that ends at `deadline`, an instant of `clock`: see
    /// ``Bridge/limitRunningTime(until:clock:)``.
    final func setRunningTimeLimit<C: Clock<Duration>>(until deadline: C.Instant, clock: C) {
        // Read without the lock: the clock is the caller's. A deadline passed now stays passed.
        let passed = clock.now >= deadline
        let passedAtStart: @Sendable () -> Bool
        if passed {
            passedAtStart = { true }
        } else {
            passedAtStart = { clock.now >= deadline }
        }
        setRunningTimeLimit(clock: clock, deadline: { deadline }, passedAtStart: passedAtStart, afterTimeOut: nil)
    }

    /// The one mechanism behind both limits. `deadline` resolves the instant the time is up when
    /// the limit starts counting — when the operation starts, or at once when it has started.
    /// `passedAtStart`, when not `nil`, tells whether the time is up already: asked when the
    /// operation starts (it then times out before its work runs), or at once when it has started.
    /// A `passedAtStart` that is always `true` needs no timer.
    private func setRunningTimeLimit<C: Clock<Duration>>(
        clock: C,
        deadline: @escaping @Sendable () -> C.Instant,
        passedAtStart: (@Sendable () -> Bool)?,
        afterTimeOut: (@Sendable () -> Void)?
    ) {
        let alwaysPassed = passedAtStart?() == true
        let arm: @Sendable (@escaping @Sendable () -> Void) -> DeadlineTimer = { action in
            DeadlineTimer.schedule(at: deadline(), on: clock) {
                action()
                afterTimeOut?()
            }
        }
        // The limit replaced is dropped after the lock: its clock may be a class of the caller's,
        // whose `deinit` is not to run inside the lock.
        let (armNow, replaced) = lock.withCriticalSection {
            () -> (Bool, (RareState.ArmTimeLimit?, (@Sendable () -> Bool)?)) in
            guard !lifecycle.isFinishingOrFinished else { return (false, (nil, nil)) }
            let state = rareState()
            guard state.timeLimitTimer == nil else { return (false, (nil, nil)) }
            let replacedCheck = exchange(&state.timeLimitPassedAtStart, with: passedAtStart)
            let replacedArm = exchange(&state.armTimeLimit, with: alwaysPassed ? nil : arm)
            return (lifecycle.hasStarted, (replacedArm, replacedCheck))
        }
        withExtendedLifetime(replaced) {}
        guard armNow else { return }
        // Started already: the check is not asked at the start any more.
        lock.withCriticalSection { rare?.timeLimitPassedAtStart = nil }
        if alwaysPassed || passedAtStart?() == true {
            timeOut()
            afterTimeOut?()
        } else {
            armTimeLimit(arm)
        }
    }

    /// Starts the running-time limit `arm` (``RareState/armTimeLimit``), unless the operation is
    /// finishing or a limit is already counting.
    private func armTimeLimit(_ arm: @Sendable (@escaping @Sendable () -> Void) -> DeadlineTimer) {
        let timer = arm { [weak self] in self?.timeOut() }
        let stored = lock.withCriticalSection { () -> Bool in
            guard !lifecycle.isFinishingOrFinished, let rare, rare.timeLimitTimer == nil else { return false }
            rare.timeLimitTimer = timer
            rare.armTimeLimit = nil
            return true
        }
        if !stored { timer.cancel() }
    }

    /// The rarely used state, created on first use; it takes over the queue and the task the
    /// operation holds. Callers hold `lock`.
    func rareState() -> RareState {
        let state: RareState
        switch holdings {
        case .rare(let existing): return existing
        case .none: state = RareState()
        case .queue(let queue):
            state = RareState()
            state.admittedQueue = queue
        case .task(let task):
            state = RareState()
            state.attachedTask = task
        }
        holdings = .rare(state)
        return state
    }

    /// Foundation's readiness (every dependency has finished, or the operation is cancelled).
    /// Thread-safe.
    ///
    /// The package also notes that readiness was asked: queues ask when an operation is added to
    /// them, which is how the package's `run` and results sequences tell an operation you added
    /// to a queue yourself from a fresh one. An override that does not call `super` hides that;
    /// see <doc:Misuse>.
    ///
    /// An operation that is delayed (``Bridge/delayStart(by:clock:)``), paused (``Bridge/pause()``), or whose
    /// conditions (``Bridge/addCondition(_:)``) have not passed yet is not ready; a cancelled one is.
    ///
    /// On Linux the package's operations heal a wake-up their queue lost when you add them with
    /// your own `addOperation(_:)` while a dependency finishes on another thread, as Linux's queue
    /// can for plain `Operation`s: they announce their readiness again, from 16 ms after. A queue
    /// thread descheduled for more than two or three milliseconds in the middle of that race is
    /// not covered (Design.md, "Platform facts").
    open override var isReady: Bool {
        let (gate, notReadyOutstanding) = lock.withCriticalSection { () -> (RareState.Readiness, Bool) in
            let notReadyOutstanding = lifecycle.noteReadinessQueried()
            guard let rare, !lifecycle.isCancellationRecorded else { return (.foundation, notReadyOutstanding) }
            return (rare.readiness, notReadyOutstanding)
        }
        switch gate {
        case .held: return false
        case .foundation: return dependenciesFinished(notReadyOutstanding: notReadyOutstanding)
        case .gated:
            return dependenciesFinished(notReadyOutstanding: notReadyOutstanding) && advanceGate(announcing: false)
        }
    }

    /// Foundation's `isReady` — every dependency has finished — healing Linux's lost wake-up.
    ///
    /// Linux's queue reads `isReady` and stores the answer in two steps. When a dependency
    /// finishes between them (`addOperation(_:)` on one thread, the dependency's last finish on
    /// another), the stale "not ready" lands after the fresh "ready", and nothing makes the queue
    /// look again. So a "not ready" answer is noted, with the time, and a "ready" answer within
    /// two or three milliseconds of it announces readiness again, at 16, 64, 256 and 1,024 ms
    /// until the operation has started (`announceReadinessAgain(after:)`): one of those
    /// announcements follows the stale store, which comes a few instructions after its read. A
    /// "not ready" that turns out stale at once — the dependency finished while it was being
    /// noted — is healed the same way. An older "not ready" was stored long ago, and the queue has
    /// looked since. Each announcement makes the queue rescan its operations, so only operations
    /// added while a dependency finishes pay for it; ready ones, and those added well before their
    /// dependencies finish, pay nothing but the note.
    private func dependenciesFinished(notReadyOutstanding: Bool) -> Bool {
        #if canImport(Darwin)
            return super.isReady
        #else
            if super.isReady {
                guard notReadyOutstanding else { return true }
            } else {
                lock.withCriticalSection { lifecycle.noteNotReadyAnswer() }
                // Read again: a dependency whose last finish came before the note told nobody.
                guard super.isReady else { return false }
            }
            // From 16 ms: by then the stale store is long done, and the operation has usually
            // started, so that nothing is announced.
            if lock.withCriticalSection({ lifecycle.takeNotReadyAnswer() }) { announceReadinessAgain(after: 16) }
            return true
        #endif
    }

    /// Holds the operation back from becoming ready — its queue does not start it, and it takes
    /// no slot — until the timer that `arm` starts fires, or the operation is cancelled (a
    /// cancelled operation is ready, so that its queue finishes it). A later hold replaces an
    /// earlier one. Does nothing once the operation has started or is finishing. Thread-safe.
    ///
    /// - Parameter arm: Starts the timer with the action that releases the hold.
    final func holdReadiness(releasedBy arm: (@escaping @Sendable () -> Void) -> DeadlineTimer) {
        willChangeValue(forKey: "isReady")
        let hold = lock.withCriticalSection { () -> (generation: UInt64, replaced: DeadlineTimer?)? in
            guard !lifecycle.hasStarted, !lifecycle.isFinishingOrFinished else { return nil }
            let state = rareState()
            let replaced = state.readinessTimer
            state.readinessTimer = nil
            state.isReadinessHeld = true
            state.readinessGeneration &+= 1
            return (state.readinessGeneration, replaced)
        }
        didChangeValue(forKey: "isReady")
        guard let hold else { return }
        hold.replaced?.cancel()
        let timer = arm { [weak self] in self?.releaseReadiness(generation: hold.generation) }
        let stored = lock.withCriticalSection { () -> Bool in
            // Not when the hold has ended already (the timer fired at once, a cancellation or a
            // finish came first) or another replaced it.
            guard let rare, rare.isReadinessHeld, rare.readinessGeneration == hold.generation else { return false }
            rare.readinessTimer = timer
            return true
        }
        if !stored { timer.cancel() }
    }

    /// Ends the hold of ``holdReadiness(releasedBy:)``, if any, at once. Thread-safe.
    final func endReadinessHold() {
        releaseReadiness(generation: nil)
    }

    /// Ends the hold of ``holdReadiness(releasedBy:)`` — only the hold `generation`, when given —
    /// and tells the queue that the operation may be ready now.
    private func releaseReadiness(generation: UInt64?) {
        let timer = changeReadiness { () -> DeadlineTimer? in
            guard let rare, rare.isReadinessHeld, generation.map({ $0 == rare.readinessGeneration }) ?? true else {
                return nil
            }
            rare.isReadinessHeld = false
            defer { rare.readinessTimer = nil }
            return rare.readinessTimer
        }
        timer?.cancel()
    }

    /// Runs `updateLocked` under the lock between `isReady` change notifications: Linux's queue
    /// looks at the operation again when told, Darwin's follows it by KVO. Call it without the lock.
    ///
    /// Linux's queue can lose the change: a thread that read `isReady` just before it (your own
    /// `addOperation(_:)` of the operation, or a second announcement) stores its stale `false`
    /// over the fresh value afterwards, and nothing makes the queue look again (Design.md,
    /// "Platform facts"). So on Linux the change is announced again from a Dispatch thread, a few
    /// times over about a second and a half, until the operation has started: the stale write
    /// comes a few instructions after its read, so one of the later announcements follows it
    /// even when the writer was descheduled in between. An extra announcement changes nothing.
    func changeReadiness<T>(_ updateLocked: () -> T) -> T {
        willChangeValue(forKey: "isReady")
        let value = lock.withCriticalSection(updateLocked)
        didChangeValue(forKey: "isReady")
        #if !canImport(Darwin)
            announceReadinessAgain(after: 0)
        #endif
        return value
    }

    /// Begins the operation. Queues call it; you may call it by hand on an operation that is
    /// not in a queue.
    ///
    /// A cancelled operation (or one whose ``finish()`` was already requested) finishes here
    /// without running ``main()``. Otherwise the operation becomes executing and ``main()``
    /// runs on the calling thread. A second call is ignored. Override ``main()``, not this.
    open override func start() {
        // Whether the gate has passed is read in the same critical section as the start is
        // claimed: a condition that fails decides the outcome in one step too, so an operation
        // either starts with its gate passed, or finds its outcome decided and finishes without
        // running, or traps — never runs past a condition that was not checked or failed.
        let (action, gatePassed) = lock.withCriticalSection {
            () -> (LifecycleStateMachine.StartAction?, Bool) in
            if rare?.timeLimitPassedAtStart != nil { return (nil, true) }
            let action = lifecycle.start()
            guard case .beginExecuting = action, let gate = rare?.gate else { return (action, true) }
            return (action, gate.hasPassed)
        }
        guard let action else {
            // A running-time limit whose time may be up already (zero, or a deadline): asked once,
            // without the lock (it reads the caller's clock). Up: time out first, so that the start
            // finishes without running.
            let passed = lock.withCriticalSection { rare?.timeLimitPassedAtStart.take() }
            if passed?() == true { timeOut() }
            withExtendedLifetime(passed) {}
            return start()
        }
        switch action {
        case .ignore:
            return
        case .finishWithoutRunning:
            whenReadyToFinishWithoutRunning { self.sendFinishNotifications(wasExecuting: false) }
        case .beginExecuting:
            if !gatePassed { trapStartedBeforeGatePassed() }
            willChangeValue(forKey: "isExecuting")
            let (finishRequested, timeLimit, keys, observers, admitted) = lock.withCriticalSection {
                defer { rare?.post(.started) }
                return (
                    lifecycle.enteredExecuting(), rare?.armTimeLimit, rare?.gate?.grantedRequest,
                    rare.flatMap { $0.operationObservers.isEmpty ? nil : $0.operationObservers }, admittedQueueLocked
                )
            }
            didChangeValue(forKey: "isExecuting")
            if finishRequested {
                finishLifecycle()
                return
            }
            countTowardQueueProgress(admitted: admitted)
            if let timeLimit { armTimeLimit(timeLimit) }
            if prepareToRun() {
                if let observers { for observer in observers { observer.willExecute(self) } }
                if let keys {
                    // The operation holds its keys: its own work enters them again rather than
                    // waiting for itself (`ExclusivityHolds`).
                    ExclusivityHolds.$held.withValue(HeldGrant(keys, outer: nil)) { main() }
                } else {
                    main()
                }
            }
        }
    }

    /// Starts the operation's work. Override it, and call ``AsyncOperation/finish()`` when the work has ended.
    ///
    /// Runs on the thread that started the operation (a queue's worker thread). The default
    /// implementation traps: an `AsyncOperation` without work would never finish.
    open override func main() {
        // `fatalError`, not `preconditionFailure`: the message must survive release builds.
        fatalError("\(type(of: self)) must override main() and call finish() when its work has ended")
    }

    /// Marks the operation finished, so that its queue and its dependents move on and its
    /// awaiters resume.
    ///
    /// Call it exactly once, from any thread, when the work has ended — also when the work
    /// stopped because the operation was cancelled. Later calls are ignored. Called before the
    /// operation has started, the request is remembered and the operation finishes as soon as
    /// it is started, without running ``main()``.
    open func finish() {
        finishLifecycle()
    }

    /// Cancels the operation: sets `isCancelled` and cancels the `Task` running its async work,
    /// if any. Never finishes the operation by itself. Safe from any thread, any number of times.
    open override func cancel() {
        let (cancellation, task, held, gateHeld, gateWork, progress) = lock.withCriticalSection {
            (
                recordCancellationLocked(), attachedTask, rare?.isHeldBack == true,
                rare.map { $0.readiness != .foundation } ?? false,
                rare?.gate?.workToStop, rare?.progress
            )
        }
        resumeDecided(cancellation.decided)
        // A cancellation that lost the race against completion changes nothing, so that
        // `isCancelled` and the outcome always agree.
        guard cancellation.recorded else { return }
        super.cancel()
        task?.cancel()
        (bodyProgress ?? progress)?.operationCancelled()
        gateWork?.stop()
        // A held operation becomes ready when cancelled: its queue must look again.
        if held {
            releaseReadiness(generation: nil)
        } else if gateHeld {
            // Its conditions or keys held it back, or were about to (not checked yet: an `isReady`
            // running now answers "not ready" once it sees the cancellation in `advanceGate`).
            // Foundation's `cancel()` told the queue, but on Linux a thread that read "not ready"
            // just before — `addOperation(_:)` of this operation, racing the cancellation — may
            // store that stale answer after it; announced again, as every readiness change of the
            // package's is (Design.md, "Platform facts"). Found by `ComposedConditionStressTests`:
            // a cancellation racing the queueing hung.
            changeReadiness {}
        }
    }

    /// Records the cancellation unless the outcome is already decided (the operation began to
    /// finish, or a result operation stored its result). Returns whether the operation counts as
    /// cancelled, and the waiters to resume with ``resumeDecided(_:)`` once the lock is released.
    /// Callers hold `lock`.
    ///
    /// - Parameter timedOut: Whether the cancellation is recorded as a timeout; by default, whether
    ///   a time limit asked for it (``timeOut()``). A result operation passes what it read before
    ///   choosing the failure it stores, so that the failure and ``isTimedOut`` agree.
    func recordCancellationLocked(
        timedOut: Bool? = nil
    ) -> (recorded: Bool, decided: [LifecycleStateMachine.Waiter]) {
        let wasRecorded = lifecycle.isCancellationRecorded
        let cancellation = lifecycle.recordCancellation(
            outcomeDecided: outcomeDecidedLocked, timedOut: timedOut ?? lifecycle.isTimeoutRequested)
        if cancellation.recorded && !wasRecorded { rare?.post(.cancelled) }
        return cancellation
    }

    /// Whether a time limit has asked for the operation to be cancelled. Thread-safe.
    var isTimeoutRequested: Bool { lock.withCriticalSection { lifecycle.isTimeoutRequested } }

    /// Cancels the operation because a time limit ran out — its own (see
    /// ``limitRunningTime(to:clock:)``) or that of an await, a ``Pipeline`` or a results sequence —
    /// so that it reports a timeout (``isTimedOut``), not a cancellation. Does nothing once the
    /// outcome is decided: a cancellation that came first stays a cancellation.
    ///
    /// Calls `cancel()` — a subclass's override included, which is how classic operations stop
    /// their work — without holding the lock.
    final func timeOut() {
        guard lock.withCriticalSection({ lifecycle.requestTimeout(outcomeDecided: outcomeDecidedLocked) }) else {
            return
        }
        cancel()
    }

    /// Resumes the waiters that wanted the outcome as soon as it was decided. Call it without
    /// holding `lock`.
    func resumeDecided(_ waiters: [LifecycleStateMachine.Waiter]) {
        for waiter in waiters { waiter.resume(returning: true) }
    }

    /// Whether nothing has decided the outcome yet (see `LifecycleStateMachine.isOutcomeOpen`;
    /// result operations also have no result). Callers hold `lock`.
    var outcomeOpenLocked: Bool { lifecycleOutcomeOpenLocked && !outcomeDecidedLocked }

    /// The lifecycle's part of ``outcomeOpenLocked``: not cancelled, timed out or finishing. For
    /// inlinable code, which checks its own part itself. Callers hold `lock`.
    @usableFromInline final var lifecycleOutcomeOpenLocked: Bool { lifecycle.isOutcomeOpen }

    /// Runs `body` holding `lock`: the entry point of the package's inlinable code (a result
    /// operation's store and read, specialized in the caller's module for its `Success` and
    /// `Failure`, Design.md "CPU per operation"), which cannot reach the lock itself.
    @usableFromInline final func withLock<Value>(_ body: () -> Value) -> Value {
        lock.withCriticalSection(body)
    }

    /// Whether the outcome was decided before finishing began; result operations override it
    /// (a stored result). Callers hold `lock`.
    var outcomeDecidedLocked: Bool { false }

    // MARK: - Internal machinery

    /// Runs `work` in a new `Task`, and cancels that task when the operation is cancelled. Call
    /// it from ``main()``.
    ///
    /// The task's priority comes from the operation's quality of service (see
    /// `TaskPriority.init(_:)`); when that is `.default` — not set — from the quality of service of
    /// the queue running the operation, as Foundation applies a queue's quality of service to
    /// operations without their own. The task is detached: it inherits no task-local values from
    /// whoever queued or started the operation. `work` must end by finishing the operation.
    ///
    /// The task starts at once on the thread that started the operation (the queue's worker
    /// thread, like any operation's `main()`) and runs there until its first suspension; it
    /// continues on the cooperative pool. Work that never suspends ends before this returns, with
    /// no hop to another thread (Design.md, "Where an async closure runs").
    final func runAttachedTask(_ work: @escaping @Sendable () async -> Void) {
        // The queue is let go of before the work starts: from its first line, the operation is
        // running, and only its task is kept (see `Holdings`).
        let (admitted, keys) = takeAdmittedQueue()
        let queue = QueueSlots.queueRunning(self, admitted: admitted)
        let ownQualityOfService = qualityOfService
        let qualityOfService =
            ownQualityOfService == .default ? (queue?.qualityOfService ?? .default) : ownQualityOfService
        // Detached: an operation started by hand from async code must not hand that code's
        // task-local values (or its actor) to the work, exactly as when a queue starts it. The
        // only values bound are the package's own: the queue whose slot the work holds, and the
        // exclusivity keys the operation holds (its work enters them again, `ExclusivityHolds`).
        let priority = TaskPriority(qualityOfService)
        let task: Task<Void, Never>
        // The slot is made inside the task: it names the task running the work.
        let slotQueue = queue.map(ObjectIdentifier.init)
        let holder = ObjectIdentifier(self)
        if let keys {
            let grant = HeldGrant(keys, outer: nil)
            task = Self.startDetachedTask(priority: priority) {
                let held = slotQueue.map { QueueSlots.HeldSlot(queue: $0, holder: holder) }
                await QueueSlots.$held.withValue(held) {
                    await ExclusivityHolds.$held.withValue(grant, operation: work)
                }
            }
        } else if let slotQueue {
            task = Self.startDetachedTask(priority: priority) {
                await QueueSlots.$held.withValue(QueueSlots.HeldSlot(queue: slotQueue, holder: holder), operation: work)
            }
        } else {
            task = Self.startDetachedTask(priority: priority, work)
        }
        lock.withCriticalSection {
            if !lifecycle.isFinishingOrFinished { attachedTask = task }
        }
        // `cancel()` sets the flag before it reads `attachedTask`, and the task was stored before
        // this read, so one of the two sides always sees the other.
        if isCancelled { task.cancel() }
    }

    /// A new detached task running `work`, started on the calling thread where the runtime can
    /// (`Task.immediateDetached`: the Swift 6.2 runtime, which Linux toolchains carry and Apple
    /// platforms have from their 26 releases); elsewhere an ordinary detached task.
    private static func startDetachedTask(
        priority: TaskPriority,
        _ work: @escaping @Sendable () async -> Void
    ) -> Task<Void, Never> {
        #if compiler(>=6.2)
            if #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) {
                return Task.immediateDetached(priority: priority, operation: work)
            }
        #endif
        return Task.detached(priority: priority, operation: work)
    }

    /// Finishes the lifecycle. Subclasses' `finish` variants funnel into this.
    ///
    /// - Parameter updateLocked: Runs under the lock just before the finish is claimed (a result
    ///   operation stores its result there, in the same critical section); it may return work to
    ///   do once the lock is released and before the notifications are sent.
    @usableFromInline final func finishLifecycle(_ updateLocked: () -> (() -> Void)? = { nil }) {
        let (stored, claim) = lock.withCriticalSection { (updateLocked(), lifecycle.claimFinish()) }
        stored?()
        perform(claim)
    }

    /// Finishes the operation without running its work, because an upstream failed: records
    /// `error` as ``upstreamFailure`` (a result operation also stores it as its result where its
    /// `Failure` can express it) and finishes — at once when the operation is executing, when it
    /// starts otherwise.
    ///
    /// The first outcome wins: when the operation was cancelled or has a result already, `error`
    /// is not recorded, but the operation still finishes. With `onlyIfPending`, nothing happens
    /// once the operation has started (its work may be running and will finish it).
    final func finishWithoutRunning(reporting error: UpstreamFailedError, onlyIfPending: Bool) {
        // Converted before taking the lock: the conversion may run the `Failure` type's own code.
        let storeResult = upstreamFailureResult(error)
        let (stored, claim) = lock.withCriticalSection { () -> ((() -> Void)?, LifecycleStateMachine.FinishClaim) in
            if onlyIfPending && lifecycle.hasStarted { return (nil, .ignore) }
            var stored: (() -> Void)?
            if outcomeOpenLocked {
                rareState().upstreamFailure = error
                stored = storeResult?()
            }
            return (stored, lifecycle.claimFinish())
        }
        stored?()
        perform(claim)
    }

    /// Called as the operation, started, finishes without running (cancelled, stopped by an
    /// upstream or a condition, or finished before it started): calls `finish` — at once, unless
    /// a subclass has work of its own to stop and wait for first (a group, its children).
    func whenReadyToFinishWithoutRunning(_ finish: @escaping @Sendable () -> Void) {
        finish()
    }

    /// Finishes the pending operation without running it because its condition failed, unless a
    /// cancellation came first: records `error` as ``Bridge/conditionFailure``, stores it as the
    /// result of a result operation where its `Failure` can hold it (see
    /// ``ConditionFailureRepresentable``), and decides the outcome; the operation finishes when
    /// its queue starts it. It is not cancelled, whatever its `Failure`.
    ///
    /// The gate fails and the outcome is decided in one critical section, so no queue ever finds
    /// the operation ready with its outcome still open: `isReady` answers "not ready" while the
    /// condition is checked and until this step, and whoever starts the operation afterwards
    /// finds it decided and finishes it without running `main()` (issue 36, item 1: in the gap
    /// the two steps used to leave, a queue rescanning its operations started it and `main()`
    /// ran). Called by the gate's check, with the gate checking.
    final func finishWithoutRunning(failedCondition error: ConditionFailedError) {
        // Converted before taking the lock: the conversion may run the `Failure` type's own code.
        let storeResult = conditionFailureResult(error)
        let outcome = lock.withCriticalSection {
            () -> (stored: (() -> Void)?, claim: LifecycleStateMachine.FinishClaim)? in
            guard let rare, case .checking? = rare.gate?.stage, !lifecycle.isCancellationRecorded else { return nil }
            rare.gate?.stage = .failed
            // Decided already (a finish requested before the start): it finishes as decided.
            guard outcomeOpenLocked, !lifecycle.hasStarted else { return (nil, .ignore) }
            rare.conditionFailure = error
            return (storeResult?(), lifecycle.claimFinish())
        }
        guard let outcome else { return }
        outcome.stored?()
        perform(outcome.claim)
        // Ready now: the queue starts it, and it finishes without running.
        changeReadiness {}
    }

    /// What a result operation stores for a failed condition (see
    /// ``finishWithoutRunning(failedCondition:)``), as ``upstreamFailureResult(_:)``.
    func conditionFailureResult(_ error: ConditionFailedError) -> (() -> (() -> Void)?)? { nil }

    /// What a result operation reports for `error` (see
    /// ``finishWithoutRunning(reporting:onlyIfPending:)``): a closure that stores it — call it
    /// holding `lock`; it returns work to do once the lock is released — or `nil` when there is
    /// nothing to store. Called without the lock.
    func upstreamFailureResult(_ error: UpstreamFailedError) -> (() -> (() -> Void)?)? { nil }

    /// Whether the finished operation counts as failed for the package's scheduling: cancelled,
    /// or stopped by an upstream failure. Result operations also count a failure result.
    var finishedUnsuccessfully: Bool {
        lock.withCriticalSection {
            lifecycle.isCancellationRecorded || rare?.upstreamFailure != nil || rare?.conditionFailure != nil
        }
    }

    /// Whether the operation has an outcome of its own — a result operation — that the
    /// schedulers read (`FailureReporting`): one that succeeds after an upstream failure has
    /// recovered. Asked once per step when a scheduler is made: a virtual call where a protocol
    /// conformance check walked the class hierarchy.
    var hasOutcomeOfItsOwn: Bool { false }

    private func perform(_ claim: LifecycleStateMachine.FinishClaim) {
        switch claim {
        case .notify(let wasExecuting):
            sendFinishNotifications(wasExecuting: wasExecuting)
        case .deferredUntilStart(let decided):
            resumeDecided(decided)
        case .ignore:
            break
        }
    }

    private func sendFinishNotifications(wasExecuting: Bool) {
        // This thread sends them: a read of `isFinished` meanwhile from any other thread is
        // noted (see `isFinished`, and below).
        let sendingThread = FinishNotifyingThread.slot.current
        let outerOperation = sendingThread.operation
        sendingThread.operation = ObjectIdentifier(self)
        defer { sendingThread.operation = outerOperation }
        withExtendedLifetime(self) {
            // The progress ends first, while the operation is still finishing: until
            // `completeFinish()` no awaiter can return (`installWaiter` and `reserveWaitID` see an
            // unfinished operation) and no lifecycle observer or `whenFinished` handler has been
            // posted `.finished`, so every one of them reads the final progress. The outcome is
            // fixed while finishing (a cancellation is no longer recorded); a progress made after
            // this read is made finished (`progressLocked(handedOut:)`). Read before the
            // notifications, in the same critical section as the observers told `willFinish`.
            let (progress, cancelled, ran, willFinishObservers) = lock.withCriticalSection {
                (
                    bodyProgress ?? rare?.progress, lifecycle.isCancellationRecorded,
                    ranItsWorkLocked(executed: wasExecuting),
                    rare.flatMap { $0.operationObservers.isEmpty ? nil : $0.operationObservers }
                )
            }
            // Before anything says the operation is finishing: its outcome is final, `isFinished`
            // is still false, and no awaiter or dependent has moved.
            if let willFinishObservers { for observer in willFinishObservers { observer.willFinish(self) } }
            if wasExecuting { willChangeValue(forKey: "isExecuting") }
            willChangeValue(forKey: "isFinished")
            progress?.operationFinished(cancelled: cancelled, ran: ran)
            let (observers, rareWork) = lock.withCriticalSection {
                attachedTask = nil
                admittedQueueLocked = nil
                return (lifecycle.completeFinish(), rare?.finished())
            }
            for timer in rareWork?.timers ?? [] { timer.cancel() }
            if let keys = rareWork?.keys { ExclusivityCoordinator.shared.withdraw(keys) }
            if wasExecuting { didChangeValue(forKey: "isExecuting") }
            didChangeValue(forKey: "isFinished")
            // Linux's queue counts the operation out of its dependents inside these
            // notifications — unless the queue thread that started it found it finished first,
            // right after its `start()` returned, and counts it there: it asks `isFinished`
            // first, so a read from another thread meanwhile says that this may be so.
            let countedElsewhere = lock.withCriticalSection { lifecycle.endFinishNotifications() }
            // Awaiting tasks and callbacks (the pipeline scheduler) only now that the queue has
            // counted this operation out of its dependents (or may be counting it on another
            // thread): a dependent that one of them adds to a queue is ready at once, or its
            // readiness is announced (`OperationQueue.enqueue`). Resumed earlier, an awaiting
            // `queue.run(next)` could race Foundation's bookkeeping, and Linux's queue then
            // loses the wake-up of `next` for good (Design.md, "Platform facts").
            for case (_, .waiter(let continuation, _)) in observers {
                continuation.resume(returning: true)
            }
            for (_, observer) in observers {
                switch observer {
                case .callback(let callback): callback()
                case .schedulerNode(let scheduler, let node):
                    scheduler.nodeFinished(node, observed: !countedElsewhere)
                case .waiter, .cancelledBeforeInstall: break
                }
            }
        }
    }

    /// Whether the operation ran its work: it was executing (`executed`), and did not finish
    /// without running because an upstream or a condition failed (a chained step finds that out
    /// in `main()`). Callers hold `lock`.
    func ranItsWorkLocked(executed: Bool) -> Bool {
        executed && rare?.upstreamFailure == nil && rare?.conditionFailure == nil
    }

    /// Whether the operation counts toward the `progress` of the queue running it, when that
    /// queue reports progress; the package's own markers do not.
    var countsTowardQueueProgress: Bool { true }

    /// Whether a ``Pipeline``, a results sequence or a ``GroupOperation`` stops the operation
    /// without running it when a step it depends on failed, reporting the cause
    /// (``Bridge/upstreamFailure``). Only where the type says it can report that: the package's
    /// own steps, and result operations whose `Failure` can say "the upstream failed". Any other
    /// subclass — a classic `AsyncOperation`, a result operation with a legacy error enum — runs
    /// after its dependencies whatever their outcome, as Foundation runs it, and its own code
    /// decides (Design.md, "Classic semantics by default").
    var skipsAfterUpstreamFailure: Bool { false }

    /// The progress the operation's closure reports on, kept with the closure (a ``TaskOperation``
    /// or ``ChainedTaskOperation`` made with a `totalUnitCount`); `nil` for other operations,
    /// whose progress is made on first use. Never changes; read it without holding `lock`.
    var bodyProgress: OperationProgress? { nil }

    /// A new ``OperationProgress`` for the operation, in the state given; a group's aggregates
    /// its children. Called holding `lock`.
    func makeOperationProgress(finished: Bool, cancelled: Bool, ran: Bool) -> OperationProgress {
        OperationProgress(finished: finished, cancelled: cancelled, ran: ran)
    }

    /// The operation's children, for ``OperationObserver``s registered on it: a group's. Callers
    /// hold `lock`.
    var childrenLocked: [Operation] { [] }

    /// Called after the operation became executing and before ``main()``. Returning `false`
    /// skips ``main()``; the override must then have finished the operation.
    func prepareToRun() -> Bool { true }

    /// Whether `finish` has been claimed. Callers must hold `lock`.
    var lifecycleIsFinishingOrFinishedLocked: Bool { lifecycle.isFinishingOrFinished }

    /// Whether the operation has been started. Thread-safe.
    var hasStarted: Bool { lock.withCriticalSection { lifecycle.hasStarted } }

    /// Registers `callback` to run once, right after the operation has finished.
    ///
    /// - Returns: An identifier for ``removeFinishObserver(_:)``, or `nil` when the operation
    ///   has already finished; the callback is then not called.
    func addFinishObserver(
        _ callback: @escaping LifecycleStateMachine.FinishObserver
    ) -> LifecycleStateMachine.ObserverID? {
        lock.withCriticalSection { lifecycle.addObserver(callback) }
    }

    /// Tells `scheduler` once, right after the operation has finished, that its `node` has
    /// (`GraphScheduler.nodeFinished(_:observed:)`): ``addFinishObserver(_:)`` without a closure.
    ///
    /// - Returns: `false` when the operation has already finished; nothing is told then.
    func addFinishObserver(_ scheduler: GraphScheduler, node: Int) -> Bool {
        lock.withCriticalSection { lifecycle.addObserver(.schedulerNode(scheduler, node: node)) } != nil
    }

    /// Suspends until the operation has finished — or, with `decision`, until its outcome is
    /// decided before it started — (`true`), or until ``cancelWait(_:decision:)`` was called with `id`
    /// (`false`). The continuation is resumed exactly once, whichever comes first — even when
    /// the cancellation comes before the suspension.
    ///
    /// - Parameter queue: The queue to hand the operation to once the waiter is installed, before
    ///   the task suspends (see ``OperationWaiter/waitForFinish(of:in:until:onTaskCancellation:timeout:admitting:)``).
    func waitForFinish(
        _ id: LifecycleStateMachine.ObserverID, decision: Bool, admittingTo queue: OperationQueue? = nil
    ) async -> Bool {
        let finished = await withUnsafeContinuation { continuation in
            let immediate = lock.withCriticalSection { lifecycle.installWaiter(id, continuation, decision: decision) }
            queue?.admit(self)
            if let immediate { continuation.resume(returning: immediate) }
        }
        continuationResumed()
        return finished
    }

    /// How many tasks have a waiter installed on the operation (tests). Thread-safe.
    var installedWaiterCount: Int {
        lock.withCriticalSection { lifecycle.installedWaiterCount }
    }

    /// An identifier for ``waitForFinish(_:decision:)`` and ``cancelWait(_:decision:)``, or `nil` when
    /// there is nothing to wait for: the operation has finished — or, with `decision`, its
    /// outcome was decided before it started.
    func reserveWaitID(decision: Bool) -> LifecycleStateMachine.ObserverID? {
        lock.withCriticalSection {
            let final = lifecycle.isFinished || (decision && lifecycle.isDecidedWhilePending)
            return final ? nil : lifecycle.reserveObserverID()
        }
    }

    /// Decides how the package hands the operation to `queue`; see
    /// `LifecycleStateMachine.admit(to:listed:admitted:)`. Thread-safe.
    func admit(to queue: OperationQueue, listed: Bool?) -> LifecycleStateMachine.Admission {
        lock.withCriticalSection { lifecycle.admit(to: queue, listed: listed, admitted: &admittedQueueLocked) }
    }

    /// A graph scheduler will add the operation once its dependencies in the graph have finished:
    /// "not ready" answers until then need no healing (see `isReady`). Thread-safe.
    func expectPackageAdmission() {
        lock.withCriticalSection { lifecycle.expectPackageAdmission(admitted: admittedQueueLocked != nil) }
    }

    /// Whether other code may have added the pending operation to a queue: the package did not,
    /// and something asked whether it is ready. Thread-safe.
    var mayBeQueuedByOtherCode: Bool {
        lock.withCriticalSection { lifecycle.mayBeQueuedByOtherCode(admitted: admittedQueueLocked != nil) }
    }

    /// The queue the package added the operation to (or found it in), until the operation's async
    /// work starts (a running operation's queue is not needed then) or it finishes. Thread-safe.
    var admittedQueue: OperationQueue? {
        lock.withCriticalSection { admittedQueueLocked }
    }

    /// Takes ``admittedQueue``: the operation's async work is starting. Thread-safe.
    ///
    /// - Returns: The queue, and the exclusivity request whose keys the operation holds, if any.
    private func takeAdmittedQueue() -> (OperationQueue?, ExclusivityRequest?) {
        lock.withCriticalSection { (exchange(&admittedQueueLocked, with: nil), rare?.gate?.grantedRequest) }
    }

    /// Ends the wait `id` with `false`, unless it has already ended.
    func cancelWait(_ id: LifecycleStateMachine.ObserverID, decision: Bool) {
        let continuation = lock.withCriticalSection { lifecycle.cancelWaiter(id, decision: decision) }
        continuation?.resume(returning: false)
    }

    /// Removes an observer that has not run yet.
    func removeFinishObserver(_ id: LifecycleStateMachine.ObserverID) {
        let removed = lock.withCriticalSection { lifecycle.removeObserver(id) }
        withExtendedLifetime(removed) {}  // released after the lock
    }
}

extension Bridge where Base: AsyncOperation {
    /// The upstream failure that kept the operation from running, if that is why it finished
    /// without running. Thread-safe.
    ///
    /// Set when the operation was a chained step whose upstream failed or was cancelled (see
    /// ``ChainedAsyncResultOperation``), or a step of a ``Pipeline`` or results sequence that
    /// depended on a failed step. The root cause is ``UpstreamFailedError/rootFailure``. It tells
    /// a failure caused upstream from the operation's own, whatever its `Failure` type can
    /// express: an operation stopped this way is not cancelled (`isCancelled` is `false`).
    public var upstreamFailure: UpstreamFailedError? {
        base.lock.withCriticalSection { base.rare?.upstreamFailure }
    }

    /// `true` once the operation has been cancelled because a time limit ran out before its
    /// outcome was decided: its own (``limitRunningTime(to:clock:)``), or that of an await with
    /// a time limit, a ``Pipeline`` or a results sequence. Thread-safe.
    ///
    /// `isCancelled` is `true` too — the work stops as for any cancellation — but the package
    /// reports the outcome as a timeout, never as a plain cancellation: a result operation stores
    /// `Failure.timeout` (``TimeoutRepresentable``) or an ``OperationTimeoutError`` (`any Error`)
    /// as its result, or no result when `Failure` can express neither; `outcomeValue` throws
    /// ``OperationFailure/timedOut``. A `cancel()` that came first stays a cancellation.
    public var isTimedOut: Bool {
        base.lock.withCriticalSection { base.lifecycle.isTimedOut }
    }

    /// Limits how long the operation may run: once it has been executing for `limit`, measured
    /// on `clock` from the moment it starts (not from when it was queued), it is cancelled and
    /// reports a timeout (see ``isTimedOut``).
    ///
    /// ```swift
    /// let fetch = FetchOperation(url)
    /// fetch.bridge.limitRunningTime(to: .seconds(10))
    /// queue.addOperation(fetch)
    /// ```
    ///
    /// Call it before the operation starts; called while it runs, the limit is measured from the
    /// call; after it has finished, it does nothing. A later call replaces an earlier one that
    /// has not started counting. A zero or negative `limit` times the operation out when it
    /// starts, before its work runs: it finishes without running, timed out.
    ///
    /// ## Cancellation and threading
    /// When the time is up, `cancel()` is called (a subclass's override included) from a timer
    /// thread; as for any cancellation, the operation finishes when its work notices it and calls
    /// ``AsyncOperation/finish()`` — dependents never start while the work still runs, and the queue slot stays
    /// taken until then. The timer is stopped when the operation finishes: none outlives it. Safe
    /// from any thread.
    ///
    /// - Parameters:
    ///   - limit: How long the operation may run.
    ///   - clock: The clock that measures it; `ContinuousClock` unless you pass another (a test
    ///     clock, for example).
    public func limitRunningTime<C: Clock<Duration>>(to limit: Duration, clock: C = ContinuousClock()) {
        base.setRunningTimeLimit(limit, clock: clock)
    }

    /// Limits how long the operation may run to an instant: once `clock` reaches `deadline` while
    /// the operation runs, it is cancelled and reports a timeout (see ``isTimedOut``), as with
    /// ``limitRunningTime(to:clock:)`` — the same limit, with a deadline instead of a duration.
    ///
    /// ```swift
    /// let batchEnds = ContinuousClock.now + .seconds(60)
    /// for file in files {
    ///     let upload = UploadOperation(file)
    ///     upload.bridge.limitRunningTime(until: batchEnds)   // one deadline for the whole batch
    ///     queue.addOperation(upload)
    /// }
    /// ```
    ///
    /// - A deadline that has passed when the operation starts — set before it was queued, or
    ///   passed while it waited — times it out when it starts, before its work runs: it finishes
    ///   without running, timed out. Set on a running operation, a deadline that has passed times
    ///   it out at once.
    /// - The deadline is a limit on the running time only: nothing happens while the operation is
    ///   pending, however late it starts (a cancelled or finished operation is not timed out).
    ///   To bound the wait for its outcome as well, await it with a time limit
    ///   (``TimeLimit/deadline(_:clock:onTimeout:)``).
    /// - One limit per operation, whether a duration or a deadline: a later call replaces an
    ///   earlier one that has not started counting (the last one set before the start wins, not
    ///   the earliest deadline); once the operation has started and a limit counts, later calls
    ///   do nothing. After the operation has finished, it does nothing.
    /// - A cancellation that came first stays a cancellation: a cancelled operation with a passed
    ///   deadline finishes cancelled, not timed out.
    ///
    /// ## Cancellation and threading
    /// As ``limitRunningTime(to:clock:)``: when the time is up, `cancel()` is called from a timer
    /// thread, and the operation finishes when its work notices; the timer is stopped when the
    /// operation finishes. `clock` is read when the limit is set and when the operation starts
    /// (never inside the operation's lock). Safe from any thread.
    ///
    /// - Parameters:
    ///   - deadline: When the time is up, an instant of `clock`.
    ///   - clock: The clock `deadline` belongs to; `ContinuousClock` unless you pass another (a
    ///     test clock, for example).
    public func limitRunningTime<C: Clock<Duration>>(until deadline: C.Instant, clock: C = ContinuousClock()) {
        base.setRunningTimeLimit(until: deadline, clock: clock)
    }
}

/// The operation whose `isFinished` notifications a thread is sending, if any: `isFinished`
/// notes a read from any other thread meanwhile (Design.md, "Platform facts": Linux's queue may
/// then count the operation out of its dependents on that thread).
///
/// Safety: only its own thread touches a thread's object (``ThreadSpecific``).
final class FinishNotifyingThread {
    static let slot = ThreadSpecific { FinishNotifyingThread() }

    /// The operation; the one being finished outside, restored once an inner finish is done.
    var operation: ObjectIdentifier?

    /// Whether this thread is sending `operation`'s `isFinished` notifications.
    static func isSending(_ operation: AsyncOperation) -> Bool {
        slot.current.operation == ObjectIdentifier(operation)
    }
}
