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
    /// The slot the current task's operation holds: its queue, the operation holding it, and the
    /// task running that operation's work. Every task made inside the work inherits it — child
    /// tasks and unstructured `Task {}` alike — so only awaits of the work's own task count
    /// (``HeldSlot/isCurrentTask``).
    @TaskLocal static var held: HeldSlot?

    /// A slot of a queue, held by an operation's work.
    struct HeldSlot: Sendable {
        let queue: ObjectIdentifier
        /// The operation whose work holds the slot (alive while its work runs).
        let holder: ObjectIdentifier
        /// The task running the work, as the hash of its `UnsafeCurrentTask` (a pointer's): the
        /// tasks that inherit the value are told apart from it.
        let task: Int?

        /// The slot of `queue` that `holder`'s work, running in the current task, holds.
        init(queue: ObjectIdentifier, holder: ObjectIdentifier) {
            self.queue = queue
            self.holder = holder
            self.task = withUnsafeCurrentTask { $0?.hashValue }
        }

        /// Whether the current task is the one running the holder's work.
        ///
        /// Another task that inherited the slot may be a child of the work (`async let`, a task
        /// group), whose await the work waits for, or an unstructured `Task {}` made in the work,
        /// which may await after the work has ended and its slot is free: the two cannot be told
        /// apart, and counting the second trapped as a deadlock a program that had none. Neither
        /// counts (Design.md, "Hangs"). Two tasks whose hashes collide would count as the work's,
        /// as every inheriting task once did.
        var isCurrentTask: Bool {
            task != nil && withUnsafeCurrentTask { $0?.hashValue } == task
        }
    }

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

    /// A blocked holder's await, as ``enter(awaiting:in:)`` counted it.
    struct BlockedAwait {
        fileprivate let queue: OperationQueue
        fileprivate let entry: BlockedHolders.Entry
    }

    /// Called before the current task awaits `operation`, pending in `queue` or about to be added
    /// to it (or pending in another queue the package admitted it to, which then counts instead):
    /// when the task holds a slot of that queue, counts the await — and traps when every
    /// slot is now held by work blocked awaiting an operation that has not finished. Returns what
    /// to pass to ``leave(_:)`` once the await is over, or `nil` (the common case: the task holds
    /// no slot, one task-local read).
    ///
    /// Holders are counted, not awaits, and only the awaits of the task running a holder's work:
    /// not those of the tasks made inside it (``HeldSlot/isCurrentTask``). An
    /// await whose operation has finished does not count, though it has not left yet: its task
    /// resumes after the queue has started the next operation, whose own await could otherwise
    /// find every slot "blocked" and trap on a queue that is moving.
    static func enter(awaiting operation: Operation, in queue: OperationQueue?) -> BlockedAwait? {
        // The queue the package admitted the operation to comes first: `queue.run(operation)` of
        // an operation pending in another queue awaits it there, and takes no slot of `queue`.
        guard let held, let queue = (operation as? AsyncOperation)?.admittedQueue ?? queue,
            ObjectIdentifier(queue) == held.queue, !operation.hasBeenStarted, held.isCurrentTask
        else { return nil }
        let width = queue.maxConcurrentOperationCount
        guard width != OperationQueue.defaultMaxConcurrentOperationCount else { return nil }
        let entry = BlockedHolders.Entry(holder: held.holder, operation: operation)
        let awaited = BlockedHolders.shared.enter(queue, entry)
        // `isFinished` asked outside the registry's lock: it may be a subclass's override.
        if Set(awaited.map(\.holder)).count >= width
            && Set(awaited.filter { !$0.operation.isFinished }.map(\.holder)).count >= width
        {
            fatalError(
                "OperationBridge: deadlock. Work running in a slot of queue '\(queue.name ?? "?")' awaits "
                    + "\(operation.diagnosticName), which waits for a slot of the same queue; all "
                    + "\(width) slots (maxConcurrentOperationCount) are held by work waiting like this, so "
                    + "nothing in the queue can start again. Call the async work directly instead of queueing "
                    + "it, run the inner operation on another queue, or raise maxConcurrentOperationCount."
            )
        }
        return BlockedAwait(queue: queue, entry: entry)
    }

    /// Ends what ``enter(awaiting:in:)`` counted.
    static func leave(_ blocked: BlockedAwait?) {
        if let blocked { BlockedHolders.shared.leave(blocked.queue, blocked.entry) }
    }

    /// Traps when the current task holds a slot of `queue`: draining it would wait for itself.
    static func checkDrain(of queue: OperationQueue) {
        guard let held, held.queue == ObjectIdentifier(queue), held.isCurrentTask else { return }
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
    /// One await of a blocked holder.
    struct Entry {
        let holder: ObjectIdentifier
        let operation: Operation
    }

    static let shared = BlockedHolders()

    private let lock = NSLock()
    private var awaited: [ObjectIdentifier: [Entry]] = [:]

    /// Records one more await of a blocked holder of `queue`; returns every await of the queue's
    /// blocked holders, this one included.
    func enter(_ queue: OperationQueue, _ entry: Entry) -> [Entry] {
        lock.withCriticalSection {
            awaited[ObjectIdentifier(queue), default: []].append(entry)
            return awaited[ObjectIdentifier(queue)] ?? []
        }
    }

    /// Removes one entry that ``enter(_:_:)`` made.
    func leave(_ queue: OperationQueue, _ entry: Entry) {
        let removed = lock.withCriticalSection { () -> Entry? in
            let id = ObjectIdentifier(queue)
            guard var entries = awaited[id],
                let index = entries.firstIndex(where: { $0.holder == entry.holder && $0.operation === entry.operation })
            else {
                preconditionFailure("Internal inconsistency: a blocked holder left twice")
            }
            let removed = entries.remove(at: index)
            awaited[id] = entries.isEmpty ? nil : entries
            return removed
        }
        withExtendedLifetime(removed) {}  // released after the lock: it may be the last reference
    }
}
