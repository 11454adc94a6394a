import Foundation
import OperationBridge
import Testing

@Suite("Pause and resume")
struct PauseResumeTests {
    @Test("A paused operation takes no slot: a queue with one slot runs later work, then the operation once resumed")
    func pausedTakesNoSlot() async throws {
        let paused = ProbeResultOperation<Never>(.inMain(.success(1)))
        paused.bridge.pause()
        #expect(paused.bridge.isPaused && !paused.isReady)
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        queue.addOperation(paused)
        try await queue.runUntilFinished(BlockOperation {})
        #expect(paused.mainCalls.value == 0 && !paused.isFinished)
        paused.bridge.resume()
        #expect(!paused.bridge.isPaused)
        #expect(await queue.run(paused) == 1)
    }

    @Test("Cancelling a paused operation finishes it without running when its queue starts it")
    func cancelPaused() async throws {
        let paused = ProbeOperation()
        paused.bridge.pause()
        let queue = OperationQueue()
        queue.addOperation(paused)
        paused.cancel()
        try await paused.bridge.waitForCompletion()
        #expect(paused.isCancelled && paused.mainCalls.value == 0)
    }

    @Test("Pausing a started or finished operation does nothing; resuming one never paused does nothing")
    func pauseTooLate() async throws {
        let running = ProbeOperation(.byTest)
        let queue = OperationQueue()
        queue.addOperation(running)
        await running.started.wait()
        running.bridge.pause()
        #expect(!running.bridge.isPaused)
        running.finish()
        try await running.bridge.waitForCompletion()
        running.bridge.pause()
        #expect(!running.bridge.isPaused)
        let fresh = ProbeOperation()
        fresh.bridge.resume()
        try await queue.runUntilFinished(fresh)
        #expect(fresh.mainCalls.value == 1)
    }

    @Test("A paused operation waiting for a key gives up its place, and asks again when resumed")
    func pauseGivesUpKey() async throws {
        let key = ExclusivityKey.unique()
        let holders = KeyHolders()
        let queue = OperationQueue()
        let gate = await holders.startHolder(of: key, on: queue)
        let paused = KeyHolderOperation("paused", keys: [key], holders: holders)
        #expect(!paused.isReady)  // in line
        let next = KeyHolderOperation("next", keys: [key], holders: holders)
        #expect(!next.isReady)  // in line behind it
        paused.bridge.pause()
        queue.addOperationsWithoutWaiting([paused, next])
        gate.open()
        try await queue.runUntilFinished(next)  // not blocked by the paused operation
        #expect(!paused.isFinished)
        paused.bridge.resume()
        try await queue.runUntilFinished(paused)
        #expect(holders.order == ["holder", "next", "paused"])
    }

    @Test("A delayed and paused operation waits for both")
    func delayAndPause() async throws {
        let clock = TestClock()
        let operation = ProbeOperation()
        operation.bridge.delayStart(by: .seconds(1), clock: clock)
        operation.bridge.pause()
        let queue = OperationQueue()
        queue.addOperation(operation)
        await clock.sleepers(atLeast: 1)
        operation.bridge.resume()
        #expect(!operation.isReady)  // still delayed
        operation.bridge.pause()
        clock.advance(by: .seconds(1))
        #expect(!operation.isReady)  // still paused
        operation.bridge.resume()
        try await operation.bridge.waitForCompletion()
        #expect(operation.mainCalls.value == 1)
    }
}
