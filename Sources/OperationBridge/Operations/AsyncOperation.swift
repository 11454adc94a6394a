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
///
/// ## Cancellation
/// `cancel()` only sets `isCancelled`, as for any `Operation`; the running work should check
/// `isCancelled` and call ``finish()``. Cancellation never finishes an operation by itself,
/// so dependents never start while the work is still running.
///
/// ## Threading
/// Every member may be called from any thread. Awaiting an `AsyncOperation` from async code
/// (see ``Foundation/Operation/waitForCompletion()``) does not rely on KVO or `completionBlock`: the
/// operation notifies its awaiters directly when it finishes.
open class AsyncOperation: Operation, @unchecked Sendable {
    // Safety: every stored property below is only touched while holding `lock`. Subclasses in
    // this module keep their own mutable state under the same lock, so that a result and the
    // lifecycle change together.
    let lock = NSLock()
    private var lifecycle = LifecycleStateMachine()
    /// The `Task` running the operation's async work, if any; cancelled with the operation.
    private var attachedTask: Task<Void, Never>?
    /// `cancel()` was called before the operation began to finish. Recorded under the same lock
    /// as the lifecycle (and, for result operations, the result), so that `isCancelled` and the
    /// result never disagree when cancellation races completion.
    private var cancellationRecorded = false

    /// Creates a pending operation.
    public override init() {
        super.init()
    }

    deinit {
        // Linux's Foundation keeps unretained pointers from a dependency to its dependents. A
        // cancelled operation finishes without waiting for its dependencies and can be released
        // before one of them finishes; that dependency would then touch freed memory. Unlinking
        // here removes the pointer. On Apple platforms it is harmless: an operation being freed no
        // longer waits for anything, and removing a dependency is an ordinary operation.
        //
        // `super.`: Foundation's own `dependencies` and `removeDependency(_:)`, never a subclass's
        // overrides, which must not run while the object is being deallocated.
        for dependency in super.dependencies where !dependency.isFinished {
            super.removeDependency(dependency)
        }
    }

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
        lock.withCriticalSection { cancellationRecorded }
    }

    /// `true` once ``finish()`` has completed. Thread-safe.
    open override var isFinished: Bool {
        lock.withCriticalSection { lifecycle.isFinished }
    }

    /// Begins the operation. Queues call it; you may call it by hand on an operation that is
    /// not in a queue.
    ///
    /// A cancelled operation (or one whose ``finish()`` was already requested) finishes here
    /// without running ``main()``. Otherwise the operation becomes executing and ``main()``
    /// runs on the calling thread. A second call is ignored. Override ``main()``, not this.
    open override func start() {
        let action = lock.withCriticalSection { lifecycle.start(isCancelled: cancellationRecorded) }
        switch action {
        case .ignore:
            return
        case .finishWithoutRunning:
            sendFinishNotifications(wasExecuting: false)
        case .beginExecuting:
            willChangeValue(forKey: "isExecuting")
            let finishRequested = lock.withCriticalSection { lifecycle.enteredExecuting() }
            didChangeValue(forKey: "isExecuting")
            if finishRequested {
                finishLifecycle()
            } else if prepareToRun() {
                main()
            }
        }
    }

    /// Starts the operation's work. Override it, and call ``finish()`` when the work has ended.
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
        let (recorded, task) = lock.withCriticalSection { (recordCancellationLocked(), attachedTask) }
        // A cancellation that lost the race against completion changes nothing, so that
        // `isCancelled` and the outcome always agree.
        guard recorded else { return }
        super.cancel()
        task?.cancel()
    }

    /// Records the cancellation unless the outcome is already decided (the operation began to
    /// finish, or a result operation stored its result). Returns whether the operation counts as
    /// cancelled. Callers hold `lock`.
    func recordCancellationLocked() -> Bool {
        if cancellationRecorded { return true }
        guard !lifecycle.isFinishingOrFinished, !outcomeDecidedLocked else { return false }
        cancellationRecorded = true
        return true
    }

    /// Whether `cancel()` won. Callers hold `lock`.
    var cancellationRecordedLocked: Bool { cancellationRecorded }

    /// Whether the outcome was decided before finishing began; result operations override it
    /// (a stored result). Callers hold `lock`.
    var outcomeDecidedLocked: Bool { false }

    // MARK: - Internal machinery

    /// Runs `work` in a new `Task` whose priority is derived from ``qualityOfService`` (see
    /// `TaskPriority.init(_:)`), and cancels that task when the operation is cancelled.
    ///
    /// The task is detached: it inherits no task-local values from whoever queued or started the
    /// operation. `work` must end by finishing the operation.
    final func runAttachedTask(_ work: @escaping @Sendable () async -> Void) {
        // Detached: an operation started by hand from async code must not hand that code's
        // task-local values (or its actor) to the work, exactly as when a queue starts it.
        let task = Task.detached(priority: TaskPriority(qualityOfService), operation: work)
        lock.withCriticalSection {
            if !lifecycle.isFinishingOrFinished { attachedTask = task }
        }
        // `cancel()` sets the flag before it reads `attachedTask`, and the task was stored before
        // this read, so one of the two sides always sees the other.
        if isCancelled { task.cancel() }
    }

    /// Finishes the lifecycle. Subclasses' `finish` variants funnel into this.
    ///
    /// - Parameter updateLocked: Runs under the lock just before the finish is claimed (a result
    ///   operation stores its result there, in the same critical section); it may return work to
    ///   do once the lock is released and before the notifications are sent.
    final func finishLifecycle(_ updateLocked: () -> (() -> Void)? = { nil }) {
        let (stored, claim) = lock.withCriticalSection { (updateLocked(), lifecycle.claimFinish()) }
        stored?()
        guard case .notify(let wasExecuting) = claim else { return }
        sendFinishNotifications(wasExecuting: wasExecuting)
    }

    private func sendFinishNotifications(wasExecuting: Bool) {
        withExtendedLifetime(self) {
            if wasExecuting { willChangeValue(forKey: "isExecuting") }
            willChangeValue(forKey: "isFinished")
            let observers = lock.withCriticalSection {
                attachedTask = nil
                return lifecycle.completeFinish()
            }
            // Suspended tasks first: `isFinished` is already `true` for them, and they resume
            // while the queue does its own bookkeeping below — as a hand-written callback would.
            for case (_, .waiter(let continuation)) in observers {
                continuation.resume(returning: true)
            }
            if wasExecuting { didChangeValue(forKey: "isExecuting") }
            didChangeValue(forKey: "isFinished")
            // Callbacks (the pipeline scheduler) after the queue knows, so that dependents they
            // enqueue are ready at once.
            for case (_, .callback(let callback)) in observers {
                callback()
            }
        }
    }

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

    /// Suspends until the operation has finished (`true`) or ``cancelWait(_:)`` was called with
    /// `id` (`false`). The continuation is resumed exactly once, whichever comes first — even
    /// when the cancellation comes before the suspension.
    func waitForFinish(_ id: LifecycleStateMachine.ObserverID) async -> Bool {
        await withUnsafeContinuation { continuation in
            let immediate = lock.withCriticalSection { lifecycle.installWaiter(id, continuation) }
            if let immediate { continuation.resume(returning: immediate) }
        }
    }

    /// An identifier for ``waitForFinish(_:)`` and ``cancelWait(_:)``, or `nil` when the
    /// operation has already finished (there is nothing to wait for).
    func reserveWaitID() -> LifecycleStateMachine.ObserverID? {
        lock.withCriticalSection { lifecycle.isFinished ? nil : lifecycle.reserveObserverID() }
    }

    /// Ends the wait `id` with `false`, unless it has already ended.
    func cancelWait(_ id: LifecycleStateMachine.ObserverID) {
        let continuation = lock.withCriticalSection { lifecycle.cancelWaiter(id) }
        continuation?.resume(returning: false)
    }

    /// Removes an observer that has not run yet.
    func removeFinishObserver(_ id: LifecycleStateMachine.ObserverID) {
        lock.withCriticalSection { _ = lifecycle.removeObserver(id) }
    }
}
