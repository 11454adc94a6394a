import Foundation

/// The package's own queues.
enum SharedQueues {
    /// A queue without a width limit, for work done on behalf of an operation that already
    /// holds a slot of its own queue — a retry's attempts, a group's children — so that it never
    /// waits for another slot (with one slot, it would wait for ever). Foundation's queue starts
    /// each operation once its dependencies have finished, on one of its threads, as usual.
    static let unbounded: OperationQueue = {
        let queue = OperationQueue()
        queue.name = "OperationBridge.unbounded"
        return queue
    }()
}
