import Foundation

/// Detects work that waits for its own queue: a deadlock no queue would ever break.
///
/// The `Task` that runs a package operation's async work (``TaskOperation``, `then`, `addTask`)
/// knows, through a task-local value, the queue whose slot its operation holds. When that work
/// awaits an operation that is waiting for a slot of the same queue, it is *blocked holding a
/// slot*. Once every slot of the queue is held that way, nothing in the queue can ever start
/// again: the await traps with a message that says what happened and what to do. Awaiting a
/// drain of one's own queue (``Foundation/OperationQueue/waitForAllOperations()``) waits for
/// itself, whatever the queue's width, and traps at once.
///
/// Only operations the package knows to be pending in that queue count (it added them, is about
/// to add them for the await, or found them in the queue's list), and only until they finish; a
/// queue with the default `maxConcurrentOperationCount` never runs out of slots.
enum QueueSlots {
    /// The queue whose slot the current task's operation holds.
    @TaskLocal static var held: ObjectIdentifier?

    /// The queue running the operation being started — whose slot it holds — or `nil` when it was
    /// started by hand. Call it from `start()`/`main()`. (On the main thread
    /// `OperationQueue.current` reports the main queue even for an operation started by hand; it
    /// counts only when the package added the operation there.)
    ///
    /// An operation the package added to a queue runs in that queue: its own record answers,
    /// without asking Foundation for the current queue (a thread-specific lookup and a retain of
    /// the queue on every start).
    ///
    /// Started inside a task, the operation was started by hand from async code: queues start
    /// operations from Dispatch blocks, never inside a task. `OperationQueue.current` would then
    /// name the queue running that task's closure (a closure still on its queue's thread before
    /// its first suspension), which the operation holds no slot of.
    ///
    /// - Parameter admitted: The queue the package admitted `operation` to, if any (its
    ///   `admittedQueue`, or the queue ``AsyncOperation/takeAdmittedQueue()`` took).
    static func queueRunning(_ operation: AsyncOperation, admitted: OperationQueue?) -> OperationQueue? {
        if let admitted { return admitted }
        if withUnsafeCurrentTask(body: { $0 != nil }) { return nil }
        guard let current = OperationQueue.current else { return nil }
        // Not admitted by the package (it would have answered above): the main queue does not count.
        return current === OperationQueue.main ? nil : current
    }

    /// A blocked holder, as ``enter(awaiting:in:)`` counted it.
    struct BlockedHolder {
        fileprivate let queue: OperationQueue
        fileprivate let operation: Operation
    }

    /// Called before the current task awaits `operation`, pending in `queue` or about to be added
    /// to it: when the task holds a slot of that queue, counts it as blocked — and traps when
    /// every slot is now held by work blocked the same way on an operation that has not finished.
    /// Returns what to pass to ``leave(_:)`` once the await is over, or `nil` (the common case:
    /// the task holds no slot, one task-local read).
    ///
    /// A holder whose operation has finished is not counted, though it has not left yet: its task
    /// resumes after the queue has started the next operation, whose own await could otherwise
    /// find every slot "blocked" and trap on a queue that is moving.
    static func enter(awaiting operation: Operation, in queue: OperationQueue?) -> BlockedHolder? {
        guard let held, let queue = queue ?? (operation as? AsyncOperation)?.admittedQueue,
            ObjectIdentifier(queue) == held, !operation.hasBeenStarted
        else { return nil }
        let width = queue.maxConcurrentOperationCount
        guard width != OperationQueue.defaultMaxConcurrentOperationCount else { return nil }
        let awaited = BlockedHolders.shared.enter(queue, awaiting: operation)
        // `isFinished` asked outside the registry's lock: it may be a subclass's override.
        if awaited.count >= width && awaited.filter({ !$0.isFinished }).count >= width {
            fatalError(
                "OperationBridge: deadlock. Work running in a slot of queue '\(queue.name ?? "?")' awaits "
                    + "\(operation.diagnosticName), which waits for a slot of the same queue; all "
                    + "\(width) slots (maxConcurrentOperationCount) are held by work waiting like this, so "
                    + "nothing in the queue can start again. Call the async work directly instead of queueing "
                    + "it, run the inner operation on another queue, or raise maxConcurrentOperationCount."
            )
        }
        return BlockedHolder(queue: queue, operation: operation)
    }

    /// Ends what ``enter(awaiting:in:)`` counted.
    static func leave(_ holder: BlockedHolder?) {
        if let holder { BlockedHolders.shared.leave(holder.queue, awaiting: holder.operation) }
    }

    /// Traps when the current task holds a slot of `queue`: draining it would wait for itself.
    static func checkDrain(of queue: OperationQueue) {
        guard let held, held == ObjectIdentifier(queue) else { return }
        fatalError(
            "OperationBridge: deadlock. Work running in a slot of queue '\(queue.name ?? "?")' waits for "
                + "all of that queue's operations to finish, its own included: it would wait for itself. "
                + "Wait for the operations you need instead (waitForCompletion()), or drain from outside the queue."
        )
    }
}

/// What the tasks holding a slot of each queue are blocked awaiting: one entry per await.
///
/// Safety: `awaited` is only touched while holding `lock`.
private final class BlockedHolders: @unchecked Sendable {
    static let shared = BlockedHolders()

    private let lock = NSLock()
    private var awaited: [ObjectIdentifier: [Operation]] = [:]

    /// Records one more blocked holder of `queue`, awaiting `operation`; returns what all of the
    /// queue's blocked holders await, this one included.
    func enter(_ queue: OperationQueue, awaiting operation: Operation) -> [Operation] {
        lock.withCriticalSection {
            awaited[ObjectIdentifier(queue), default: []].append(operation)
            return awaited[ObjectIdentifier(queue)] ?? []
        }
    }

    /// Removes one entry that ``enter(_:awaiting:)`` made.
    func leave(_ queue: OperationQueue, awaiting operation: Operation) {
        let removed = lock.withCriticalSection { () -> Operation? in
            let id = ObjectIdentifier(queue)
            guard var operations = awaited[id], let index = operations.firstIndex(where: { $0 === operation }) else {
                preconditionFailure("Internal inconsistency: a blocked holder left twice")
            }
            let removed = operations.remove(at: index)
            awaited[id] = operations.isEmpty ? nil : operations
            return removed
        }
        withExtendedLifetime(removed) {}  // released after the lock: it may be the last reference
    }
}
