import Foundation
import OperationBridge
import Testing

/// `RepeatingOperation` (ProcedureKit's `RepeatProcedure`): polling until a value is done, waits
/// on a test clock, the last value as the result, failures that stop or continue, cancellation
/// during an iteration and during a wait, time limits, progress, and randomized races.
@Suite(.timeLimit(Stress.timeLimit(minutes: 2)))
struct RepeatingOperationTests {
    @Test("Polls until a value is done: that value is the result, after a wait on the clock between runs")
    func pollsUntilDone() async throws {
        let clock = TestClock()
        let script = ScriptedAttempts<FlakyError>([.success(1), .success(2), .success(3), .success(4)])
        let seen = Recorder<Int>()
        let polling = RepeatingOperation(
            maxIterations: 10, wait: .constant(.seconds(2)), clock: clock,
            until: { value in
                seen.append(value)
                return value >= 3
            }, makingIteration: script.attempt)
        OperationQueue().addOperation(polling)
        for made in 1...2 {
            await clock.sleepers(atLeast: 1)
            #expect(script.made.current == made)
            clock.advance(by: .milliseconds(1999))
            #expect(script.made.current == made && clock.pendingSleepers == 1)
            clock.advance(by: .milliseconds(1))
        }
        #expect(try await polling.bridge.value == 3)
        #expect(polling.iterationCount == 3 && script.made.current == 3 && seen.all == [1, 2, 3])
        #expect(polling.failedIterations.isEmpty && clock.pendingSleepers == 0)
    }

    @Test("maxIterations reached before a value is done: the last value, successfully")
    func lastValueWhenIterationsRunOut() async throws {
        let script = ScriptedAttempts<FlakyError>([.success(1), .success(2), .success(3)])
        let polling = RepeatingOperation(maxIterations: 3, until: { $0 > 100 }, makingIteration: script.attempt)
        #expect(try await OperationQueue().run(polling) == 3)
        #expect(polling.iterationCount == 3 && polling.maxIterations == 3)
    }

    @Test("A failing iteration ends the operation with its typed failure, by default")
    func failureStops() async throws {
        let script = ScriptedAttempts<FlakyError>([.success(1), .failure(.badRequest), .success(3)])
        let polling = RepeatingOperation(maxIterations: 3, until: { _ in false }, makingIteration: script.attempt)
        await #expect(throws: FlakyError.badRequest) { try await OperationQueue().run(polling) }
        #expect(polling.iterationCount == 2 && script.made.current == 2)
        #expect(polling.failedIterations.map(\.failure) == [.badRequest])
    }

    @Test("continuingAfter: an accepted failure is followed by another run; the last run's failure ends it")
    func failureContinues() async throws {
        let transient: @Sendable (OperationFailure<FlakyError>) -> Bool = { failure in
            if case .failed(let error) = failure { return error.isTransient }
            return false
        }
        let script = ScriptedAttempts<FlakyError>([.failure(.unavailable(attempt: 1)), .success(2), .success(3)])
        let recovering = RepeatingOperation(
            maxIterations: 3, continuingAfter: transient, until: { $0 == 3 }, makingIteration: script.attempt)
        #expect(try await OperationQueue().run(recovering) == 3)
        #expect(recovering.failedIterations.map(\.failure) == [.unavailable(attempt: 1)])

        // The last iteration failed: its failure is the outcome, not an earlier value.
        let failingLast = ScriptedAttempts<FlakyError>([.success(1), .failure(.unavailable(attempt: 2))])
        let endsFailed = RepeatingOperation(
            maxIterations: 2, continuingAfter: transient, until: { _ in false }, makingIteration: failingLast.attempt)
        await #expect(throws: FlakyError.unavailable(attempt: 2)) { try await OperationQueue().run(endsFailed) }

        // A failure the policy rejects stops at once.
        let permanent = ScriptedAttempts<FlakyError>([.failure(.badRequest), .success(2)])
        let stops = RepeatingOperation(
            maxIterations: 5, continuingAfter: transient, until: { _ in true }, makingIteration: permanent.attempt)
        await #expect(throws: FlakyError.badRequest) { try await OperationQueue().run(stops) }
        #expect(permanent.made.current == 1)
    }

    @Test("An async closure per iteration, with its number; an exponential wait between runs")
    func closureIterations() async throws {
        let clock = TestClock()
        let polling = RepeatingOperation(
            wait: .exponential(initial: .milliseconds(100), maximum: .milliseconds(300)), clock: clock, until: { $0 }
        ) { (iteration: Int) async throws(FlakyError) -> Bool in
            iteration == 5
        }
        OperationQueue().addOperation(polling)
        var waits: [Duration] = []
        for _ in 1..<5 {
            await clock.sleepers(atLeast: 1)
            waits.append(try #require(clock.advanceToNextDeadline()))
        }
        #expect(try await polling.bridge.value == true)
        #expect(waits == [100, 200, 300, 300].map { .milliseconds($0) })
        #expect(polling.iterationCount == 5 && polling.maxIterations == nil)
    }

    @Test("Cancelling during the wait between runs ends it at once; no more runs")
    func cancelDuringWait() async throws {
        let clock = TestClock()
        let script = ScriptedAttempts<FlakyError>([.success(1), .success(2)])
        let polling = RepeatingOperation(
            maxIterations: 2, wait: .constant(.seconds(60)), clock: clock, until: { _ in false },
            makingIteration: script.attempt)
        OperationQueue().addOperation(polling)
        await clock.sleepers(atLeast: 1)
        polling.cancel()
        await #expect(throws: FlakyError.cancelled) { try await polling.bridge.value }
        try await polling.bridge.waitForCompletion()
        #expect(polling.isCancelled && !polling.bridge.isTimedOut)
        #expect(script.made.current == 1 && clock.pendingSleepers == 0)
    }

    @Test("Cancelling during a run cancels it, finishes once it has ended, and its value does not count")
    func cancelDuringRun() async throws {
        let iteration = ManualResultOperation<Int, FlakyError>()
        let made = LockedBox(0)
        let polling = RepeatingOperation(maxIterations: 3, until: { _ in true }) { _ in
            made.withLock { $0 += 1 }
            return iteration
        }
        OperationQueue().addOperation(polling)
        await iteration.started.wait()
        polling.cancel()
        await iteration.cancelRequested.wait()
        #expect(iteration.isExecuting && !polling.isFinished)  // no iteration outlives the operation
        iteration.finish(with: .success(7))
        try await polling.bridge.waitForCompletion()
        #expect(polling.result == .failure(.cancelled) && made.current == 1)
    }

    @Test(
        "Cancelling the task that runs it cancels the running iteration; one cancelled by someone else ends it cancelled"
    )
    func cancellationFromOutside() async throws {
        let iteration = ManualResultOperation<Int, FlakyError>()
        let polling = RepeatingOperation(maxIterations: 3, until: { _ in false }) { _ in iteration }
        let queue = OperationQueue()
        let task = Task { try await queue.run(polling) }
        await iteration.started.wait()
        task.cancel()
        await iteration.cancelRequested.wait()
        iteration.finish()
        await #expect(throws: FlakyError.cancelled) { try await task.value }
        #expect(polling.isCancelled && polling.iterationCount == 1)

        let elsewhere = ManualResultOperation<Int, FlakyError>()
        let other = RepeatingOperation(maxIterations: 3, until: { _ in false }) { _ in elsewhere }
        queue.addOperation(other)
        await elsewhere.started.wait()
        elsewhere.cancel()
        elsewhere.finish()
        await #expect(throws: FlakyError.cancelled) { try await other.bridge.value }
        #expect(other.isCancelled && other.failedIterations.map(\.failure) == [.cancelled])
    }

    @Test("An iteration time limit: a timed-out run is a failure the policy may continue after")
    func iterationTimeLimit() async throws {
        let clock = TestClock()
        let hangsFirst: @Sendable (Int) async throws(FlakyError) -> Int = {
            (iteration: Int) async throws(FlakyError) -> Int in
            guard iteration > 1 else {
                try? await clock.sleep(for: .seconds(3600))  // hangs until its task is cancelled
                throw .cancelled
            }
            return iteration
        }
        let continuing = RepeatingOperation(
            maxIterations: 3, clock: clock, iterationTimeLimit: .seconds(5),
            continuingAfter: { $0.failure == .timedOut }, until: { $0 == 2 }, hangsFirst)
        OperationQueue().addOperation(continuing)
        await clock.sleepers(atLeast: 2)  // the run's sleep and its limit
        clock.advance(by: .seconds(5))
        #expect(try await continuing.bridge.value == 2)
        #expect(continuing.failedIterations.map(\.failure) == [.timedOut])

        // By default the timeout ends the operation with it.
        let stopping = RepeatingOperation(
            maxIterations: 3, clock: clock, iterationTimeLimit: .seconds(5), until: { _ in true }, hangsFirst)
        OperationQueue().addOperation(stopping)
        await clock.sleepers(atLeast: 2)
        clock.advance(by: .seconds(5))
        await #expect(throws: FlakyError.timedOut) { try await stopping.bridge.value }
        #expect(stopping.iterationCount == 1 && clock.pendingSleepers == 0)
    }

    @Test("A Failure without 'timed out': a timed-out run the policy does not accept times the operation out")
    func iterationTimeLimitWithoutATimeoutFailure() async throws {
        let clock = TestClock()
        let iteration = ManualResultOperation<Int, LookupFailure>()
        let polling = RepeatingOperation(
            maxIterations: 3, clock: clock, iterationTimeLimit: .seconds(1), until: { _ in true }
        ) { _ in iteration }
        OperationQueue().addOperation(polling)
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(1))
        await iteration.cancelRequested.wait()
        iteration.finish()
        try await polling.bridge.waitForCompletion()
        #expect(polling.bridge.isTimedOut && polling.result == nil)
        #expect(polling.failedIterations.count == 1)
        await expectTimedOut { () async throws(OperationFailure<LookupFailure>) -> Int in
            try await polling.bridge.outcomeValue
        }
    }

    @Test("Polling bounded by a deadline (limitRunningTime(until:)): it ends timed out, in the middle of a wait")
    func pollingUntilADeadline() async throws {
        let clock = TestClock()
        let script = ScriptedAttempts<FlakyError>(Array(repeating: .success(0), count: 10))
        let polling = RepeatingOperation(
            wait: .constant(.seconds(4)), clock: clock, until: { _ in false }, makingIteration: script.attempt)
        polling.bridge.limitRunningTime(until: clock.now.advanced(by: .seconds(10)), clock: clock)
        OperationQueue().addOperation(polling)
        for _ in 1...2 {
            await clock.sleepers(atLeast: 2)  // the deadline and a wait
            clock.advance(by: .seconds(4))
        }
        await clock.sleepers(atLeast: 2)
        clock.advance(by: .seconds(2))  // 10 s: the deadline, in the middle of the third wait
        await #expect(throws: FlakyError.timedOut) { try await polling.bridge.value }
        try await polling.bridge.waitForCompletion()
        #expect(polling.bridge.isTimedOut && script.made.current == 3 && clock.pendingSleepers == 0)
    }

    @Test("Progress counts iterations: a unit per run out of maxIterations; done early, complete at the finish")
    func progressCountsIterations() async throws {
        let clock = TestClock()
        let script = ScriptedAttempts<FlakyError>([.success(1), .success(2), .success(3)])
        let polling = RepeatingOperation(
            maxIterations: 4, wait: .constant(.seconds(1)), clock: clock, until: { $0 == 3 },
            makingIteration: script.attempt)
        let progress = polling.bridge.operationProgress
        OperationQueue().addOperation(polling)
        for completed in 1...2 {
            await clock.sleepers(atLeast: 1)  // waiting after run `completed`
            #expect(progress.snapshot.completedUnitCount == Int64(completed))
            #expect(progress.snapshot.totalUnitCount == 4 && !progress.isFinished)
            clock.advance(by: .seconds(1))
        }
        try await polling.bridge.waitForCompletion()
        #expect(progress.isFinished && progress.fractionCompleted == 1)

        // Without a maximum the total is unknown until the finish.
        let unbounded = RepeatingOperation(wait: .constant(.seconds(1)), clock: clock, until: { $0 == 2 }) {
            (iteration: Int) async throws(FlakyError) -> Int in iteration
        }
        OperationQueue().addOperation(unbounded)
        await clock.sleepers(atLeast: 1)
        #expect(unbounded.bridge.operationProgress.snapshot.totalUnitCount < 0)
        #expect(unbounded.bridge.operationProgress.snapshot.completedUnitCount == 1)
        clock.advance(by: .seconds(1))
        try await unbounded.bridge.waitForCompletion()
        #expect(unbounded.bridge.operationProgress.fractionCompleted == 1)
    }

    @Test("A failed dependency stops it before any run, with the root cause")
    func upstreamFailure() async throws {
        let queue = OperationQueue()
        let upstream = TaskOperation { () async throws(FlakyError) -> Int in throw .badRequest }
        let script = ScriptedAttempts<FlakyError>([.success(1)])
        let polling = RepeatingOperation(maxIterations: 2, until: { _ in true }, makingIteration: script.attempt)
        polling.addDependency(upstream)
        let pipeline = try Pipeline([upstream, polling], on: queue)
        pipeline.start()
        try await pipeline.waitForCompletion()
        #expect(script.made.current == 0 && polling.iterationCount == 0)
        #expect(polling.bridge.upstreamFailure?.rootFailure as? FlakyError == .badRequest)
    }

    @Test("Randomized races: cancellation against runs and waits; exactly one outcome, as scripted")
    func randomizedRaces() async throws {
        var generator = Stress.generator(for: "RepeatingOperationTests.randomizedRaces")
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 4
        var cancelledCount = 0
        for _ in 0..<Stress.iterations(2_000) {
            let maxIterations = Int.random(in: 1...4, using: &generator)
            let outcomes: [Result<Int, FlakyError>] = (1...maxIterations).map { number in
                switch Int.random(in: 0..<4, using: &generator) {
                case 0: .success(100 + number)  // done
                case 1: .failure(.badRequest)
                default: .success(number)  // not done yet
                }
            }
            let expected = Self.expectedOutcome(outcomes)
            let wait: Backoff = Bool.random(using: &generator) ? .none : .constant(.microseconds(50))
            let entered = Gate()
            let release = Gate()
            let polling = RepeatingOperation(maxIterations: maxIterations, wait: wait, until: { $0 > 100 }) {
                (iteration: Int) async throws(FlakyError) -> Int in
                entered.open()
                await release.wait()
                return try outcomes[iteration - 1].get()
            }
            let afterFirstRun = Bool.random(using: &generator)
            let cancelLag = Int.random(in: 0..<150, using: &generator)
            let releaseLag = Int.random(in: 0..<8, using: &generator)
            queue.addOperation(polling)
            if afterFirstRun { await entered.wait() }
            let canceller = Task.detached {
                for _ in 0..<cancelLag { await Task.yield() }
                polling.cancel()
            }
            let releaser = Task.detached {
                for _ in 0..<releaseLag { await Task.yield() }
                release.open()
            }
            try await polling.bridge.waitForCompletion()
            await canceller.value
            await releaser.value
            let result = try #require(polling.result)
            if polling.isCancelled {
                cancelledCount += 1
                #expect(result == .failure(.cancelled))
            } else {
                #expect(result == expected.result)
                #expect(polling.iterationCount == expected.iterations)
            }
            #expect(polling.iterationCount <= maxIterations && !polling.bridge.isTimedOut)
        }
        print("RepeatingOperationTests.randomizedRaces: \(cancelledCount) of the runs ended cancelled")
    }

    /// The outcome of a run that nothing cancels, and how many iterations it makes.
    private static func expectedOutcome(
        _ outcomes: [Result<Int, FlakyError>]
    ) -> (result: Result<Int, FlakyError>, iterations: Int) {
        for (index, outcome) in outcomes.enumerated() {
            if case .success(let value) = outcome, value <= 100, index < outcomes.count - 1 { continue }
            return (outcome, index + 1)
        }
        preconditionFailure("scripts are never empty")
    }

    #if EXIT_TESTS
        @Test("Programmer errors trap with a message: no iterations, a throwing factory")
        func programmerErrors() async {
            await #expect(processExitsWith: .failure) {
                _ = RepeatingOperation<Int, FlakyError>(maxIterations: 0, until: { _ in true }) { _ in
                    ControlledOperation(.success(1))
                }
            }
            await #expect(processExitsWith: .failure) {
                _ = RepeatingOperation(maxIterations: 2, until: { _ in true }) {
                    (_: Int) async throws -> ControlledOperation<Int, FlakyError> in
                    ControlledOperation(.success(1))
                }
            }
        }
    #endif
}

extension OperationFailure where Failure == FlakyError {
    /// The iteration's own failure, `.timedOut` for a timeout — to compare lists in tests.
    fileprivate var failure: FlakyError? {
        switch self {
        case .failed(let error): error
        case .timedOut: .timedOut
        case .cancelled: .cancelled
        default: nil
        }
    }
}
