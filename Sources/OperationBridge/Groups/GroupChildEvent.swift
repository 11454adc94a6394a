import Foundation

/// A lifecycle event of one of a ``GroupOperation``'s children (see
/// ``GroupOperation/childEvents``).
///
/// ## Cancellation and threading
/// A value: safe to share. `operation` is the child itself, whose members are thread-safe when it
/// is one of the package's operations.
public struct GroupChildEvent: Sendable {
    /// The child's position in ``GroupOperation/children``.
    public let index: Int
    /// The child.
    public let operation: Operation
    /// What happened to it.
    public let event: OperationEvent
}

extension GroupChildEvent: CustomReflectable {
    /// A mirror showing the operation by its type and name, without reflecting it: Swift Testing
    /// reflects the values of a failed expectation, and an operation's own stored properties reach
    /// queues that other threads change meanwhile (Design.md, "Reflection"). Safe from any thread:
    /// it reads the operation's name.
    public var customMirror: Mirror {
        Mirror(
            self, children: ["index": index, "operation": mirroredOperation(operation), "event": event],
            displayStyle: .struct)
    }
}
