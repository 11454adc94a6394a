import Foundation
import OperationBridge
import Testing

@Suite(.timeLimit(Stress.timeLimit(minutes: 1)))
struct OperationQueueAddTaskTests {
    @Test func theHandleIsAwaitable() async throws {
        let queue = OperationQueue()
        let release = Gate()
        let handle = queue.addTask { () async throws(StepError) -> Int in
            await release.wait()
            return 42
        }
        // The handle is the operation in the queue, running until the closure returns.
        #expect(queue.operations.contains(handle))
        #expect(!handle.isFinished)
        release.open()
        #expect(try await handle.bridge.value == 42)
        #expect(handle.isFinished && handle.result == .success(42))
    }

    @Test func theHandleIsCancellable() async throws {
        let queue = OperationQueue()
        let entered = Gate()
        let sawCancellation = Guarded(false)
        let handle = queue.addTask { () async throws(CancellationError) -> Int in
            entered.open()
            await suspendUntilCancelled()
            sawCancellation.set(Task.isCancelled)
            return 1
        }
        await entered.wait()
        handle.cancel()
        do {
            _ = try await handle.bridge.value
            Issue.record("a cancelled task has no value")
        } catch {
            let typed: CancellationError = error
            _ = typed
        }
        #expect(sawCancellation.current)
        #expect(handle.isCancelled && handle.isFinished)
    }

    @Test func cancellingTheHandleBeforeTheQueueStartsItSkipsTheClosure() async throws {
        let queue = OperationQueue()
        queue.isSuspended = true
        let ran = Guarded(false)
        let handle = queue.addTask { () async throws(StepError) -> Int in
            ran.set(true)
            return 1
        }
        handle.cancel()
        queue.isSuspended = false
        #expect(await handle.bridge.outcome == .failure(.cancelled))
        #expect(!ran.current)
    }

    @Test(arguments: TaskOperationTests.priorityTable)
    func theQualityOfServiceSetsThePriority(qualityOfService: QualityOfService, expected: TaskPriority) async {
        let queue = OperationQueue()
        let seen = Guarded<TaskPriority?>(nil)
        let done = Gate()
        let handle = queue.addTask(qualityOfService: qualityOfService) { () async -> Int in
            seen.set(Task.currentPriority)
            done.open()
            return 0
        }
        await done.wait()
        #expect(handle.qualityOfService == qualityOfService)
        #expect(seen.current == expected)
    }

    @Test func aTaskHoldsItsQueueSlotUntilTheClosureReturns() async throws {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let entered = Gate()
        let release = Gate()
        let log = Recorder<String>()
        let first = queue.addTask { () async -> Int in
            entered.open()
            log.append("first starts")
            await release.wait()
            log.append("first returns")
            return 1
        }
        let firstFinishedWhenSecondRan = Guarded<Bool?>(nil)
        let second = queue.addTask { () async -> Int in
            firstFinishedWhenSecondRan.set(first.isFinished)
            log.append("second starts")
            return 2
        }
        await entered.wait()
        #expect(!second.isExecuting && !second.isFinished)
        release.open()
        #expect(await second.bridge.outcome == .success(2))
        #expect(await first.bridge.outcome == .success(1))
        #expect(log.all == ["first starts", "first returns", "second starts"])
        #expect(firstFinishedWhenSecondRan.current == true)
    }

    @Test func theHandleAndItsClosureAreReleasedAfterCompletion() async {
        let queue = OperationQueue()
        let released = Trigger()
        var weakHandle: WeakBox<TaskOperation<Int, StepError>>?
        do {
            let handle = queue.addTask { [probe = DeinitProbe(released)] () async throws(StepError) -> Int in
                withExtendedLifetime(probe) { 3 }
            }
            weakHandle = WeakBox(handle)
            #expect(try await handle.bridge.value == 3)
        } catch {
            Issue.record("unexpected failure \(error)")
        }
        #expect(await released.wait())
        #expect(weakHandle?.object == nil)
    }
}

@Suite struct TaskPriorityMappingTests {
    @Test(arguments: TaskOperationTests.priorityTable)
    func qualityOfServiceToTaskPriority(qualityOfService: QualityOfService, expected: TaskPriority) {
        #expect(TaskPriority(qualityOfService) == expected)
    }

    static let reverseTable: [(TaskPriority, QualityOfService)] = [
        (.high, .userInitiated),
        (.userInitiated, .userInitiated),
        (.medium, .default),
        (.low, .utility),
        (.utility, .utility),
        (.background, .background),
    ]

    @Test(arguments: reverseTable)
    func taskPriorityToQualityOfService(priority: TaskPriority, expected: QualityOfService) {
        #expect(QualityOfService(priority) == expected)
    }

    @Test(arguments: TaskOperationTests.priorityTable.map(\.0))
    func aRoundTripKeepsEveryQualityOfServiceButUserInteractive(qualityOfService: QualityOfService) {
        let back = QualityOfService(TaskPriority(qualityOfService))
        // `.userInteractive` and `.userInitiated` share `.high`.
        #expect(back == (qualityOfService == .userInteractive ? .userInitiated : qualityOfService))
    }
}
