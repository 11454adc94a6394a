import Foundation

/// Steps that, when an upstream they take input from failed, report it in their own result
/// instead of needing to be cancelled.
protocol UpstreamFailureHandling: AnyObject {
    /// Whether this step, not started yet, will report the failure of `upstream` (a finished,
    /// failed dependency) in its own result, because its input would come from it.
    func reportsFailure(of upstream: Operation) -> Bool
}

extension ChainedAsyncResultOperation: UpstreamFailureHandling {
    /// `true` when the step has no input of its own, applies ``UpstreamFailurePolicy/fail``, and
    /// `upstream` is a result operation that would provide its `Input` but failed — the one named
    /// by ``ChainedAsyncResultOperation/takeInput(from:)`` when there is one. A step with a
    /// fixed input, or whose failed dependency provides no `Input` (a `BlockOperation`, an
    /// operation of another type), would run regardless: it must be cancelled instead.
    func reportsFailure(of upstream: Operation) -> Bool {
        // With a typed upstream, only that operation provides the input.
        if let typed = typedInputUpstream, typed !== upstream { return false }
        guard upstreamFailurePolicy == .fail, input == nil,
            let provider = upstream as? any ChainedInputProviding,
            case .unavailable = provider.chainedInput(as: Input.self)
        else { return false }
        return true
    }
}

extension Operation {
    /// Whether the finished operation counts as failed for scheduling purposes.
    var stepFailed: Bool {
        if let operation = self as? AsyncOperation { return operation.finishedUnsuccessfully }
        return isCancelled
    }

    /// Whether the failure of `upstream`, a finished dependency, is reported by this operation
    /// itself rather than by cancelling it (see ``PipelineFailurePolicy/cancelDependents``).
    func reportsFailure(ofUpstream upstream: Operation) -> Bool {
        (self as? any UpstreamFailureHandling)?.reportsFailure(of: upstream) ?? false
    }
}
