import Foundation

/// What the mirror of one of the package's values or errors shows for an operation it holds:
/// the operation's type and name, never the operation's stored properties.
///
/// Reflecting an `Operation` reads Foundation's internals without their locks. Through an
/// operation's queue, or a group's children queue that the package shares, those reach lists of
/// other operations that threads change, and free, meanwhile. Swift Testing reflects the error
/// every `#expect(throws:)` catches, even when the expectation holds, and the values of every
/// failed expectation; so does `dump(_:)`. Before these mirrors, that crashed the test process
/// (Design.md, "Reflection"). Called on any thread; reads only the operation's `name`.
func mirroredOperation(_ operation: Operation) -> String {
    let name = operation.name.map { " (\($0))" } ?? ""
    return "\(type(of: operation))\(name)"
}
