import Foundation

/// Runs `body` while holding `keys`, waiting first until no other holder — operation or task —
/// holds any of them.
///
/// ```swift
/// try await withExclusiveAccess(to: "database") {
///     try await store.vacuum()  // never at the same time as an operation declaring "database"
/// }
/// ```
///
/// The keys are the same as those operations declare with
/// ``OperationCondition/mutuallyExclusive(_:)``: a task and an operation holding one key exclude
/// each other. All the keys are taken at once, when all are free — never some of them — and the
/// holders of a key take turns in the order they asked (FIFO). The keys are released when `body`
/// returns or throws.
///
/// Do not call it from an operation's work for a key that operation declares, or inside another
/// `withExclusiveAccess` for a key already held: a holder waiting for itself waits for ever.
///
/// ## Cancellation and threading
/// Waiting is cancellable: when the task is cancelled before the keys are granted, the call
/// leaves the line and throws `CancellationError` without running `body`. Once `body` runs,
/// cancellation is up to `body`. `body` runs on the caller's actor (`isolation`).
///
/// - Parameters:
///   - keys: The keys to hold; duplicates count once. None: `body` runs at once.
///   - isolation: The actor `body` runs on; the caller's, by default.
///   - body: The work to do while holding the keys.
/// - Returns: What `body` returns.
/// - Throws: `CancellationError` when the task was cancelled while waiting; what `body` throws.
public func withExclusiveAccess<Result>(
    to keys: ExclusivityKey...,
    isolation: isolated (any Actor)? = #isolation,
    _ body: () async throws -> sending Result
) async throws -> sending Result {
    try await withExclusiveAccess(to: keys, isolation: isolation, body)
}

/// Runs `body` while holding `keys`, given as an array; see
/// ``withExclusiveAccess(to:isolation:_:)-(ExclusivityKey...,_,_)``.
///
/// ## Cancellation and threading
/// As the variadic variant: waiting is cancellable (`CancellationError`), `body` runs on `isolation`.
public func withExclusiveAccess<Result>(
    to keys: [ExclusivityKey],
    isolation: isolated (any Actor)? = #isolation,
    _ body: () async throws -> sending Result
) async throws -> sending Result {
    let request = ExclusivityRequest(keys)
    let coordinator = ExclusivityCoordinator.shared
    if !coordinator.tryAcquire(request) {
        let slot = CompletionSlot<Bool>()
        let grantedAtOnce = coordinator.request(request) { slot.fulfill(true) }
        if grantedAtOnce { slot.fulfill(true) }
        let granted = await withTaskCancellationHandler {
            await slot.wait()
        } onCancel: {
            // Withdrawn while waiting: the slot answers `false`. Granted already: the grant is on
            // its way, `body` runs, and the keys are released below.
            if coordinator.withdraw(request, onlyIfWaiting: true) { slot.fulfill(false) }
        }
        guard granted else { throw CancellationError() }
    }
    defer { coordinator.withdraw(request) }
    return try await body()
}
