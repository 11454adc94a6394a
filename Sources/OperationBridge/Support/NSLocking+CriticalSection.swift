import Foundation

/// The package's lock primitive for its own objects: `NSLock` (not `Mutex`, which needs macOS 15
/// / iOS 18) — and, where a lock must be reentrant, `NSRecursiveLock` — taken through a closure so
/// that every critical section is balanced. Operations, progress handles, the queue-progress
/// lookup and streamed runs use ``OperationLock``, the same spelling with a lock stored in the
/// object.
extension NSLocking {
    /// Runs `body` while holding the lock.
    ///
    /// The package's own spelling, independent of which Foundation version provides
    /// `NSLocking.withLock`, so that every lock in the library is taken the same way.
    @inline(__always)
    func withCriticalSection<Result>(_ body: () throws -> Result) rethrows -> Result {
        lock()
        defer { unlock() }
        return try body()
    }
}
