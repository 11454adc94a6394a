import Foundation
import OperationBridge
import Testing

/// Records, from `main()`, whether every operation it should follow had finished, and leaves
/// a slot it occupies only after its work (finished on another thread) is done.
private final class SlotCheckingOperation: AsyncOperation, @unchecked Sendable {
    let index: Int
    let executing: HighWaterMark
    let order: Recorder<Int>

    init(index: Int, executing: HighWaterMark, order: Recorder<Int>) {
        self.index = index
        self.executing = executing
        self.order = order
        super.init()
    }

    override func main() {
        executing.enter()
        order.append(index)
        DispatchQueue.global().async {
            self.executing.leave()
            self.finish()
        }
    }
}

@Suite(.timeLimit(Stress.timeLimit(minutes: 1)))
struct AsyncOperationTests {
    // MARK: - Lifecycle and notifications

    @Test func lifecycleOfAManuallyStartedOperation() async throws {
        let operation = ProbeOperation(.byTest)
        #expect(operation.isAsynchronous)
        #expect(operation.isReady)
        #expect(operation.lifecycleSnapshot == .pending)

        operation.start()
        #expect(operation.mainCalls.value == 1)
        #expect(operation.snapshotsInMain.all == [.executing])
        #expect(operation.lifecycleSnapshot == .executing)

        operation.finish()
        #expect(operation.lifecycleSnapshot == .finished)
        // An awaiter of a finished operation is answered at once.
        try await operation.bridge.waitForCompletion()
    }

    @Test func finishInsideMainEndsTheOperationBeforeStartReturns() {
        let operation = ProbeOperation(.inMain)
        operation.start()
        #expect(operation.snapshotsInMain.all == [.executing])
        #expect(operation.lifecycleSnapshot == .finished)
    }

    @Test func stateIsVisibleToTheQueueDependentsAwaitersAndCompletionBlock() async throws {
        let queue = OperationQueue()
        let gate = Gate()
        let operation = ProbeOperation(.whenOpened(gate))
        let seenByDependent = Recorder<LifecycleSnapshot>()
        let seenByCompletion = Recorder<LifecycleSnapshot>()
        let completion = Latch(count: 1)
        operation.completionBlock = { [weak operation] in
            if let operation { seenByCompletion.append(operation.lifecycleSnapshot) }
            completion.arrive()
        }
        let dependent = BlockOperation { [operation] in seenByDependent.append(operation.lifecycleSnapshot) }
        dependent.addDependency(operation)
        queue.addOperation(dependent)
        queue.addOperation(operation)

        await operation.started.wait()
        #expect(operation.lifecycleSnapshot == .executing)
        #expect(operation.snapshotsInMain.all == [.executing])
        #expect(!dependent.isReady)
        #expect(seenByDependent.all.isEmpty)

        gate.open()
        try await dependent.bridge.waitForCompletion()
        #expect(seenByDependent.all == [.finished])
        #expect(operation.lifecycleSnapshot == .finished)
        await completion.wait()
        #expect(seenByCompletion.all == [.finished])
        try await queue.waitForAllOperations()
        #expect(queue.operationCount == 0)
    }

    /// The queue frees a slot only when it is told that the operation has finished, and sees
    /// `isFinished == true` when told: with one slot, asynchronous operations run one at a time,
    /// in order, and the queue drains.
    @Test func aSerialQueueRunsAsyncOperationsOneAtATime() async throws {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let executing = HighWaterMark()
        let order = Recorder<Int>()
        let operations = (0..<40).map { SlotCheckingOperation(index: $0, executing: executing, order: order) }
        for operation in operations { queue.addOperation(operation) }

        try await queue.waitForAllOperations()
        #expect(executing.maximum == 1)
        #expect(order.all == Array(0..<40))
        #expect(operations.allSatisfy { $0.lifecycleSnapshot == .finished })
    }

    // MARK: - Queue and manual start

    @Test func runsOnAQueueAndByHand() async throws {
        let queue = OperationQueue()
        let queued = ProbeOperation(.whenOpened(Gate.alreadyOpen()))
        queue.addOperation(queued)
        try await queued.bridge.waitForCompletion()
        #expect(queued.mainCalls.value == 1)
        #expect(queued.lifecycleSnapshot == .finished)

        let manual = ProbeOperation(.whenOpened(Gate.alreadyOpen()))
        manual.start()
        try await manual.bridge.waitForCompletion()
        #expect(manual.mainCalls.value == 1)
        #expect(manual.lifecycleSnapshot == .finished)
    }

    @Test func dependenciesRunInOrder() async throws {
        let queue = OperationQueue()
        let order = Recorder<String>()
        let predecessorsFinished = Recorder<Bool>()
        var previous: [Operation] = []
        var operations: [ProbeOperation] = []
        for name in ["A", "B", "C"] {
            let before = previous
            let operation = ProbeOperation(.whenOpened(Gate.alreadyOpen())) {
                order.append(name)
                predecessorsFinished.append(before.allSatisfy(\.isFinished))
            }
            if let last = previous.last { operation.addDependency(last) }
            previous.append(operation)
            operations.append(operation)
        }
        // Enqueued last-first, so only the dependencies impose the order.
        for operation in operations.reversed() { queue.addOperation(operation) }

        try await queue.waitForAllOperations()
        #expect(order.all == ["A", "B", "C"])
        #expect(predecessorsFinished.all == [true, true, true])
    }

    @Test func startIsIgnoredTheSecondTime() {
        let operation = ProbeOperation(.byTest)
        operation.start()
        operation.start()
        #expect(operation.mainCalls.value == 1)
        #expect(operation.lifecycleSnapshot == .executing)
        operation.finish()
        operation.start()
        #expect(operation.mainCalls.value == 1)
        #expect(operation.lifecycleSnapshot == .finished)
    }

    @Test func finishBeforeStartIsHonouredByStartWithoutRunningMain() {
        let operation = ProbeOperation(.inMain)
        operation.finish()
        #expect(operation.lifecycleSnapshot == .pending, "never finished before it is started")
        operation.start()
        #expect(operation.lifecycleSnapshot == .finished)
        #expect(operation.mainCalls.value == 0)
    }

    @Test func finishingManyTimesFromManyThreadsFinishesOnce() async throws {
        let queue = OperationQueue()
        let operation = ProbeOperation(.byTest)
        let completions = Counter()
        let completion = Latch(count: 1)
        operation.completionBlock = {
            completions.increment()
            completion.arrive()
        }
        let dependentRuns = Counter()
        let dependent = BlockOperation { dependentRuns.increment() }
        dependent.addDependency(operation)
        queue.addOperationsWithoutWaiting([operation, dependent])

        await operation.started.wait()
        await onDispatchThread {
            DispatchQueue.concurrentPerform(iterations: 16) { _ in operation.finish() }
        }
        try await queue.waitForAllOperations()
        await completion.wait()
        operation.finish()
        #expect(operation.lifecycleSnapshot == .finished)
        #expect(dependentRuns.value == 1)
        #expect(completions.value == 1)
    }

    // MARK: - Cancellation

    @Test func cancelledBeforeAManualStartFinishesOnlyWhenStarted() {
        let operation = ProbeOperation(.inMain)
        operation.cancel()
        #expect(operation.lifecycleSnapshot == .cancelledPending)
        operation.start()
        #expect(operation.lifecycleSnapshot == .cancelledFinished)
        #expect(operation.mainCalls.value == 0)
    }

    @Test func cancelledBeforeStartOnAQueueFinishesPromptlyWithoutRunning() async throws {
        let queue = OperationQueue()
        let gate = Gate()
        let blocker = ProbeOperation(.whenOpened(gate))
        let target = ProbeOperation(.inMain)
        target.addDependency(blocker)
        queue.addOperationsWithoutWaiting([blocker, target])

        target.cancel()
        try await target.bridge.waitForCompletion()
        #expect(target.lifecycleSnapshot == .cancelledFinished)
        #expect(target.mainCalls.value == 0)
        #expect(!blocker.isFinished, "a cancelled operation does not wait for its dependencies")

        gate.open()
        try await queue.waitForAllOperations()
        #expect(blocker.lifecycleSnapshot == .finished)
    }

    @Test func cancelWhileRunningDoesNotFinishTheOperationByItself() async throws {
        let queue = OperationQueue()
        let gate = Gate()
        let operation = ProbeOperation(.whenOpened(gate))
        let seenByDependent = Recorder<LifecycleSnapshot>()
        let dependent = BlockOperation { [operation] in seenByDependent.append(operation.lifecycleSnapshot) }
        dependent.addDependency(operation)
        queue.addOperationsWithoutWaiting([operation, dependent])

        await operation.started.wait()
        operation.cancel()
        operation.cancel()
        #expect(operation.lifecycleSnapshot == .cancelledExecuting)
        #expect(seenByDependent.all.isEmpty)

        gate.open()
        try await dependent.bridge.waitForCompletion()
        #expect(seenByDependent.all == [.cancelledFinished])
        #expect(operation.mainCalls.value == 1)
    }

    @Test func cancellingAFinishedOperationChangesNothing() {
        let operation = ProbeOperation(.inMain)
        operation.start()
        operation.cancel()
        #expect(operation.lifecycleSnapshot == .finished)
    }

    // MARK: - Programmer errors

    #if EXIT_TESTS
        @Test func mainWithoutOverrideTrapsWithAClearMessage() async throws {
            let exit = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                AsyncOperation().start()
            }
            let message = String(decoding: try #require(exit).standardErrorContent, as: UTF8.self)
            #expect(message.contains("AsyncOperation must override main() and call finish()"))
        }
    #endif

    // MARK: - Memory

    @Test func finishedOperationsAreReleased() async throws {
        let underlying = DispatchQueue(label: "AsyncOperationTests.release")
        let queue = OperationQueue()
        queue.underlyingQueue = underlying
        var references: [WeakBox<Operation>] = []
        do {
            let first = ProbeOperation(.inMain)
            let second = ProbeOperation(.inMain)
            second.addDependency(first)
            let cancelled = ProbeOperation(.inMain)
            cancelled.addDependency(second)
            cancelled.cancel()
            let manual = ProbeOperation(.inMain)
            let neverStarted = ProbeOperation(.inMain)
            references = [first, second, cancelled, manual, neverStarted].map { WeakBox<Operation>($0) }

            queue.addOperationsWithoutWaiting([first, second, cancelled])
            manual.start()
            try await queue.waitForAllOperations()
            #expect([first, second, cancelled, manual].allSatisfy { $0.isFinished })
        }
        // The queue's threads let go of an operation only after `start()` has returned.
        await drain(underlying)
        for reference in references {
            #expect(reference.object == nil)
        }
    }
}
