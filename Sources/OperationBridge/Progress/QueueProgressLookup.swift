import Foundation

/// The `progress` of the queues that start the package's operations, remembered so that starting
/// an operation does not take the queue's own lock (Linux's `OperationQueue.progress` does, and
/// the queue takes it for all its scheduling: asking on every start measured about a tenth
/// slower on concurrent awaits).
///
/// Safety: `entries` and `pruneAt` are only touched while holding `lock`.
final class QueueProgressLookup: @unchecked Sendable {
    static let shared = QueueProgressLookup()

    private struct Entry {
        /// Weak, to tell a queue from a later one at the same address. It gives the queue a side
        /// table (slower retains and releases); an unowned reference measured slower still on
        /// awaits one after another (Design.md, "Performance").
        weak var queue: OperationQueue?
        let progress: Progress
    }

    private let lock = OperationLock()
    private var entries: [ObjectIdentifier: Entry] = [:]
    /// When the entries reach this count, those of released queues are dropped.
    private var pruneAt = 64

    /// `queue.progress` when the queue reports progress (its total has been set: Foundation's
    /// opt-in), `nil` otherwise.
    func reportingProgress(of queue: OperationQueue) -> Progress? {
        let id = ObjectIdentifier(queue)
        let known = lock.withCriticalSection { () -> Progress? in
            guard let entry = entries[id], entry.queue === queue else { return nil }
            return entry.progress
        }
        let progress: Progress
        if let known {
            progress = known
        } else {
            // The same object for the queue's whole life, on both platforms.
            progress = queue.progress
            // What the lookup lets go of (an entry of a released queue at the same address,
            // or the entries pruned) is dropped after the lock: it may hold the last reference
            // to a `Progress` the user attached handlers to.
            let dropped = lock.withCriticalSection { () -> (Entry?, [ObjectIdentifier: Entry]?) in
                let replaced = entries.updateValue(Entry(queue: queue, progress: progress), forKey: id)
                guard entries.count >= pruneAt else { return (replaced, nil) }
                let before = entries
                entries = entries.filter { $0.value.queue != nil }
                pruneAt = max(64, entries.count * 2)
                return (replaced, before)
            }
            withExtendedLifetime(dropped) {}
        }
        return progress.totalUnitCount != 0 ? progress : nil
    }
}
