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
/// The table is a cache of `queue.progress`, which is the same object for a queue's whole life:
/// when it reaches ``capacity`` entries it is emptied, and a queue still in use is looked up again
/// (once per thread). It cannot tell which of its queues are gone on Linux (see ``Entry``).
///
/// Safety: `entries` is only touched while holding `lock`; a thread's cache only by that thread
/// (``ThreadSpecific``). An ``Entry`` is immutable (on Apple platforms but for its weak reference,
/// which the runtime makes thread-safe).
final class QueueProgressLookup: @unchecked Sendable {
    static let shared = QueueProgressLookup()

    /// A queue and its progress. Shared between the table and the threads' caches.
    private final class Entry: @unchecked Sendable {
        #if canImport(Darwin)
            /// Weak, to tell the queue from a later one at the same address. An Objective-C weak
            /// reference leaves the queue's retains and releases as they were.
            private weak var queue: OperationQueue?
        #else
            /// The queue's address: it names this queue, not a later one, while the entry exists
            /// (see `pin`).
            private let address: ObjectIdentifier
            /// Never read. An unowned reference keeps the queue's memory, not the queue, from
            /// being freed: the queue is deinitialized when its last strong reference goes, but no
            /// later object can be made at its address while this entry exists. A weak reference
            /// gave every queue a Swift side table, which sends each of Foundation's retains and
            /// releases of the queue down the runtime's slow path (Design.md, "Performance").
            private unowned let pin: OperationQueue
        #endif
        let progress: Progress

        init(queue: OperationQueue, progress: Progress) {
            #if canImport(Darwin)
                self.queue = queue
            #else
                address = ObjectIdentifier(queue)
                pin = queue
            #endif
            self.progress = progress
        }

        /// Whether this is `queue`'s entry. `queue` is alive: the caller holds it.
        func isEntry(for queue: OperationQueue) -> Bool {
            #if canImport(Darwin)
                self.queue === queue
            #else
                address == ObjectIdentifier(queue)
            #endif
        }
    }

    /// One thread's last entry. It keeps that entry's `Progress` alive until the thread looks up
    /// another queue, also after the queue is gone (the table keeps it until it is emptied).
    private final class Cache {
        var entry: Entry?
    }

    private let lock = OperationLock()
    private var entries: [ObjectIdentifier: Entry] = [:]
    /// When the table holds this many entries, it is emptied. The queues' memory they keep (an
    /// `OperationQueue` instance each, on Linux) is bounded by it and by the number of threads.
    let capacity = 256
    private let caches = ThreadSpecific { Cache() }

    /// `queue.progress` when the queue reports progress (its total has been set: Foundation's
    /// opt-in), `nil` otherwise. Safe from any thread.
    func reportingProgress(of queue: OperationQueue) -> Progress? {
        let cache = caches.current
        let entry: Entry
        if let cached = cache.entry, cached.isEntry(for: queue) {
            entry = cached
        } else {
            entry = sharedEntry(for: queue)
            cache.entry = entry
        }
        return entry.progress.totalUnitCount != 0 ? entry.progress : nil
    }

    /// The table's entry for `queue`, made now if there is none (or only one of a released queue
    /// that had the same address, on Apple platforms).
    private func sharedEntry(for queue: OperationQueue) -> Entry {
        let id = ObjectIdentifier(queue)
        let known = lock.withCriticalSection { () -> Entry? in
            guard let entry = entries[id], entry.isEntry(for: queue) else { return nil }
            return entry
        }
        if let known { return known }
        // The same object for the queue's whole life, on both platforms.
        let entry = Entry(queue: queue, progress: queue.progress)
        // What the lookup lets go of (an entry of a released queue at the same address, or the
        // whole table) is dropped after the lock: it may hold the last reference to a `Progress`
        // the user attached handlers to.
        let dropped = lock.withCriticalSection { () -> (Entry?, [ObjectIdentifier: Entry]?) in
            var emptied: [ObjectIdentifier: Entry]?
            if entries.count >= capacity {
                emptied = entries
                entries = [:]
            }
            return (entries.updateValue(entry, forKey: id), emptied)
        }
        withExtendedLifetime(dropped) {}
        return entry
    }
}
