import Foundation

/// The `progress` of the queues that start the package's operations, remembered so that starting
/// an operation does not take the queue's own lock (Linux's `OperationQueue.progress` does, and
/// the queue takes it for all its scheduling: asking on every start measured about a tenth
/// slower on concurrent awaits).
///
/// Each thread first looks in a cache of its own, the entry it found last, which costs no lock:
/// a queue's threads start its operations one after another, and with a shared lock on this
/// path the threads of one busy queue queued up behind each other (2–5% of the CPU time of a
/// width-8 stream, in the mutex's slow path; Design.md, "Performance"). A miss takes the shared
/// table's lock, once per thread and queue.
///
/// Safety: `entries` and `pruneAt` are only touched while holding `lock`; a thread's cache only
/// by that thread (``ThreadSpecific``). An ``Entry`` is immutable but for its weak reference,
/// which the runtime makes thread-safe.
final class QueueProgressLookup: @unchecked Sendable {
    static let shared = QueueProgressLookup()

    /// A queue and its progress. Shared between the table and the threads' caches.
    private final class Entry: @unchecked Sendable {
        /// Weak, to tell a queue from a later one at the same address. It gives the queue a side
        /// table (slower retains and releases); an unowned reference measured slower still on
        /// awaits one after another (Design.md, "Performance").
        weak var queue: OperationQueue?
        let progress: Progress

        init(queue: OperationQueue, progress: Progress) {
            self.queue = queue
            self.progress = progress
        }
    }

    /// One thread's last entry. It keeps that entry's `Progress` alive until the thread looks up
    /// another queue, also after the queue is gone (the table keeps it until it prunes).
    private final class Cache {
        var entry: Entry?
    }

    private let lock = OperationLock()
    private var entries: [ObjectIdentifier: Entry] = [:]
    /// When the entries reach this count, those of released queues are dropped.
    private var pruneAt = 64
    private let caches = ThreadSpecific { Cache() }

    /// `queue.progress` when the queue reports progress (its total has been set: Foundation's
    /// opt-in), `nil` otherwise. Safe from any thread.
    func reportingProgress(of queue: OperationQueue) -> Progress? {
        let cache = caches.current
        let entry: Entry
        if let cached = cache.entry, cached.queue === queue {
            entry = cached
        } else {
            entry = sharedEntry(for: queue)
            cache.entry = entry
        }
        return entry.progress.totalUnitCount != 0 ? entry.progress : nil
    }

    /// The table's entry for `queue`, made now if there is none (or only one of a released queue
    /// that had the same address).
    private func sharedEntry(for queue: OperationQueue) -> Entry {
        let id = ObjectIdentifier(queue)
        let known = lock.withCriticalSection { () -> Entry? in
            guard let entry = entries[id], entry.queue === queue else { return nil }
            return entry
        }
        if let known { return known }
        // The same object for the queue's whole life, on both platforms.
        let entry = Entry(queue: queue, progress: queue.progress)
        // What the lookup lets go of (an entry of a released queue at the same address, or the
        // entries pruned) is dropped after the lock: it may hold the last reference to a
        // `Progress` the user attached handlers to.
        let dropped = lock.withCriticalSection { () -> (Entry?, [ObjectIdentifier: Entry]?) in
            let replaced = entries.updateValue(entry, forKey: id)
            guard entries.count >= pruneAt else { return (replaced, nil) }
            let before = entries
            entries = entries.filter { $0.value.queue != nil }
            pruneAt = max(64, entries.count * 2)
            return (replaced, before)
        }
        withExtendedLifetime(dropped) {}
        return entry
    }
}
