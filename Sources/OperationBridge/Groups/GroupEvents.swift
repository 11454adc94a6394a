import Foundation

/// The children's events of a ``GroupOperation``, handed to any number of sequences.
///
/// Finishes come from the group's scheduler (for every kind of child, each reported before the
/// sequences end); starts and cancellations from the lifecycle observers of the package's
/// operations. Children added while the group runs are registered here before they can run
/// (``add(_:)`` is called under the scheduler's lock), so that every sequence sees each child's
/// events in order.
///
/// Safety: `children`, `continuations`, `finishedNodes` and `ended` are only touched while
/// holding `lock`. Yielding to a stream under the lock only buffers the event or resumes the
/// reading task; registering a lifecycle observer under it takes the child's lock, never this
/// one (lock order: events, then child).
final class GroupEvents: @unchecked Sendable {
    private var children: [Operation]
    private let lock = NSLock()
    private var continuations: [AsyncStream<GroupChildEvent>.Continuation] = []
    private var finishedNodes: [Int] = []
    private var ended = false

    init(children: [Operation]) {
        self.children = children
    }

    /// Children joined the group, as the next nodes: each sequence now follows them too.
    func add(_ added: [Operation]) {
        lock.withCriticalSection {
            let first = children.count
            children.append(contentsOf: added)
            for continuation in continuations {
                for (offset, child) in added.enumerated() { follow(child, node: first + offset, for: continuation) }
            }
        }
    }

    /// A child finished (the scheduler's finish handler).
    @Sendable func childFinished(_ node: Int) {
        lock.withCriticalSection {
            finishedNodes.append(node)
            for continuation in continuations { continuation.yield(eventLocked(.finished, of: node)) }
        }
    }

    /// Every child has finished and the group takes no more: the sequences end.
    @Sendable func allFinished() {
        lock.withCriticalSection {
            ended = true
            for continuation in continuations { continuation.finish() }
            continuations = []
        }
    }

    /// A new sequence, starting with the events that have already happened.
    func subscribe() -> AsyncStream<GroupChildEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: GroupChildEvent.self)
        lock.withCriticalSection {
            // Starts and cancellations first: each observer reports those that have happened at
            // once, and a finish recorded later is reported after them.
            for (node, child) in children.enumerated() { follow(child, node: node, for: continuation) }
            for node in finishedNodes { continuation.yield(eventLocked(.finished, of: node)) }
            if ended {
                continuation.finish()
            } else {
                continuations.append(continuation)
            }
        }
        return stream
    }

    /// Reports the starts and cancellations of `child`, one of the package's operations, to
    /// `continuation` (its finish comes from the scheduler). Caller holds `lock`.
    private func follow(_ child: Operation, node: Int, for continuation: AsyncStream<GroupChildEvent>.Continuation) {
        guard let child = child as? AsyncOperation else { return }
        child.addLifecycleObserver(
            .immediate { lifecycleEvent in
                if lifecycleEvent != .finished {
                    continuation.yield(GroupChildEvent(index: node, operation: child, event: lifecycleEvent))
                }
            })
    }

    /// Caller holds `lock`.
    private func eventLocked(_ event: OperationEvent, of node: Int) -> GroupChildEvent {
        GroupChildEvent(index: node, operation: children[node], event: event)
    }
}
