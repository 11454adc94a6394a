import Foundation

/// An operation that runs an async closure, with a typed result.
///
/// It is an ``AsyncResultOperation``, so everything that works with result operations works
/// with it: queues and their concurrency limits, dependencies, chaining, and awaiting.
///
/// ```swift
/// let thumbnail = TaskOperation { () async throws(ImageError) -> Image in
///     try await renderer.thumbnail(for: photo)
/// }
/// thumbnail.addDependency(download)
/// queue.addOperation(thumbnail)
/// let image = try await thumbnail.value
/// ```
///
/// ## Cancellation
/// - Cancelled before it starts: the closure never runs; the result is the cancellation
///   failure when `Failure` can express one (see ``CancellationRepresentable``).
/// - Cancelled while running: the `Task` running the closure is cancelled (so
///   `Task.isCancelled` and `Task.checkCancellation()` see it) and the result becomes the
///   cancellation failure, but the operation finishes only once the closure has returned —
///   dependents never start while the closure still runs, and the queue slot stays taken.
///
/// ## Where the closure runs
/// The closure starts on the thread that starts the operation — a queue's worker thread, as for
/// any operation's `main()` — and runs there until its first suspension; it then continues on
/// the cooperative thread pool. A closure that never suspends runs entirely on the queue's
/// thread and finishes the operation there, with no hop to another thread. Blocking work before
/// the first `await` holds that queue thread, as in any `Operation`. (Apple platforms before
/// their 26 releases start the closure on the cooperative pool.)
///
/// A cancellation that arrives while the closure still runs on the starting thread, before its
/// first suspension, reaches `Task.isCancelled` once the operation holds the task — as the
/// starting thread returns from that suspension — so the closure may not see it for a moment
/// after resuming; cancellation handlers (`withTaskCancellationHandler`) run then.
///
/// ## Priority and task-local values
/// The closure runs in a new unstructured `Task` whose priority comes from the operation's
/// `qualityOfService` (`.userInteractive`/`.userInitiated` → `.high`, `.default` →
/// `.medium`, `.utility` → `.utility`, `.background` → `.background`; see
/// `TaskPriority.init(_:)`). Task-local values of the code that created or queued the
/// operation do **not** reach the closure: an operation crosses a queue, not a task tree.
/// Capture what the closure needs as values, or bind the task-locals again inside it:
///
/// ```swift
/// let requestID = RequestContext.id          // read where it is bound
/// let step = TaskOperation { () async throws -> Data in
///     try await RequestContext.$id.withValue(requestID) { try await fetch() }
/// }
/// ```
public final class TaskOperation<Success: Sendable, Failure: Error>: AsyncResultOperation<Success, Failure>,
    ProgressReporting, @unchecked Sendable
{
    // The closure, stored as its form and the closure itself rather than as a `TaskBody`: the
    // form's byte lands in the padding after the result slot, where the enum's tag byte followed
    // the closure and took the operation into the next allocation size class
    // (Design.md, "Memory per operation"). Declared in this order for that.
    private let bodyForm: TaskBodyForm
    private let bodyClosure: ErasedClosure

    /// A Foundation `Progress` that follows the operation's
    /// ``Bridge/operationProgress``, for `ProgressReporting` code; see
    /// ``OperationProgress/foundationProgress``. Cancelling it cancels the operation. Thread-safe.
    public var progress: Progress { progressHandedOut.foundationProgress }

    // Disfavored: a non-throwing closure must pick the `Failure == Never` initializer, also where
    // the solver would otherwise infer another `Failure` (see `then`).
    /// Creates an operation that runs `body` when started.
    ///
    /// - Parameter body: The work. It runs at most once, in a new `Task` started on the thread
    ///   that starts the operation (see "Where the closure runs"); cancelling the operation
    ///   cancels that task.
    @_disfavoredOverload
    public convenience init(_ body: @escaping @Sendable () async throws(Failure) -> Success) {
        self.init(running: .throwing(body))
    }

    /// The designated initializer behind both public ones.
    init(running body: TaskBody<Success, Failure>) {
        (bodyForm, bodyClosure) = body.stored
        super.init()
    }

    /// The closure, as it was given.
    private var body: TaskBody<Success, Failure> { TaskBody(bodyForm, bodyClosure) }

    /// Starts the closure in a new `Task`. Called by `start()`; do not call it yourself.
    public override func main() {
        let body = body
        body.progress?.workStarted(by: self)
        runAttachedWork(body)
    }

    // Read without making the `TaskBody` (which, in unspecialized generic code, goes through the
    // enum's runtime metadata): a watched group reads it for each child at each update.
    override var bodyProgress: OperationProgress? {
        bodyForm == .reporting ? TaskBody<Success, Failure>.progress(ofReporting: bodyClosure) : nil
    }

    /// The package's own step: a failed dependency stops it, whatever `Failure` can say.
    override var skipsAfterUpstreamFailure: Bool { true }
}

extension TaskOperation where Failure == Never {
    /// Creates an operation that runs `body`, which cannot fail, when started.
    ///
    /// The same as ``init(_:)`` for a non-throwing closure; it lets the compiler infer
    /// `Failure == Never` where the closure is written inline, as in
    /// `await queue.run(TaskOperation { 42 })`.
    ///
    /// - Parameter body: The work. It runs at most once, in a new `Task` started on the thread
    ///   that starts the operation (see "Where the closure runs"); cancelling the operation
    ///   cancels that task.
    public convenience init(_ body: @escaping @Sendable () async -> Success) {
        self.init(running: .nonThrowing(body))
    }
}

/// The closure of a ``TaskOperation``, kept in the form it was written in: converting a
/// non-throwing closure to `throws(Failure)` would cost a reabstraction thunk — a heap
/// allocation — per operation. Every case holds one closure (two words); the operation stores
/// the case and the closure apart (``stored``).
enum TaskBody<Success: Sendable, Failure: Error>: Sendable {
    case throwing(@Sendable () async throws(Failure) -> Success)
    case nonThrowing(@Sendable () async -> Success)
    /// A closure taking the operation's progress, boxed with it: the case's closure returns the
    /// box (see ``ReportingBody``).
    case reporting(@Sendable () -> ReportingBody<ReportingTaskBody<Success, Failure>>)

    /// The progress the closure reports on, if it takes one.
    var progress: OperationProgress? {
        guard case .reporting(let reporting) = self else { return nil }
        return reporting().progress
    }

    /// Runs the closure and returns what it returned or threw.
    func run() async -> Result<Success, Failure> {
        switch self {
        case .throwing(let body): return await result(of: body)
        case .nonThrowing(let body): return .success(await body())
        case .reporting(let reporting):
            let reporting = reporting()
            return await reporting.body.run(reportingOn: reporting.progress)
        }
    }

    /// The case and its closure, for an operation to store apart.
    var stored: (TaskBodyForm, ErasedClosure) {
        switch self {
        case .throwing(let closure): (.throwing, ErasedClosure(Throwing(closure: closure)))
        case .nonThrowing(let closure): (.nonThrowing, ErasedClosure(NonThrowing(closure: closure)))
        case .reporting(let closure): (.reporting, ErasedClosure(Reporting(closure: closure)))
        }
    }

    /// The progress of a body ``stored`` with the form `.reporting` as `closure`.
    static func progress(ofReporting closure: ErasedClosure) -> OperationProgress {
        closure.restored(as: Reporting.self).closure().progress
    }

    /// The body ``stored`` split into `form` and `closure`.
    init(_ form: TaskBodyForm, _ closure: ErasedClosure) {
        switch form {
        case .throwing: self = .throwing(closure.restored(as: Throwing.self).closure)
        case .nonThrowing: self = .nonThrowing(closure.restored(as: NonThrowing.self).closure)
        case .reporting: self = .reporting(closure.restored(as: Reporting.self).closure)
        }
    }

    // The wrappers `ErasedClosure` stores, one per case, each declaring its case's function type.
    private struct Throwing: Sendable { let closure: @Sendable () async throws(Failure) -> Success }
    private struct NonThrowing: Sendable { let closure: @Sendable () async -> Success }
    private struct Reporting: Sendable {
        let closure: @Sendable () -> ReportingBody<ReportingTaskBody<Success, Failure>>
    }
}

/// What `body` returned or threw. Inlined: a call of its own would add an async frame, and the
/// frames of a `TaskOperation`'s work then outgrow its task's first allocation slab (one more
/// heap allocation per operation).
@inline(__always)
func result<Success, Failure: Error>(
    of body: () async throws(Failure) -> Success
) async -> Result<Success, Failure> {
    do throws(Failure) {
        return .success(try await body())
    } catch {
        return .failure(error)
    }
}

extension TaskOperation: CustomReflectable {
    /// A mirror of the operation's public state (name, whether it is executing, finished or
    /// cancelled, its result), not of its stored properties: on Linux those reach its queue and,
    /// through Foundation's, other operations that threads free meanwhile, and Swift Testing
    /// reflects the values of a failed expectation (Design.md, "Reflection"). Thread-safe.
    public var customMirror: Mirror {
        operationMirror(of: self)
    }
}
