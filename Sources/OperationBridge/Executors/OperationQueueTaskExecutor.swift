import Foundation

/// An `OperationQueue` as a task executor: the jobs of async code that prefers it run as
/// operations on the queue.
///
/// Give it to `withTaskExecutorPreference(_:operation:)`, `Task(executorPreference:)` or a task
/// group's `addTask(executorPreference:)`, and the task's code that is not isolated to an actor
/// — the task's closure, its child tasks, the `nonisolated` async functions it calls — runs on
/// the queue:
///
/// ```swift
/// let imageQueue = OperationQueue()
/// imageQueue.maxConcurrentOperationCount = 2
/// let imageExecutor = OperationQueueTaskExecutor(imageQueue)
///
/// let thumbnails = await withTaskExecutorPreference(imageExecutor) {
///     await withTaskGroup(of: Int.self) { group in
///         for size in [64, 128, 256, 512] {
///             group.addTask { renderThumbnail(size: size) }
///         }
///         return await group.reduce(0, +)
///     }
/// }
/// ```
///
/// So the queue's knobs apply to new async code as they apply to its legacy operations:
/// `maxConcurrentOperationCount` bounds how many of these jobs run at once (how many threads
/// the subsystem's async work holds), jobs enqueued while the queue `isSuspended` wait, and
/// they run at the queue's `qualityOfService` — or at the one the job's priority maps to
/// through `QualityOfService.init(_:)` when that is higher — on its `underlyingQueue` if it has
/// one. Each job is one operation, holding one slot from the task's resumption to its next
/// suspension point: a task that awaits gives its slot back while it waits.
///
/// A queue of any width works; a serial one runs the preferring tasks one job at a time, but
/// does not make them an actor: for isolated state, use ``OperationQueueExecutor``.
///
/// ## Cancellation
///
/// Jobs are not cancellable operations: `queue.cancelAllOperations()` leaves them to run,
/// because a job that never ran would leave its task suspended forever. Cancel the tasks
/// instead; their code sees `Task.isCancelled` as on any executor.
///
/// ## Threading
///
/// The executor is `Sendable` and can be used from any thread. Jobs run on the threads the
/// queue gives its operations. Code that blocks in a job holds a slot of the queue — as a
/// blocking `BlockOperation` does — and a job waits for a slot while the queue is saturated or
/// suspended.
///
/// ## Lifetime
///
/// The executor keeps its queue. `withTaskExecutorPreference(_:operation:)` keeps the executor
/// for the duration of the call; keep it in a stored property when tasks made with
/// `Task(executorPreference:)` outlive the scope that made it (a task compiled with Swift 6.0
/// does not retain the executor it prefers).
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
public final class OperationQueueTaskExecutor: TaskExecutor {
    /// The queue every job runs on.
    public let queue: OperationQueue

    /// Makes a task executor of `queue`, of any width.
    ///
    /// - Parameter queue: The queue whose operations run the jobs. Its width, suspension,
    ///   quality of service and underlying queue apply to them.
    public init(_ queue: OperationQueue) {
        self.queue = queue
    }

    /// Adds `job` to the queue as an operation, which runs it on this executor.
    ///
    /// Called by the Swift runtime; it returns at once and never blocks. The operation waits
    /// for a slot of the queue and while the queue is suspended, and cannot be cancelled.
    public func enqueue(_ job: consuming ExecutorJob) {
        let raised = queue.jobQualityOfService(wanting: QualityOfService(jobPriority: job.priority)).raised
        let operation = JobOperation(UnownedJob(job), on: self)
        if let raised {
            operation.qualityOfService = raised
        }
        queue.addOperation(operation)
    }

    /// This executor, unowned, for the runtime.
    ///
    /// The reference does not keep the executor (see "Lifetime" above). Callable from any thread.
    public func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }
}
