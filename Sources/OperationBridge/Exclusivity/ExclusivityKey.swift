import Foundation

/// Names a resource that at most one holder uses at a time: operations and async code that
/// declare the same key never run their work at the same time.
///
/// ```swift
/// let database: ExclusivityKey = "database"
/// migration.bridge.addCondition(.mutuallyExclusive(database))  // an operation
/// try await withExclusiveAccess(to: database) {        // a Task
///     try await store.vacuum()
/// }
/// ```
///
/// Keys are compared by name. The holders of one key take turns in the order they asked
/// (FIFO), whether they are operations (see ``OperationCondition/mutuallyExclusive(_:)``) or
/// tasks (see ``withExclusiveAccess(to:isolation:fileID:line:_:)-(ExclusivityKey...,_,_,_,_)``).
///
/// ## Cancellation and threading
/// A value: safe to use from any thread. Waiting for a key is cancellable: see the APIs that take one.
public struct ExclusivityKey: Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The key's name: keys with the same name are the same key.
    public let name: String

    /// A key named `name`.
    public init(_ name: String) {
        self.name = name
    }

    /// A key named by a string literal: `let key: ExclusivityKey = "database"`.
    public init(stringLiteral name: String) {
        self.init(name)
    }

    /// The key's name.
    public var description: String { name }
}
