#if canImport(Darwin)
    import os
#else
    import Synchronization
#endif

/// The lock inside every package operation: a lock stored in the object itself on Linux, where
/// an `NSLock` would be a second object with a mutex allocated apart from it (about 100 bytes
/// per operation, Design.md "Memory per operation").
///
/// - Linux: the standard library's `Mutex` (a futex word, stored inline).
/// - Apple platforms: `OSAllocatedUnfairLock` (macOS 13, iOS 16 and later — the package's
///   minimums; `Mutex` needs macOS 15 / iOS 18). One small allocation, as `os_unfair_lock` must
///   not move.
///
/// Not reentrant: a critical section never calls code outside the package.
struct OperationLock: ~Copyable, Sendable {
    #if canImport(Darwin)
        private let lock = OSAllocatedUnfairLock()
    #else
        private let mutex = Mutex(())
    #endif

    init() {}

    /// Runs `body` while holding the lock.
    @inline(__always)
    borrowing func withCriticalSection<Result>(_ body: () -> Result) -> Result {
        #if canImport(Darwin)
            lock.withLockUnchecked(body)
        #else
            // `Mutex` hands results across as `sending`; the caller's state is guarded by this
            // very lock, so the value leaves the critical section unchecked.
            mutex.withLock { _ in Unchecked(value: body()) }.value
        #endif
    }
}

#if !canImport(Darwin)
    /// A value carried out of a `Mutex` critical section (see ``OperationLock``).
    ///
    /// Safety: it only moves a value from inside a critical section to the thread that held the
    /// lock; it is never shared.
    private struct Unchecked<Value>: @unchecked Sendable {
        let value: Value
    }
#endif
