import Foundation

// The operations that carry Swift concurrency jobs through an `OperationQueue`: for a task
// executor one per job, as light as an `Operation` can be — no closure, no state of their own
// beyond the job and the executor it runs on (a serial executor's are batches: JobBatch.swift).
// See "Executors: actors and async code on legacy queues" in the design article.

/// Runs one job of an ``OperationQueueTaskExecutor`` on its queue.
///
/// `main()` runs the job synchronously on the executor: the job takes a slot of the queue until
/// the task's next suspension point. `cancel()` does nothing: a job that never ran would leave
/// its task suspended forever, so `cancelAllOperations()` on the queue cannot drop it. A Swift
/// task's own cancellation is cooperative and reaches the job's code, not this operation.
///
/// Safety: the stored properties are immutable after `init`.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
final class JobOperation: Operation, @unchecked Sendable {
    private let job: UnownedJob
    private let executor: OperationQueueTaskExecutor

    init(_ job: UnownedJob, on executor: OperationQueueTaskExecutor) {
        self.job = job
        self.executor = executor
        super.init()
    }

    override func main() {
        job.runSynchronously(on: executor.asUnownedTaskExecutor())
    }

    /// A job must run: cancelling it is ignored (see the type's discussion).
    override func cancel() {}
}

extension OperationQueue {
    /// The queue's name for messages: `'name'`, or `an unnamed queue`.
    var quotedNameForMessages: String {
        name.map { "'\($0)'" } ?? "an unnamed queue"
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
extension QualityOfService {
    /// The quality of service a job's priority asks for, through `QualityOfService.init(_:)`;
    /// `nil` for an unspecified priority.
    init?(jobPriority: JobPriority) {
        guard let taskPriority = TaskPriority(jobPriority) else { return nil }
        self.init(taskPriority)
    }
}

extension OperationQueue {
    /// The quality of service of an operation of this queue that runs jobs asking for `wanted`:
    /// `wanted` when it is above the queue's own (`raised`), the queue's otherwise (`raised` is
    /// `nil`), and the `rank` of the one it runs at. A job never runs below the queue's quality
    /// of service, and a more urgent task raises its job; the operation's `queuePriority` stays
    /// `.normal`, so jobs and the queue's other operations keep their FIFO order.
    func jobQualityOfService(wanting wanted: QualityOfService?) -> (raised: QualityOfService?, rank: Int) {
        let queueRank = qualityOfService.rank
        guard let wanted, wanted.rank > queueRank else { return (nil, queueRank) }
        return (wanted, wanted.rank)
    }
}
