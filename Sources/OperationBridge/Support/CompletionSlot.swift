import Foundation

/// A one-shot rendezvous between one waiting task and any number of racing producers.
///
/// The first ``fulfill(_:)`` wins and every later call is ignored, so a continuation is resumed
/// exactly once whether the value arrives before or after ``wait()`` suspends, and whichever of
/// "operation finished" and "task cancelled" comes first.
///
/// Safety: `state` is only touched while holding `lock`; the continuation is resumed after the
/// lock is released.
final class CompletionSlot<Value: Sendable>: @unchecked Sendable {
    private enum State {
        /// Nobody has waited or fulfilled yet.
        case empty
        /// A task is suspended in `wait()`.
        case waiting(UnsafeContinuation<Value, Never>)
        /// Fulfilled before anybody waited.
        case fulfilled(Value)
        /// The value has been handed to the waiter.
        case consumed
    }

    /// Inline (a futex word on Linux), not an `NSLock`: one allocation less per wait — a slot is
    /// made for every await of an operation that is not the package's.
    private let lock = OperationLock()
    private var state = State.empty

    init() {}

    /// Delivers `value` unless a value was delivered already.
    ///
    /// - Returns: `true` when this call delivered the value.
    @discardableResult
    func fulfill(_ value: Value) -> Bool {
        let (delivered, waiter) = lock.withCriticalSection { () -> (Bool, UnsafeContinuation<Value, Never>?) in
            switch state {
            case .empty:
                state = .fulfilled(value)
                return (true, nil)
            case .waiting(let continuation):
                state = .consumed
                return (true, continuation)
            case .fulfilled, .consumed:
                return (false, nil)
            }
        }
        waiter?.resume(returning: value)
        return delivered
    }

    /// Returns the value, suspending until it has been delivered. Call it at most once.
    ///
    /// - Parameter registered: Called once, on the calling task, when the waiter is registered
    ///   (or found the value delivered) and before the task suspends: the place to start what
    ///   will deliver the value, as a hand-written continuation does.
    func wait(registered: () -> Void = {}) async -> Value {
        if let value = takeIfFulfilled() {
            registered()
            return value
        }
        let value = await withUnsafeContinuation { continuation in
            let value = lock.withCriticalSection { () -> Value? in
                switch state {
                case .empty:
                    state = .waiting(continuation)
                    return nil
                case .fulfilled(let value):
                    state = .consumed
                    return value
                case .waiting, .consumed:
                    preconditionFailure("Internal inconsistency: a CompletionSlot was awaited twice")
                }
            }
            registered()
            if let value { continuation.resume(returning: value) }
        }
        continuationResumed()
        return value
    }

    /// The fast path of ``wait()``: the value, when it was delivered before anybody waited.
    private func takeIfFulfilled() -> Value? {
        lock.withCriticalSection {
            guard case .fulfilled(let value) = state else { return nil }
            state = .consumed
            return value
        }
    }
}
