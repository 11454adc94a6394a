/// The lifecycle of an ``AsyncOperation``: pending → executing → finished.
///
/// The machine is a plain value: ``AsyncOperation`` keeps it under its lock, calls one
/// mutating method per event, and performs the returned action (KVO-style notifications,
/// resuming awaiters) after releasing the lock.
struct LifecycleStateMachine {
    /// A callback run once, after the operation has finished.
    typealias FinishObserver = @Sendable () -> Void

    /// Identifies a registered ``FinishObserver`` so it can be removed again.
    struct ObserverID: Hashable, Sendable {
        fileprivate let rawValue: UInt64
    }

    private enum State {
        /// Created, possibly queued, not started yet.
        case pending
        /// `start()` claimed the operation; `isExecuting` notifications are being sent.
        case starting
        /// `main()` runs, or work it started is in flight.
        case executing
        /// `finish()` claimed the operation; `isFinished` notifications are being sent.
        /// `wasExecuting` tells whether `isExecuting` is still `true` until they are sent.
        case finishing(wasExecuting: Bool)
        /// Done. Terminal.
        case finished
    }

    private var state: State = .pending
    /// `finish()` was called before the operation had been started; honoured by `start()`.
    private var finishRequested = false
    /// Someone waiting for the operation to finish.
    enum Observer {
        /// A callback to call.
        case callback(FinishObserver)
        /// A suspended task to resume with `true` (finished) or `false` (its wait was cancelled).
        case waiter(UnsafeContinuation<Bool, Never>)
    }

    private var observers: [(id: ObserverID, observer: Observer)] = []
    private var nextObserverID: UInt64 = 0
    /// Waiters cancelled before their continuation was installed.
    private var cancelledWaiters: [ObserverID] = []

    // MARK: Queries

    var isExecuting: Bool {
        switch state {
        case .executing, .finishing(wasExecuting: true): true
        case .pending, .starting, .finishing(wasExecuting: false), .finished: false
        }
    }

    var isFinished: Bool {
        if case .finished = state { return true }
        return false
    }

    /// `true` once `finish()` has been claimed: later results are ignored from then on.
    var isFinishingOrFinished: Bool {
        switch state {
        case .finishing, .finished: true
        case .pending, .starting, .executing: false
        }
    }

    var hasStarted: Bool {
        if case .pending = state { return false }
        return true
    }

    // MARK: Events

    enum StartAction {
        /// Already started once: ignore this call.
        case ignore
        /// Send the `isExecuting` notifications, then call ``enteredExecuting()``.
        case beginExecuting
        /// The operation was cancelled, or finish was requested, before it started: send the
        /// `isFinished` notifications and call ``completeFinish()`` without running `main()`.
        case finishWithoutRunning
    }

    mutating func start(isCancelled: Bool) -> StartAction {
        switch state {
        case .pending:
            if isCancelled || finishRequested {
                state = .finishing(wasExecuting: false)
                return .finishWithoutRunning
            }
            state = .starting
            return .beginExecuting
        case .starting, .executing, .finishing, .finished:
            return .ignore
        }
    }

    /// Completes the start transition. Returns `true` when `finish()` was requested meanwhile.
    mutating func enteredExecuting() -> Bool {
        guard case .starting = state else {
            preconditionFailure("Internal inconsistency: entered executing from \(state)")
        }
        state = .executing
        return finishRequested
    }

    enum FinishClaim {
        /// Send the notifications, then call ``completeFinish()``.
        case notify(wasExecuting: Bool)
        /// Not started yet: the request is recorded and honoured when the operation starts.
        case deferredUntilStart
        /// Already finishing or finished: nothing to do.
        case ignore
    }

    mutating func claimFinish() -> FinishClaim {
        switch state {
        case .pending, .starting:
            finishRequested = true
            return .deferredUntilStart
        case .executing:
            state = .finishing(wasExecuting: true)
            return .notify(wasExecuting: true)
        case .finishing, .finished:
            return .ignore
        }
    }

    /// Ends the finish transition and hands back the observers to notify outside the lock.
    mutating func completeFinish() -> [(id: ObserverID, observer: Observer)] {
        guard case .finishing = state else {
            preconditionFailure("Internal inconsistency: completed finish from \(state)")
        }
        state = .finished
        cancelledWaiters = []
        defer { observers = [] }
        return observers
    }

    /// Registers `callback` to run once the operation has finished.
    ///
    /// - Returns: The observer's identifier, or `nil` when the operation has already finished
    ///   (the callback is then not stored and the caller proceeds at once).
    mutating func addObserver(_ callback: @escaping FinishObserver) -> ObserverID? {
        if case .finished = state { return nil }
        let id = reserveObserverID()
        observers.append((id, .callback(callback)))
        return id
    }

    /// A fresh identifier for a waiter that will be installed with ``installWaiter(_:_:)``.
    mutating func reserveObserverID() -> ObserverID {
        defer { nextObserverID &+= 1 }
        return ObserverID(rawValue: nextObserverID)
    }

    /// Stores a suspended task until the operation finishes.
    ///
    /// - Returns: The value to resume the continuation with at once (`true`: already finished;
    ///   `false`: this wait was cancelled before it was installed), or `nil` when it was stored.
    mutating func installWaiter(_ id: ObserverID, _ continuation: UnsafeContinuation<Bool, Never>) -> Bool? {
        if case .finished = state { return true }
        if let index = cancelledWaiters.firstIndex(of: id) {
            cancelledWaiters.remove(at: index)
            return false
        }
        observers.append((id, .waiter(continuation)))
        return nil
    }

    /// Cancels the wait `id`.
    ///
    /// - Returns: The continuation to resume with `false`, when it was stored. When it was not
    ///   installed yet, the cancellation is remembered for ``installWaiter(_:_:)``; when the
    ///   operation has finished, the waiter was already resumed and nothing happens.
    mutating func cancelWaiter(_ id: ObserverID) -> UnsafeContinuation<Bool, Never>? {
        if let index = observers.firstIndex(where: { $0.id == id }) {
            guard case .waiter(let continuation) = observers.remove(at: index).observer else {
                preconditionFailure("Internal inconsistency: observer \(id) is not a waiter")
            }
            return continuation
        }
        if case .finished = state { return nil }
        cancelledWaiters.append(id)
        return nil
    }

    /// Removes an observer that has not run yet. Returns `false` when it was already taken.
    @discardableResult
    mutating func removeObserver(_ id: ObserverID) -> Bool {
        guard let index = observers.firstIndex(where: { $0.id == id }) else { return false }
        observers.remove(at: index)
        return true
    }
}
