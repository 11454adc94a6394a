import Foundation

/// A value guarded by an `NSLock`, with a closure-based API.
///
/// `Mutex` from the Synchronization module needs macOS 15 / iOS 18; this box keeps the
/// package usable on older Apple platforms and behaves the same on Linux.
///
/// Safety: `state` is only ever read or written inside `withLock`, which holds `lock`,
/// so sharing a `Locked` across threads is safe whenever `State` may move between them.
final class Locked<State>: @unchecked Sendable {
    private let lock = NSLock()
    private var state: State

    init(_ initial: State) {
        self.state = initial
    }

    /// Runs `body` with exclusive access to the guarded state.
    ///
    /// Never call back into code that may take the same lock from inside `body`.
    @inline(__always)
    func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }
}

extension NSLock {
    /// Runs `body` while holding the lock.
    ///
    /// Foundation's own `withLock` needs macOS 14 / iOS 17; this one has no availability limit.
    @inline(__always)
    func withCriticalSection<Result>(_ body: () throws -> Result) rethrows -> Result {
        lock()
        defer { unlock() }
        return try body()
    }
}
