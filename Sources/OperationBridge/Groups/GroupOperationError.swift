import Foundation

/// Why ``GroupOperation/addChild(_:)`` or ``GroupOperation/addChildren(_:)`` added nothing.
///
/// ## Cancellation and threading
/// A value: safe to share.
public enum GroupOperationError: Error, CustomStringConvertible {
    /// The group has finished, or every child had finished and the group is finishing: it takes
    /// no more children. The operations were left as they were (not queued, not cancelled).
    case finished
    /// The operations' dependencies form a cycle — among themselves, through the group's
    /// children or other unfinished operations — or an operation is the group itself. Nothing
    /// was added. `operations` are the operations on or behind the cycle. To break it, see
    /// ``PipelineError/dependencyCycle(operations:)``.
    case dependencyCycle(operations: [Operation])

    /// A sentence saying what happened.
    public var description: String {
        switch self {
        case .finished:
            return "The group has finished (or all its children have and it is finishing): it takes no more children"
        case .dependencyCycle(let operations):
            return PipelineError.dependencyCycle(operations: operations).description
        }
    }
}

extension GroupOperationError: CustomReflectable {
    /// A mirror naming the operations by their type and name, without reflecting them: Swift
    /// Testing reflects every error `#expect(throws:)` catches, and an operation's own stored
    /// properties reach queues that other threads change meanwhile (Design.md, "Reflection"). Safe
    /// from any thread: it reads the operations' names.
    public var customMirror: Mirror {
        switch self {
        case .finished:
            Mirror(self, children: [:], displayStyle: .enum)
        case .dependencyCycle(let operations):
            Mirror(self, children: ["dependencyCycle": operations.map(mirroredOperation)], displayStyle: .enum)
        }
    }
}
