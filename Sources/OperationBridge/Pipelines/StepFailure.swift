import Foundation

/// The first failure of a ``Pipeline`` or of a results sequence: which step failed on its own,
/// and how.
///
/// Steps that did not run because of it report it as their ``Bridge/upstreamFailure``
/// (and in their result where their `Failure` can say so); this value names the step where it
/// started, whatever the error types along the way can express.
///
/// ```swift
/// try await pipeline.waitForCompletion()
/// if let failure = pipeline.firstFailure {
///     log("step \(failure.index) (\(failure.operation)) failed: \(failure.reason)")
/// }
/// ```
public struct StepFailure: Sendable, CustomStringConvertible {
    /// The step's position: in ``Pipeline/operations`` for a pipeline, in the array the sequence
    /// was created from for a results sequence (its first position, if it was listed twice).
    public let index: Int
    /// The step.
    public let operation: Operation
    /// How it failed: ``UpstreamFailedError/Reason/failed(_:)`` with its failure, or
    /// ``UpstreamFailedError/Reason/cancelled`` when it was cancelled.
    public let reason: UpstreamFailedError.Reason

    /// The step's failure, or `nil` when it was cancelled.
    public var error: (any Error)? {
        guard case .failed(let error) = reason else { return nil }
        return error
    }

    /// A sentence naming the step and what happened to it.
    public var description: String {
        let name = operation.name.map { " '\($0)'" } ?? ""
        let what: String
        switch reason {
        case .failed(let error): what = "failed: \(error)"
        case .cancelled: what = "was cancelled"
        case .noInput: what = "had no input"
        }
        return "Step \(index) (\(type(of: operation))\(name)) \(what)"
    }
}

extension StepFailure: CustomReflectable {
    /// A mirror showing the operation by its type and name, without reflecting it: Swift Testing
    /// reflects the values of a failed expectation, and an operation's own stored properties reach
    /// queues that other threads change meanwhile (Design.md, "Reflection"). Safe from any thread:
    /// it reads the operation's name.
    public var customMirror: Mirror {
        Mirror(
            self, children: ["index": index, "operation": mirroredOperation(operation), "reason": reason],
            displayStyle: .struct)
    }
}
