import Foundation

/// A serial `OperationQueue` as the executor of an actor or a global actor: every job of the
/// actor runs inside an operation of that queue.
///
/// Make one from a queue whose `maxConcurrentOperationCount` is 1, keep it in the actor (or next
/// to the queue), and return it from the actor's `unownedExecutor`:
///
/// ```swift
/// actor BookmarkStore {
///     nonisolated let executor: OperationQueueExecutor
///     nonisolated var unownedExecutor: UnownedSerialExecutor {
///         executor.asUnownedSerialExecutor()
///     }
///     private var bookmarks: [String: URL] = [:]
///
///     init(queue: OperationQueue) {
///         executor = OperationQueueExecutor(queue)
///     }
///
///     func add(_ url: URL, named name: String) {
///         bookmarks[name] = url
///     }
///
///     func bookmark(named name: String) -> URL? {
///         bookmarks[name]
///     }
/// }
/// ```
///
/// The actor's methods and the queue's other operations then form one serialization domain:
///
/// - **They never overlap.** Each job — an actor method from one suspension point to the next —
///   runs inside an operation of the queue, so the queue's width of 1 excludes its legacy
///   operations while it runs, and them while they run. An ``AsyncOperation`` holds the queue
///   until it finishes, so the actor waits for it too.
/// - **They keep the queue's order.** Operations and jobs start in the order they were added:
///   a job's operation keeps `queuePriority` `.normal`, so it never overtakes the queue's
///   earlier operations of the same priority.
/// - **They keep the queue's settings.** A job enqueued while the queue `isSuspended` waits
///   until it resumes, as an operation would; jobs run on the queue's `underlyingQueue` when it
///   has one, at the queue's `qualityOfService` or, when the job's priority maps to a higher one
///   through `QualityOfService.init(_:)`, at that one.
/// - **Jobs in a burst share an operation.** A job enqueued while the queue holds nothing but
///   the operation running (or about to run) the executor's earlier jobs, and is not
///   suspended, runs in that operation after them — nothing in the queue waits between them, so
///   the order is the same. Any operation added to the queue, or a suspension, ends the burst.
///   Foundation does not count barrier blocks: a job enqueued after `addBarrierBlock(_:)` while
///   the executor's operation runs may run before the block, which waits for that operation's
///   jobs, 1,024 at most (on a serial queue, use `addOperation`, which gives the same order).
/// - **Legacy code can use the actor's synchronous API.** Inside an operation running on the
///   queue, `actor.assumeIsolated { … }` and `actor.preconditionIsolated()` succeed (from
///   macOS 15 / iOS 18, through ``checkIsolated()``), so legacy code calls the actor without a
///   hop. Anywhere else they trap.
///
/// Actors that share a queue should share one executor: a call from one to the other then runs
/// without a new operation. Two executors of one queue are still one serialization domain.
///
/// ## Cancellation
///
/// Jobs are not cancellable operations: `queue.cancelAllOperations()` cancels the queue's other
/// operations and leaves the jobs' operations to run, because a job that never ran would leave
/// its task suspended and its actor stuck forever. Cancelling a Swift task is cooperative, as
/// on any executor: the actor method sees `Task.isCancelled`, and still runs on the queue.
///
/// ## Threading
///
/// The executor is `Sendable` and can be used from any thread. Each job runs on the thread the
/// queue gives its operation. Enqueuing a job never waits for the queue, nor for another
/// thread. A job waits for the queue: while the queue is suspended, or busy
/// with a long operation, the actor's callers wait — and an operation of the queue that blocks
/// its thread waiting for the actor deadlocks, as a `DispatchQueue.sync` onto one's own serial
/// queue does.
///
/// ## Width
///
/// A queue of any other width would run jobs and operations side by side: making an executor
/// of one traps, with a message naming the queue. Changing the queue's width afterwards is
/// detected when the next job is enqueued, which traps the same way; set the width before
/// making the executor, and leave it.
///
/// ## Lifetime
///
/// The executor keeps its queue. An actor's `unownedExecutor` does not keep the executor, so
/// store the executor (a `let` of the actor, or a static one for a global actor) rather than
/// making it inside `unownedExecutor`.
///
/// Safety: `batches` and the jobs of every batch are guarded by `lock`; `queue` is immutable.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
public final class OperationQueueExecutor: SerialExecutor, @unchecked Sendable {
    /// The serial queue every job runs on.
    public let queue: OperationQueue

    /// Guards `batches` and the batches' jobs. Never held while calling code outside the
    /// package: the queue's `operationCount`, `isSuspended` and `addOperation(_:)`, which a
    /// subclass of the user's may override, are called without it.
    private let lock = OperationLock()
    private var batches = Batches()
    /// Held across the `addOperation(_:)` of a batch, so that batches reach the queue one at a
    /// time when they can, and jobs arriving meanwhile join the batch once it is in (see
    /// `enqueue(_:)`). The one lock of the package held while code outside it may run (a queue
    /// subclass's `addOperation(_:)`, a key-value observer): so it is only ever tried, never
    /// waited for, and a thread that finds it taken — its own included — goes on without it.
    private let addLock = OperationLock()

    /// The executor's batches in its queue (see ``JobBatch``).
    private struct Batches {
        /// The batch made last, while it is open.
        var newest: JobBatch?
        /// How many batches are open: made, and not yet out of jobs.
        var open = 0
        /// How many batches are being added: made, and their `addOperation(_:)` not returned.
        var beingAdded = 0
        /// Changes whenever a batch is made, added or closed: a join decided on the queue's
        /// count, read without the lock, goes ahead only if nothing changed meanwhile.
        var generation = 0
        /// How many more jobs make a batch of their own without asking the queue for its count,
        /// after the count last showed other operations (Linux counts them one by one).
        var countsToSkip = 0
        /// How many jobs skip the count after the next count that shows other operations.
        var skipAfterMiss = 0
    }

    /// Makes a serial executor of `queue`, whose `maxConcurrentOperationCount` must be 1.
    ///
    /// - Parameter queue: A serial queue: `maxConcurrentOperationCount == 1`. Any other width
    ///   traps, with a message naming the queue.
    public init(_ queue: OperationQueue) {
        let width = queue.maxConcurrentOperationCount
        precondition(
            width == 1,
            "OperationBridge: OperationQueueExecutor needs a serial queue, and queue \(queue.quotedNameForMessages) "
                + "has maxConcurrentOperationCount \(width): its operations and the actor's jobs would run "
                + "side by side. Set maxConcurrentOperationCount to 1 before making the executor "
                + "(or use OperationQueueTaskExecutor, which runs async code on a queue of any width)."
        )
        self.queue = queue
    }

    /// Hands `job` to the queue, which runs it isolated to this executor, inside an operation.
    ///
    /// Called by the Swift runtime, from any thread; it returns without waiting for the queue
    /// or another thread. The job runs after the queue's earlier operations, waits while the
    /// queue is suspended, and cannot be cancelled. When the queue holds nothing but this executor's operations running (or
    /// about to run) its earlier jobs, and is not suspended, the job joins the last of them
    /// instead of becoming an operation of its own: nothing in the queue waits between them, so
    /// the order is the same. Traps, naming the queue, if the queue's width is no longer 1.
    public func enqueue(_ job: consuming ExecutorJob) {
        let width = queue.maxConcurrentOperationCount
        if width != 1 {
            widthChanged(to: width)
        }
        let wanted = QualityOfService(jobPriority: job.priority)
        let rank = wanted?.rank ?? -1
        let job = UnownedJob(job)
        if joinNewestBatch(job, rank: rank) {
            return
        }
        // Another thread adding a batch may be running code of the user's inside that
        // addOperation(_:) (a queue subclass's, a key-value observer of the queue), and that code
        // may wait for this thread: wait for the add lock a few turns only, then add a batch
        // without it (the two batches are then `raced`).
        for _ in 0..<Self.turnsToWaitForAnAdd {
            let handed = addLock.withCriticalSectionIfAvailable { () -> Bool in
                // The batch the other thread just added may take this job now.
                if !joinNewestBatch(job, rank: rank) {
                    addBatch(for: job, wanting: wanted)
                }
                return true
            }
            if handed != nil {
                return
            }
            sched_yield()
        }
        addBatch(for: job, wanting: wanted)
    }

    /// How many times a job tries the add lock, yielding its thread in between, before it adds
    /// a batch without it.
    private static let turnsToWaitForAnAdd = 64

    /// How many open batches the queue may hold for a job to ask it for its count (Linux counts
    /// a queue's operations one by one, under its lock).
    private static let openBatchesToCount = 16

    /// Lets `job` join the newest batch when the queue holds nothing but the executor's open
    /// batches, the newest last, and is not suspended: nothing in the queue can then come
    /// between the batch's jobs and `job`. A job whose priority asks for a higher quality of
    /// service than the batch's does not join, nor does one that would make the batch longer
    /// than ``JobBatch/longest``.
    ///
    /// Why the newest batch is then the queue's last operation:
    /// - No batch is being added, so every open batch is in the queue, and counted by
    ///   `operationCount` (which counts an operation from within its `addOperation(_:)` until
    ///   after its `main()` returned): a count equal to the open batches leaves no room for an
    ///   operation of the user's, nor for a closed batch of ours still counted. The count is
    ///   read between two critical sections that find the same `generation`: no batch was
    ///   made, added or closed in between, so it counted the batches `open` names.
    /// - The newest batch was added while no other batch was being added (it is not `raced`):
    ///   every other batch was added before it, or would be newer.
    private func joinNewestBatch(_ job: UnownedJob, rank: Int) -> Bool {
        let seen = lock.withCriticalSection { () -> (generation: Int, open: Int)? in
            guard let newest = batches.newest, newest.acceptsJobsLocked(ranked: rank),
                batches.beingAdded == 0, batches.open <= Self.openBatchesToCount
            else { return nil }
            if batches.countsToSkip > 0 {
                batches.countsToSkip -= 1
                return nil
            }
            return (batches.generation, batches.open)
        }
        guard let seen else { return false }
        let count = queue.operationCount
        let suspended = count == seen.open && queue.isSuspended
        return lock.withCriticalSection {
            guard batches.generation == seen.generation, let newest = batches.newest else { return false }
            guard count == seen.open else {
                if count > seen.open + Self.openBatchesToCount {
                    // Other operations wait in the queue: ask again after 1, 2, 4 … 1,024 jobs,
                    // so that a long queue is not counted for every job.
                    batches.skipAfterMiss = min(max(1, batches.skipAfterMiss * 2), 1024)
                    batches.countsToSkip = batches.skipAfterMiss
                }
                return false
            }
            batches.skipAfterMiss = 0
            guard !suspended, newest.acceptsJobsLocked(ranked: rank) else { return false }
            newest.joinLocked(job)
            return true
        }
    }

    /// Adds a batch for `job` to the queue, at the quality of service `wanted` when that is
    /// above the queue's.
    private func addBatch(for job: UnownedJob, wanting wanted: QualityOfService?) {
        let (raised, rank) = queue.jobQualityOfService(wanting: wanted)
        let batch = JobBatch(job, rank: rank, on: self)
        if let raised {
            batch.qualityOfService = raised
        }
        lock.withCriticalSection {
            // Batches added at the same time reach the queue in either order: no job joins them.
            if batches.beingAdded > 0 {
                batch.raced = true
                batches.newest?.raced = true
            }
            batches.newest = batch
            batches.open += 1
            batches.beingAdded += 1
            batches.generation &+= 1
        }
        queue.addOperation(batch)
        lock.withCriticalSection {
            batches.beingAdded -= 1
            batches.generation &+= 1
        }
    }

    /// The next job of `batch`, or `nil` once it has none: it is then closed, and no job joins
    /// it any more. Called by the batch's `main()`.
    func nextJob(of batch: JobBatch) -> UnownedJob? {
        lock.withCriticalSection {
            if let job = batch.takeLocked() {
                return job
            }
            batches.open -= 1
            batches.generation &+= 1
            if batches.newest === batch {
                batches.newest = nil
            }
            return nil
        }
    }

    /// Runs `job` isolated to this executor.
    func runSynchronously(_ job: UnownedJob) {
        job.runSynchronously(on: asUnownedSerialExecutor())
    }

    /// This executor, unowned, for an actor's `unownedExecutor`.
    ///
    /// The reference does not keep the executor: keep the executor itself for as long as the
    /// actor lives (see "Lifetime" above). Callable from any thread.
    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// Traps unless the current thread runs an operation of the queue.
    ///
    /// The Swift runtime calls it for `assumeIsolated` and `preconditionIsolated` when the
    /// current job is not this executor's: inside a legacy operation running on the queue (or a
    /// job of another executor of the same queue) the check succeeds, because the queue runs
    /// one operation at a time. Elsewhere — another queue, a `Task`, the asynchronous part of
    /// an ``AsyncOperation`` after its `main()` returned — it traps with a message naming the
    /// queue. It never blocks or waits.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    public func checkIsolated() {
        let current = OperationQueue.current
        if current !== queue {
            notIsolated(current: current)
        }
    }

    /// Whether the current thread runs an operation of the queue: Swift 6.2's non-trapping
    /// form of ``checkIsolated()``.
    ///
    /// - Returns: `true` inside an operation running on the queue; `nil` elsewhere, so that a
    ///   trapping check (`assumeIsolated`, `preconditionIsolated`) goes on to ``checkIsolated()``
    ///   and its message naming the queue, and a non-trapping one reads "not isolated". It
    ///   never blocks or waits.
    @available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *)
    public func isIsolatingCurrentContext() -> Bool? {
        OperationQueue.current === queue ? true : nil
    }

    private func widthChanged(to width: Int) -> Never {
        preconditionFailure(
            "OperationBridge: queue \(queue.quotedNameForMessages) is the serial executor of an actor, and its "
                + "maxConcurrentOperationCount changed to \(width): the actor's jobs and the queue's operations "
                + "would run side by side. Keep maxConcurrentOperationCount at 1 while an actor uses the queue."
        )
    }

    private func notIsolated(current: OperationQueue?) -> Never {
        let whereItRuns = current.map { "an operation of queue \($0.quotedNameForMessages)" } ?? "no operation queue"
        preconditionFailure(
            "OperationBridge: incorrect actor executor assumption: expected to run in an operation of queue "
                + "\(queue.quotedNameForMessages) (the actor's OperationQueueExecutor), but the current thread "
                + "runs \(whereItRuns)."
        )
    }
}
