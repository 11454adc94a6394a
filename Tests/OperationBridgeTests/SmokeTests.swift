import Foundation
import OperationBridge
import Testing

@Suite struct SmokeTests {
    @Test func runAwaitsTypedValue() async throws {
        let queue = OperationQueue()
        let value = try await queue.run(ControlledOperation<Int, CancellationError>(.success(42)))
        #expect(value == 42)
    }

    @Test func chainedReadsInput() {
        let op = ChainedAsyncResultOperation<Int, Int, CancellationError>(input: 1)
        #expect(op.input == 1)
    }

    @Test func blockOperationCanBeAwaited() async throws {
        let queue = OperationQueue()
        let gate = Gate()
        let block = BlockOperation { gate.blockingWait() }
        queue.addOperation(block)
        let waiter = Task { try await block.bridge.waitForCompletion() }
        gate.open()
        try await waiter.value
        #expect(block.isFinished)
    }
}
