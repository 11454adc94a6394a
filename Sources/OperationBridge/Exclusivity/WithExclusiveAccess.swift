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
/// ## Re-entry
/// The holder's own code enters a key it holds at once, instead of waiting for itself: a
/// `withExclusiveAccess` inside another for the same key, or inside the work of an operation that
/// declares it (its `main()`, a ``TaskOperation``'s body) — including child tasks and `Task { }`
/// made there, which inherit the holder's task-local grants. Only the keys not held yet are asked
/// for (a nested call for a held key and a new one waits for the new one while holding the
/// other: take related keys in one call). Work that outlives its holder's scope — a `Task { }`
/// still running after `body` returned, or after the operation finished — keeps the keys held
/// until it ends; once the holder and every re-entry have let go, they are released. A detached
/// task, or work handed to a queue, is not the holder's: it waits like anyone else (and an
/// operation that waits for such work while holding the key never finishes — the stuck-await
/// report names the key and its holder).
///
/// With `OPERATIONBRIDGE_STUCK_AWAIT_SECONDS` set, a wait that lasts longer writes to standard
/// error which key it waits for, who holds it and since when, and how many wait ahead.
///
/// ## Cancellation and threading
/// Waiting is cancellable: when the task is cancelled before the keys are granted, the call
/// leaves the line and throws `CancellationError` without running `body`. Once `body` runs,
/// cancellation is up to `body`. `body` runs on the caller's actor (`isolation`).
///
/// - Parameters:
///   - keys: The keys to hold; duplicates count once. None: `body` runs at once.
///   - isolation: The actor `body` runs on; the caller's, by default.
///   - fileID: Where the call is, for the stuck-await report; leave the default.
///   - line: The line of the call, for the stuck-await report; leave the default.
///   - body: The work to do while holding the keys.
/// - Returns: What `body` returns.
/// - Throws: `CancellationError` when the task was cancelled while waiting; what `body` throws.
public func withExclusiveAccess<Result>(
    to keys: ExclusivityKey...,
    isolation: isolated (any Actor)? = #isolation,
    fileID: String = #fileID,
    line: Int = #line,
    _ body: () async throws -> sending Result
) async throws -> sending Result {
    try await withExclusiveAccess(to: keys, isolation: isolation, fileID: fileID, line: line, body)
}

/// Runs `body` while holding `keys`, given as an array; see
/// ``withExclusiveAccess(to:isolation:fileID:line:_:)-(ExclusivityKey...,_,_,_,_)``.
///
/// ## Cancellation and threading
/// As the variadic variant: waiting is cancellable (`CancellationError`), `body` runs on `isolation`.
public func withExclusiveAccess<Result>(
    to keys: [ExclusivityKey],
    isolation: isolated (any Actor)? = #isolation,
    fileID: String = #fileID,
    line: Int = #line,
    _ body: () async throws -> sending Result
) async throws -> sending Result {
    // Keys the current task's code holds already are entered again, not waited for.
    let (entered, missing) = ExclusivityHolds.reenter(keys)
    defer { ExclusivityHolds.leave(entered) }
    guard !missing.isEmpty else { return try await body() }
    let request = ExclusivityRequest(missing, holder: .task(fileID: fileID, line: line))
    let coordinator = ExclusivityCoordinator.shared
    if !coordinator.tryAcquire(request) {
        let slot = CompletionSlot<Bool>()
        let grantedAtOnce = coordinator.request(request) { slot.fulfill(true) }
        if grantedAtOnce { slot.fulfill(true) }
        let watchdog = StuckAwaitWatchdog.watch(request)
        let granted = await withTaskCancellationHandler {
            await slot.wait()
        } onCancel: {
            // Withdrawn while waiting: the slot answers `false`. Granted already: the grant is on
            // its way, `body` runs, and the keys are released below.
            if coordinator.withdraw(request, onlyIfWaiting: true) { slot.fulfill(false) }
        }
        watchdog?.cancel()
        guard granted else { throw CancellationError() }
    }
    defer { coordinator.withdraw(request) }
    let grant = HeldGrant(request, outer: ExclusivityHolds.held)
    // Boxed: `withValue` hands back its operation's value without `sending`.
    return try await ExclusivityHolds.$held.withValue(grant) {
        try await SendingBox(body())
    }.take()
}

/// Carries a value out of a closure that cannot return it as `sending`.
///
/// Safety: the value is in a region of its own (the body returned it as `sending`), and it is
/// taken out exactly once, by the caller that made the box.
private final class SendingBox<Value>: @unchecked Sendable {
    private var value: Value?

    init(_ value: sending Value) {
        self.value = value
    }

    func take() -> sending Value {
        guard let value = value.take() else {
            preconditionFailure("Internal inconsistency: a value was taken twice")
        }
        return value
    }
}
