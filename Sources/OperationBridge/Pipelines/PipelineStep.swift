import Foundation

/// How the scheduler learns whether a finished step failed.
protocol PipelineStepReporting: AnyObject {
    /// Whether the finished step failed: a failure result, or cancelled without a result.
    var resultFailed: Bool { get }
}

/// Steps that, when an upstream they take input from failed, report it in their own result
/// instead of needing to be cancelled.
protocol UpstreamFailureHandling: AnyObject {
    var reportsFailedUpstream: Bool { get }
}

extension AsyncResultOperation: PipelineStepReporting {
    var resultFailed: Bool {
        switch result {
        case .success: false
        case .failure: true
        case nil: isCancelled
        }
    }
}

extension ChainedAsyncResultOperation: UpstreamFailureHandling {
    var reportsFailedUpstream: Bool { upstreamFailurePolicy == .fail }
}

extension Operation {
    /// Whether the finished operation counts as failed for scheduling purposes.
    var stepFailed: Bool {
        if let step = self as? any PipelineStepReporting { return step.resultFailed }
        return isCancelled
    }

    /// Whether a failed upstream is reported by this operation itself (see
    /// ``PipelineFailurePolicy/cancelDependents``).
    var handlesFailedUpstream: Bool {
        (self as? any UpstreamFailureHandling)?.reportsFailedUpstream ?? false
    }
}
