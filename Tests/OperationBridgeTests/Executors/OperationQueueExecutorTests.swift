import Foundation
import Testing

@testable import OperationBridge

/// A serial `OperationQueue` as an actor's executor: the actor's jobs are operations of the
/// queue, so actor methods and legacy operations form one serialization domain, in the queue's
/// order, under its suspension, and legacy code may assume the actor's isolation.
@Suite(.timeLimit(.minutes(2)))
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
        let cases: [(JobPriority?, QualityOfService)] = [
            (nil, .default),  // unspecified: the operation's own default, the queue's applies
            (JobPriority(.high), .userInitiated),
            (JobPriority(.medium), .default),
            (JobPriority(.low), .default),
            (JobPriority(.background), .default),
        ]
        for (priority, expected) in cases {
            let operation = BlockOperation {}
            operation.adoptPriority(priority ?? JobPriority(rawValue: 0), under: queue)
            #expect(operation.qualityOfService == expected, "\(String(describing: priority))")
        }
        queue.qualityOfService = .userInitiated
        let operation = BlockOperation {}
        operation.adoptPriority(JobPriority(.high), under: queue)
        #expect(operation.qualityOfService == .default)  // not raised: the queue's is as high
        #expect(operation.queuePriority == .normal)
    }

    #if EXIT_TESTS
        @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
        @Test("assumeIsolated from an operation of another queue traps, naming the actor's queue")
        func assumeIsolatedFromAnotherQueueTraps() async throws {
            let exit = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                let queue = makeSerialQueue("ledger")
                let actor = QueueBoundActor(queue: queue)
                let other = makeSerialQueue("elsewhere")
                await withCheckedContinuation { (_: CheckedContinuation<Void, Never>) in
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
