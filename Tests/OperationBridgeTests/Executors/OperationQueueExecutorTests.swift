import Foundation
import Testing

@testable import OperationBridge

/// A serial `OperationQueue` as an actor's executor: the actor's jobs are operations of the
/// queue, so actor methods and legacy operations form one serialization domain, in the queue's
/// order, under its suspension, and legacy code may assume the actor's isolation.
@Suite(.timeLimit(Stress.timeLimit(minutes: 2)))
struct OperationQueueExecutorTests {
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test("An actor method runs inside an operation of the queue")
    func actorMethodsRunOnTheQueue() async {
        let queue = makeSerialQueue("jobs")
        let actor = QueueBoundActor(queue: queue)
        #expect(await actor.currentQueue() === queue)
        await actor.recordAcrossSuspension(1)
        #expect(await actor.currentQueue() === queue)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)

    @Test("A global actor's functions run on the legacy queue it names")
    func globalActorRunsOnItsQueue() async {
        #expect(await queueOfLegacyDatabaseActor() === LegacyDatabaseActor.queue)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)

    @Test("Operations and actor jobs added in one order run in that order")
    func legacyOperationsAndJobsKeepFIFOOrder() async throws {
        let queue = makeSerialQueue("fifo")
        let actor = QueueBoundActor(queue: queue)
        let state = actor.state
        var generator = Stress.generator(for: "legacyOperationsAndJobsKeepFIFOOrder")
        let plan = (0..<300).map { _ in Bool.random(using: &generator) }  // true: an actor job
        let tasks = LockedBox<[Task<Void, Never>]>([])
        let submitted = OneShotSignal()
        // Everything is added from inside an operation of the queue: nothing can run before
        // the whole plan is in, and each task's first job is enqueued as the task is made.
        queue.addOperation {
            actor.assumeIsolated { actor in
                for (index, isJob) in plan.enumerated() {
                    if isJob {
                        let spawned = actor.spawnRecords([index])
                        tasks.withLock { $0 += spawned }
                    } else {
                        queue.addOperation { state.touch(index) }
                    }
                }
            }
            submitted.fire()
        }
        #expect(await submitted.wait())
        for task in tasks.current { await task.value }
        try await queue.waitForAllOperations()
        #expect(state.log == Array(0..<plan.count))
        #expect(await actor.calls == plan.filter { $0 }.count)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)

    @Test("Jobs enqueued while the queue is suspended wait for it to resume, in order")
    func suspendedQueueHoldsJobs() async throws {
        let queue = makeSerialQueue("suspended")
        let actor = QueueBoundActor(queue: queue)
        let state = actor.state
        let tasks = LockedBox<[Task<Void, Never>]>([])
        let submitted = OneShotSignal()
        queue.addOperation {
            actor.assumeIsolated { actor in
                tasks.withLock { $0 = actor.spawnRecords(Array(0..<50)) }
            }
            // Suspended before this operation ends: nothing after it starts.
            queue.isSuspended = true
            submitted.fire()
        }
        #expect(await submitted.wait())
        for _ in 0..<10 { await Task.yield() }
        #expect(queue.isSuspended)
        let late = Task { await actor.record(50) }
        for _ in 0..<10 { await Task.yield() }
        queue.isSuspended = false
        for task in tasks.current { await task.value }
        await late.value
        #expect(state.log == Array(0...50))
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)

    @Test("cancelAllOperations cancels the legacy operations and leaves every actor job to run")
    func cancelAllOperationsLeavesJobs() async throws {
        let queue = makeSerialQueue("cancel-all")
        let actor = QueueBoundActor(queue: queue)
        let state = actor.state
        let tasks = LockedBox<[Task<Void, Never>]>([])
        let legacyRuns = Counter()
        let submitted = OneShotSignal()
        queue.addOperation {
            actor.assumeIsolated { actor in
                for index in 0..<100 {
                    if index.isMultiple(of: 2) {
                        let spawned = actor.spawnRecords([index])
                        tasks.withLock { $0 += spawned }
                    } else {
                        queue.addOperation {
                            legacyRuns.increment()
                            state.touch(index)
                        }
                    }
                }
            }
            queue.cancelAllOperations()
            submitted.fire()
        }
        #expect(await submitted.wait())
        for task in tasks.current { await task.value }
        try await queue.waitForAllOperations()
        #expect(legacyRuns.value == 0)
        #expect(state.log == Array(stride(from: 0, to: 100, by: 2)))
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)

    @Test("Jobs enqueued while the queue holds only the executor's operation run in that operation, in order")
    func jobsJoinTheRunningOperation() async {
        let queue = makeSerialQueue("join")
        let actor = QueueBoundActor(queue: queue)
        let (tasks, counts) = await actor.submit(Array(repeating: .job, count: 20), on: queue)
        // The operation running `submit` is the only one the queue ever holds.
        #expect(counts == Array(repeating: 1, count: 20))
        for task in tasks { await task.value }
        #expect(actor.state.log == Array(0..<20))
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)

    @Test("An operation of the executor runs at most JobBatch.longest jobs; later ones make the next")
    func batchesAreBounded() async {
        let queue = makeSerialQueue("bounded")
        let actor = QueueBoundActor(queue: queue)
        let longest = JobBatch.longest
        let (tasks, counts) = await actor.submit(Array(repeating: .job, count: longest + 50), on: queue)
        // The running operation's own job and `longest - 1` more; then a second operation,
        // which the rest join.
        #expect(counts[..<(longest - 1)].allSatisfy { $0 == 1 })
        #expect(counts[(longest - 1)...].allSatisfy { $0 == 2 })
        for task in tasks { await task.value }
        #expect(actor.state.log == Array(0..<(longest + 50)))
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)

    @Test("A job enqueued after another operation was added gets an operation of its own, after it")
    func jobsAfterALegacyOperationGetTheirOwn() async throws {
        let queue = makeSerialQueue("no-join")
        let actor = QueueBoundActor(queue: queue)
        let plan: [ExecutorPlanStep] = [.job, .job, .legacyOperation, .job, .job, .legacyOperation, .job]
        let (tasks, counts) = await actor.submit(plan, on: queue)
        // Two jobs join the running operation; from the first legacy operation on, everything
        // is an operation of its own, in the order submitted.
        #expect(counts == [1, 1, 2, 3, 4, 5, 6])
        for task in tasks { await task.value }
        try await queue.waitForAllOperations()
        #expect(actor.state.log == Array(0..<plan.count))
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)

    @Test("A job enqueued while the queue is suspended does not join the running operation, and waits")
    func suspendedQueueKeepsJobsOutOfTheRunningOperation() async {
        let queue = makeSerialQueue("suspended-join")
        let actor = QueueBoundActor(queue: queue)
        let (tasks, counts) = await actor.submit([.job, .suspend, .job], on: queue)
        #expect(counts == [1, 1, 2])
        await tasks[0].value  // joined the operation that ran `submit`
        for _ in 0..<10 { await Task.yield() }
        #expect(actor.state.log == [0])
        #expect(queue.operationCount == 1)
        queue.isSuspended = false
        await tasks[1].value
        #expect(actor.state.log == [0, 2])
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)

    @Test("A barrier block, which Foundation does not count, does not keep a job out of the running operation")
    func barrierBlocksAreNotSeen() async throws {
        let queue = makeSerialQueue("barrier")
        let actor = QueueBoundActor(queue: queue)
        let state = actor.state
        let (tasks, counts) = await actor.submitAfterBarrier(recording: 0, then: 1, on: queue)
        #expect(counts == [1])  // the barrier is not counted
        for task in tasks { await task.value }
        try await queue.waitForAllOperations()
        #expect(state.log == [1, 0])  // documented: the job ran first, inside the running operation
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)

    @Test("A queue whose addOperation(_:) calls the actor back on the same thread does not deadlock")
    func addOperationCallingTheActorBack() async {
        let queue = CallingBackQueue.shared
        queue.callBackOnce {
            // A task isolated to the global actor enqueues its first job now, on this thread,
            // inside the queue's addOperation(_:) of the operation for the job below.
            Task { @CallingBackActor in CallingBackActor.state.touch(1) }
        }
        await recordOnCallingBackActor(0)
        await queue.callbackTask?.value
        // The callback's job got its operation first: it was added within the other's add,
        // before Foundation added that one (were it enqueued later, 0 would come first).
        #expect(CallingBackActor.state.log == [1, 0])
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)

    @Test("A cancelled task's actor calls still run on the queue")
    func cancelledTasksStillRunTheirCalls() async {
        let queue = makeSerialQueue("cancelled-tasks")
        let actor = QueueBoundActor(queue: queue)
        queue.isSuspended = true
        let tasks = (0..<20).map { index in
            Task {
                await actor.recordAcrossSuspension(index)
                return Task.isCancelled
            }
        }
        for task in tasks { task.cancel() }
        queue.isSuspended = false
        for task in tasks { #expect(await task.value) }
        #expect(await actor.calls == 40)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)

    @Test("assumeIsolated and preconditionIsolated succeed inside a legacy operation of the queue")
    func assumeIsolatedInsideALegacyOperation() async throws {
        let queue = makeSerialQueue("assume")
        let actor = QueueBoundActor(queue: queue)
        await actor.record(7)
        let seen = LockedBox<Int?>(nil)
        queue.addOperation {
            actor.preconditionIsolated()
            seen.withLock { $0 = actor.assumeIsolated { $0.calls } }
        }
        try await queue.waitForAllOperations()
        #expect(seen.current == 1)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)

    @Test("assumeIsolated succeeds inside the main() of one of the package's asynchronous operations")
    func assumeIsolatedInsideAnAsyncOperation() async throws {
        let queue = makeSerialQueue("assume-async")
        let actor = QueueBoundActor(queue: queue)
        let operation = AssumingOperation(actor: actor)
        try await queue.runUntilFinished(operation)
        #expect(operation.sawCalls == 1)
        #expect(await actor.calls == 1)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)

    @Test("Two executors of one queue are one serialization domain")
    func twoExecutorsOfOneQueue() async {
        let queue = makeSerialQueue("shared")
        let state = UnguardedState()
        let first = QueueBoundActor(queue: queue, state: state)
        let second = QueueBoundActor(queue: queue, state: state)
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<200 {
                group.addTask {
                    if index.isMultiple(of: 2) {
                        await first.recordAcrossSuspension(index)
                    } else {
                        await second.record(index)
                        _ = await second.currentQueue()
                    }
                }
            }
        }
        #expect(state.entries == 300)
        // A job of one actor may assume the other's isolation: the queue runs one at a time.
        #expect(await first.callsOf(second) == 100)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)

    @Test("A job's priority raises its operation's quality of service above the queue's, never below")
    func jobPriorityMapsToQualityOfService() {
        let queue = OperationQueue()
        queue.qualityOfService = .utility
        let cases: [(JobPriority?, QualityOfService?, Int)] = [
            (nil, nil, QualityOfService.utility.rank),  // unspecified: the queue's applies
            (JobPriority(.high), .userInitiated, QualityOfService.userInitiated.rank),
            (JobPriority(.medium), .default, QualityOfService.default.rank),
            (JobPriority(.low), nil, QualityOfService.utility.rank),
            (JobPriority(.background), nil, QualityOfService.utility.rank),
        ]
        for (priority, expected, rank) in cases {
            let wanted = QualityOfService(jobPriority: priority ?? JobPriority(rawValue: 0))
            let chosen = queue.jobQualityOfService(wanting: wanted)
            #expect(chosen.raised == expected, "\(String(describing: priority))")
            #expect(chosen.rank == rank, "\(String(describing: priority))")
        }
        queue.qualityOfService = .userInitiated
        let chosen = queue.jobQualityOfService(wanting: QualityOfService(jobPriority: JobPriority(.high)))
        #expect(chosen.raised == nil)  // not raised: the queue's is as high
        #expect(chosen.rank == QualityOfService.userInitiated.rank)
    }

    #if EXIT_TESTS
        @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
        @Test("assumeIsolated from an operation of another queue traps, naming the actor's queue")
        func assumeIsolatedFromAnotherQueueTraps() async throws {
            let exit = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                let queue = makeSerialQueue("ledger")
                let actor = QueueBoundActor(queue: queue)
                let other = makeSerialQueue("elsewhere")
                await resumeOrdered { (_: CheckedContinuation<Void, Never>) in
                    other.addOperation { actor.assumeIsolated { _ in } }
                }
            }
            let message = String(decoding: try #require(exit).standardErrorContent, as: UTF8.self)
            #expect(message.contains("'ledger'"))
            #expect(message.contains("'elsewhere'"))
        }

        @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)

        @Test("preconditionIsolated from a task traps")
        func preconditionIsolatedFromATaskTraps() async {
            await #expect(processExitsWith: .failure) {
                let actor = QueueBoundActor(queue: makeSerialQueue("ledger"))
                await Task.detached { actor.preconditionIsolated() }.value
            }
        }

        @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)

        @Test("An executor of a queue wider than 1 traps, naming the queue")
        func wideQueueTraps() async throws {
            let exit = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                let queue = OperationQueue()
                queue.name = "wide"
                queue.maxConcurrentOperationCount = 4
                _ = OperationQueueExecutor(queue)
            }
            let message = String(decoding: try #require(exit).standardErrorContent, as: UTF8.self)
            #expect(message.contains("'wide'"))
            #expect(message.contains("maxConcurrentOperationCount 4"))
        }

        @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)

        @Test("An executor of a queue of the default width traps")
        func defaultWidthQueueTraps() async {
            await #expect(processExitsWith: .failure) {
                _ = OperationQueueExecutor(OperationQueue())
            }
        }

        @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)

        @Test("Widening the queue afterwards traps at the next job, naming the queue")
        func wideningLaterTraps() async throws {
            let exit = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                let queue = makeSerialQueue("widened")
                let actor = QueueBoundActor(queue: queue)
                await actor.record(1)
                queue.maxConcurrentOperationCount = 2
                await actor.record(2)
            }
            let message = String(decoding: try #require(exit).standardErrorContent, as: UTF8.self)
            #expect(message.contains("'widened'"))
            #expect(message.contains("changed to 2"))
        }
    #endif
}

/// The queue a `LegacyDatabaseActor` function runs on.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
@LegacyDatabaseActor
private func queueOfLegacyDatabaseActor() -> OperationQueue? {
    OperationQueue.current
}

@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
extension QueueBoundActor {
    /// Adds a barrier block recording `barrierValue` from inside this actor's job, then starts
    /// a task isolated to the actor recording `jobValue`. Returns the task, and the queue's
    /// `operationCount` after both.
    func submitAfterBarrier(
        recording barrierValue: Int, then jobValue: Int, on queue: OperationQueue
    ) -> (tasks: [Task<Void, Never>], counts: [Int]) {
        let state = state
        queue.addBarrierBlock { state.touch(barrierValue) }
        let task = Task { self.record(jobValue) }
        return ([task], [queue.operationCount])
    }

    /// The calls of `other`, read by assuming its isolation from this actor's job.
    func callsOf(_ other: QueueBoundActor) -> Int {
        other.assumeIsolated { $0.calls }
    }
}

/// One of the package's asynchronous operations whose `main()` assumes an actor's isolation,
/// then finishes from another thread.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
private final class AssumingOperation: AsyncOperation, @unchecked Sendable {
    let actor: QueueBoundActor
    private let seen = LockedBox(-1)

    init(actor: QueueBoundActor) {
        self.actor = actor
        super.init()
    }

    var sawCalls: Int { seen.current }

    override func main() {
        let calls = actor.assumeIsolated { actor in
            actor.record(0)
            return actor.calls
        }
        seen.withLock { $0 = calls }
        DispatchQueue.global().async { self.finish() }
    }
}

/// A serial queue whose `addOperation(_:)` runs a callback, once, before adding: code of the
/// user's that runs inside Foundation's add, as a key-value observer of the queue would.
///
/// Safety: `callback` and `callbackTask` are guarded by `lock`.
final class CallingBackQueue: OperationQueue, @unchecked Sendable {
    static let shared: CallingBackQueue = {
        let queue = CallingBackQueue()
        queue.name = "calling-back"
        queue.maxConcurrentOperationCount = 1
        return queue
    }()

    private let lock = NSLock()
    private var callback: (@Sendable () -> Task<Void, Never>)?
    private var task: Task<Void, Never>?

    func callBackOnce(_ callback: @escaping @Sendable () -> Task<Void, Never>) {
        lock.withLock { self.callback = callback }
    }

    /// The task the callback made.
    var callbackTask: Task<Void, Never>? { lock.withLock { task } }

    override func addOperation(_ operation: Operation) {
        if let callback = lock.withLock({ () -> (@Sendable () -> Task<Void, Never>)? in
            defer { self.callback = nil }
            return self.callback
        }) {
            let made = callback()
            lock.withLock { task = made }
        }
        super.addOperation(operation)
    }
}

/// A global actor on ``CallingBackQueue/shared``.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
@globalActor
actor CallingBackActor {
    static let executor = OperationQueueExecutor(CallingBackQueue.shared)
    static let shared = CallingBackActor()
    static let state = UnguardedState()

    nonisolated var unownedExecutor: UnownedSerialExecutor {
        Self.executor.asUnownedSerialExecutor()
    }
}

@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
@CallingBackActor
private func recordOnCallingBackActor(_ value: Int) {
    CallingBackActor.state.touch(value)
}
