import Foundation

/// The one waiting mechanism behind every awaiting API of the package.
@usableFromInline
enum OperationWaiter {
    /// What cancelling the awaiting task does.
    @usableFromInline
    enum TaskCancellation: Sendable {
        /// Stop waiting at once; the operation goes on. For awaiters that do not own the
        /// operation (many tasks may await one operation).
        case stopWaiting
        /// Cancel the operation. If it has not started, stop waiting at once (it will finish
        /// without running once its queue starts it); if it is running, keep waiting until it
        /// has finished, so no work outlives the awaiting task.
        case cancelOperation
    }

    /// What ends a wait.
    @usableFromInline
    enum Target: Sendable {
        /// The operation has finished.
        case finish
        /// The operation's outcome is final: it has finished, or — for the package's operations
        /// — it was cancelled or given its result before it started (it will finish without
        /// running once a queue starts it, and nothing can change its outcome). What the
        /// result-reading APIs (`value`, `outcome`, `run`) wait for, so that they answer a decided
        /// outcome at once even for an operation that is never queued.
        case outcome
    }

    /// Suspends until `operation` has finished (or, for ``Target/outcome``, its outcome is
    /// final), or until the awaiting task is cancelled.
    ///
    /// Never blocks a thread. Raises the operation's quality of service to the awaiting task's
    /// priority. The continuation is resumed exactly once, whichever of finish and cancellation
    /// comes first, including when the task was cancelled before the call. Traps when the wait
    /// can never end because the awaiting work holds a slot of the saturated queue the operation
    /// waits in (see ``QueueSlots``); with `OPERATIONBRIDGE_STUCK_AWAIT_SECONDS` set, logs a wait
    /// that lasts longer, with the ``WaitGraph`` of the queue when it is known (see
    /// ``StuckAwaitWatchdog``).
    ///
    /// - Parameters:
    ///   - queue: The queue the operation is pending in, when the caller knows it (the
    ///     run-and-await APIs); otherwise the queue the package added it to, if any.
    ///   - timeout: A time limit, armed once the wait is registered and stopped when it ends;
    ///     ``WaitTimeout/fired`` then says whether the time ran out.
    ///   - admitting: Whether the awaiting task owns the operation and the wait hands it to
    ///     `queue` (``Foundation/OperationQueue/admit(_:listed:releasingForeignClaimOnFinish:settledDependencies:)``),
    ///     once the wait is registered and before the task suspends — as a hand-written
    ///     continuation adds its operation last. Registered after the add, the wait measured
    ///     about a fifth slower one await after another (Design.md, "Performance"). A task
    ///     cancelled before the call cancels the operation before it is added. For an operation
    ///     that is not the package's, the wait's one observation also releases the admission
    ///     registry's claim when it finishes (it stays armed when the wait ends first).
    /// - Returns: `true` when the operation finished (or its outcome is final); `false` when the
    ///   awaiting task was cancelled first, or the time limit stopped the wait.
    @usableFromInline
    static func waitForFinish(
        of operation: Operation,
        in queue: OperationQueue? = nil,
        until target: Target = .finish,
        onTaskCancellation: TaskCancellation,
        timeout: WaitTimeout? = nil,
        admitting: Bool = false
    ) async -> Bool {
        precondition(!admitting || queue != nil, "Internal inconsistency: admitting to no queue")
        operation.raiseQualityOfService(toMatch: Task.currentPriority)
        let blockedSlot = QueueSlots.enter(awaiting: operation, in: queue)
        let watchdog = StuckAwaitWatchdog.watch(operation, in: queue)
        defer {
            watchdog?.cancel()
            QueueSlots.leave(blockedSlot)
        }
        if let operation = operation as? AsyncOperation {
            return await waitForFinish(
                of: operation, decision: target == .outcome, onTaskCancellation: onTaskCancellation,
                timeout: timeout, admittingTo: admitting ? queue : nil)
        }
        if admitting, let queue {
            return await waitForFinish(
                ofForeign: operation, admittingTo: queue, onTaskCancellation: onTaskCancellation, timeout: timeout)
        }
        return await waitForFinish(ofForeign: operation, onTaskCancellation: onTaskCancellation, timeout: timeout)
    }

    /// Any other operation is observed through ``FinishObservation``.
    private static func waitForFinish(
        ofForeign operation: Operation,
        onTaskCancellation: TaskCancellation,
        timeout: WaitTimeout?
    ) async -> Bool {
        let slot = CompletionSlot<Bool>()
        guard let observation = FinishObservation.observe(operation, { slot.fulfill(true) }) else {
            return true
        }
        let timer = timeout?.arm(for: operation) { if slot.fulfill(false) { observation.cancel() } }
        defer { timer?.cancel() }
        return await withTaskCancellationHandler {
            await slot.wait()
        } onCancel: {
            giveUp(on: operation, cancelling: onTaskCancellation == .cancelOperation) {
                if slot.fulfill(false) { observation.cancel() }
            }
        }
    }

    /// As ``waitForFinish(ofForeign:onTaskCancellation:timeout:)``, adding the operation to `queue`
    /// once the wait is registered, with one observation that also releases the admission
    /// registry's claim when the operation finishes: a wait that ends first leaves it armed (the
    /// operation is in a queue, or running, so it finishes).
    private static func waitForFinish(
        ofForeign operation: Operation,
        admittingTo queue: OperationQueue,
        onTaskCancellation: TaskCancellation,
        timeout: WaitTimeout?
    ) async -> Bool {
        let slot = CompletionSlot<Bool>()
        let observation = FinishObservation.observe(operation) {
            OperationQueue.releaseForeignClaim(on: operation)
            slot.fulfill(true)
        }
        // Finished already: nothing to add, and no claim was taken.
        guard observation != nil else { return true }
        let timer = timeout?.arm(for: operation) { slot.fulfill(false) }
        defer { timer?.cancel() }
        return await withTaskCancellationHandler {
            await slot.wait { queue.admit(observed: operation) }
        } onCancel: {
            giveUp(on: operation, cancelling: onTaskCancellation == .cancelOperation) { slot.fulfill(false) }
        }
    }

    /// The package's own operations keep their waiters' continuations under their own lock:
    /// no extra allocation, and exactly-once resumption decided by the lifecycle state machine.
    private static func waitForFinish(
        of operation: AsyncOperation,
        decision: Bool,
        onTaskCancellation: TaskCancellation,
        timeout: WaitTimeout?,
        admittingTo queue: OperationQueue?
    ) async -> Bool {
        guard let id = operation.reserveWaitID(decision: decision) else {
            // Final already; one decided while pending still goes to its queue, to finish there.
            queue?.admit(operation)
            return true
        }
        // The two `stopWaiting` closures are written out rather than shared: one bound to a
        // `let` would escape (into the timer) and cost an allocation on every await.
        let timer = timeout?.arm(for: operation) { operation.cancelWait(id, decision: decision) }
        defer { timer?.cancel() }
        return await withTaskCancellationHandler {
            await operation.waitForFinish(id, decision: decision, admittingTo: queue)
        } onCancel: {
            giveUp(on: operation, cancelling: onTaskCancellation == .cancelOperation) {
                operation.cancelWait(id, decision: decision)
            }
        }
    }

    /// Ends a wait early — the awaiting task was cancelled, or its time is up.
    ///
    /// Without `cancelling`, stops the wait at once. With it, cancels the operation first — with
    /// `timingOut`, as a timeout (``AsyncOperation/timeOut()``) where the operation is one of the
    /// package's — then stops the wait unless the operation is running and `waitForRunningWork`
    /// asks to wait until it has ended (so that no work outlives the awaiter). Called without any
    /// lock held: `cancel()` may be a subclass's override.
    static func giveUp(
        on operation: Operation,
        cancelling: Bool,
        timingOut: Bool = false,
        waitForRunningWork: Bool = true,
        stopWaiting: () -> Void
    ) {
        guard cancelling else { return stopWaiting() }
        if timingOut, let operation = operation as? AsyncOperation {
            operation.timeOut()
        } else {
            operation.cancel()
        }
        if !waitForRunningWork || !operation.hasBeenStarted { stopWaiting() }
    }
}

extension Operation {
    /// Whether the operation has been started (it is executing or finished).
    var hasBeenStarted: Bool {
        if let operation = self as? AsyncOperation { return operation.hasStarted }
        return isExecuting || isFinished
    }
}
