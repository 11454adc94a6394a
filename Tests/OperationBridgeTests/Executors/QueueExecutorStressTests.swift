import Foundation
import OperationBridge
import Testing

/// Thousands of randomized interleavings of actor calls and legacy operations on one serial
/// queue: nothing ever overlaps (the state they share has no lock: ThreadSanitizer and a
/// trapping flag watch it), every call is answered, and what the queue orders stays in order —
/// with suspensions, `cancelAllOperations()` and task cancellations mid-stream.
@Suite(.timeLimit(Stress.timeLimit(minutes: 10)))
struct QueueExecutorStressTests {
    /// One piece of work of a randomized plan.
    enum Action: CaseIterable {
        /// A task calls an actor method without a suspension point.
        case actorCall
        /// A task calls an actor method that suspends in the middle, giving the queue back.
        case actorCallAcrossSuspension
        /// A task calls the actor, and is cancelled at once.
        case cancelledActorCall
        /// A legacy `BlockOperation` touches the state.
        case blockOperation
        /// A legacy `BlockOperation` calls the actor's synchronous API through `assumeIsolated`.
        case assumingBlockOperation
        /// One of the package's asynchronous operations enters in `main()` and leaves, then
        /// finishes, from another thread: the queue is held until it finishes.
        case asyncOperation
        /// An async closure on the queue (`addTask`), which holds the queue until it returns.
        case addTask
        /// The queue is suspended, and resumed by a later task.
        case suspendAndResume
        /// `cancelAllOperations()` on the queue.
        case cancelAll
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test("Random interleavings of actor calls and legacy operations never overlap")
    func randomInterleavingsNeverOverlap() async throws {
        var generator = Stress.generator(for: "randomInterleavingsNeverOverlap")
        let rounds = Stress.iterations(20)
        for round in 0..<rounds {
            let queue = makeSerialQueue("stress-\(round)")
            let actor = QueueBoundActor(queue: queue)
            let state = actor.state
            let plan = (0..<500).map { _ in Action.allCases.randomElement(using: &generator)! }
            let legacyRuns = Counter()
            let assumingRuns = Counter()
            let actorCalls = plan.reduce(0) { count, action in
                switch action {
                case .actorCall, .cancelledActorCall: count + 1
                case .actorCallAcrossSuspension: count + 2
                default: count
                }
            }
            await withTaskGroup(of: Void.self) { group in
                for (index, action) in plan.enumerated() {
                    group.addTask {
                        await Self.perform(
                            action, index: index, queue: queue, actor: actor,
                            runs: (legacy: legacyRuns, assuming: assumingRuns)
                        )
                    }
                }
            }
            queue.isSuspended = false
            try await queue.waitForAllOperations()
            // Every actor call ran (cancellation does not skip a job); legacy operations ran
            // unless a cancelAllOperations() came first, and counted themselves.
            #expect(await actor.calls == actorCalls + assumingRuns.value)
            #expect(state.entries == actorCalls + legacyRuns.value)
        }
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    private static func perform(
        _ action: Action, index: Int, queue: OperationQueue, actor: QueueBoundActor,
        runs: (legacy: Counter, assuming: Counter)
    ) async {
        let state = actor.state
        let legacyRuns = runs.legacy
        switch action {
        case .actorCall:
            await actor.record(index)
        case .actorCallAcrossSuspension:
            await actor.recordAcrossSuspension(index)
        case .cancelledActorCall:
            let task = Task { await actor.record(index) }
            task.cancel()
            await task.value
        case .blockOperation:
            queue.addOperation {
                legacyRuns.increment()
                state.touch(index)
            }
        case .assumingBlockOperation:
            queue.addOperation {
                legacyRuns.increment()
                runs.assuming.increment()
                actor.assumeIsolated { $0.recordLegacy(index) }
            }
        case .asyncOperation:
            queue.addOperation(EnterThenLeaveLater(state: state, index: index, runs: legacyRuns))
        case .addTask:
            _ = queue.addTask {
                legacyRuns.increment()
                state.enter(index)
                await Task.yield()
                state.leave()
            }
        case .suspendAndResume:
            queue.isSuspended = true
            await Task.yield()
            queue.isSuspended = false
        case .cancelAll:
            queue.cancelAllOperations()
        }
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test("Random plans submitted in one order run in that order, through suspensions and cancelAllOperations")
    func randomPlansKeepFIFOOrder() async throws {
        var generator = Stress.generator(for: "randomPlansKeepFIFOOrder")
        let rounds = Stress.iterations(40)
        for round in 0..<rounds {
            let queue = makeSerialQueue("fifo-\(round)")
            let actor = QueueBoundActor(queue: queue)
            let state = actor.state
            // Each step: an actor job (true) or a legacy operation (false); at `cancelAt` the
            // submitting operation cancels everything added so far.
            let plan = (0..<300).map { _ in Bool.random(using: &generator) }
            let cancelAt = Bool.random(using: &generator) ? Int.random(in: 0..<plan.count, using: &generator) : nil
            let suspend = Bool.random(using: &generator)
            let tasks = LockedBox<[Task<Void, Never>]>([])
            let submitted = OneShotSignal()
            queue.addOperation {
                actor.assumeIsolated { actor in
                    for (index, isJob) in plan.enumerated() {
                        if index == cancelAt { queue.cancelAllOperations() }
                        if isJob {
                            let spawned = actor.spawnRecords([index])
                            tasks.withLock { $0 += spawned }
                        } else {
                            queue.addOperation { state.touch(index) }
                        }
                    }
                }
                if suspend { queue.isSuspended = true }
                submitted.fire()
            }
            #expect(await submitted.wait())
            if suspend {
                await Task.yield()
                #expect(state.entries == 0)  // nothing runs on a suspended queue
                queue.isSuspended = false
            }
            for task in tasks.current { await task.value }
            try await queue.waitForAllOperations()
            let expected = plan.indices.filter { index in
                plan[index] || cancelAt.map { index >= $0 } ?? true
            }
            #expect(state.log == expected, "round \(round)")
        }
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test("Jobs joining the executor's operation keep the order of plans submitted from the actor amid other calls")
    func joinedJobsKeepFIFOOrderUnderConcurrentCalls() async throws {
        var generator = Stress.generator(for: "joinedJobsKeepFIFOOrderUnderConcurrentCalls")
        let rounds = Stress.iterations(1000)
        for round in 0..<rounds {
            let queue = makeSerialQueue("join-\(round)")
            let actor = QueueBoundActor(queue: queue)
            // Mostly jobs, in runs, so that they join the running operation and the ones after
            // it; legacy operations and suspensions in between end the runs.
            let plan = (0..<120).map { _ -> ExecutorPlanStep in
                switch Int.random(in: 0..<20, using: &generator) {
                case 0..<14: .job
                case 14..<18: .legacyOperation
                case 18: .suspend
                default: .resume
                }
            }
            let noise = Int.random(in: 0...40, using: &generator)
            // Other tasks call the actor while the plan is submitted: their jobs join, or
            // make, the operations around the plan's. They record negative values.
            let noisy = Task {
                await withTaskGroup(of: Void.self) { group in
                    for call in 0..<noise {
                        group.addTask { await actor.record(-1 - call) }
                    }
                }
            }
            let (tasks, _) = await actor.submit(plan, on: queue)
            queue.isSuspended = false
            for task in tasks { await task.value }
            await noisy.value
            try await queue.waitForAllOperations()
            let planned = actor.state.log.filter { $0 >= 0 }
            #expect(planned == plan.indices.filter { plan[$0].records }, "round \(round)")
            #expect(actor.state.log.count == planned.count + noise)
        }
    }
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test("Jobs and operations submitted from several threads at once keep each thread's order")
    func concurrentSubmittersKeepTheirOrder() async throws {
        var generator = Stress.generator(for: "concurrentSubmittersKeepTheirOrder")
        let rounds = Stress.iterations(300)
        let lanes = 4
        for round in 0..<rounds {
            // Each lane submits its steps one after another, from a thread of its own: a task
            // isolated to the global actor (its first job enqueued as the task is made), or
            // now and then a legacy operation. Each lane's steps must run in its order, whatever
            // the lanes' jobs join or make.
            let plans = (0..<lanes).map { _ in
                (0..<60).map { _ in Int.random(in: 0..<6, using: &generator) != 0 }
            }
            let state = UnguardedState()
            let tasks = LockedBox<[Task<Void, Never>]>([])
            DispatchQueue.concurrentPerform(iterations: lanes) { lane in
                for (step, isJob) in plans[lane].enumerated() {
                    let value = lane * 1_000 + step
                    if isJob {
                        let task = Task { @SubmittersActor in state.touch(value) }
                        tasks.withLock { $0.append(task) }
                    } else {
                        SubmittersActor.queue.addOperation { state.touch(value) }
                    }
                }
            }
            for task in tasks.current { await task.value }
            try await SubmittersActor.queue.waitForAllOperations()
            #expect(state.entries == lanes * 60)
            for lane in 0..<lanes {
                let order = state.log.filter { $0 / 1_000 == lane }
                #expect(order == Array(lane * 1_000..<lane * 1_000 + 60), "round \(round), lane \(lane)")
            }
        }
    }
}

/// A global actor on a serial queue of its own, for ``QueueExecutorStressTests``.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
@globalActor
actor SubmittersActor {
    static let queue = makeSerialQueue("submitters")
    static let executor = OperationQueueExecutor(queue)
    static let shared = SubmittersActor()

    nonisolated var unownedExecutor: UnownedSerialExecutor {
        Self.executor.asUnownedSerialExecutor()
    }
}

@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
extension QueueBoundActor {
    /// A call made by legacy code through `assumeIsolated`.
    func recordLegacy(_ value: Int) {
        record(value)
    }
}

/// One of the package's asynchronous operations: it enters the critical section in `main()`,
/// and leaves it and finishes from another thread. The queue runs nothing else meanwhile.
private final class EnterThenLeaveLater: AsyncOperation, @unchecked Sendable {
    let state: UnguardedState
    let index: Int
    let runs: Counter

    init(state: UnguardedState, index: Int, runs: Counter) {
        self.state = state
        self.index = index
        self.runs = runs
        super.init()
    }

    override func main() {
        runs.increment()
        state.enter(index)
        DispatchQueue.global().async {
            self.state.leave()
            self.finish()
        }
    }
}
