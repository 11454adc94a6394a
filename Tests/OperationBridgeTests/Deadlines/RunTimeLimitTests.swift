import Foundation
import OperationBridge
import Testing

/// Time limits on a whole `Pipeline` or results sequence, and `run(_:deadline:)`, driven by a
/// test clock.
@Suite(.timeLimit(Stress.timeLimit(minutes: 2)))
struct RunTimeLimitTests {
    @Test("Pipeline, cancelAndReturn: awaits return at the deadline although a step ignores cancellation")
    func pipelineCancelAndReturn() async throws {
        let clock = TestClock()
        let stubborn = ManualResultOperation<Int, SlowServiceError>()  // ignores cancellation
        let next = stubborn.bridge.then { (value: Int) async throws(SlowServiceError) -> Int in value + 1 }
        let pipeline = try Pipeline([stubborn, next], on: OperationQueue())
        pipeline.limitRunningTime(to: .seconds(5), clock: clock)
        let awaiting = Task { () async throws(SlowServiceError) -> Int in try await pipeline.value(of: next) }
        await stubborn.started.wait()
        await clock.sleepers(atLeast: 2)  // the pipeline's limit and the await's
        clock.advance(by: .seconds(5))
        await #expect(throws: SlowServiceError.timedOut) { try await awaiting.value }
        try await pipeline.waitForCompletion()  // returns: the time is up
        #expect(pipeline.isTimedOut && stubborn.bridge.isTimedOut && stubborn.isExecuting)
        await #expect(throws: SlowServiceError.timedOut) { try await pipeline.value(of: stubborn) }
        stubborn.finish()
        try await stubborn.bridge.waitForCompletion()
        #expect(next.result == .failure(.timedOut) && next.bridge.isTimedOut)
        #expect(clock.pendingSleepers == 0)
    }

    @Test("Pipeline, cancelAndWait: awaits end once the timed-out steps have ended")
    func pipelineCancelAndWait() async throws {
        let clock = TestClock()
        let stubborn = ManualResultOperation<Int, LookupFailure>()
        let pipeline = try Pipeline([stubborn], on: OperationQueue())
        pipeline.limitRunningTime(to: .seconds(1), clock: clock, onTimeout: .cancelAndWait)
        pipeline.start()
        await stubborn.started.wait()
        await clock.sleepers(atLeast: 1)
        let ended = Recorder<String>()
        let waiting = Task {
            try await pipeline.waitForCompletion()
            ended.append("ended")
        }
        clock.advance(by: .seconds(1))
        await stubborn.cancelRequested.wait()
        #expect(ended.all.isEmpty && stubborn.isExecuting)
        stubborn.finish()
        try await waiting.value
        #expect(pipeline.isTimedOut && stubborn.bridge.isTimedOut)
        await expectTimedOut { () async throws(OperationFailure<LookupFailure>) -> Int in
            try await pipeline.outcomeValue(of: stubborn)
        }
    }

    @Test("A pipeline that ends in time, or is cancelled first, is not timed out; no timer is left")
    func pipelineInTimeOrCancelled() async throws {
        let clock = TestClock()
        let quick = TaskOperation { () async throws(SlowServiceError) -> Int in 1 }
        let pipeline = try Pipeline([quick], on: OperationQueue())
        pipeline.limitRunningTime(to: .seconds(5), clock: clock)
        #expect(try await pipeline.value(of: quick) == 1)
        try await pipeline.waitForCompletion()
        #expect(clock.pendingSleepers == 0)
        clock.advance(by: .seconds(10))
        #expect(!pipeline.isTimedOut && !quick.bridge.isTimedOut)

        let slow = ManualResultOperation<Int, SlowServiceError>()
        let cancelled = try Pipeline([slow], on: OperationQueue())
        cancelled.limitRunningTime(to: .seconds(5), clock: clock)
        cancelled.start()
        await slow.started.wait()
        cancelled.cancel()
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(5))
        slow.finish()
        try await cancelled.waitForCompletion()
        #expect(!cancelled.isTimedOut && slow.isCancelled && !slow.bridge.isTimedOut)
        #expect(slow.result == .failure(.cancelled))
    }

    @Test("Results sequence, cancelAndReturn: the loop ends at the deadline; collectValues throws the timeout")
    func resultsCancelAndReturn() async throws {
        let clock = TestClock()
        let queue = OperationQueue()
        let done = ControlledOperation<Int, SlowServiceError>(.success(1))
        let stubborn = ManualResultOperation<Int, SlowServiceError>()
        let results = try queue.results(of: [done, stubborn], order: .submission)
        results.limitRunningTime(to: .seconds(2), clock: clock)
        var delivered: [Int] = []
        for await element in results {
            delivered.append(element.index)
            if element.index == 0 {
                await stubborn.started.wait()
                await clock.sleepers(atLeast: 1)
                clock.advance(by: .seconds(2))
            }
        }
        #expect(delivered == [0] && results.isTimedOut && stubborn.isExecuting)
        stubborn.finish()

        let second = ManualResultOperation<Int, SlowServiceError>()
        let values = try queue.values(of: [second])
        values.limitRunningTime(until: clock.now.advanced(by: .seconds(1)), clock: clock)
        let collecting = Task { () async throws(SlowServiceError) -> [Int] in try await values.collect() }
        await second.started.wait()
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(1))
        await #expect(throws: SlowServiceError.timedOut) { try await collecting.value }
        second.finish()
        try await second.bridge.waitForCompletion()
        #expect(clock.pendingSleepers == 0)
    }

    @Test("Results sequence, cancelAndWait: the timed-out operations are delivered as they end")
    func resultsCancelAndWait() async throws {
        let clock = TestClock()
        let stubborn = ManualResultOperation<Int, SlowServiceError>()
        let results = try OperationQueue().results(of: [stubborn])
        results.limitRunningTime(to: .seconds(1), clock: clock, onTimeout: .cancelAndWait)
        let collecting = Task { await results.collect() }
        await stubborn.started.wait()
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(1))
        await stubborn.cancelRequested.wait()
        stubborn.finish()
        #expect(await collecting.value == [.failure(.timedOut)])
        #expect(results.isTimedOut)
    }

    @Test("isTimedOut is true by the time an await reports the run's timeout, whichever timer fires first")
    func timedOutFlagBeforeTheAwaitsHearOfIt() async throws {
        for _ in 0..<Stress.iterations(200) {
            let clock = TestClock()
            let step = TaskOperation { () async throws(SlowServiceError) -> Int in
                await suspendUntilCancelled()  // ends as soon as it is cancelled
                throw .cancelled
            }
            let pipeline = try Pipeline([step], on: OperationQueue())
            pipeline.limitRunningTime(to: .seconds(1), clock: clock)
            let awaiting = Task { () async throws(SlowServiceError) -> Int in try await pipeline.value(of: step) }
            await clock.sleepers(atLeast: 2)  // the run's timer and the await's
            clock.advance(by: .seconds(1))
            await #expect(throws: SlowServiceError.timedOut) { try await awaiting.value }
            #expect(pipeline.isTimedOut)

            let quick = TaskOperation { () async throws(SlowServiceError) -> Int in
                await suspendUntilCancelled()
                throw .cancelled
            }
            let results = try OperationQueue().results(of: [quick])
            results.limitRunningTime(to: .seconds(1), clock: clock)
            let iterating = Task { for await _ in results {} }
            await clock.sleepers(atLeast: 1)
            clock.advance(by: .seconds(1))
            await iterating.value
            #expect(results.isTimedOut)
        }
    }

    @Test("outcome(timeout:) and runForOutcome(_:timeout:/deadline:) answer the timed-out result")
    func outcomesWithATimeLimit() async throws {
        let clock = TestClock()
        let queue = OperationQueue()
        let awaited = ManualResultOperation<Int, SlowServiceError>()
        queue.addOperation(awaited)
        let outcome = Task { await awaited.bridge.outcome(within: .timeout(.seconds(2), clock: clock)) }
        await awaited.started.wait()
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(2))
        #expect(await outcome.value == .failure(.timedOut))
        awaited.finish()

        let legacy = ManualResultOperation<Int, LookupFailure>()
        let run = Task { await queue.runForOutcome(legacy, within: .timeout(.seconds(1), clock: clock)) }
        await legacy.started.wait()
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(1))
        #expect(await run.value == nil)
        #expect(legacy.bridge.isTimedOut)
        legacy.finish()

        let quick = ControlledOperation<Int, LookupFailure>(.success(3))
        #expect(
            await queue.runForOutcome(quick, within: .deadline(clock.now.advanced(by: .seconds(5)), clock: clock))
                == .success(3)
        )
        #expect(clock.pendingSleepers == 0)
    }

    @Test("run(_:deadline:) for a TimeoutRepresentable Failure and for any Error")
    func runWithADeadline() async throws {
        let clock = TestClock()
        let queue = OperationQueue()
        let typed = ManualResultOperation<Int, SlowServiceError>()
        let typedRun = Task { () async throws(SlowServiceError) -> Int in
            try await queue.run(typed, within: .deadline(clock.now.advanced(by: .seconds(3)), clock: clock))
        }
        await typed.started.wait()
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(3))
        await #expect(throws: SlowServiceError.timedOut) { try await typedRun.value }
        typed.finish()

        let untyped = TaskOperation { () async throws -> Int in 8 }
        #expect(try await queue.run(untyped, within: .deadline(clock.now.advanced(by: .seconds(3)), clock: clock)) == 8)
        let late = ManualResultOperation<Int, any Error>()
        await #expect(throws: OperationTimeoutError.self) {
            try await queue.run(late, within: .deadline(clock.now.advanced(by: .seconds(-1)), clock: clock))
        }
    }
}
