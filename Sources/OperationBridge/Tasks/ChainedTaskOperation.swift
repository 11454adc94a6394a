import Foundation

/// An operation that runs an async closure on the output of an upstream operation.
///
/// It is a ``ChainedAsyncResultOperation``: its input comes from ``ChainedAsyncResultOperation/takeInput(from:)``,
/// from the classic dependency scan, or from ``ChainedAsyncResultOperation/init(input:)``. Most
/// code creates it with ``Bridge/then(_:)->ChainedTaskOperation<Base.Success,Output,NewFailure>``.
///
/// ```swift
/// let title = unfurl.then { (url: URL) async throws(TitleError) -> String in
///     try await titleService.title(of: url)
/// }
/// queue.addOperation(unfurl)
/// queue.addOperation(title)
/// ```
///
/// ## Missing input
/// When the upstream failed or was cancelled, the closure does not run: the operation finishes
/// with the failure described by ``UpstreamFailedError`` — its
/// ``ChainedAsyncResultOperation/upstreamFailurePolicy`` is ``UpstreamFailurePolicy/fail``
/// whatever its `Failure`, since the closure cannot run without its input (under
/// ``UpstreamFailurePolicy/runWithoutInput`` it finishes the same way). When there is no input
/// at all, it finishes with ``UpstreamFailedError/Reason/noInput`` in the same way.
///
/// ## Cancellation, priority and task-local values
/// As for ``TaskOperation``: cancelled before it starts, the closure never runs; cancelled while
/// running, its `Task` is cancelled and the operation finishes once the closure has returned.
public final class ChainedTaskOperation<Input: Sendable, Output: Sendable, Failure: Error>:
    ChainedAsyncResultOperation<Input, Output, Failure>, ProgressReporting, @unchecked Sendable
{
    // The closure, stored as its form and the closure itself rather than as a `ChainedTaskBody`
    // (see `TaskOperation`): the form's byte fits in padding after the input, where the enum's tag
    // byte took the operation into the next allocation size class. Declared in this order for that.
    private let bodyForm: TaskBodyForm
    private let bodyClosure: ErasedClosure

    /// A Foundation `Progress` that follows the operation's
    /// ``Bridge/operationProgress``, for `ProgressReporting` code; see
    /// ``OperationProgress/foundationProgress``. Cancelling it cancels the operation. Thread-safe.
    public var progress: Progress { progressHandedOut.foundationProgress }

    // Disfavored: a non-throwing closure must pick the `Failure == Never` initializer, also
    // where the solver would otherwise infer another `Failure` (see `then`).
    /// Creates an operation that runs `body` on its input when started.
    ///
    /// - Parameters:
    ///   - input: A fixed input; when `nil`, the input is taken from an upstream.
    ///   - body: The work. It runs at most once, in a new `Task`; cancelling the operation
    ///     cancels that task.
    @_disfavoredOverload
    public convenience init(input: Input? = nil, _ body: @escaping @Sendable (Input) async throws(Failure) -> Output) {
        self.init(input: input, running: .throwing(body))
    }

    /// The designated initializer behind the public ones.
    init(input: Input?, running body: ChainedTaskBody<Input, Output, Failure>) {
        (bodyForm, bodyClosure) = body.stored
        super.init(input: input)
    }

    /// The closure, as it was given.
    private var body: ChainedTaskBody<Input, Output, Failure> { ChainedTaskBody(bodyForm, bodyClosure) }

    /// Creates an operation that runs `body` on `upstream`'s success value, and makes it depend
    /// on `upstream`.
    ///
    /// `body` runs at most once, in a new `Task`, after `upstream` has finished; cancelling the
    /// operation cancels that task, and cancelled before it starts, `body` never runs. When
    /// `upstream` failed or was cancelled, `body` does not run either (see
    /// ``ChainedAsyncResultOperation/upstreamFailurePolicy``). Safe to call from any thread.
    @_disfavoredOverload
    public convenience init<UpstreamFailure: Error>(
        inputFrom upstream: AsyncResultOperation<Input, UpstreamFailure>,
        _ body: @escaping @Sendable (Input) async throws(Failure) -> Output
    ) {
        self.init(input: nil, running: .throwing(body))
        takeInput(from: upstream)
    }

    /// Starts the closure in a new `Task`. Called by `start()`; do not call it yourself.
    public override func main() {
        guard let input else {
            // The upstream's failure when there was one (the policy was `.runWithoutInput`).
            let missing =
                missingInputCause
                ?? UpstreamFailedError(upstreamType: String(describing: Input.self), reason: .noInput)
            return finishWithoutRunning(reporting: missing, onlyIfPending: false)
        }
        let body = body
        body.progress?.workStarted(by: self)
        runAttachedWork(body.bound(to: input))
    }

    // Read without making the `ChainedTaskBody` (which, in unspecialized generic code, goes through the
    // enum's runtime metadata): a watched group reads it for each child at each update.
    override var bodyProgress: OperationProgress? {
        bodyForm == .reporting ? ChainedTaskBody<Input, Output, Failure>.progress(ofReporting: bodyClosure) : nil
    }

    /// The package's own step: a failed dependency stops it, whatever `Failure` can say.
    override var skipsAfterUpstreamFailure: Bool { true }

    /// The closure cannot run without its input: skip, whatever `Failure` can express.
    override var defaultUpstreamFailurePolicy: UpstreamFailurePolicy { .fail }
}

/// The closure of a ``ChainedTaskOperation``, kept in the form it was written in (see
/// `TaskBody`); every case holds one closure, and the operation stores the case and the closure
/// apart (``stored``).
enum ChainedTaskBody<Input: Sendable, Output: Sendable, Failure: Error>: Sendable {
    case throwing(@Sendable (Input) async throws(Failure) -> Output)
    case nonThrowing(@Sendable (Input) async -> Output)
    /// A closure reporting on the operation's progress (which it captured), boxed with it: the
    /// case's closure returns the box (see ``ReportingBody``).
    case reporting(@Sendable () -> ReportingBody<ChainedTaskBody<Input, Output, Failure>>)

    /// The progress the closure reports on, if it reports one.
    var progress: OperationProgress? {
        guard case .reporting(let reporting) = self else { return nil }
        return reporting().progress
    }

    /// The work to run: the closure applied to `input`.
    func bound(to input: Input) -> TaskBody<Output, Failure> {
        switch self {
        case .throwing(let body): .throwing { () async throws(Failure) -> Output in try await body(input) }
        case .nonThrowing(let body): .nonThrowing { await body(input) }
        case .reporting(let reporting): reporting().body.bound(to: input)
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
    // `stored`, `init(_:_:)` and these repeat `TaskBody`'s on purpose: shared through a generic
    // wrapper or a protocol's associated types, the closure would be held as a generic parameter,
    // which the compiler reabstracts — a thunk, an allocation per operation (see `ErasedClosure`).
    private struct Throwing: Sendable { let closure: @Sendable (Input) async throws(Failure) -> Output }
    private struct NonThrowing: Sendable { let closure: @Sendable (Input) async -> Output }
    private struct Reporting: Sendable {
        let closure: @Sendable () -> ReportingBody<ChainedTaskBody<Input, Output, Failure>>
    }
}

extension ChainedTaskOperation where Failure == Never {
    /// Creates an operation that runs `body`, which cannot fail, on its input when started.
    ///
    /// The same as ``init(input:_:)`` for a non-throwing closure; it lets the compiler infer
    /// `Failure == Never` where the closure is written inline. `body` runs at most once, in a new
    /// `Task` cancelled with the operation; cancelled before it starts (or after an upstream
    /// failure), it never runs, and awaiting the operation answers `nil`.
    public convenience init(input: Input? = nil, _ body: @escaping @Sendable (Input) async -> Output) {
        self.init(input: input, running: .nonThrowing(body))
    }

    /// Creates an operation that runs `body`, which cannot fail, on `upstream`'s success value,
    /// and makes it depend on `upstream`.
    ///
    /// As ``init(inputFrom:_:)-(AsyncResultOperation<Input,UpstreamFailure>,_)``; awaiting the
    /// operation answers `nil` when `body` did not run (cancelled, or the upstream failed).
    public convenience init<UpstreamFailure: Error>(
        inputFrom upstream: AsyncResultOperation<Input, UpstreamFailure>,
        _ body: @escaping @Sendable (Input) async -> Output
    ) {
        self.init(input: nil, running: .nonThrowing(body))
        takeInput(from: upstream)
    }
}

extension Bridge where Base: AsyncResultOperationProtocol, Base.Success: Sendable {
    // Disfavored: for a closure that cannot throw, the `Never` overload below must win. Without
    // this, in a throwing context such as `#expect(await step.value == 2)`, the compiler infers
    // `NewFailure == any Error` to avoid comparing an optional, and asks for a `try`.
    /// Returns a new operation that runs `body` on this operation's success value.
    ///
    /// The new operation depends on this one. Add both to a queue (or hand them to a
    /// ``Pipeline``); the returned operation is not queued by this call.
    ///
    /// ```swift
    /// let size = download.then { (data: Data) async -> Int in data.count }
    /// queue.addOperation(download)
    /// queue.addOperation(size)
    /// let bytes = await size.value   // Int?: `Failure` is `Never`, nil when it did not run
    /// ```
    ///
    /// When this operation fails or is cancelled, `body` does not run: the returned operation
    /// finishes with an ``UpstreamFailedError``-based failure (see
    /// ``ChainedAsyncResultOperation/upstreamFailurePolicy``). `body` runs at most once, in a new
    /// `Task` that cancelling the returned operation cancels. Safe to call from any thread.
    @_disfavoredOverload
    public func then<Output: Sendable, NewFailure: Error>(
        _ body: @escaping @Sendable (Base.Success) async throws(NewFailure) -> Output
    ) -> ChainedTaskOperation<Base.Success, Output, NewFailure> {
        ChainedTaskOperation(inputFrom: resultOperation, body)
    }

    /// Returns a new operation that runs `body`, which cannot fail, on this operation's success
    /// value; see ``then(_:)->ChainedTaskOperation<Base.Success,Output,NewFailure>``. The step's
    /// `Failure` is `Never`: awaiting it answers an optional, `nil` when `body` did not run
    /// (the step was cancelled before it started, or this operation failed). Cancelling the
    /// step cancels the `Task` running `body`. Safe to call from any thread.
    public func then<Output: Sendable>(
        _ body: @escaping @Sendable (Base.Success) async -> Output
    ) -> ChainedTaskOperation<Base.Success, Output, Never> {
        ChainedTaskOperation(inputFrom: resultOperation, body)
    }
}

extension OperationQueue {
    // Disfavored: for a closure that cannot throw, the `Never` overload below must win (see `then`).
    /// Adds an operation that runs `body`, and returns it as a cancellable, awaitable handle.
    ///
    /// The work occupies a queue slot until `body` has returned, so `maxConcurrentOperationCount`
    /// limits async work as it limits other operations.
    ///
    /// ```swift
    /// let upload = queue.addTask { () async throws(UploadError) -> Receipt in
    ///     try await uploader.send(file)
    /// }
    /// upload.cancel()                       // cancels the task running the closure
    /// let receipt = try await upload.value  // or: await upload.outcome
    /// ```
    ///
    /// - Parameters:
    ///   - qualityOfService: The operation's quality of service, from which the task's priority
    ///     is derived; `nil` keeps the default.
    ///   - body: The work; see ``TaskOperation`` for cancellation and task-local semantics.
    /// - Returns: The queued operation.
    @_disfavoredOverload
    @discardableResult
    public func addTask<Success: Sendable, Failure: Error>(
        qualityOfService: QualityOfService? = nil,
        _ body: @escaping @Sendable () async throws(Failure) -> Success
    ) -> TaskOperation<Success, Failure> {
        add(TaskOperation(running: .throwing(body)), qualityOfService: qualityOfService)
    }

    /// Adds an operation that runs `body`, which cannot fail, and returns it; see
    /// ``addTask(qualityOfService:_:)->TaskOperation<Success,Failure>``. Its `Failure` is `Never`:
    /// `await queue.addTask { 42 }.value` answers an optional, `nil` when the operation was
    /// cancelled before `body` ran. Cancelling the operation cancels the `Task` running `body`.
    /// Safe to call from any thread.
    @discardableResult
    public func addTask<Success: Sendable>(
        qualityOfService: QualityOfService? = nil,
        _ body: @escaping @Sendable () async -> Success
    ) -> TaskOperation<Success, Never> {
        add(TaskOperation(running: .nonThrowing(body)), qualityOfService: qualityOfService)
    }

    /// Sets the quality of service, if any, and admits `operation`. Shared by every `addTask`.
    func add<Success, Failure>(
        _ operation: TaskOperation<Success, Failure>,
        qualityOfService: QualityOfService?
    ) -> TaskOperation<Success, Failure> {
        if let qualityOfService { operation.qualityOfService = qualityOfService }
        admit(operation)
        return operation
    }
}

extension ChainedTaskOperation: CustomReflectable {
    /// A mirror of the operation's public state (name, whether it is executing, finished or
    /// cancelled, its result, its input), not of its stored properties: on Linux those reach its queue and,
    /// through Foundation's, other operations that threads free meanwhile, and Swift Testing
    /// reflects the values of a failed expectation (Design.md, "Reflection"). Thread-safe.
    public var customMirror: Mirror {
        operationMirror(of: self, ["input": input as Any])
    }
}
