import Foundation

/// An observer of an operation's lifecycle events, kept in its rare state and told of each event
/// under the operation's lock (see `RareState.post(_:)`).
enum LifecycleObserver {
    /// Delivered in order on a target, through a mailbox.
    case mailbox(EventMailbox)
    /// Called at once, under the operation's lock: for the package's own short, non-blocking
    /// handlers (yielding to a stream).
    case immediate(@Sendable (OperationEvent) -> Void)

    func post(_ event: OperationEvent) {
        switch self {
        case .mailbox(let mailbox): mailbox.post(event)
        case .immediate(let handler): handler(event)
        }
    }
}

/// Hands one observer its events in order, one call at a time, on its ``DeliveryTarget``.
///
/// Safety: `pending` and `isDraining` are only touched while holding `lock`; the handler is
/// called without it.
final class EventMailbox: @unchecked Sendable {
    private let target: DeliveryTarget
    private let handler: @Sendable (OperationEvent) -> Void
    private let lock = NSLock()
    private var pending: [OperationEvent] = []
    private var isDraining = false

    init(target: DeliveryTarget, handler: @escaping @Sendable (OperationEvent) -> Void) {
        self.target = target
        self.handler = handler
    }

    /// Queues `event`, and starts a delivery on the target unless one is under way. Safe to call
    /// holding the operation's lock.
    func post(_ event: OperationEvent) {
        let startDelivery = lock.withCriticalSection { () -> Bool in
            pending.append(event)
            defer { isDraining = true }
            return !isDraining
        }
        if startDelivery { target.run(drain) }
    }

    /// Calls the handler with each pending event, until none is left.
    private func drain() {
        while true {
            let events = lock.withCriticalSection { () -> [OperationEvent] in
                defer { pending = [] }
                if pending.isEmpty { isDraining = false }
                return pending
            }
            if events.isEmpty { return }
            for event in events { handler(event) }
        }
    }
}
