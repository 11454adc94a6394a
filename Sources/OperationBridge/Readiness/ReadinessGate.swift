import Foundation

/// What an ``AsyncOperation`` checks after its dependencies have finished and before it becomes
/// ready: its conditions, then its exclusivity keys (see ``Bridge/addCondition(_:)``).
///
/// The operation keeps the gate in its rare state, under its lock, and reports itself not ready
/// while the gate is open: so it takes no queue slot while conditions are checked or keys are
/// awaited. The checks start when a queue asks whether the operation is ready and its
/// dependencies have finished; each step tells the queue to look again when it is done.
struct ReadinessGate {
    enum Stage {
        /// Nothing checked yet.
        case unchecked
        /// The conditions are being checked by this task (`nil` until it is stored).
        case checking(Task<Void, Never>?)
        /// The conditions passed; the keys are to be asked for.
        case checked
        /// The keys are asked for.
        case waitingForKeys(ExclusivityRequest)
        /// Everything passed: ready. Holds the keys until the operation finishes.
        case passed(ExclusivityRequest?)
        /// A condition failed — or failed silently, and the operation was cancelled — or the
        /// outcome was decided meanwhile: the operation finishes without running.
        case failed
    }

    /// Predicate conditions, in the order added.
    var conditions: [OperationCondition] = []
    /// Exclusivity keys, in the order added.
    var keys: [ExclusivityKey] = []
    var stage = Stage.unchecked

    /// The exclusivity request waiting or granted, if any.
    var request: ExclusivityRequest? {
        switch stage {
        case .waitingForKeys(let request): request
        case .passed(let request): request
        case .unchecked, .checking, .checked, .failed: nil
        }
    }

    /// The exclusivity request granted, once the gate has passed, if any.
    var grantedRequest: ExclusivityRequest? {
        if case .passed(let request) = stage { return request }
        return nil
    }

    /// What a cancellation stops: the check in progress, or the wait for the keys.
    var workToStop: GateWork? {
        switch stage {
        case .checking(let task): task.map(GateWork.task)
        case .waitingForKeys(let request): .request(request)
        case .unchecked, .checked, .passed, .failed: nil
        }
    }

    /// Whether the operation may run its work: every condition held and the keys are granted.
    /// (A failed gate never lets it run: its outcome was decided as it failed.)
    var hasPassed: Bool {
        if case .passed = stage { return true }
        return false
    }
}

/// Work of a ``ReadinessGate`` that a cancellation stops.
enum GateWork {
    case task(Task<Void, Never>)
    case request(ExclusivityRequest)

    func stop() {
        switch self {
        case .task(let task): task.cancel()
        // Only while it waits: granted keys stay with the operation until it finishes.
        case .request(let request): ExclusivityCoordinator.shared.withdraw(request, onlyIfWaiting: true)
        }
    }
}

extension AsyncOperation {
    /// The next step of the gate, decided under the lock.
    private enum GateStep {
        case none
        case passed
        case check([OperationCondition])
        case acquire(ExclusivityRequest)
    }

    /// Adds `condition` to the gate. Traps once the gate has begun checking, or the operation has
    /// started.
    func addToGate(_ condition: OperationCondition) {
        let added = lock.withCriticalSection { () -> Bool in
            guard !lifecycle.hasStarted else { return false }
            let rare = rareState()
            var gate = rare.gate ?? ReadinessGate()
            guard case .unchecked = gate.stage else { return false }
            switch condition.kind {
            case .predicate: gate.conditions.append(condition)
            case .exclusive(let key): gate.keys.append(key)
            }
            rare.gate = gate
            return true
        }
        guard added else {
            // `fatalError`, not `preconditionFailure`: the message must survive release builds.
            fatalError(
                "bridge.addCondition(\(condition.name)) on \(type(of: self)) came too late: its conditions are being checked "
                    + "or it has started. Add conditions before adding the operation to a queue.")
        }
    }

    /// Takes the next step of the gate — starts checking the conditions, asks for the keys —
    /// unless the operation is cancelled, held back or started. Returns whether the gate passed
    /// now; with `announcing`, tells the queue too. `isReady` calls it, without announcing, once
    /// the dependencies have finished and the gate is not settled.
    @discardableResult
    func advanceGate(announcing: Bool) -> Bool {
        let step = lock.withCriticalSection { () -> GateStep in
            guard let rare, let gate = rare.gate, !rare.isHeldBack, !lifecycle.isCancellationRecorded,
                !lifecycle.hasStarted
            else { return .none }
            switch gate.stage {
            case .unchecked where !gate.conditions.isEmpty:
                rare.gate?.stage = .checking(nil)
                return .check(gate.conditions)
            case .unchecked, .checked:
                guard !gate.keys.isEmpty else {
                    rare.gate?.stage = .passed(nil)
                    return .passed
                }
                let request = ExclusivityRequest(gate.keys, holder: .operation(WeakOperation(object: self)))
                rare.gate?.stage = .waitingForKeys(request)
                return .acquire(request)
            case .checking, .waitingForKeys, .passed, .failed:
                return .none
            }
        }
        switch step {
        case .none:
            return false
        case .passed:
            if announcing { changeReadiness {} }
            return true
        case .check(let conditions):
            startChecking(conditions)
            return false
        case .acquire(let request):
            let grantedAtOnce = ExclusivityCoordinator.shared.request(request) { [weak self] in
                self?.keysGranted(request, announcing: true) ?? false
            }
            guard grantedAtOnce else { return false }
            if keysGranted(request, announcing: announcing) { return true }
            ExclusivityCoordinator.shared.withdraw(request)
            return false
        }
    }

    /// Takes the keys of `request` unless the operation stopped waiting for them (cancelled,
    /// paused, started). Returns whether it took them.
    private func keysGranted(_ request: ExclusivityRequest, announcing: Bool) -> Bool {
        let taken = lock.withCriticalSection { () -> Bool in
            guard let rare, case .waitingForKeys(let waiting)? = rare.gate?.stage, waiting === request,
                !lifecycle.isCancellationRecorded
            else { return false }
            rare.gate?.stage = .passed(request)
            return true
        }
        if taken && announcing { changeReadiness {} }
        return taken
    }

    /// Checks `conditions` in order on a task of their own — never on a queue's thread — and
    /// goes on with the gate.
    private func startChecking(_ conditions: [OperationCondition]) {
        let task = Task.detached(priority: TaskPriority(qualityOfService)) { [self] in
            var verdict = OperationCondition.Verdict.holds
            for condition in conditions where !Task.isCancelled {
                verdict = await condition.check(self)
                guard case .holds = verdict else { break }
            }
            conditionsChecked(verdict)
        }
        lock.withCriticalSection {
            if case .checking(nil)? = rare?.gate?.stage { rare?.gate?.stage = .checking(task) }
        }
        // `cancel()` records the cancellation before it reads the stage, and the task was stored
        // before this read: one of the two sides sees the other.
        if isCancelled { task.cancel() }
    }

    /// Goes on with the gate once the conditions have been checked: to the keys when they held;
    /// when one failed, the gate fails and the outcome is decided in one step
    /// (``finishWithoutRunning(failedCondition:)``); when one failed silently, the operation is
    /// cancelled (``skipWithoutRunning(silencedCondition:)``). Nothing once the operation was
    /// cancelled.
    private func conditionsChecked(_ verdict: OperationCondition.Verdict) {
        switch verdict {
        case .holds:
            break
        case .fails(let failure):
            return finishWithoutRunning(failedCondition: failure)
        case .silenced(let failure):
            return skipWithoutRunning(silencedCondition: failure)
        }
        let proceed = lock.withCriticalSection { () -> Bool in
            guard let rare, case .checking? = rare.gate?.stage, !lifecycle.isCancellationRecorded else {
                return false
            }
            rare.gate?.stage = .checked
            return true
        }
        guard proceed, !advanceGate(announcing: true) else { return }
        // A queue asking `isReady` between the two critical sections may have taken the gate
        // to `passed` itself, without announcing it (`isReady` does not). Linux's queue asks
        // that way when it rescans (`_schedule`'s retest), stores the "ready" and starts
        // nothing until its next rescan — which may never come: announce it. (Found by
        // `ConditionStressTests`: a passing condition hung about one round in 50,000.)
        let passedMeanwhile = lock.withCriticalSection { () -> Bool in
            if case .passed? = rare?.gate?.stage { return !lifecycle.hasStarted }
            return false
        }
        if passedMeanwhile { changeReadiness {} }
    }

    /// Skips the pending operation because a silent condition failed: records `failure` as
    /// ``Bridge/silencedConditionFailure`` and cancels the operation (`cancel()`, a subclass's
    /// override included), unless a cancellation came first. Its queue then starts it and it
    /// finishes without running, cancelled.
    ///
    /// The gate stays `checking` — not ready — until the cancellation is recorded, and a
    /// cancelled operation is ready whatever its gate: no queue finds it ready with its outcome
    /// open. When the outcome was decided meanwhile (a finish or a result given before the
    /// start), the cancellation records nothing; the gate then fails, so that the operation
    /// becomes ready and finishes as decided.
    private func skipWithoutRunning(silencedCondition failure: ConditionFailedError) {
        let open = lock.withCriticalSection { () -> Bool? in
            guard let rare, case .checking? = rare.gate?.stage, !lifecycle.isCancellationRecorded else { return nil }
            guard outcomeOpenLocked, !lifecycle.hasStarted else { return false }
            rare.silencedConditionFailure = failure
            return true
        }
        guard let open else { return }
        if open { cancel() }
        lock.withCriticalSection {
            if case .checking? = rare?.gate?.stage { rare?.gate?.stage = .failed }
        }
        changeReadiness {}
    }

    /// Traps: the operation is being started, not cancelled and its outcome open, before its gate
    /// passed — started by hand, or by a queue that was never told it is not ready (a condition
    /// added after the operation was queued). `start()` calls it having read the gate in the same
    /// critical section as it claimed the start.
    func trapStartedBeforeGatePassed() -> Never {
        // `fatalError`, not `preconditionFailure`: the message must survive release builds.
        fatalError(
            "\(type(of: self)) was started before its conditions were checked: it was started by hand, or a "
                + "condition was added after the operation was queued. Add conditions before adding the operation "
                + "to a queue, and let the queue start it: it checks them first.")
    }

    /// The exclusivity request the operation waits with or holds its keys by, if any. Thread-safe.
    var exclusivityRequest: ExclusivityRequest? {
        lock.withCriticalSection { rare?.gate?.request }
    }

    /// Pauses the gate for ``pause()``: a wait for keys is given up (no key is held while paused)
    /// and asked for again on ``resume()``. Callers hold `lock`. Returns the request to withdraw.
    func pauseGateLocked() -> ExclusivityRequest? {
        guard let rare, case .waitingForKeys(let request)? = rare.gate?.stage else { return nil }
        rare.gate?.stage = .checked
        return request
    }
}

/// What holds a pending ``AsyncOperation`` back from becoming ready, read in one critical section
/// (``AsyncOperation/readinessHolds``): for ``Bridge/pendingDiagnostics`` and ``WaitGraph``.
struct ReadinessHolds {
    /// ``Bridge/pause()`` holds it back.
    var isPaused = false
    /// A delayed start (``Bridge/delayStart(by:clock:)``) holds it back.
    var isDelayed = false
    /// The names of its predicate conditions, in the order added.
    var conditions: [String] = []
    /// Its conditions are being checked now.
    var isChecking = false
    /// The exclusivity request it waits with or holds its keys by, if any.
    var request: ExclusivityRequest?
}

extension AsyncOperation {
    /// What holds the operation back from becoming ready, at this moment. Thread-safe.
    var readinessHolds: ReadinessHolds {
        lock.withCriticalSection {
            guard let rare else { return ReadinessHolds() }
            var holds = ReadinessHolds(isPaused: rare.isPaused, isDelayed: rare.isReadinessHeld)
            if let gate = rare.gate {
                holds.conditions = gate.conditions.map(\.name)
                if case .checking = gate.stage { holds.isChecking = true }
                holds.request = gate.request
            }
            return holds
        }
    }
}
