import Foundation

extension Pipeline {
    /// The progress of the pipeline's steps together, each weighing one: an aggregate
    /// ``OperationProgress``, the same object every time.
    ///
    /// ```swift
    /// let pipeline = try Pipeline([download, decode, thumbnail], on: queue)
    /// pipeline.start()
    /// for await snapshot in pipeline.operationProgress.updates() {
    ///     print(snapshot.localizedDescription)
    /// }
    /// ```
    ///
    /// Each step counts with its own progress (a step that reports nothing: one unit, completed
    /// when it finishes). It has finished once every step has; a cancelled step, or one that did
    /// not run because a dependency failed, keeps it below 1 (a step that ran and failed counts
    /// as complete). For other weights, make your own:
    /// `OperationProgress(aggregating: pipeline.operations) { … }`.
    ///
    /// ## Cancellation and threading
    /// Thread-safe; reading it starts nothing. Cancelling its
    /// ``OperationProgress/foundationProgress`` cancels the steps.
    public var operationProgress: OperationProgress { run.operationProgress }
}

extension OperationResults {
    /// The progress of the sequence's operations together, each weighing one: an aggregate
    /// ``OperationProgress``, the same object every time; see ``Pipeline/operationProgress``.
    ///
    /// ## Cancellation and threading
    /// Thread-safe; reading it starts nothing (iterating the sequence does). Cancelling its
    /// ``OperationProgress/foundationProgress`` cancels the operations.
    public var operationProgress: OperationProgress { run.operationProgress }
}

extension OperationValues {
    /// The progress of the sequence's operations together, each weighing one; see
    /// ``OperationResults/operationProgress``.
    ///
    /// ## Cancellation and threading
    /// Thread-safe; reading it starts nothing (iterating the sequence does). Cancelling its
    /// ``OperationProgress/foundationProgress`` cancels the operations.
    public var operationProgress: OperationProgress { results.operationProgress }
}
