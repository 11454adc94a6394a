import Foundation

// The operations that carry Swift concurrency jobs through an `OperationQueue`: one per job, as
// light as an `Operation` can be — no closure, no state of their own beyond the job and the
// executor it runs on. See "Actors on legacy queues" in the design article.

/// An executor whose jobs run as operations of its queue: ``OperationQueueExecutor`` (serial,
/// isolated) and ``OperationQueueTaskExecutor`` (a task executor of any width).
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
protocol QueueJobExecutor: AnyObject, Sendable {
    /// The queue whose operations run the jobs.
    var queue: OperationQueue { get }

    /// Runs `job` synchronously on this executor, on the current thread.
    func runSynchronously(_ job: UnownedJob)
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
extension QueueJobExecutor {
    /// Adds `job` to the queue as one ``JobOperation``, with the job's priority; returns at once.
    func addJobOperation(_ job: consuming ExecutorJob) {
        let priority = job.priority
        let operation = JobOperation(UnownedJob(job), on: self)
        operation.adoptPriority(priority, under: queue)
        queue.addOperation(operation)
    }
}

/// Runs one job of a ``QueueJobExecutor`` on its queue.
///
/// `main()` runs the job synchronously on the executor: for ``OperationQueueExecutor`` an
/// actor's method runs inside this operation, on the queue's thread, so nothing else of the
/// queue runs at the same time; for ``OperationQueueTaskExecutor`` the job takes a slot of the
/// queue until the task's next suspension point. `cancel()` does nothing: a job that never ran
/// would leave its task suspended forever (and an actor stuck), so `cancelAllOperations()` on
/// the queue cannot drop it. A Swift task's own cancellation is cooperative and reaches the
/// job's code, not this operation.
///
/// Safety: the stored properties are immutable after `init`.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
final class JobOperation<Executor: QueueJobExecutor>: Operation, @unchecked Sendable {
    private let job: UnownedJob
    private let executor: Executor

    init(_ job: UnownedJob, on executor: Executor) {
        self.job = job
        self.executor = executor
        super.init()
    }

    override func main() {
        executor.runSynchronously(job)
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
extension Operation {
    /// Gives a job's operation the quality of service of the job's priority, through
    /// `QualityOfService.init(_:)`, when that is above the queue's own: a job never runs below
    /// the queue's quality of service, and a more urgent task raises its job. The operation's
    /// `queuePriority` stays `.normal`, so jobs and the queue's other operations keep their FIFO
    /// order.
    func adoptPriority(_ priority: JobPriority, under queue: OperationQueue) {
        guard let taskPriority = TaskPriority(priority) else { return }
        let wanted = QualityOfService(taskPriority)
        if wanted.rank > queue.qualityOfService.rank {
            qualityOfService = wanted
        }
    }
}
