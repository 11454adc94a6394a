import Foundation
import OperationBridge

// Doubles for the executor tests (Tests/OperationBridgeTests/Executors/).

/// State with no lock at all, touched by actor methods and legacy operations of one queue.
///
/// Safety: none, on purpose. Only code that the queue serializes touches it; if two pieces of
/// that code ever overlapped, ThreadSanitizer would report the race, and `enter()` would trap.
final class UnguardedState: @unchecked Sendable {
    private var inside = false
    /// How many times code entered, in total.
    private(set) var entries = 0
    /// What each entry recorded, in order.
    private(set) var log: [Int] = []

    init() {}

    /// Marks the start of a critical section; traps if another one is in progress.
    func enter(_ value: Int) {
        precondition(!inside, "two critical sections overlap")
        inside = true
        entries += 1
        log.append(value)
    }

    /// Marks the end of the critical section.
    func leave() {
        precondition(inside, "leave without enter")
        inside = false
    }

    /// `enter(value)`, then `leave()`.
    func touch(_ value: Int) {
        enter(value)
        leave()
    }
}

/// An actor whose executor is a serial `OperationQueue`, recording into unguarded state.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
actor QueueBoundActor {
    nonisolated let executor: OperationQueueExecutor
    nonisolated var unownedExecutor: UnownedSerialExecutor {
        executor.asUnownedSerialExecutor()
    }
    nonisolated let state: UnguardedState
    private(set) var calls = 0

    init(executor: OperationQueueExecutor, state: UnguardedState = UnguardedState()) {
        self.executor = executor
        self.state = state
    }

    init(queue: OperationQueue, state: UnguardedState = UnguardedState()) {
        self.init(executor: OperationQueueExecutor(queue), state: state)
    }

    /// One critical section, without a suspension point.
    func record(_ value: Int) {
        calls += 1
        state.touch(value)
    }

    /// Two critical sections with a suspension point between them: the method gives the queue
    /// back while suspended, and runs on it again afterwards.
    func recordAcrossSuspension(_ value: Int) async {
        record(value)
        await Task.yield()
        record(value)
    }

    /// The queue running the current job.
    func currentQueue() -> OperationQueue? {
        OperationQueue.current
    }

    /// Starts a task isolated to this actor for each value: each task's first job is enqueued
    /// on the executor now, in order. Returns the tasks.
    func spawnRecords(_ values: [Int]) -> [Task<Void, Never>] {
        values.map { value in Task { self.record(value) } }
    }

    /// Submits `plan` from inside this actor's job, step `i` recording `i`: a task isolated to
    /// the actor for a job (its first job enqueued at once), a `BlockOperation` on `queue` for a
    /// legacy operation. Returns the tasks, and the queue's `operationCount` after each step.
    func submit(_ plan: [ExecutorPlanStep], on queue: OperationQueue) -> (tasks: [Task<Void, Never>], counts: [Int]) {
        let state = state
        var tasks: [Task<Void, Never>] = []
        var counts: [Int] = []
        for (index, step) in plan.enumerated() {
            switch step {
            case .job: tasks.append(Task { self.record(index) })
            case .legacyOperation: queue.addOperation { state.touch(index) }
            case .suspend: queue.isSuspended = true
            case .resume: queue.isSuspended = false
            }
            counts.append(queue.operationCount)
        }
        return (tasks, counts)
    }
}

/// A step of a plan submitted from inside a ``QueueBoundActor``'s job.
enum ExecutorPlanStep: Sendable, CaseIterable {
    /// A task isolated to the actor, recording the step's index.
    case job
    /// A `BlockOperation` on the actor's queue, recording the step's index.
    case legacyOperation
    /// `queue.isSuspended = true`.
    case suspend
    /// `queue.isSuspended = false`.
    case resume

    /// Whether the step records its index.
    var records: Bool { self == .job || self == .legacyOperation }
}

/// A global actor whose executor is a serial `OperationQueue` the legacy code already has.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
@globalActor
actor LegacyDatabaseActor {
    static let queue: OperationQueue = {
        let queue = OperationQueue()
        queue.name = "legacy-database"
        queue.maxConcurrentOperationCount = 1
        return queue
    }()
    static let executor = OperationQueueExecutor(queue)
    static let shared = LegacyDatabaseActor()

    nonisolated var unownedExecutor: UnownedSerialExecutor {
        Self.executor.asUnownedSerialExecutor()
    }
}

/// A serial queue with a name, for the tests.
func makeSerialQueue(_ name: String) -> OperationQueue {
    let queue = OperationQueue()
    queue.name = name
    queue.maxConcurrentOperationCount = 1
    return queue
}
