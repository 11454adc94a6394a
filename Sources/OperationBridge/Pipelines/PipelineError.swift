import Foundation

/// Why a set of operations could not be scheduled.
public enum PipelineError: Error, CustomStringConvertible {
    /// The operations' dependencies form a cycle; nothing was started. `operations` are the
    /// operations on or behind the cycle (none of them could ever become ready).
    ///
    /// To go on, make the operations again without the cycle. On Linux, Foundation's
    /// `removeDependency(_:)` of a dependency that has not finished leaves the operation never
    /// ready: breaking the cycle that way and running the operations waits for good.
    case dependencyCycle(operations: [Operation])

    /// A sentence naming the operations involved.
    public var description: String {
        switch self {
        case .dependencyCycle(let operations):
            let names = operations.prefix(8).map { $0.name ?? String(describing: type(of: $0)) }
            let more = operations.count > 8 ? ", … (\(operations.count) in all)" : ""
            return "The dependencies form a cycle through: \(names.joined(separator: ", "))\(more)"
        }
    }
}

/// What a ``Pipeline`` does when one of its steps fails (ends with a failure result, or is
/// cancelled).
public enum PipelineFailurePolicy: Sendable {
    /// Stop the package's steps that depend on the failed one (transitively); the other steps go
    /// on. A stopped step does not run: it reports the failure where it started
    /// (``Bridge/upstreamFailure``, and its result where its `Failure` can say so) and is
    /// not cancelled. A ``ChainedAsyncResultOperation`` whose input comes from the failed step
    /// applies its own ``ChainedAsyncResultOperation/upstreamFailurePolicy``. The default.
    ///
    /// Operations that are not the package's (a `BlockOperation`, an `Operation` subclass of
    /// your own) keep Foundation's semantics: they run once their dependencies have finished,
    /// whatever the outcome, and their own code decides — the "all downloads finished" aggregate
    /// runs and sees the failed download. The failure still passes through them: the package's
    /// steps behind them are stopped with the same root cause.
    case cancelDependents
    /// Stop the dependents as above, and cancel every other step that has not finished —
    /// operations that are not the package's included, whether they depend on the failed step
    /// or not.
    case cancelAll
}

extension PipelineError: CustomReflectable {
    /// A mirror naming the operations by their type and name, without reflecting them: Swift
    /// Testing reflects every error `#expect(throws:)` catches, and an operation's own stored
    /// properties reach queues that other threads change meanwhile (Design.md, "Reflection"). Safe
    /// from any thread: it reads the operations' names.
    public var customMirror: Mirror {
        switch self {
        case .dependencyCycle(let operations):
            Mirror(self, children: ["dependencyCycle": operations.map(mirroredOperation)], displayStyle: .enum)
        }
    }
}
