import Foundation

/// A serial `OperationQueue` as the executor of an actor or a global actor: every job of the
/// actor runs as an operation on that queue.
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
/// queue gives its operation. A job waits for the queue: while the queue is suspended, or busy
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
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
public final class OperationQueueExecutor: SerialExecutor, QueueJobExecutor {
    /// The serial queue every job runs on.
    public let queue: OperationQueue

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

    /// Adds `job` to the queue as an operation, which runs it isolated to this executor.
    ///
    /// Called by the Swift runtime; it returns at once and never blocks. The operation runs
    /// after the queue's earlier operations, waits while the queue is suspended, and cannot be
    /// cancelled. Traps, naming the queue, if the queue's width is no longer 1.
    public func enqueue(_ job: consuming ExecutorJob) {
        let width = queue.maxConcurrentOperationCount
        if width != 1 {
            widthChanged(to: width)
        }
        addJobOperation(job)
    }

    /// Runs `job` isolated to this executor (for its ``JobOperation``).
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
