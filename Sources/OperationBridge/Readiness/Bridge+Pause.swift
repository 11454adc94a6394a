import Foundation

extension Bridge where Base: AsyncOperation {
    /// Holds the pending operation back from becoming ready until ``resume()``: its queue does
    /// not start it, and it takes no queue slot.
    ///
    /// ```swift
    /// upload.bridge.pause()             // the user went offline
    /// queue.addOperation(upload)
    /// // …
    /// upload.bridge.resume()            // back online: the queue starts it when it has a slot
    /// ```
    ///
    /// Pausing an operation that has started or finished does nothing: the work is not
    /// interrupted. An operation waiting for its exclusivity keys gives up its place in line and
    /// asks again when resumed; one that already holds its keys keeps them. Pausing twice needs
    /// one `resume()`.
    ///
    /// ## Cancellation and threading
    /// A cancelled operation is ready, paused or not: cancelling a paused operation finishes it
    /// (without running) when its queue starts it. Safe from any thread; works with Linux's queue,
    /// which is told to look at the operation again, as with Darwin's.
    ///
    /// ## Foundation's Progress
    /// The Foundation `Progress` objects that follow the operation's progress
    /// (``OperationProgress/foundationProgress``, and those handed to a parent) are marked paused
    /// (`isPaused`), and resumed by ``resume()``; pausing or resuming one of them pauses or
    /// resumes the operation. See <doc:ReportingProgress>.
    public func pause() {
        let base = base
        let (request, progress) = base.changeReadiness { () -> (ExclusivityRequest?, OperationProgress?) in
            guard !base.lifecycle.hasStarted, !base.lifecycle.isFinishingOrFinished else { return (nil, nil) }
            let state = base.rareState()
            state.isPaused = true
            return (base.pauseGateLocked(), base.bodyProgress ?? state.progress)
        }
        if let request { ExclusivityCoordinator.shared.withdraw(request) }
        progress?.operationPauseChanged(base)
    }

    /// Ends a ``pause()``: the operation becomes ready as soon as its dependencies, conditions and
    /// keys allow. Does nothing when it is not paused, except that the Foundation `Progress`
    /// objects that follow the operation's progress are resumed if they say paused.
    ///
    /// ## Cancellation and threading
    /// Safe from any thread; the queue is told to look at the operation again.
    public func resume() {
        let base = base
        let progress = base.changeReadiness { () -> OperationProgress? in
            base.rare?.isPaused = false
            return base.bodyProgress ?? base.rare?.progress
        }
        progress?.operationPauseChanged(base)
    }

    /// Whether ``pause()`` holds the operation back. Thread-safe.
    public var isPaused: Bool {
        base.lock.withCriticalSection { base.rare?.isPaused == true }
    }
}
