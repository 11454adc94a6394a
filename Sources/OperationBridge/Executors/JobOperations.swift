import Foundation

// The operations that carry Swift concurrency jobs through an `OperationQueue`: one per job, as
// light as an `Operation` can be — no closure, no state of their own beyond the job and the
// executor it runs on. See "Actors on legacy queues" in the design article.

/// Runs one job of an ``OperationQueueExecutor`` on its queue.
///
/// `main()` runs the job synchronously, isolated to the executor: an actor's method runs inside
/// this operation, on the queue's thread, so nothing else of the queue runs at the same time.
/// `cancel()` does nothing: a job that never ran would leave its task suspended forever and its
/// actor stuck, so `cancelAllOperations()` on the queue cannot drop it. A Swift task's own
/// cancellation is cooperative and reaches the job's code, not this operation.
///
/// Safety: the stored properties are immutable after `init`.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
final class SerialJobOperation: Operation, @unchecked Sendable {
    private let job: UnownedJob
    private let executor: OperationQueueExecutor

    init(_ job: UnownedJob, on executor: OperationQueueExecutor) {
        self.job = job
        self.executor = executor
        super.init()
    }

    override func main() {
        job.runSynchronously(on: executor.asUnownedSerialExecutor())
    }

    /// A job must run: cancelling it is ignored (see the type's discussion).
    override func cancel() {}
}

/// Runs one job of an ``OperationQueueTaskExecutor`` on its queue.
///
/// `main()` runs the job synchronously on the task executor; the job takes the queue's slot for
/// as long as it runs (until the task's next suspension point). `cancel()` does nothing, for the
/// reason ``SerialJobOperation`` gives.
///
/// Safety: the stored properties are immutable after `init`.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
final class TaskJobOperation: Operation, @unchecked Sendable {
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

    /// A job must run: cancelling it is ignored (see ``SerialJobOperation``).
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
