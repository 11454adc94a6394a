import Foundation

extension AsyncResultOperation where Success: Sendable {
    /// The operation's result, once it has finished.
    ///
    /// Works whether the operation is queued, started by hand, already finished, or not queued
    /// yet (it then waits until it is queued and finishes). Never blocks a thread; raises the
    /// operation's quality of service to the awaiting task's priority.
    ///
    /// ```swift
    /// switch await download.outcome {
    /// case .success(let data)?: show(data)
    /// case .failure(let error)?: report(error)
    /// case nil: break  // cancelled, and the error type cannot express cancellation
    /// }
    /// ```
    ///
    /// - Returns: The result, or `nil` when the operation finished cancelled without a result
    ///   (its `Failure` cannot express cancellation, see ``CancellationRepresentable``).
    ///
    /// ## Cancellation
    /// Cancelling the awaiting task stops the wait at once and returns `nil`; the operation is
    /// not cancelled (other tasks may be waiting for it). To tie the operation to the task, use
    /// ``Foundation/OperationQueue/runForOutcome(_:)``.
    public var outcome: Result<Success, Failure>? {
        get async {
            await OperationWaiter.waitForFinish(of: self, onTaskCancellation: .stopWaiting) ? result : nil
        }
    }

    /// Waits for the operation and returns its success value or throws its failure.
    ///
    /// `cancellation` is thrown when the operation ended without a result, or when the awaiting
    /// task was cancelled first (for ``OperationWaiter/TaskCancellation/cancelOperation``, the
    /// operation's own cancellation failure is preferred when it has one).
    func awaitValue(
        onTaskCancellation: OperationWaiter.TaskCancellation,
        cancellation: Failure
    ) async throws(Failure) -> Success {
        let finished = await OperationWaiter.waitForFinish(of: self, onTaskCancellation: onTaskCancellation)
        switch result {
        case .success(let value) where finished:
            return value
        case .failure(let error) where finished || onTaskCancellation == .cancelOperation:
            throw error
        default:
            throw cancellation
        }
    }
}

extension AsyncResultOperation where Success: Sendable, Failure: CancellationRepresentable {
    /// The operation's success value, once it has finished; throws its typed failure.
    ///
    /// ```swift
    /// let url = try await unfurl.value   // throws(UnfurlError)
    /// ```
    ///
    /// Works whether the operation is queued, started by hand, already finished, or not queued
    /// yet. Never blocks a thread; raises the operation's quality of service to the awaiting
    /// task's priority.
    ///
    /// - Throws: The operation's failure; `Failure.cancellation` when it ended cancelled.
    ///
    /// ## Cancellation
    /// Cancelling the awaiting task stops the wait at once and throws `Failure.cancellation`;
    /// the operation is not cancelled (other tasks may be waiting for it). To tie the operation
    /// to the task, use ``Foundation/OperationQueue/run(_:)-(AsyncResultOperation<Success,Failure>)``.
    public var value: Success {
        get async throws(Failure) {
            try await awaitValue(onTaskCancellation: .stopWaiting, cancellation: .cancellation)
        }
    }
}

extension AsyncResultOperation where Success: Sendable, Failure == any Error {
    /// The operation's success value, once it has finished; throws its failure.
    ///
    /// Works whether the operation is queued, started by hand, already finished, or not queued
    /// yet. Never blocks a thread; raises the operation's quality of service to the awaiting
    /// task's priority.
    ///
    /// - Throws: The operation's failure; `CancellationError` when it ended cancelled without
    ///   a result.
    ///
    /// ## Cancellation
    /// Cancelling the awaiting task stops the wait at once and throws `CancellationError`; the
    /// operation is not cancelled (other tasks may be waiting for it).
    public var value: Success {
        get async throws {
            try await awaitValue(onTaskCancellation: .stopWaiting, cancellation: CancellationError())
        }
    }
}
