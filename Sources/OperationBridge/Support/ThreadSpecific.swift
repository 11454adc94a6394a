#if canImport(Darwin)
    import Darwin
#else
    import Foundation  // pthread_key_create, pthread_getspecific, pthread_setspecific
#endif

/// One object per thread, made on the thread's first use and released when the thread exits: a
/// thread-specific slot (`pthread_key_t`) holding a retained reference.
///
/// For state that only its own thread touches and that must cost no lock: the release work list
/// (``IterativeRelease``), the queue-progress cache (``QueueProgressLookup``). Make one per kind
/// of state, in a `static let`: each takes one of the process's few keys (at least 128).
///
/// Safety: the slot is per thread, so ``current`` hands each thread its own object; `Value` need
/// not be `Sendable`, and must never be handed to another thread.
final class ThreadSpecific<Value: AnyObject>: @unchecked Sendable {
    private let key: pthread_key_t
    private let make: @Sendable () -> Value

    /// A slot whose object is made by `make` on each thread's first ``current``.
    init(_ make: @escaping @Sendable () -> Value) {
        var key = pthread_key_t()
        // The destructor's parameter is optional on Linux, not on Darwin; `as` accepts both. The
        // slot's reference was retained as a `Value`, a Swift class instance: released as one.
        let status = pthread_key_create(&key) { pointer in
            guard let pointer = pointer as UnsafeMutableRawPointer? else { return }
            Unmanaged<AnyObject>.fromOpaque(pointer).release()
        }
        precondition(status == 0, "OperationBridge: pthread_key_create failed (\(status))")
        self.key = key
        self.make = make
    }

    /// This thread's object, made now if the thread has none yet.
    var current: Value {
        if let pointer = pthread_getspecific(key) {
            return Unmanaged<Value>.fromOpaque(pointer).takeUnretainedValue()
        }
        let value = make()
        pthread_setspecific(key, Unmanaged.passRetained(value).toOpaque())
        return value
    }
}
