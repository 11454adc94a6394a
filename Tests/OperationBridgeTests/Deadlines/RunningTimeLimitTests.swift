import Foundation
import OperationBridge
import Testing

/// Operations with a time limit of their own (`limitRunningTime(to:clock:)`), driven by a test
/// clock: measured from the start, reported as a timeout, never outliving the operation.
@Suite(.timeLimit(Stress.timeLimit(minutes: 2)))
struct RunningTimeLimitTests {
    @Test("The limit counts from the start, not from the queueing, and times the operation out")
    func countsFromTheStart() async throws {
        let clock = TestClock()
        let queue = OperationQueue()
        queue.isSuspended = true
        let operation = ManualResultOperation<Int, SlowServiceError>()
        operation.bridge.limitRunningTime(to: .seconds(5), clock: clock)
        queue.addOperation(operation)
        clock.advance(by: .seconds(60))  // pending all along: nothing counts yet
        #expect(clock.pendingSleepers == 0)
        queue.isSuspended = false
        await operation.started.wait()
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(4))
        #expect(!operation.isCancelled)
        clock.advance(by: .seconds(1))
        await operation.cancelRequested.wait()
        #expect(operation.isCancelled && operation.bridge.isTimedOut)
        #expect(operation.result == .failure(.timedOut))
        // It finishes when its work notices, as for any cancellation; the late result is ignored.
        #expect(operation.isExecuting)
        operation.finish(with: .success(1))
        await #expect(throws: SlowServiceError.timedOut) { try await operation.bridge.value }
        #expect(clock.pendingSleepers == 0)
    }

    @Test("A TaskOperation with a limit: its task is cancelled, `any Error` gets an OperationTimeoutError")
    func taskOperation() async throws {
        let clock = TestClock()
        let queue = OperationQueue()
        let entered = Gate()
        let operation = TaskOperation { () async throws -> Int in
            entered.open()
            try await clock.sleep(for: .seconds(3600))  // ends when its task is cancelled
            return 1
        }
        operation.bridge.limitRunningTime(to: .seconds(2), clock: clock)
        queue.addOperation(operation)
        await entered.wait()
        await clock.sleepers(atLeast: 2)  // the work's sleep and the limit
        clock.advance(by: .seconds(2))
        await #expect(throws: OperationTimeoutError.self) { try await operation.bridge.value }
        #expect(operation.bridge.isTimedOut)
        #expect(throws: OperationTimeoutError.self) { try operation.result?.get() }
        #expect(clock.pendingSleepers == 0)
    }

    @Test("A Failure that cannot say 'timed out': no result, outcomeValue throws .timedOut")
    func failureWithoutATimeout() async throws {
        let clock = TestClock()
        let queue = OperationQueue()
        let operation = ManualResultOperation<Int, LookupFailure>()
        await startWithTimeLimit(operation, .seconds(1), clock: clock, on: queue, started: operation.started)
        clock.advance(by: .seconds(1))
        await operation.cancelRequested.wait()
        operation.finish()  // cancelled: finishing without a result is allowed
        await expectTimedOut { () async throws(OperationFailure<LookupFailure>) -> Int in
            try await operation.bridge.outcomeValue
        }
        #expect(operation.result == nil && operation.bridge.isTimedOut)
        #expect(await operation.bridge.outcome == nil)
    }

    @Test("A plain AsyncOperation subclass with a limit is cancelled as timed out")
    func plainAsyncOperation() async throws {
        let clock = TestClock()
        let queue = OperationQueue()
        let operation = ManualOperation()
        await startWithTimeLimit(operation, .milliseconds(10), clock: clock, on: queue, started: operation.started)
        clock.advance(by: .milliseconds(10))
        await operation.cancelRequested.wait()
        #expect(operation.isCancelled && operation.bridge.isTimedOut)
        operation.finish()
        try await operation.bridge.waitForCompletion()
        #expect(clock.pendingSleepers == 0)
    }

    @Test("Finishing in time: no timeout, and the timer is stopped with the finish")
    func finishingInTime() async throws {
        let clock = TestClock()
        let queue = OperationQueue()
        let operation = ManualResultOperation<Int, SlowServiceError>()
        await startWithTimeLimit(operation, .seconds(5), clock: clock, on: queue, started: operation.started)
        operation.finish(with: .success(7))
        #expect(try await operation.bridge.value == 7)
        #expect(clock.pendingSleepers == 0)
        clock.advance(by: .seconds(10))
        #expect(!operation.bridge.isTimedOut && !operation.isCancelled)
    }

    @Test("A cancellation before the limit stays a cancellation")
    func cancellationFirst() async throws {
        let clock = TestClock()
        let queue = OperationQueue()
        let operation = ManualResultOperation<Int, SlowServiceError>()
        await startWithTimeLimit(operation, .seconds(5), clock: clock, on: queue, started: operation.started)
        operation.cancel()
        clock.advance(by: .seconds(5))
        operation.finish()
        await #expect(throws: SlowServiceError.cancelled) { try await operation.bridge.value }
        #expect(!operation.bridge.isTimedOut)
        #expect(clock.pendingSleepers == 0)
    }

    @Test("A zero or negative limit times the operation out when it starts: its work never runs")
    func zeroOrNegativeLimit() async throws {
        for limit in [Duration.zero, .seconds(-1)] {
            let queue = OperationQueue()
            let ran = LockedBox(0)
            let operation = TaskOperation { () async throws(SlowServiceError) -> Int in
                ran.withLock { $0 += 1 }
                return 1  // would win against a timer racing it
            }
            operation.bridge.limitRunningTime(to: limit)
            queue.addOperation(operation)
            await #expect(throws: SlowServiceError.timedOut) { try await operation.bridge.value }
            try await operation.bridge.waitForCompletion()
            #expect(operation.bridge.isTimedOut && ran.current == 0)
        }
        // Set on an operation already running: timed out at once.
        let running = ManualResultOperation<Int, SlowServiceError>()
        OperationQueue().addOperation(running)
        await running.started.wait()
        running.bridge.limitRunningTime(to: .zero)
        #expect(running.bridge.isTimedOut && running.result == .failure(.timedOut))
        running.finish()
    }

    @Test("Set while running: counted from the call; set after the finish: ignored")
    func setLate() async throws {
        let clock = TestClock()
        let queue = OperationQueue()
        let operation = ManualResultOperation<Int, SlowServiceError>()
        queue.addOperation(operation)
        await operation.started.wait()
        clock.advance(by: .seconds(100))
        operation.bridge.limitRunningTime(to: .seconds(1), clock: clock)
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(1))
        await operation.cancelRequested.wait()
        #expect(operation.bridge.isTimedOut)
        operation.finish()
        try await operation.bridge.waitForCompletion()
        operation.bridge.limitRunningTime(to: .seconds(1), clock: clock)
        #expect(clock.pendingSleepers == 0)
    }

    @Test("The limit racing the finish: one outcome, consistent, and no timer left")
    func limitRacingFinish() async throws {
        var generator = Stress.generator(for: "RunningTimeLimitTests.limitRacingFinish")
        let queue = OperationQueue()
        var timedOut = 0
        let iterations = Stress.iterations(2_000)
        for _ in 0..<iterations {
            let clock = TestClock()
            let outcome: Result<Int, SlowServiceError> =
                Bool.random(using: &generator) ? .success(1) : .failure(.offline)
            let operation = ManualResultOperation<Int, SlowServiceError>()
            await startWithTimeLimit(operation, .seconds(1), clock: clock, on: queue, started: operation.started)
            // The finish and the clock reaching the limit, from two threads at once; the timer
            // needs a task hop to act, so the finish lags behind by a random number of yields.
            let lag = Int.random(in: 0..<6, using: &generator)
            let start = Gate()
            let finisher = Task.detached {
                await start.wait()
                for _ in 0..<lag { await Task.yield() }
                operation.finish(with: outcome)
            }
            let ticker = Task.detached {
                await start.wait()
                clock.advance(by: .seconds(1))
            }
            start.open()
            await finisher.value
            await ticker.value
            try await operation.bridge.waitForCompletion()
            if operation.bridge.isTimedOut {
                timedOut += 1
                #expect(operation.isCancelled)
                #expect(operation.result == .failure(.timedOut))
            } else {
                #expect(!operation.isCancelled)
                #expect(operation.result == outcome)
            }
            #expect(clock.pendingSleepers == 0)
        }
        print("RunningTimeLimitTests.limitRacingFinish: \(timedOut) of \(iterations) timed out")
    }
}
