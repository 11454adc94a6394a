import Foundation

/// Where the package calls an observer's closure: an `OperationQueue`, a `DispatchQueue` or an
/// actor.
///
/// ```swift
/// download.bridge.whenFinished(on: .queue(.main)) { result in … }           // OperationQueue.main
/// download.bridge.whenFinished(on: .dispatchQueue(logQueue)) { result in … }
/// download.bridge.whenFinished(on: .actor(store)) { result in … }           // runs isolated to `store`
/// ```
///
/// One observer's calls never overlap and arrive in the order of the events, whatever the target
/// (even a concurrent queue). To run a closure isolated to the main actor, use the variants
/// without `on:` (`bridge.whenFinished(_:)`).
///
/// ## Cancellation and threading
/// A value: safe to share. A suspended `OperationQueue` delays the calls until it resumes.
public struct DeliveryTarget: Sendable {
    private enum Kind {
        case operationQueue(OperationQueue)
        case dispatchQueue(DispatchQueue)
        case actor(any Actor)
    }

    private let kind: Kind

    /// Calls added to `queue` as operations (at its quality of service and within its width).
    public static func queue(_ queue: OperationQueue) -> DeliveryTarget {
        DeliveryTarget(kind: .operationQueue(queue))
    }

    /// Calls submitted to `queue` with `async`.
    public static func dispatchQueue(_ queue: DispatchQueue) -> DeliveryTarget {
        DeliveryTarget(kind: .dispatchQueue(queue))
    }

    /// Calls made on `actor`'s executor, from a task.
    public static func actor(_ actor: any Actor) -> DeliveryTarget {
        DeliveryTarget(kind: .actor(actor))
    }

    /// Runs `body` on the target. Safe to call holding a lock: nothing runs inline.
    func run(_ body: @escaping @Sendable () -> Void) {
        switch kind {
        case .operationQueue(let queue):
            // Through Dispatch: the caller may hold an operation's lock, which Linux's queue
            // takes under its own while it asks whether operations are ready.
            DispatchQueue.global().async { queue.addOperation(body) }
        case .dispatchQueue(let queue):
            queue.async(execute: body)
        case .actor(let actor):
            Task { await Self.run(body, isolatedTo: actor) }
        }
    }

    private static func run(_ body: @Sendable () -> Void, isolatedTo actor: isolated any Actor) {
        body()
    }
}
