import Foundation
import OperationBridge
import Testing

/// Awaiting many operations: `Sequence.waitForCompletion()` and the async queue drain
/// `OperationQueue.waitUntilAllOperationsAreFinished()` (the blocking one is unavailable from
/// async code in Swift 6).
///
/// The awaiting tasks return a snapshot of `isFinished` taken the moment they were answered,
/// so an early answer fails the test whatever the timing.
@Suite(.timeLimit(Stress.timeLimit(minutes: 1)))
struct QueueDrainTests {
    @Test("waitUntilAllFinished: operations of several kinds, in two queues, finishing in any order")
    func waitUntilAllFinishedForASet() async throws {
        let gates = [Gate(), Gate()]
        let hold = Hold()
        let resultOperation = ControlledOperation<Int, TransferError>(.success(1), gate: gates[0])
        let block = hold.hold(BlockOperation {})
        let legacy = LegacyAsyncOperation(gate: gates[1])
        let operations: [Operation] = [resultOperation, block, legacy]
        let first = OperationQueue()
        let second = OperationQueue()
        first.addOperation(resultOperation)
        second.addOperation(block)
        second.addOperation(legacy)

        let awaiter = Task {
            try await operations.waitForCompletion()
            return operations.map(\.isFinished)
        }
        gates[1].open()
        hold.release()
        gates[0].open()
        #expect(try await awaiter.value == [true, true, true])
    }

    @Test("waitUntilAllFinished: cancelling the awaiting task throws; the operations go on")
    func waitUntilAllFinishedCancelled() async {
        let queue = OperationQueue()
        queue.isSuspended = true
        let operations = (0..<3).map { _ in ControlledOperation<Int, TransferError>(.success(1)) }
        for operation in operations { queue.addOperation(operation) }
        let awaiter = Task { try await operations.waitForCompletion() }
        awaiter.cancel()

        await #expect(throws: CancellationError.self) { try await awaiter.value }
        #expect(operations.allSatisfy { !$0.isCancelled && !$0.isFinished })
        queue.isSuspended = false
        try? await operations.waitForCompletion()
        #expect(operations.allSatisfy { $0.isFinished })
    }

    @Test("The queue drain returns at once for an empty queue")
    func drainEmptyQueue() async throws {
        try await OperationQueue().waitForAllOperations()
    }

    @Test("The queue drain waits for every operation")
    func drainWaitsForEveryOperation() async throws {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 2
        let gate = Gate()
        let hold = Hold()
        let operations: [Operation] =
            (0..<5).map { _ in ControlledOperation<Int, TransferError>(.success(1), gate: gate) }
            + [hold.hold(BlockOperation {}), LegacyAsyncOperation(gate: gate)]
        for operation in operations { queue.addOperation(operation) }
        let drain = Task {
            try await queue.waitForAllOperations()
            return operations.map(\.isFinished)
        }
        gate.open()
        hold.release()
        #expect(try await drain.value == Array(repeating: true, count: operations.count))
    }

    @Test("The queue drain includes operations added while draining")
    func drainIncludesOperationsAddedWhileDraining() async throws {
        let queue = OperationQueue()
        let hold = Hold()
        let laterGate = Gate()
        let later = ControlledOperation<Int, TransferError>(.success(2), gate: laterGate)
        let first = hold.hold(
            BlockOperation {
                queue.addOperation(later)  // added while the drain waits for `first`
            })
        queue.addOperation(first)
        let drain = Task {
            try await queue.waitForAllOperations()
            return [first.isFinished, later.isFinished]
        }
        hold.release()
        try await first.bridge.waitForCompletion()
        laterGate.open()

        #expect(try await drain.value == [true, true])
    }

    @Test("The queue drain of a suspended queue is answered only after the queue is resumed")
    func drainSuspendedQueueResumedLater() async throws {
        let events = Recorder<String>()
        let queue = OperationQueue()
        queue.isSuspended = true
        let operation = ManualResultOperation<Int, TransferError>(events: events)
        queue.addOperation(operation)
        let drain = Task {
            try await queue.waitForAllOperations()
            events.append("drained")
        }
        events.append("resumed")
        queue.isSuspended = false
        await operation.started.wait()
        operation.finish(with: .success(1))

        try await drain.value
        #expect(events.all == ["resumed", "main", "drained"])
    }

    @Test("The queue drain of a suspended queue: cancelling the waiter throws; the queue is untouched")
    func drainSuspendedQueueCancelledWaiter() async {
        let queue = OperationQueue()
        queue.isSuspended = true
        let operation = ManualResultOperation<Int, TransferError>()
        queue.addOperation(operation)
        let drain = Task { try await queue.waitForAllOperations() }
        drain.cancel()

        await #expect(throws: CancellationError.self) { try await drain.value }
        #expect(queue.isSuspended)
        #expect(queue.operationCount == 1)
        #expect(!operation.isCancelled)

        queue.isSuspended = false
        await operation.started.wait()
        operation.finish(with: .success(1))
        try? await queue.waitForAllOperations()
        #expect(queue.operationCount == 0)
    }

    @Test("The queue drain waits for barrier blocks, as the blocking wait does")
    func drainWaitsForBarrierBlocks() async throws {
        let queue = OperationQueue()
        let gate = Gate()
        let barrierRan = LockedBox(false)
        let operation = ControlledOperation<Int, TransferError>(.success(1), gate: gate)
        queue.addOperation(operation)
        // `operations` lists no barrier blocks: a drain that read it would return as soon as
        // `operation` finished, before the barrier had run.
        queue.addBarrierBlock { barrierRan.withLock { $0 = true } }
        let drain = Task {
            try await queue.waitForAllOperations()
            return barrierRan.current
        }
        gate.open()
        #expect(try await drain.value)
    }

    @Test("The queue drain outlasts cancelAllOperations(): it still waits for running operations", arguments: 0..<20)
    func drainSurvivesCancelAll(round: Int) async throws {
        let queue = OperationQueue()
        let gate = Gate()
        // Ignores cancellation: it finishes only when the gate opens.
        let operation = ControlledOperation<Int, TransferError>(.success(round), gate: gate)
        queue.addOperation(operation)
        await operation.started.wait()
        let drain = Task {
            try await queue.waitForAllOperations()
            return operation.isFinished
        }
        for _ in 0..<round { await Task.yield() }
        // Cancels the drain's barrier block too, when it is queued by now: its block then never
        // runs, and the drain must notice and wait again rather than hang or return early.
        queue.cancelAllOperations()
        gate.open()
        #expect(try await drain.value)
    }
}
