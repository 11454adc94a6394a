import Foundation

/// The children's events of a ``GroupOperation``, handed to any number of sequences.
///
/// Finishes come from the group's scheduler (for every kind of child, each reported before the
/// sequences end); starts and cancellations from the lifecycle observers of the package's
/// operations.
///
/// Safety: `continuations`, `finishedNodes` and `ended` are only touched while holding `lock`.
/// Yielding to a stream under the lock only buffers the event or resumes the reading task.
final class GroupEvents: @unchecked Sendable {
    private let children: [Operation]
    private let lock = NSLock()
    private var continuations: [AsyncStream<GroupChildEvent>.Continuation] = []
    private var finishedNodes: [Int] = []
    private var ended = false

    init(children: [Operation]) {
        self.children = children
    }

    /// A child finished (the scheduler's finish handler).
    @Sendable func childFinished(_ node: Int) {
        lock.withCriticalSection {
            finishedNodes.append(node)
            for continuation in continuations { continuation.yield(event(.finished, of: node)) }
        }
    }

    /// Every child has finished: the sequences end.
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
        // Starts and cancellations first: each observer reports those that have happened at
        // once, and a finish recorded later is reported after them.
        for (node, child) in children.enumerated() {
            guard let child = child as? AsyncOperation else { continue }
            let event = self.event
            child.addLifecycleObserver(
                .immediate { lifecycleEvent in
                    if lifecycleEvent != .finished { continuation.yield(event(lifecycleEvent, node)) }
                })
        }
        lock.withCriticalSection {
            for node in finishedNodes { continuation.yield(event(.finished, of: node)) }
            if ended {
                continuation.finish()
            } else {
                continuations.append(continuation)
            }
        }
        return stream
    }

    private func event(_ event: OperationEvent, of node: Int) -> GroupChildEvent {
        GroupChildEvent(index: node, operation: children[node], event: event)
    }
}
