import Foundation
import OperationBridge
import Testing

/// Awaiting operations that are not the package's: a hand-written asynchronous subclass with
/// KVO-style overrides, and `BlockOperation`. There is no KVO on Linux, and `completionBlock`
/// belongs to the user: the bridge must use neither.
@Suite(.timeLimit(Stress.timeLimit(minutes: 1)))
struct ForeignOperationAwaitingTests {
    enum StartMode: String, CaseIterable, Sendable {
        case queued
        case startedByHand
    }

    @Test("A hand-written asynchronous subclass, awaited before it starts", arguments: StartMode.allCases)
    func legacySubclass(start: StartMode) async throws {
        let events = Recorder<String>()
        let gate = Gate()
        let operation = LegacyAsyncOperation(gate: gate, events: events)
        let queue = OperationQueue()
        let awaiter = Task {
            try await operation.bridge.waitForCompletion()
            events.append("answered")
            return operation.isFinished
        }
        switch start {
        case .queued: queue.addOperation(operation)
        case .startedByHand: operation.start()
        }
        await operation.started.wait()
        gate.open()

        #expect(try await awaiter.value, "finished when the awaiter was answered")
        #expect(events.all == ["legacy started", "legacy finished", "answered"])
        #expect(operation.completionBlockAssignments.all.isEmpty, "the bridge never sets completionBlock")
    }

    @Test("A hand-written subclass cancelled before it starts: its awaiter is answered when it finishes")
    func legacySubclassCancelledBeforeStart() async throws {
        let events = Recorder<String>()
        let operation = LegacyAsyncOperation(gate: Gate(), events: events)
        operation.cancel()
        let awaiter = Task { try await operation.bridge.waitForCompletion() }
        OperationQueue().addOperation(operation)

        try await awaiter.value
        #expect(operation.isFinished)
        #expect(events.all == ["legacy finished"])
    }

    @Test("A hand-written subclass that is never started: cancelling the awaiting task answers it")
    func legacySubclassNeverStarted() async {
        let operation = LegacyAsyncOperation(gate: Gate())
        let awaiter = Task { try await operation.bridge.waitForCompletion() }
        awaiter.cancel()

        await #expect(throws: CancellationError.self) { try await awaiter.value }
        #expect(!operation.isCancelled)
        #expect(!operation.isFinished)
    }

    @Test("runUntilFinished with a hand-written subclass: cancelling the task before it starts answers at once")
    func legacySubclassRunCancelledBeforeStart() async throws {
        let events = Recorder<String>()
        let queue = OperationQueue()
        queue.isSuspended = true
        let operation = LegacyAsyncOperation(gate: Gate(), events: events)
        let runner = Task { try await queue.runUntilFinished(operation) }
        runner.cancel()

        await #expect(throws: CancellationError.self) { try await runner.value }
        #expect(operation.isCancelled)
        queue.isSuspended = false
        try await operation.bridge.waitForCompletion()
        #expect(events.all == ["legacy finished"], "finished without starting its work")
    }

    @Test("A BlockOperation: the awaiter is answered and the user's completionBlock runs exactly once")
    func blockOperationCompletionBlockRunsOnce() async throws {
        let queue = OperationQueue()
        let hold = Hold()
        let completions = LockedBox(0)
        let completionRan = OneShotSignal()
        let block = hold.hold(BlockOperation {})
        block.completionBlock = {
            completions.withLock { $0 += 1 }
            completionRan.fire()
        }
        let awaiter = Task {
            try await block.bridge.waitForCompletion()
            return block.isFinished
        }
        queue.addOperation(block)
        hold.release()

        #expect(try await awaiter.value)
        #expect(await completionRan.wait())
        #expect(completions.current == 1)
    }

    @Test("Awaiting a BlockOperation never assigns its completionBlock")
    func blockOperationCompletionBlockIsNotAssigned() async throws {
        let queue = OperationQueue()
        let hold = Hold()
        let completionRan = OneShotSignal()
        let block = hold.hold(CompletionRecordingBlockOperation {})
        block.completionBlock = { completionRan.fire() }
        let awaiters = (0..<3).map { _ in Task { try await block.bridge.waitForCompletion() } }
        let runner = Task { try await queue.runUntilFinished(block) }
        hold.release()

        try await runner.value
        for awaiter in awaiters { try await awaiter.value }
        #expect(await completionRan.wait())
        // The user's assignment only (Apple platforms may also clear the property after running
        // the block, which would add a `false`).
        #expect(block.completionBlockAssignments.all.filter { $0 } == [true])
        #expect(block.completionBlockAssignments.all.first == true)
    }

    @Test("The user may replace completionBlock while the operation is awaited")
    func userReplacesCompletionBlockWhileAwaited() async throws {
        let queue = OperationQueue()
        let hold = Hold()
        let ran = Recorder<String>()
        let secondRan = OneShotSignal()
        let block = hold.hold(BlockOperation {})
        block.completionBlock = { ran.append("first") }
        let awaiter = Task { try await block.bridge.waitForCompletion() }
        queue.addOperation(block)
        block.completionBlock = {
            ran.append("second")
            secondRan.fire()
        }
        hold.release()

        try await awaiter.value
        #expect(await secondRan.wait())
        #expect(ran.all == ["second"])
    }

    @Test("A BlockOperation that has already finished is answered at once and not enqueued again")
    func finishedBlockOperation() async throws {
        let runs = LockedBox(0)
        let block = BlockOperation { runs.withLock { $0 += 1 } }
        block.start()
        #expect(block.isFinished)

        try await block.bridge.waitForCompletion()
        let queue = OperationQueue()
        try await queue.runUntilFinished(block)
        #expect(queue.operationCount == 0)
        #expect(runs.current == 1)
    }

    @Test("Many tasks await one foreign operation")
    func manyTasksAwaitOneForeignOperation() async {
        let gate = Gate()
        let operation = LegacyAsyncOperation(gate: gate)
        OperationQueue().addOperation(operation)
        let answered = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<50 {
                group.addTask {
                    do {
                        try await operation.bridge.waitForCompletion()
                        return operation.isFinished
                    } catch {
                        return false
                    }
                }
            }
            gate.open()
            var answered = 0
            for await finished in group where finished { answered += 1 }
            return answered
        }
        #expect(answered == 50)
    }
}
