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
    public func pause() {
        let base = base
        let request = base.changeReadiness { () -> ExclusivityRequest? in
            guard !base.lifecycle.hasStarted, !base.lifecycle.isFinishingOrFinished else { return nil }
            base.rareState().isPaused = true
            return base.pauseGateLocked()
        }
        if let request { ExclusivityCoordinator.shared.withdraw(request) }
    }

    /// Ends a ``pause()``: the operation becomes ready as soon as its dependencies, conditions and
    /// keys allow. Does nothing when it is not paused.
    ///
    /// ## Cancellation and threading
    /// Safe from any thread; the queue is told to look at the operation again.
    public func resume() {
        let base = base
        base.changeReadiness { base.rare?.isPaused = false }
    }

    /// Whether ``pause()`` holds the operation back. Thread-safe.
    public var isPaused: Bool {
        base.lock.withCriticalSection { base.rare?.isPaused == true }
    }
}
