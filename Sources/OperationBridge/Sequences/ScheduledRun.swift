import Foundation

/// One run of a set of operations through the ``GraphScheduler``, with its finished positions
/// handed to a single consumer. Shared by ``OperationResults`` and ``Pipeline``.
///
/// Safety: `started` and `consumerAttached` are guarded by `lock`; the scheduler and the
/// hand-off are thread-safe.
final class ScheduledRun: @unchecked Sendable {
    let scheduler: GraphScheduler
    let positions: FinishedPositions
    /// For each node, the first position of its operation in the array the run was made from.
    private let firstPosition: [Int]
    private let lock = NSLock()
    private var started = false
    private var consumerAttached = false

    init(scheduler: GraphScheduler, order: ResultOrder) {
        self.scheduler = scheduler
        self.positions = FinishedPositions(count: scheduler.nodeOfPosition.count, order: order)
        var firstPosition = Array(repeating: -1, count: scheduler.operations.count)
        for (position, node) in scheduler.nodeOfPosition.enumerated() where firstPosition[node] < 0 {
            firstPosition[node] = position
        }
        self.firstPosition = firstPosition
    }

    /// The first step that failed on its own, by its first position.
    var firstFailure: StepFailure? {
        scheduler.firstFailure.map { node, reason in
            StepFailure(index: firstPosition[node], operation: scheduler.operations[node], reason: reason)
        }
    }

    /// The failure result of the first step that failed on its own, when that step is a result
    /// operation with this `Failure`: what a typed sequence reports when an operation only tells
    /// of an upstream failure, or was cancelled because of it.
    func firstFailure<Success, Failure>(of _: AsyncResultOperation<Success, Failure>.Type) -> Failure? {
        guard let operation = firstFailure?.operation as? AsyncResultOperation<Success, Failure>,
            case .failure(let error)? = operation.result
        else { return nil }
        return error
    }

    /// Starts scheduling. The first call wins; later calls do nothing and return `false`.
    @discardableResult
    func start() -> Bool {
        let first = lock.withCriticalSection {
            defer { started = true }
            return !started
        }
        guard first else { return false }
        // The later positions of operations listed twice.
        var laterPositions: [Int: [Int]] = [:]
        for (position, node) in scheduler.nodeOfPosition.enumerated() where firstPosition[node] != position {
            laterPositions[node, default: []].append(position)
        }
        let positions = self.positions
        scheduler.start { [firstPosition, laterPositions] node in
            positions.finish(firstPosition[node], and: laterPositions[node] ?? [])
        }
        return true
    }

    /// Claims the single consumer slot. Returns `false` when a consumer was attached already.
    func attachConsumer() -> Bool {
        lock.withCriticalSection {
            defer { consumerAttached = true }
            return !consumerAttached
        }
    }

    /// Cancels every unfinished operation and ends the consumer's iteration.
    func cancel() {
        scheduler.cancelAll()
        positions.terminate()
    }
}

/// Owns a ``ScheduledRun`` for one iterator: when iteration ends before every operation was
/// delivered — the iterating task was cancelled, or the iterator went away because the loop
/// exited early — the unfinished operations are cancelled.
final class IterationLifetime: Sendable {
    let run: ScheduledRun

    init(_ run: ScheduledRun) {
        self.run = run
    }

    /// The next finished position, or `nil` at the end. When the iterating task was cancelled,
    /// returns `nil` and cancels the operations that have not finished.
    func next() async -> Int? {
        guard let position = await run.positions.next() else {
            cancelIfIncomplete()
            return nil
        }
        return position
    }

    private func cancelIfIncomplete() {
        if !run.positions.allDelivered {
            run.cancel()
        }
    }

    deinit {
        cancelIfIncomplete()
    }
}
