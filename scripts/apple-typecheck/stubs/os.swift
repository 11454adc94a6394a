// os stub for the Apple type-check (scripts/typecheck-apple.sh): `OSAllocatedUnfairLock`, with
// the signatures, availability, Sendable requirements and async-unavailability of the Swift
// interface of os in the iOS 17.4 SDK (macOS 13, iOS 16, tvOS 16, watchOS 9; visionOS from
// iOS). Bodies are placeholders: the module is only type-checked against.
import Darwin

@available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *)
@frozen public struct OSAllocatedUnfairLock<State>: @unchecked Sendable {
    @usableFromInline let storage: AnyObject?

    public init(uncheckedState initialState: State) { storage = nil }

    public func withLockUnchecked<R>(_ body: (inout State) throws -> R) rethrows -> R { fatalError() }
    public func withLock<R>(_ body: @Sendable (inout State) throws -> R) rethrows -> R where R: Sendable {
        fatalError()
    }
    public func withLockIfAvailableUnchecked<R>(_ body: (inout State) throws -> R) rethrows -> R? { fatalError() }
    public func withLockIfAvailable<R>(_ body: @Sendable (inout State) throws -> R) rethrows -> R?
    where R: Sendable { fatalError() }

    @frozen public enum Ownership: Hashable, Sendable {
        case owner
        case notOwner
    }
    public func precondition(_ condition: Ownership) {}
}

@available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *)
extension OSAllocatedUnfairLock where State == () {
    public init() { self.init(uncheckedState: ()) }
    public func withLockUnchecked<R>(_ body: () throws -> R) rethrows -> R { fatalError() }
    public func withLock<R>(_ body: @Sendable () throws -> R) rethrows -> R where R: Sendable { fatalError() }
    public func withLockIfAvailableUnchecked<R>(_ body: () throws -> R) rethrows -> R? { fatalError() }
    public func withLockIfAvailable<R>(_ body: @Sendable () throws -> R) rethrows -> R? where R: Sendable {
        fatalError()
    }
    @_unavailableFromAsync(message: "Use withLock for scoped locking")
    public func lock() {}
    @_unavailableFromAsync(message: "Use withLock for scoped locking")
    public func unlock() {}
    @_unavailableFromAsync(message: "Use withLockIfAvailable for scoped locking")
    public func lockIfAvailable() -> Bool { fatalError() }
}

@available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *)
extension OSAllocatedUnfairLock where State: Sendable {
    public init(initialState: State) { self.init(uncheckedState: initialState) }
}
