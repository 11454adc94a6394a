import Foundation

// The closures that report progress: each receives the operation's `OperationProgress`. One
// mechanism for all of them — `init(reporting:running:)` on each operation class: the handle is
// made first and kept with the closure in a `ReportingBody`, where the operation finds its
// progress — and the same overload pairs as the closures without progress (a disfavored
// typed-throws one, and one for closures that cannot fail, `Failure == Never`).

extension TaskOperation {
    /// An operation running `body`, which takes a new progress handle with `totalUnitCount`: the
    /// operation's progress.
    convenience init(reporting totalUnitCount: Int64, running body: ReportingTaskBody<Success, Failure>) {
        let reporting = ReportingBody(progress: OperationProgress(total: totalUnitCount), body: body)
        self.init(running: .reporting { reporting })
    }

    /// Creates an operation that runs `body` when started, handing it the operation's progress
    /// to report on.
    ///
    /// ```swift
    /// let upload = TaskOperation(totalUnitCount: Int64(parts.count)) { (progress) async throws(UploadError) -> Receipt in
    ///     for part in parts {
    ///         try await uploader.send(part)
    ///         progress.advance()
    ///     }
    ///     return try await uploader.commit()
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - totalUnitCount: The units of work, as far as known now; `body` may change it (see
    ///     ``OperationProgress/totalUnitCount``).
    ///   - body: The work; it runs at most once, in a new `Task` that cancelling the operation
    ///     cancels (see ``TaskOperation``). Its argument is the operation's
    ///     ``Bridge/operationProgress``: report on it from any thread.
    @_disfavoredOverload
    public convenience init(
        totalUnitCount: Int64,
        _ body: @escaping @Sendable (OperationProgress) async throws(Failure) -> Success
    ) {
        self.init(reporting: totalUnitCount, running: .throwing(body))
    }
}

extension TaskOperation where Failure == Never {
    /// Creates an operation that runs `body`, which cannot fail, handing it the operation's
    /// progress; see ``init(totalUnitCount:_:)``. Cancelling the operation cancels the `Task`
    /// running `body`; cancelled before it starts, `body` never runs.
    public convenience init(totalUnitCount: Int64, _ body: @escaping @Sendable (OperationProgress) async -> Success) {
        self.init(reporting: totalUnitCount, running: .nonThrowing(body))
    }
}

extension ChainedTaskOperation {
    /// A step without a fixed input, running the body that `makeBody` builds around a new
    /// progress handle with `totalUnitCount`, which becomes the step's progress.
    convenience init(
        reporting totalUnitCount: Int64,
        running makeBody: (OperationProgress) -> ChainedTaskBody<Input, Output, Failure>
    ) {
        let progress = OperationProgress(total: totalUnitCount)
        let reporting = ReportingBody(progress: progress, body: makeBody(progress))
        self.init(input: nil, running: .reporting { reporting })
    }
}

/// The closure of a ``TaskOperation`` made to report progress, which takes the operation's
/// progress; kept in the form it was written in (see `TaskBody`).
enum ReportingTaskBody<Success: Sendable, Failure: Error>: Sendable {
    case throwing(@Sendable (OperationProgress) async throws(Failure) -> Success)
    case nonThrowing(@Sendable (OperationProgress) async -> Success)

    /// Runs the closure on `progress` and returns what it returned or threw. Inlined, as
    /// `result(of:)` is.
    @inline(__always)
    func run(reportingOn progress: OperationProgress) async -> Result<Success, Failure> {
        switch self {
        case .throwing(let body): await result { () async throws(Failure) -> Success in try await body(progress) }
        case .nonThrowing(let body): .success(await body(progress))
        }
    }
}

extension Bridge where Base: AsyncResultOperationProtocol, Base.Success: Sendable {
    /// Returns a new operation that runs `body` on this operation's success value, handing it the
    /// new operation's progress to report on; see ``then(_:)->ChainedTaskOperation<Base.Success,Output,NewFailure>``.
    ///
    /// ```swift
    /// let resized = download.then(totalUnitCount: 3) { (image: Image, progress) async -> [Image] in
    ///     var sizes: [Image] = []
    ///     for width in [64, 256, 1024] {
    ///         sizes.append(await image.resized(to: width))
    ///         progress.advance()
    ///     }
    ///     return sizes
    /// }
    /// ```
    ///
    /// The returned step depends on this operation and is not queued by this call. `body` runs at
    /// most once, in a new `Task` that cancelling the step cancels; it does not run when this
    /// operation fails or is cancelled. Safe to call from any thread.
    @_disfavoredOverload
    public func then<Output: Sendable, NewFailure: Error>(
        totalUnitCount: Int64,
        _ body: @escaping @Sendable (Base.Success, OperationProgress) async throws(NewFailure) -> Output
    ) -> ChainedTaskOperation<Base.Success, Output, NewFailure> {
        let step = ChainedTaskOperation<Base.Success, Output, NewFailure>(reporting: totalUnitCount) { progress in
            .throwing { (input) async throws(NewFailure) -> Output in try await body(input, progress) }
        }
        step.takeInput(from: resultOperation)
        return step
    }

    /// Returns a new operation that runs `body`, which cannot fail, on this operation's success
    /// value, handing it the new operation's progress; see
    /// ``then(totalUnitCount:_:)->ChainedTaskOperation<Base.Success,Output,NewFailure>``. Awaiting the
    /// step answers `nil` when `body` did not run. Cancelling the step cancels the `Task` running
    /// `body`. Safe to call from any thread.
    public func then<Output: Sendable>(
        totalUnitCount: Int64,
        _ body: @escaping @Sendable (Base.Success, OperationProgress) async -> Output
    ) -> ChainedTaskOperation<Base.Success, Output, Never> {
        let step = ChainedTaskOperation<Base.Success, Output, Never>(reporting: totalUnitCount) { progress in
            .nonThrowing { input in await body(input, progress) }
        }
        step.takeInput(from: resultOperation)
        return step
    }
}

extension OperationQueue {
    /// Adds an operation that runs `body`, handing it the operation's progress to report on, and
    /// returns it; see ``addTask(qualityOfService:_:)->TaskOperation<Success,Failure>``.
    ///
    /// ```swift
    /// let sync = queue.addTask(totalUnitCount: Int64(records.count)) { (progress) async throws(SyncError) in
    ///     for record in records {
    ///         try await store.save(record)
    ///         progress.advance()
    ///     }
    /// }
    /// for await snapshot in sync.operationProgress.updates() { print(snapshot.localizedDescription) }
    /// ```
    ///
    /// The work occupies a queue slot until `body` has returned. Cancelling the operation cancels
    /// the `Task` running `body`. Safe to call from any thread.
    @_disfavoredOverload
    @discardableResult
    public func addTask<Success: Sendable, Failure: Error>(
        qualityOfService: QualityOfService? = nil,
        totalUnitCount: Int64,
        _ body: @escaping @Sendable (OperationProgress) async throws(Failure) -> Success
    ) -> TaskOperation<Success, Failure> {
        add(TaskOperation(totalUnitCount: totalUnitCount, body), qualityOfService: qualityOfService)
    }

    /// Adds an operation that runs `body`, which cannot fail, handing it the operation's
    /// progress, and returns it; see ``addTask(qualityOfService:totalUnitCount:_:)->TaskOperation<Success,Failure>``.
    /// Cancelling the operation cancels the `Task` running `body`. Safe to call from any thread.
    @discardableResult
    public func addTask<Success: Sendable>(
        qualityOfService: QualityOfService? = nil,
        totalUnitCount: Int64,
        _ body: @escaping @Sendable (OperationProgress) async -> Success
    ) -> TaskOperation<Success, Never> {
        add(TaskOperation(totalUnitCount: totalUnitCount, body), qualityOfService: qualityOfService)
    }
}
