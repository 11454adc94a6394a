import Foundation
import OperationBridge
import Testing

/// Delayed starts (`delayStart`, `addOperation(_:after:)`, `addTask(after:)`), driven by a test
/// clock: no slot taken while waiting, cancellable while waiting, no timer left behind.
@Suite(.timeLimit(Stress.timeLimit(minutes: 2)))
struct DelayedStartTests {
    @Test("A delayed operation waits without a slot: a width-1 queue runs others meanwhile")
    func waitsWithoutASlot() async throws {
        let clock = TestClock()
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let delayed = ManualResultOperation<Int, SlowServiceError>()
        queue.addOperation(delayed, after: .seconds(10), clock: clock)
        await clock.sleepers(atLeast: 1)
        let other = queue.addTask { 1 }
        #expect(await other.bridge.value == 1)  // ran in the only slot while the delayed one waits
        #expect(!delayed.isExecuting && !delayed.isReady && queue.operationCount == 1)
        clock.advance(by: .milliseconds(9999))
        #expect(!delayed.isReady)
        clock.advance(by: .milliseconds(1))
        await delayed.started.wait()
        delayed.finish(with: .success(2))
        #expect(try await delayed.bridge.value == 2)
        #expect(clock.pendingSleepers == 0)
    }

    @Test("addTask(after:) runs the closure once the delay has passed")
    func delayedTask() async throws {
        let clock = TestClock()
        let ran = Recorder<String>()
        let task = OperationQueue().addTask(after: .seconds(3), clock: clock) {
            () async throws(SlowServiceError) -> Int in
            ran.append("ran")
            return 3
        }
        await clock.sleepers(atLeast: 1)
        #expect(ran.all.isEmpty)
        clock.advance(by: .seconds(3))
        #expect(try await task.bridge.value == 3)
        #expect(ran.all == ["ran"])
    }

    @Test("At a deadline; a deadline already passed, a zero or a negative delay: no wait at all")
    func deadlinesAndNoWait() async throws {
        let clock = TestClock()
        let queue = OperationQueue()
        let atDeadline = ManualResultOperation<Int, SlowServiceError>()
        queue.addOperation(atDeadline, at: clock.now.advanced(by: .seconds(5)), clock: clock)
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(5))
        await atDeadline.started.wait()
        atDeadline.finish(with: .success(1))

        for delay in [Duration.zero, .seconds(-3)] {
            #expect(await queue.addTask(after: delay, clock: clock) { 4 }.bridge.value == 4)
        }
        let passed = ManualResultOperation<Int, SlowServiceError>()
        queue.addOperation(passed, at: clock.now.advanced(by: .seconds(-1)), clock: clock)
        await passed.started.wait()
        passed.finish(with: .success(5))
        #expect(try await passed.bridge.value == 5)
        #expect(clock.pendingSleepers == 0)
    }

    @Test("Cancelling a waiting operation ends the wait at once; it finishes without running")
    func cancelWhileWaiting() async throws {
        let clock = TestClock()
        let queue = OperationQueue()
        let ran = Recorder<String>()
        let task = queue.addTask(after: .seconds(3600), clock: clock) { () async throws(SlowServiceError) -> Int in
            ran.append("ran")
            return 1
        }
        await clock.sleepers(atLeast: 1)
        task.cancel()
        try await task.bridge.waitForCompletion()
        #expect(task.isFinished && task.result == .failure(.cancelled))
        #expect(ran.all.isEmpty && clock.pendingSleepers == 0)
    }

    @Test("The delay and the dependencies: the operation starts when both are over, in either order")
    func delayAndDependencies() async throws {
        for delayEndsFirst in [true, false] {
            let clock = TestClock()
            let queue = OperationQueue()
            let dependency = ManualResultOperation<Int, SlowServiceError>()
            let delayed = ManualResultOperation<Int, SlowServiceError>()
            delayed.addDependency(dependency)
            queue.addOperation(delayed, after: .seconds(1), clock: clock)
            queue.addOperation(dependency)
            await dependency.started.wait()
            await clock.sleepers(atLeast: 1)
            if delayEndsFirst {
                clock.advance(by: .seconds(1))
                #expect(!delayed.isReady)
                dependency.finish(with: .success(1))
            } else {
                dependency.finish(with: .success(1))
                try await dependency.bridge.waitForCompletion()
                #expect(!delayed.isReady)
                clock.advance(by: .seconds(1))
            }
            await delayed.started.wait()
            delayed.finish(with: .success(2))
            #expect(try await delayed.bridge.value == 2)
        }
    }

    @Test("A later delay replaces an earlier one; a delay after the start changes nothing")
    func replacingAndLateDelays() async throws {
        let clock = TestClock()
        let queue = OperationQueue()
        let operation = ManualResultOperation<Int, SlowServiceError>()
        operation.bridge.delayStart(by: .seconds(100), clock: clock)
        operation.bridge.delayStart(by: .seconds(2), clock: clock)
        #expect(clock.pendingSleepers <= 1)  // the replaced timer is stopped
        queue.addOperation(operation)
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(2))
        await operation.started.wait()
        operation.bridge.delayStart(by: .seconds(50), clock: clock)  // running: ignored
        #expect(clock.pendingSleepers == 0)
        operation.finish(with: .success(1))
        #expect(try await operation.bridge.value == 1)
    }

    @Test("run(_:) on a delayed operation awaits it; the time limit of its own counts from its start")
    func runAndTimeLimit() async throws {
        let clock = TestClock()
        let queue = OperationQueue()
        let operation = ManualResultOperation<Int, SlowServiceError>()
        operation.bridge.delayStart(by: .seconds(10), clock: clock)
        operation.bridge.limitRunningTime(to: .seconds(1), clock: clock)
        let running = Task { try await queue.run(operation) }
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(10))
        await operation.started.wait()
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(1))
        await operation.cancelRequested.wait()
        operation.finish()
        await #expect(throws: SlowServiceError.timedOut) { try await running.value }
    }

    @Test("Randomized races: the delay's end, a cancellation and the queueing; every operation finishes once")
    func randomizedRaces() async throws {
        var generator = Stress.generator(for: "DelayedStartTests.randomizedRaces")
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 2
        var cancelledCount = 0
        for _ in 0..<Stress.iterations(2_000) {
            let clock = TestClock()
            let runs = LockedBox(0)
            let operation = TaskOperation { () async throws(SlowServiceError) -> Int in
                runs.withLock { $0 += 1 }
                return 1
            }
            let cancels = Bool.random(using: &generator)
            let lags = (0..<3).map { _ in Int.random(in: 0..<6, using: &generator) }
            operation.bridge.delayStart(by: .seconds(1), clock: clock)
            await clock.sleepers(atLeast: 1)
            let start = Gate()
            let adder = Task.detached {
                await start.wait()
                for _ in 0..<lags[0] { await Task.yield() }
                queue.addOperation(operation)
            }
            let ticker = Task.detached {
                await start.wait()
                for _ in 0..<lags[1] { await Task.yield() }
                clock.advance(by: .seconds(1))
            }
            let canceller = Task.detached {
                await start.wait()
                for _ in 0..<lags[2] { await Task.yield() }
                if cancels { operation.cancel() }
            }
            start.open()
            await adder.value
            await ticker.value
            await canceller.value
            try await operation.bridge.waitForCompletion()
            if operation.isCancelled {
                cancelledCount += 1
                #expect(operation.result == .failure(.cancelled))
            } else {
                #expect(operation.result == .success(1))
            }
            #expect(runs.current <= 1 && clock.pendingSleepers == 0)
        }
        print("DelayedStartTests.randomizedRaces: \(cancelledCount) of the runs ended cancelled")
    }
}
