import Foundation

// An `OperationQueueExecutor`'s jobs, several to an operation while nothing else waits in the
// queue behind them. See "Executors: actors and async code on legacy queues" in the design
// article, "Batches".

/// The operation that runs an ``OperationQueueExecutor``'s jobs on its queue: the job it was made
/// for, then every job that joined it while it was the executor's newest batch and the queue held
/// nothing but the executor's batches.
///
/// `main()` runs the jobs one after another, in the order they came, each synchronously on the
/// executor, and ends when no job is left; after that nothing joins it. `cancel()` does nothing,
/// as for ``JobOperation``: a job that never ran would leave its actor stuck.
///
/// Safety: the jobs, `isOpen` and `raced` are guarded by the executor's lock; the other stored
/// properties are immutable after `init`.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
final class JobBatch: Operation, @unchecked Sendable {
    private let executor: OperationQueueExecutor
    /// The highest quality-of-service rank a job may ask for and still join: the rank this
    /// operation runs at.
    let rank: Int

    /// The first job, until it is taken: kept apart, so that a batch of one job (every call
    /// made one after another) allocates no array.
    private var first: UnownedJob?
    /// The jobs that joined, in order; `next` is the first not yet taken.
    private var joined: [UnownedJob] = []
    private var next = 0
    /// Whether jobs may still join: until `main()` finds no job left.
    private(set) var isOpen = true
    /// Whether another batch of the executor was being added at the same time as this one:
    /// which of the two the queue holds first is unknown, and no job joins either.
    var raced = false

    init(_ job: UnownedJob, rank: Int, on executor: OperationQueueExecutor) {
        first = job
        self.rank = rank
        self.executor = executor
        super.init()
    }

    override func main() {
        while let job = executor.nextJob(of: self) {
            executor.runSynchronously(job)
        }
    }

    /// A job must run: cancelling its operation is ignored (see the type's discussion).
    override func cancel() {}

    /// The most jobs a batch runs: after that, jobs make the next batch, so that a barrier
    /// block (which Foundation does not count) or code waiting for this operation to finish
    /// waits for a bounded number of jobs, not for as long as the actor keeps being called.
    static let longest = 1_024

    /// Whether a job of quality-of-service rank `rank` may join: the batch is open, not raced,
    /// not full, and runs at that rank or above. Called with the executor's lock held.
    func acceptsJobsLocked(ranked rank: Int) -> Bool {
        isOpen && !raced && rank <= self.rank && 1 + joined.count < Self.longest
    }

    /// Appends `job`. Called with the executor's lock held, while the batch accepts jobs.
    func joinLocked(_ job: UnownedJob) {
        joined.append(job)
    }

    /// The next job, or `nil` after closing the batch when none is left. Called with the
    /// executor's lock held.
    func takeLocked() -> UnownedJob? {
        if let job = first {
            first = nil
            return job
        }
        if next < joined.count {
            defer { next += 1 }
            return joined[next]
        }
        isOpen = false
        joined = []
        return nil
    }
}
