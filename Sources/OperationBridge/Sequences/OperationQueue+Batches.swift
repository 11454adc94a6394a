import Foundation

extension OperationQueue {
    /// The results of `operations`, as an `AsyncSequence` that starts them on this queue.
    ///
    /// Operations that depend on each other are fine: each is added to the queue once its
    /// dependencies inside the array have finished (linear on Linux, see ``Pipeline``); a
    /// failed operation stops the operations that depend on it (they do not run and report the
    /// failure, see ``PipelineFailurePolicy/cancelDependents``). Dependencies on operations
    /// outside the array are honoured by the queue as usual.
    ///
    /// ```swift
    /// for await finished in try queue.results(of: downloads) {          // completion order
    ///     log(finished.index, finished.result as Any)
    /// }
    /// let all = try await queue.results(of: downloads, order: .submission).collect()
    /// let ok = try await queue.results(of: downloads).allSucceeded()
    /// ```
    ///
    /// An operation already pending in this queue is awaited, never added again; one pending in
    /// *another* queue must not be given (Foundation traps when an operation is added to a
    /// second queue); operations already started or finished are only observed.
    /// To observe operations queued elsewhere, use ``OperationResults/init(observing:order:)``.
    ///
    /// - Throws: ``PipelineError/dependencyCycle(operations:)`` when their dependencies form a
    ///   cycle; nothing is started then.
    /// - Returns: A sequence to iterate once; see ``OperationResults`` for cancellation.
    public func results<Success: Sendable, Failure: Error>(
        of operations: [AsyncResultOperation<Success, Failure>],
        order: ResultOrder = .completion
    ) throws(PipelineError) -> OperationResults<Success, Failure> {
        try OperationResults(operations, queue: self, order: order, failurePolicy: .cancelDependents)
    }

    /// The success values of `operations`, as a typed-throwing `AsyncSequence` that starts them
    /// on this queue and stops at the first failure, cancelling the rest.
    ///
    /// Scheduling as in ``results(of:order:)``.
    ///
    /// ```swift
    /// let pages = try await queue.values(of: downloads, order: .submission).collect()
    /// ```
    ///
    /// - Throws: ``PipelineError/dependencyCycle(operations:)`` when the dependencies form a
    ///   cycle. Iterating throws the operations' typed `Failure`.
    public func values<Success: Sendable, Failure: CancellationRepresentable>(
        of operations: [AsyncResultOperation<Success, Failure>],
        order: ResultOrder = .completion
    ) throws(PipelineError) -> OperationValues<Success, Failure> {
        OperationValues(
            results: try OperationResults(operations, queue: self, order: order, failurePolicy: .cancelAll),
            cancellation: .cancellation
        )
    }

    /// The success values of `operations` whose `Failure` is `any Error`; see
    /// `values(of:order:)`.
    public func values<Success: Sendable>(
        of operations: [AsyncResultOperation<Success, any Error>],
        order: ResultOrder = .completion
    ) throws(PipelineError) -> OperationValues<Success, any Error> {
        OperationValues(
            results: try OperationResults(operations, queue: self, order: order, failurePolicy: .cancelAll),
            cancellation: CancellationError()
        )
    }
}

extension OperationResults {
    /// The results of `operations` that are queued (or started) elsewhere: nothing is added to
    /// any queue; the sequence observes them finish.
    ///
    /// Leaving the loop early or cancelling the iterating task still cancels the unfinished
    /// operations.
    public init(
        observing operations: [AsyncResultOperation<Success, Failure>],
        order: ResultOrder = .completion
    ) throws(PipelineError) {
        try self.init(operations, queue: nil, order: order, failurePolicy: .cancelDependents)
    }
}
