import Foundation

/// Result operations, whose failure the scheduler reads without knowing their types.
protocol FailureReporting: AnyObject {
    /// The failure of the result, if it is one.
    var reportedFailure: (any Error)? { get }
}

extension AsyncResultOperation: FailureReporting {
    var reportedFailure: (any Error)? {
        // Stopped by a failed condition that `Failure` does not say itself (no result, or the
        // cancellation stand-in): the condition's error.
        if let condition = conditionFailureWithoutOwnResult { return condition }
        guard case .failure(let error) = result else { return nil }
        return error
    }
}

/// Steps that, when an upstream they take input from failed, report it in their own result
/// instead of needing to be cancelled.
protocol UpstreamFailureHandling: AnyObject {
    /// Whether this step, not started yet, will report the failure of `upstream` (a finished,
    /// failed dependency) in its own result, because its input would come from it.
    func reportsFailure(of upstream: Operation) -> Bool
}

extension ChainedAsyncResultOperation: UpstreamFailureHandling {
    /// `true` when the step has no input of its own and `upstream` is a result operation that
    /// would provide its `Input` but failed — the one named by
    /// ``ChainedAsyncResultOperation/takeInput(from:)`` when there is one. The step then applies
    /// its own ``ChainedAsyncResultOperation/upstreamFailurePolicy``: it reports the failure, or
    /// runs without an input. A step with a fixed input, or whose failed dependency provides no
    /// `Input` (a `BlockOperation`, an operation of another type), would run regardless: the
    /// scheduler stops it instead.
    func reportsFailure(of upstream: Operation) -> Bool {
        // With a typed upstream, only that operation provides the input.
        if let typed = typedInputUpstream, typed !== upstream { return false }
        guard input == nil,
            let provider = upstream as? any ChainedInputProviding,
            case .unavailable = provider.chainedInput(as: Input.self)
        else { return false }
        return true
    }
}

extension Operation {
    /// How the finished, failed operation failed: its failure, when it is a result operation that
    /// was not cancelled; the ``ConditionFailedError`` of a failed condition that its result does
    /// not say itself; otherwise a cancellation.
    var failureReason: UpstreamFailedError.Reason {
        if let operation = self as? any FailureReporting, let error = operation.reportedFailure, !isCancelled {
            return .failed(error)
        }
        // An operation that is not a result operation, stopped by a failed condition.
        if let failure = (self as? AsyncOperation)?.bridge.conditionFailure { return .failed(failure) }
        return .cancelled
    }

    /// Whether the finished operation counts as failed for scheduling purposes.
    var stepFailed: Bool {
        if let operation = self as? AsyncOperation { return operation.finishedUnsuccessfully }
        return isCancelled
    }

    /// Whether the failure of `upstream`, a finished dependency, is reported by this operation
    /// itself rather than by being stopped (see ``PipelineFailurePolicy/cancelDependents``).
    func reportsFailure(ofUpstream upstream: Operation) -> Bool {
        (self as? any UpstreamFailureHandling)?.reportsFailure(of: upstream) ?? false
    }
}
