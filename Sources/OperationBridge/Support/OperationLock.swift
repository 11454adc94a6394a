#if canImport(Darwin)
    import os
#else
    import Foundation  // dlsym
    import Synchronization
#endif

/// The lock inside every package operation — and inside the objects made as often (a progress
/// handle per reporting operation) or taken on every start (the queue-progress lookup), and in a
/// streamed run, whose producer, consumer and worker threads contend for it: a lock stored in the
/// object itself on Linux, where an `NSLock` would be a second object with a mutex allocated
/// apart from it (about 100 bytes per operation, Design.md "Memory per operation") that sleeps
/// at once when contended.
///
/// - Linux: the standard library's `Mutex` (a futex word, stored inline).
/// - Apple platforms: `OSAllocatedUnfairLock` (macOS 13, iOS 16 and later — the package's
///   minimums; `Mutex` needs macOS 15 / iOS 18). One small allocation, as `os_unfair_lock` must
///   not move.
///
/// Not reentrant: a critical section must never call code outside the package — nor release
/// what may be the last reference to a user's object, whose `deinit` would run inside it (a
/// streamed run moves such references out and drops them after the lock).
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
            let annotations = ThreadSanitizerAnnotations.inProcess
            return mutex.withLock { _ in
                annotations?.acquired(self)
                defer { annotations?.releasing(self) }
                return Unchecked(value: body())
            }.value
        #endif
    }
}

extension OperationLock {
    /// Runs `body` while holding the lock if no other thread holds it now; returns `nil`,
    /// without running `body` or waiting, if one does.
    @inline(__always)
    borrowing func withCriticalSectionIfAvailable<Result>(_ body: () -> Result) -> Result? {
        #if canImport(Darwin)
            lock.withLockIfAvailableUnchecked(body)
        #else
            let annotations = ThreadSanitizerAnnotations.inProcess
            return mutex.withLockIfAvailable { _ in
                annotations?.acquired(self)
                defer { annotations?.releasing(self) }
                return Unchecked(value: body())
            }?.value
        #endif
    }
}

/// Stores `newValue` in `slot` and returns what `slot` held. Called inside a critical section,
/// so that the value replaced is released by the caller after the lock: it may hold the last
/// reference to an object of the user's (Design.md, "Locks and the user's objects").
@inlinable
func exchange<Value>(_ slot: inout Value, with newValue: Value) -> Value {
    let replaced = slot
    slot = newValue
    return replaced
}

#if !canImport(Darwin)
    /// Tells ThreadSanitizer about ``OperationLock``'s critical sections, when the process runs
    /// under it.
    ///
    /// `Mutex`'s contended path is compiled into the toolchain's standard library without
    /// ThreadSanitizer's instrumentation: a thread that gets the lock after waiting establishes no
    /// order the sanitizer can see, and every critical section that follows looks like a race
    /// (hundreds of false reports per test run). The sanitizer's own annotations, looked up once
    /// in the running process, record the order; without the sanitizer they are absent and
    /// cost the global's once-check, a load and a branch per critical section.
    struct ThreadSanitizerAnnotations {
        private typealias Annotation = @convention(c) (UnsafeRawPointer?) -> Void
        private let acquire: Annotation
        private let release: Annotation

        /// The annotations, when the process runs under ThreadSanitizer. Read once per critical
        /// section: a global's every read calls the runtime's once-check on Linux.
        static let inProcess: ThreadSanitizerAnnotations? = {
            // A null handle is RTLD_DEFAULT: every object loaded in the process.
            guard let acquire = dlsym(nil, "__tsan_acquire"), let release = dlsym(nil, "__tsan_release") else {
                return nil
            }
            return ThreadSanitizerAnnotations(
                acquire: unsafeBitCast(acquire, to: Annotation.self),
                release: unsafeBitCast(release, to: Annotation.self))
        }()

        /// The lock was just acquired.
        @inline(__always)
        func acquired(_ lock: borrowing OperationLock) {
            withUnsafePointer(to: lock) { acquire(UnsafeRawPointer($0)) }
        }

        /// The lock is about to be released.
        @inline(__always)
        func releasing(_ lock: borrowing OperationLock) {
            withUnsafePointer(to: lock) { release(UnsafeRawPointer($0)) }
        }

        /// The current task was just resumed: see ``continuationResumed()``. The runtime's
        /// `resume` announces its release on the task's address (its `AsyncTask`, which is
        /// its `Job`), the address an `UnsafeCurrentTask` holds.
        func taskResumed(_ task: UnsafeCurrentTask) {
            acquire(unsafeBitCast(task, to: UnsafeRawPointer.self))
        }
    }
#endif

/// Call right after the package's `withUnsafeContinuation` returns: tells ThreadSanitizer that
/// whatever the resumer did before `resume` happens before what the task does next.
///
/// The Swift runtime records that order only when the resumed task is enqueued again. When the
/// resume lands after the continuation is handed over but before the task reaches its
/// suspension, the task goes on at once on its own thread, and the runtime's
/// `swift_continuation_await` acquires nothing (checked in its source, Swift 6.x): a task that
/// awaited an operation, then read what the operation's `main()` wrote (the seed articles'
/// subclasses keep their state in plain stored properties) was reported as a data race, rarely
/// (CI61, and `ThreadSanitizerOrderTests` forces that path). This acquires on the task's own
/// address, which the runtime's `resume` releases. Without the sanitizer it costs the lookup's
/// once-check and a branch; on Apple platforms it does nothing (the package's CI runs the
/// sanitizer on Linux only).
@inline(__always)
func continuationResumed() {
    #if !canImport(Darwin)
        guard let annotations = ThreadSanitizerAnnotations.inProcess else { return }
        withUnsafeCurrentTask { task in
            if let task { annotations.taskResumed(task) }
        }
    #endif
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
