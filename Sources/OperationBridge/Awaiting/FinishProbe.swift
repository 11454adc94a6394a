#if !canImport(Darwin)
    import Foundation

    /// Linux: the stand-in for an observer of an operation that is not the package's — an
    /// operation that depends on it and is never queued.
    ///
    /// When an operation finishes, Foundation on Linux (swift-corelibs-foundation) takes each
    /// dependent whose last unfinished dependency it was and asks that dependent's `isReady`, on the
    /// finishing thread, before it tells the finished operation's queue — whether the dependent is
    /// in a queue or not (Design.md, "Platform facts"; `FinishProbeTests` pins it). The probe's
    /// `isReady` calls the callback then: no queue is woken and no thread hops, where a sentinel
    /// operation on a second queue cost that queue's scheduling pass and a thread wake-up per
    /// observation. Neither KVO nor `completionBlock` is involved.
    ///
    /// Lifetime: the observed operation refers to its dependents through unretained pointers, so
    /// the probe keeps itself alive from the moment it is armed until the callback has been taken
    /// (by the finish, or by ``discard(observing:)``, which first unlinks it from the observed
    /// operation). A probe released while still linked would be touched, freed, by the finish
    /// (the use-after-free of Design.md, "Platform facts").
    ///
    /// Safety: `state` and `keepAlive` are only touched while holding `lock`; the callback is called
    /// and the references are dropped after the lock is released.
    final class FinishProbe: Operation, @unchecked Sendable {
        private enum State {
            /// Being linked to the observed operation: `isReady` may already be asked (Foundation asks
            /// it at the end of `addDependency(_:)`), and the callback must not be called from inside
            /// ``observe(_:_:)``.
            case arming(@Sendable () -> Void)
            /// The observed operation finished while the probe was being linked.
            case finishedWhileArming
            /// Linked, waiting for the observed operation to finish.
            case armed(@Sendable () -> Void)
            /// The callback was taken: called, or discarded.
            case done
        }

        private let lock = OperationLock()
        private var state: State
        /// The probe itself while it is armed (see the type's discussion).
        private var keepAlive: FinishProbe?

        private init(_ callback: @escaping @Sendable () -> Void) {
            state = .arming(callback)
            super.init()
        }

        /// Links a probe to `operation`, which will call `callback` once `operation` has finished.
        ///
        /// - Returns: The armed probe, or `nil` when `operation` had finished already (or finished
        ///   while it was being linked); `callback` is then never called.
        static func observe(_ operation: Operation, _ callback: @escaping @Sendable () -> Void) -> FinishProbe? {
            let probe = FinishProbe(callback)
            probe.addDependency(operation)
            return probe.arm() ? probe : nil
        }

        /// Foundation asks it when a dependency changed — in particular on the thread that finishes
        /// the last unfinished one. Ready means the observed operation has finished: the probe is
        /// never cancelled, and its dependency is only removed once its callback is gone.
        override var isReady: Bool {
            let ready = super.isReady
            if ready { observedOperationFinished() }
            return ready
        }

        private func arm() -> Bool {
            lock.withCriticalSection {
                switch state {
                case .arming(let callback):
                    state = .armed(callback)
                    keepAlive = self
                    return true
                case .finishedWhileArming:
                    state = .done
                    return false
                case .armed, .done:
                    preconditionFailure("Internal inconsistency: a FinishProbe was armed twice")
                }
            }
        }

        private func observedOperationFinished() {
            let (callback, retained) = lock.withCriticalSection { () -> ((@Sendable () -> Void)?, FinishProbe?) in
                switch state {
                case .arming:
                    state = .finishedWhileArming
                    return (nil, nil)
                case .armed(let callback):
                    state = .done
                    return (callback, keepAlive.take())
                case .finishedWhileArming, .done:
                    return (nil, nil)
                }
            }
            callback?()
            // The finishing operation holds the probe strongly while it asks `isReady`.
            withExtendedLifetime(retained) {}
        }

        /// Drops the callback, unless it has been taken already (it is then called, or running), and
        /// unlinks the probe from `observed` before letting it go.
        func discard(observing observed: Operation) {
            let (dropped, retained) = lock.withCriticalSection { () -> ((@Sendable () -> Void)?, FinishProbe?) in
                guard case .armed(let callback) = state else { return (nil, nil) }
                state = .done
                return (callback, keepAlive.take())
            }
            // Unlinked before the last reference may go: the observed operation must not keep a
            // pointer to a freed probe. (Foundation then asks `isReady` again; the state is `done`.)
            if retained != nil { removeDependency(observed) }
            // Released after the lock: the callback may hold the last reference to what it captured.
            withExtendedLifetime((dropped, retained)) {}
        }
    }
#endif
