import Foundation

/// A one-shot "this operation has finished" callback for any `Operation`, without KVO (absent
/// on Linux) and without touching `completionBlock` (which belongs to the user).
///
/// - The package's own operations (``AsyncOperation`` and subclasses) call their observers
///   directly when they finish.
/// - Any other operation is observed through an operation that depends on it:
///   - on Linux a *probe* (``FinishProbe``), which is never queued: Foundation asks it `isReady`
///     on the finishing thread as soon as the observed operation has finished, so no queue is
///     woken and no thread hops;
///   - on Apple platforms a *sentinel* (``FinishSentinel``), which runs on a private queue once
///     the observed operation has finished.
///
///   Either way the callback may run on the thread that finishes the operation: it must be short
///   and must not take a lock that the caller of ``observe(_:_:)`` holds (it is never called from
///   inside ``observe(_:_:)`` itself).
struct FinishObservation: Sendable {
    private enum Kind {
        case direct(AsyncOperation, LifecycleStateMachine.ObserverID)
        #if canImport(Darwin)
            case sentinel(FinishSentinel, observed: Operation)
        #else
            case probe(FinishProbe, observed: Operation)
        #endif
    }

    private let kind: Kind

    /// Calls `callback` once `operation` has finished.
    ///
    /// - Returns: A handle to stop observing, or `nil` when the operation had already finished;
    ///   `callback` is then never called.
    static func observe(
        _ operation: Operation,
        _ callback: @escaping @Sendable () -> Void
    ) -> FinishObservation? {
        if let operation = operation as? AsyncOperation {
            guard let id = operation.addFinishObserver(callback) else { return nil }
            return FinishObservation(kind: .direct(operation, id))
        }
        if operation.isFinished { return nil }
        #if canImport(Darwin)
            let sentinel = FinishSentinel(callback)
            sentinel.addDependency(operation)
            // `enqueue`: the operation may finish while the sentinel is being added.
            FinishSentinel.queue.enqueue(sentinel)
            return FinishObservation(kind: .sentinel(sentinel, observed: operation))
        #else
            guard let probe = FinishProbe.observe(operation, callback) else { return nil }
            return FinishObservation(kind: .probe(probe, observed: operation))
        #endif
    }

    /// Stops observing. The callback is not called afterwards, unless it is already running.
    func cancel() {
        switch kind {
        case .direct(let operation, let id):
            operation.removeFinishObserver(id)
        #if canImport(Darwin)
            case .sentinel(let sentinel, let observed):
                Self.release(sentinel, observing: observed)
        #else
            case .probe(let probe, let observed):
                probe.discard(observing: observed)
        #endif
        }
    }

    #if canImport(Darwin)
        /// Drops the sentinel's callback (unless it has been called or is running) and lets its
        /// queue finish it.
        private static func release(_ sentinel: FinishSentinel, observing observed: Operation) {
            sentinel.discard()
            // Unlink first, so the sentinel never waits for `observed` again, then cancel it so its
            // queue lets it go.
            sentinel.removeDependency(observed)
            sentinel.cancel()
        }
    #endif
}

#if canImport(Darwin)
    /// The operation that stands in for an observer of a foreign operation on Apple platforms: it
    /// depends on the observed operation and calls its callback when it runs.
    ///
    /// Safety: the callback is only read and cleared while holding `lock`.
    final class FinishSentinel: Operation, @unchecked Sendable {
        /// The private queue the sentinels wait in. Unlimited concurrency: a sentinel does nothing
        /// but call a callback.
        static let queue: OperationQueue = {
            let queue = OperationQueue()
            queue.name = "OperationBridge.FinishSentinel"
            return queue
        }()

        private let lock = NSLock()
        private var callback: (@Sendable () -> Void)?

        init(_ callback: @escaping @Sendable () -> Void) {
            self.callback = callback
            super.init()
        }

        override func main() {
            let callback = lock.withCriticalSection {
                defer { self.callback = nil }
                return self.callback
            }
            // The observed operation has finished: stop retaining it before anybody resumes, so
            // that it is released as soon as its awaiters let go of it (this sentinel itself is
            // released by its queue a moment later).
            for dependency in dependencies { removeDependency(dependency) }
            callback?()
        }

        /// Drops the callback without calling it (nothing happens when it was already taken).
        func discard() {
            // Released after the lock: it may hold the last reference to what it captured.
            let dropped = lock.withCriticalSection { callback.take() }
            withExtendedLifetime(dropped) {}
        }
    }
#endif
