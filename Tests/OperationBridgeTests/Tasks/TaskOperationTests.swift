import Foundation
import OperationBridge
import Testing

/// A task-local value, to show what crosses (or does not cross) the operation boundary.
private enum TaskBoundaryContext {
    @TaskLocal static var id: String?
}

/// How a test starts an operation.
enum TaskStartStyle: String, CaseIterable, Sendable, CustomStringConvertible {
    /// Added to an `OperationQueue`.
    case queued
    /// `start()` called by the test, outside any queue.
    case byHand

    var description: String { rawValue }

    func start(_ operation: Operation) {
        switch self {
        case .queued: OperationQueue().addOperation(operation)
        case .byHand: operation.start()
        }
    }
}

/// The failure types the cancellation tests cover.
enum CancellationFlavor: String, CaseIterable, Sendable, CustomStringConvertible {
    case cancellationError
    case anyError
    case representable
    case inexpressible

    var description: String { rawValue }
}

@Suite(.timeLimit(Stress.timeLimit(minutes: 1)))
struct TaskOperationTests {
    // MARK: - Results

    @Test func theClosureValueIsTheResult() async throws {
        let queue = OperationQueue()
        let operation = TaskOperation { () async throws(StepError) -> Int in 42 }
        queue.addOperation(operation)
        #expect(try await operation.bridge.value == 42)
        #expect(operation.result == .success(42))
        #expect(operation.isFinished && !operation.isCancelled)
    }

    @Test func aThrownErrorKeepsItsType() async {
        let queue = OperationQueue()
        let operation = TaskOperation { () async throws(StepError) -> Int in throw .planned(7) }
        queue.addOperation(operation)
        do {
            _ = try await operation.bridge.value
            Issue.record("the operation should have failed")
        } catch {
            let typed: StepError = error  // `value` throws `StepError`, not `any Error`
            #expect(typed == .planned(7))
        }
        #expect(operation.result == .failure(.planned(7)))
    }

    // MARK: - Finishing only when the closure has returned

    @Test func aDependentWaitsForTheClosureEvenAfterCancel() async throws {
        let queue = OperationQueue()
        let entered = Gate()
        let release = Gate()
        let cancelReached = Gate()
        let log = Recorder<String>()
        // The closure ignores cancellation: it returns only when the test opens `release`.
        let operation = TaskOperation { () async throws(CancellationError) -> Int in
            entered.open()
            // Ignores cancellation. `cancelReached` tells the test when the cancellation reached
            // the task: one that comes while the closure is still being started reaches it a
            // moment later (TaskOperation, "Where the closure runs"; CI21 resumed the closure first).
            await withTaskCancellationHandler {
                await release.wait()
            } onCancel: {
                cancelReached.open()
            }
            log.append("closure returns, cancelled: \(Task.isCancelled)")
            return 1
        }
        let dependent = BlockOperation { log.append("dependent runs") }
        dependent.addDependency(operation)
        queue.addOperation(dependent)
        queue.addOperation(operation)

        await entered.wait()
        operation.cancel()
        #expect(operation.isCancelled)
        #expect(operation.isExecuting)
        #expect(!operation.isFinished)
        #expect(!dependent.isExecuting && !dependent.isFinished)
        #expect(log.all.isEmpty)

        await cancelReached.wait()
        release.open()
        try await dependent.bridge.waitForCompletion()
        #expect(log.all == ["closure returns, cancelled: true", "dependent runs"])
        #expect(operation.isFinished)
        // Cancelled first: the cancellation failure wins over the value returned afterwards.
        #expect(isCancellationError(operation.result))
    }

    @Test func aCancelledOperationKeepsItsQueueSlotUntilTheClosureReturns() async throws {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let entered = Gate()
        let release = Gate()
        let first = TaskOperation { () async -> Int in
            entered.open()
            await release.wait()
            return 1
        }
        let firstFinishedWhenSecondRan = Guarded<Bool?>(nil)
        let second = TaskOperation { () async -> Int in
            firstFinishedWhenSecondRan.set(first.isFinished)
            return 2
        }
        queue.addOperation(first)
        queue.addOperation(second)
        await entered.wait()
        first.cancel()
        #expect(!first.isFinished)
        #expect(!second.isExecuting && !second.isFinished)
        release.open()
        #expect(await second.bridge.outcome == .success(2))
        #expect(firstFinishedWhenSecondRan.current == true)
    }

    @Test(.timeLimit(Stress.timeLimit(minutes: 1)))
    func neverMoreClosuresAtOnceThanTheQueueAllows() async throws {
        let count = 50
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 2
        let gates = (0..<count).map { _ in Gate() }
        let meter = ConcurrencyMeter()
        let (starts, startContinuation) = AsyncStream.makeStream(of: Int.self)
        let operations = (0..<count).map { index in
            TaskOperation { () async -> Int in
                meter.enter()
                startContinuation.yield(index)
                await gates[index].wait()
                meter.leave()
                return index
            }
        }
        for operation in operations { queue.addOperation(operation) }

        // Keep two closures blocked at all times; release the oldest only once the queue has
        // started as many as it may, so that the limit is really exercised.
        var running: [Int] = []
        var released = 0
        var startEvents = starts.makeAsyncIterator()
        while released < count {
            while running.count < min(2, count - released), let index = await startEvents.next() {
                running.append(index)
            }
            #expect(running.count == min(2, count - released))
            if running.count == 2 {
                // The closure released last left before its operation finished, so before the
                // queue started the newest one: exactly two are inside.
                #expect(meter.current == 2)
            }
            for index in running {
                #expect(!operations[index].isFinished, "operation \(index) finished while its closure runs")
            }
            gates[running.removeFirst()].open()
            released += 1
        }
        startContinuation.finish()

        for (index, operation) in operations.enumerated() {
            #expect(await operation.bridge.outcome == .success(index))
        }
        #expect(meter.maximum == 2)
        #expect(await startEvents.next() == nil)
    }

    // MARK: - Cancellation

    @Test func cancellationReachesTheClosure() async {
        let queue = OperationQueue()
        let entered = Gate()
        let seen = Recorder<Bool>()
        // `Never` cannot express cancellation: the operation ends cancelled without a result, so
        // the closure reports what it saw through `seen`.
        let operation = TaskOperation { () async -> Bool in
            entered.open()
            await suspendUntilCancelled()
            seen.append(Task.isCancelled)
            return Task.isCancelled
        }
        queue.addOperation(operation)
        await entered.wait()
        operation.cancel()
        #expect(await operation.bridge.outcome == nil)
        #expect(seen.all == [true])
        #expect(operation.isCancelled)
    }

    @Test func aClosureThatStopsOnCancellationEndsWithTheCancellationFailure() async {
        let queue = OperationQueue()
        let entered = Gate()
        let sawCancellation = Guarded(false)
        let operation = TaskOperation { () async throws(StepError) -> Int in
            entered.open()
            await suspendUntilCancelled()
            sawCancellation.set(Task.isCancelled)
            if Task.isCancelled { throw .planned(-1) }
            return 1
        }
        queue.addOperation(operation)
        await entered.wait()
        operation.cancel()
        do {
            _ = try await operation.bridge.value
            Issue.record("a cancelled operation has no value")
        } catch {
            // The cancellation failure was recorded first; the error thrown afterwards is ignored.
            #expect(error == .cancelled)
        }
        #expect(sawCancellation.current)
    }

    @Test(arguments: CancellationFlavor.allCases, TaskStartStyle.allCases)
    func cancelledBeforeStartTheClosureNeverRuns(flavor: CancellationFlavor, start: TaskStartStyle) async throws {
        switch flavor {
        case .cancellationError:
            let (ran, result) = try await runCancelledBeforeStart(CancellationError.self, start: start)
            #expect(!ran)
            #expect(isCancellationError(result))
        case .anyError:
            let (ran, result) = try await runCancelledBeforeStart((any Error).self, start: start)
            #expect(!ran)
            #expect(isCancellationError(result))
        case .representable:
            let (ran, result) = try await runCancelledBeforeStart(StepError.self, start: start)
            #expect(!ran)
            #expect(result == .failure(.cancelled))
        case .inexpressible:
            let (ran, result) = try await runCancelledBeforeStart(InexpressibleError.self, start: start)
            #expect(!ran)
            #expect(result == nil)
        }
    }

    private func runCancelledBeforeStart<Failure: Error>(
        _: Failure.Type,
        start: TaskStartStyle
    ) async throws -> (ran: Bool, result: Result<Int, Failure>?) {
        let ran = Guarded(false)
        let operation = TaskOperation { () async throws(Failure) -> Int in
            ran.set(true)
            return 1
        }
        operation.cancel()
        start.start(operation)
        try await operation.bridge.waitForCompletion()
        #expect(operation.isCancelled && operation.isFinished)
        return (ran.current, operation.result)
    }

    @Test func cancelledWhileWaitingForADependencyTheClosureNeverRuns() async throws {
        let queue = OperationQueue()
        let release = Trigger()
        let dependency = GatedResultOperation<Int, StepError>(.success(1), trigger: release)
        let ran = Guarded(false)
        let operation = TaskOperation { () async throws(StepError) -> Int in
            ran.set(true)
            return 2
        }
        operation.addDependency(dependency)
        queue.addOperation(dependency)
        queue.addOperation(operation)
        await dependency.started.wait()
        operation.cancel()
        release.fire()
        #expect(await operation.bridge.outcome == .failure(.cancelled))
        try await dependency.bridge.waitForCompletion()
        #expect(!ran.current)
        // Keep the cancelled operation alive until its dependency has finished: on Linux the
        // dependency refers to it through an unretained pointer.
        withExtendedLifetime(operation) {}
    }

    // MARK: - Priority

    static let priorityTable: [(QualityOfService, TaskPriority)] = [
        (.userInteractive, .high),
        (.userInitiated, .high),
        (.default, .medium),
        (.utility, .utility),
        (.background, .background),
    ]

    @Test(arguments: priorityTable)
    func theTaskPriorityComesFromTheQualityOfService(
        qualityOfService: QualityOfService,
        expected: TaskPriority
    ) async {
        let queue = OperationQueue()
        let seen = Guarded<TaskPriority?>(nil)
        let done = Gate()
        let operation = TaskOperation { () async -> Int in
            seen.set(Task.currentPriority)
            done.open()
            return 0
        }
        operation.qualityOfService = qualityOfService
        queue.addOperation(operation)
        // Wait at a gate, not through the awaiting APIs: awaiting an operation raises its
        // quality of service to the awaiting task's priority.
        await done.wait()
        #expect(seen.current == expected)
        #expect(TaskPriority(qualityOfService) == expected)
    }

    // MARK: - Task-local values

    @Test func taskLocalValuesDoNotCrossTheOperationBoundary() async {
        let (plain, rebound) = await taskLocalsSeenInside(startedBy: .queued)
        #expect(plain == .success(nil))
        #expect(rebound == .success("request-1"))
    }

    /// An operation started by hand from async code must not see its caller's task-locals either
    /// (the closure's task is detached), as the design requires (OperationBridge.docc/Design.md).
    @Test func taskLocalValuesDoNotCrossTheOperationBoundaryWhenStartedByHand() async {
        let (plain, rebound) = await taskLocalsSeenInside(startedBy: .byHand)
        #expect(plain == .success(nil))
        #expect(rebound == .success("request-1"))
    }

    /// Runs, inside a `TaskBoundaryContext.id` binding, one operation that reads the task-local
    /// and one that binds it again from a captured value (the documented alternative).
    private func taskLocalsSeenInside(
        startedBy start: TaskStartStyle
    ) async -> (plain: Result<String?, Never>?, rebound: Result<String?, Never>?) {
        await TaskBoundaryContext.$id.withValue("request-1") {
            let plain = TaskOperation { () async -> String? in TaskBoundaryContext.id }
            let id = TaskBoundaryContext.id
            let rebound = TaskOperation { () async -> String? in
                TaskBoundaryContext.$id.withValue(id) { TaskBoundaryContext.id }
            }
            start.start(plain)
            start.start(rebound)
            return (await plain.bridge.outcome, await rebound.bridge.outcome)
        }
    }

    // MARK: - Where the closure runs

    /// The closure starts on the thread that starts the operation (`Task.immediateDetached`): one
    /// that never suspends has finished the operation before `start()` returns, with no hop to
    /// the cooperative pool (Design.md, "Async → operations").
    @Test func aClosureThatNeverSuspendsRunsOnTheThreadThatStartsTheOperation() async {
        guard #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) else { return }
        let threads = Recorder<ObjectIdentifier>()
        let operation = TaskOperation { () async -> Int in
            threads.append(currentThread())
            return 7
        }
        let finishedWhenStartReturned = Recorder<Bool>()
        let done = Gate()
        let thread = Thread {
            threads.append(currentThread())
            operation.start()
            finishedWhenStartReturned.append(operation.isFinished)
            done.open()
        }
        thread.start()
        await done.wait()
        #expect(finishedWhenStartReturned.all == [true])
        let seen = threads.all
        #expect(seen.count == 2 && seen.first == seen.last)
        #expect(await operation.bridge.value == 7)
    }

    /// A cancellation that arrives while the closure runs on the starting thread, before its task
    /// was stored in the operation, still cancels the task.
    @Test(arguments: TaskStartStyle.allCases)
    func aCancellationBeforeTheFirstSuspensionReachesTheTask(start: TaskStartStyle) async {
        let cancelledInside = Recorder<Bool>()
        let box = Guarded<Operation?>(nil)
        let operation = TaskOperation { () async -> Int in
            box.current?.cancel()  // before the closure's first suspension
            await suspendUntilCancelled()
            cancelledInside.append(Task.isCancelled)
            return 1
        }
        box.set(operation)
        start.start(operation)
        _ = await operation.bridge.outcome
        box.set(nil)  // the box, held by the closure, held the operation
        #expect(cancelledInside.all == [true])
        #expect(operation.isCancelled)
        #expect(operation.result == nil)
    }

    // MARK: - Memory

    @Test(arguments: TaskStartStyle.allCases)
    func theClosureAndTheOperationAreReleasedAfterCompletion(start: TaskStartStyle) async {
        let released = Trigger()
        var weakOperation: WeakBox<TaskOperation<Int, StepError>>?
        do {
            let probe = DeinitProbe(released)
            let operation = TaskOperation { () async throws(StepError) -> Int in
                withExtendedLifetime(probe) { 1 }
            }
            weakOperation = WeakBox(operation)
            start.start(operation)
            #expect(await operation.bridge.outcome == .success(1))
        }
        // The probe lives in the closure, which the operation owns: it goes when they go.
        #expect(await released.wait())
        #expect(weakOperation?.object == nil)
    }

    @Test func aCancelledOperationAndItsClosureAreReleased() async {
        let queue = OperationQueue()
        let releasedBeforeStart = Trigger()
        let releasedWhileRunning = Trigger()
        var weakOperations: [WeakBox<TaskOperation<Int, StepError>>] = []
        do {
            let neverRun = TaskOperation {
                [probe = DeinitProbe(releasedBeforeStart)] () async throws(StepError) -> Int in
                withExtendedLifetime(probe) { 1 }
            }
            let entered = Gate()
            let running = TaskOperation {
                [probe = DeinitProbe(releasedWhileRunning)] () async throws(StepError) -> Int in
                entered.open()
                await suspendUntilCancelled()
                return withExtendedLifetime(probe) { 2 }
            }
            weakOperations = [WeakBox(neverRun), WeakBox(running)]
            neverRun.cancel()
            queue.addOperation(neverRun)
            queue.addOperation(running)
            await entered.wait()
            running.cancel()
            #expect(await neverRun.bridge.outcome == .failure(.cancelled))
            #expect(await running.bridge.outcome == .failure(.cancelled))
        }
        #expect(await releasedBeforeStart.wait())
        #expect(await releasedWhileRunning.wait())
        #expect(weakOperations.allSatisfy { $0.object == nil })
    }
}

/// The thread running the caller, for the tests of where a closure runs.
private func currentThread() -> ObjectIdentifier {
    ObjectIdentifier(Thread.current)
}
