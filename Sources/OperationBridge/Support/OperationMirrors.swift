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

/// The mirror of the package's final operation classes (``TaskOperation``,
/// ``ChainedTaskOperation``, ``GroupOperation``, ``RetryingOperation``, ``RepeatingOperation``):
/// the operation's public state, each property read under its lock, then `extra`; never its
/// stored properties, which reach its queue and, through Foundation's, other operations
/// (Design.md, "Reflection"). Called on any thread.
func operationMirror<Success, Failure>(
    of operation: AsyncResultOperation<Success, Failure>,
    _ extra: KeyValuePairs<String, Any> = [:]
) -> Mirror {
    let state: [(label: String?, value: Any)] = [
        ("name", operation.name as Any),
        ("isExecuting", operation.isExecuting),
        ("isFinished", operation.isFinished),
        ("isCancelled", operation.isCancelled),
        ("result", operation.result as Any),
    ]
    // Suppressed: a generated ancestor mirror would reflect the superclasses' stored properties.
    return Mirror(
        operation, children: state + extra.map { (label: $0.key, value: $0.value) }, displayStyle: .class,
        ancestorRepresentation: .suppressed)
}
