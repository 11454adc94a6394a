import Foundation

extension AsyncOperation {
    /// The progress handed out by ``Bridge/operationProgress``.
    final var progressHandedOut: OperationProgress {
        // Handed out: a Foundation view made from it later cancels this operation.
        if let bodyProgress {
            bodyProgress.link(to: self)
            return bodyProgress
        }
        return lock.withCriticalSection { progressLocked(handedOut: true) }
    }

    /// The operation's progress, for the package's own reads (an aggregate's snapshot): as
    /// ``operationProgress``, without tying the progress to the operation for its Foundation
    /// views. Thread-safe.
    final var ownProgress: OperationProgress {
        bodyProgress ?? lock.withCriticalSection { progressLocked(handedOut: false) }
    }

    /// The progress kept in the rarely used state, made on first use; tied to the operation the
    /// first time it is handed out (later reads take only the operation's lock, as a subclass
    /// that reads it for every report does). Callers hold `lock`.
    private func progressLocked(handedOut: Bool) -> OperationProgress {
        let state = rareState()
        let progress: OperationProgress
        if let existing = state.progress {
            progress = existing
        } else {
            // Made finished from the moment the operation is finishing: the finish has read
            // the progress it ends already (see `sendFinishNotifications(wasExecuting:)`).
            progress = makeOperationProgress(
                finished: lifecycle.isFinishingOrFinished, cancelled: lifecycle.isCancellationRecorded,
                ran: ranItsWorkLocked(executed: lifecycle.didExecute))
            state.progress = progress
        }
        if handedOut && !state.isProgressLinked {
            // The progress's lock inside the operation's: never the other way round.
            progress.link(to: self)
            state.isProgressLinked = true
        }
        return progress
    }

    /// Makes the operation's progress a child of its queue's, worth one unit, when that queue
    /// reports progress — as Foundation does for operations that run `Operation.start()`. Called
    /// as the operation begins executing, on the queue's thread.
    ///
    /// - Parameter admitted: The queue the package admitted the operation to, read by the caller
    ///   in the critical section that made the operation executing (one lock fewer per start).
    func countTowardQueueProgress(admitted: OperationQueue?) {
        guard countsTowardQueueProgress, let queue = QueueSlots.queueRunning(self, admitted: admitted),
            let queueProgress = QueueProgressLookup.shared.reportingProgress(of: queue)
        else { return }
        let progress = progressHandedOut
        // Made under the creation lock, added outside it: on Apple platforms the queue's
        // `progress` may have KVO observers, which run inside `addChild` on this thread.
        let view = FoundationProgressViews.create { moved in progress.makeView(moved: &moved) }
        FoundationProgressViews.writing { queueProgress.addChild(view, withPendingUnitCount: 1) }
    }
}

extension Bridge where Base: AsyncOperation {
    /// The operation's progress: the work reports units on it, async code watches it.
    ///
    /// ```swift
    /// final class ImportOperation: AsyncOperation, @unchecked Sendable {
    ///     override func main() {
    ///         bridge.operationProgress.totalUnitCount = Int64(records.count)
    ///         importer.run(records, onEach: { [self] in bridge.operationProgress.advance() }) { [self] in finish() }
    ///     }
    /// }
    /// ```
    ///
    /// Created on first use, the same object every time; an operation that reports nothing counts
    /// as one unit. Finishing after running completes it; cancelling (or timing out) marks it
    /// cancelled, and a cancelled operation's progress, or one that finished without running, is
    /// not completed (see ``OperationProgress``). For a ``GroupOperation`` it aggregates the
    /// children, each weighing one.
    ///
    /// While the operation runs on a queue whose `progress` reports (its `totalUnitCount` was
    /// set), it is also a child of that progress, worth one unit, as Foundation's own operations
    /// are: the package's operations count toward `OperationQueue.progress` on every platform,
    /// although they override `start()`. Its unit completes when the operation completes its
    /// progress: one cancelled while it runs leaves the queue's fraction below 1 (Foundation
    /// completes the unit of its own synchronous operations when `main()` returns, cancelled or
    /// not); one cancelled before it starts is not counted at all, as with Foundation.
    ///
    /// Each read takes the operation's lock: in a tight loop, read it once and report on the
    /// handle.
    ///
    /// The package's final classes (``TaskOperation``, ``ChainedTaskOperation``, ``GroupOperation``)
    /// also conform to `ProgressReporting`, whose `progress` is ``OperationProgress/foundationProgress``.
    ///
    /// ## Cancellation and threading
    /// Thread-safe. Reading it never cancels or starts anything; see ``OperationProgress`` for
    /// what cancelling its Foundation view does.
    public var operationProgress: OperationProgress { base.progressHandedOut }
}
