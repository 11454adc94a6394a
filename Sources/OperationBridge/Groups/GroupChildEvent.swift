import Foundation

/// A lifecycle event of one of a ``GroupOperation``'s children (see
/// ``GroupOperation/childEvents``).
public struct GroupChildEvent: Sendable {
    /// The child's position in ``GroupOperation/children``.
    public let index: Int
    /// The child.
    public let operation: Operation
    /// What happened to it.
    public let event: OperationEvent
}
