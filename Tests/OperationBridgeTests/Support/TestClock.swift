import Foundation
import OperationBridge
import Testing

/// A clock that moves only when a test advances it: deadline tests wait for events, never for
/// wall-clock time.
///
/// Sleepers are resumed when ``advance(by:)`` reaches their deadline, or with
/// `CancellationError` as soon as their task is cancelled. ``sleepers(atLeast:)`` lets a test
/// wait until a timer is armed, and ``pendingSleepers`` shows that none is left behind.
final class TestClock: Clock, @unchecked Sendable {
    struct Instant: InstantProtocol {
        var offset: Duration
        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct Sleeper {
        let deadline: Instant
        let continuation: CheckedContinuation<Void, any Error>
    }

    // Safety: everything below is guarded by `lock`.
    private let lock = NSLock()
    private var current = Instant(offset: .zero)
    private var sleepers: [Int: Sleeper] = [:]
    private var nextID = 0
    private var countWaiters: [(id: Int, count: Int, continuation: CheckedContinuation<Void, Never>)] = []

    var now: Instant { lock.withLock { current } }
    var minimumResolution: Duration { .zero }

    /// The sleepers waiting now.
    var pendingSleepers: Int { lock.withLock { sleepers.count } }

    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        let id = lock.withLock {
            nextID += 1
            return nextID
        }
        try await withTaskCancellationHandler {
            try await resumeOrderedThrowing { (continuation: CheckedContinuation<Void, any Error>) in
                lock.lock()
                if Task.isCancelled {
                    lock.unlock()
                    continuation.resume(throwing: CancellationError())
                    return
                }
                if deadline <= current {
                    lock.unlock()
                    continuation.resume()
                    return
                }
                sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                let ready = countWaiters.filter { sleepers.count >= $0.count }
                countWaiters.removeAll { sleepers.count >= $0.count }
                lock.unlock()
                for waiter in ready { waiter.continuation.resume() }
            }
        } onCancel: {
            let sleeper = lock.withLock { sleepers.removeValue(forKey: id) }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves the clock forward and wakes every sleeper whose deadline has come.
    func advance(by duration: Duration) {
        lock.lock()
        current = current.advanced(by: duration)
        let due = sleepers.filter { $0.value.deadline <= current }
        for id in due.keys { sleepers.removeValue(forKey: id) }
        lock.unlock()
        for sleeper in due.values { sleeper.continuation.resume() }
    }

    /// Moves the clock to the earliest pending deadline, waking that sleeper (and any other due
    /// then), and returns how far it moved; `nil` when nobody sleeps.
    @discardableResult
    func advanceToNextDeadline() -> Duration? {
        let step = lock.withLock { sleepers.values.map(\.deadline).min().map { current.duration(to: $0) } }
        guard let step else { return nil }
        advance(by: step)
        return step
    }

    /// Returns once at least `count` sleepers are waiting, or once the calling task is cancelled
    /// (a test's time limit): a regression then fails the test instead of hanging it.
    func sleepers(atLeast count: Int) async {
        let id = lock.withLock {
            nextID += 1
            return nextID
        }
        await withTaskCancellationHandler {
            await resumeOrdered { (continuation: CheckedContinuation<Void, Never>) in
                lock.lock()
                if sleepers.count >= count || Task.isCancelled {
                    lock.unlock()
                    continuation.resume()
                } else {
                    countWaiters.append((id, count, continuation))
                    lock.unlock()
                }
            }
        } onCancel: {
            let waiter = lock.withLock { () -> CheckedContinuation<Void, Never>? in
                guard let index = countWaiters.firstIndex(where: { $0.id == id }) else { return nil }
                return countWaiters.remove(at: index).continuation
            }
            waiter?.resume()
        }
    }
}

/// Gives `operation` a running-time limit on `clock`, adds it to `queue`, and returns once it has
/// started (`started` opened) and its limit is counting.
func startWithTimeLimit(
    _ operation: AsyncOperation,
    _ limit: Duration,
    clock: TestClock,
    on queue: OperationQueue,
    started: Gate
) async {
    operation.bridge.limitRunningTime(to: limit, clock: clock)
    queue.addOperation(operation)
    await started.wait()
    await clock.sleepers(atLeast: 1)
}

/// Expects `body` to throw ``OperationFailure/timedOut``.
func expectTimedOut<Success, Failure>(
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws(OperationFailure<Failure>) -> Success
) async {
    do {
        _ = try await body()
        Issue.record("expected a timeout", sourceLocation: sourceLocation)
    } catch {
        if case .timedOut = error { return }
        Issue.record("expected a timeout, got \(error)", sourceLocation: sourceLocation)
    }
}
