import Foundation
import OperationBridge
import Testing

/// A service's failures: some worth retrying, one not; it can say "cancelled" and "timed out".
enum FlakyError: Error, Equatable, TimeoutRepresentable {
    case unavailable(attempt: Int)
    case badRequest
    case cancelled
    case timedOut

    static var cancellation: FlakyError { .cancelled }
    static var timeout: FlakyError { .timedOut }

    var isTransient: Bool {
        if case .unavailable = self { return true }
        return self == .timedOut
    }
}

/// Attempts that report, one after another, the outcomes a test scripted.
final class ScriptedAttempts<Failure: Error>: Sendable {
    private let outcomes: [Result<Int, Failure>]
    let made = LockedBox(0)

    init(_ outcomes: [Result<Int, Failure>]) {
        self.outcomes = outcomes
    }

    /// A classic operation reporting the scripted outcome of attempt `number`.
    func attempt(_ number: Int) -> AsyncResultOperation<Int, Failure> {
        made.withLock { $0 += 1 }
        return ControlledOperation(outcomes[number - 1])
    }
}

/// `RetryingOperation`: attempts, typed failures, backoff on a test clock, cancellation and
/// time limits during an attempt and during a wait, misuse, and randomized races.
@Suite(.timeLimit(Stress.timeLimit(minutes: 2)))
struct RetryingOperationTests {
    @Test("Transient failures are retried until an attempt succeeds; the failures are kept")
    func succeedsAfterTransientFailures() async throws {
        let script = ScriptedAttempts<FlakyError>([
            .failure(.unavailable(attempt: 1)), .failure(.unavailable(attempt: 2)), .success(3),
        ])
        let retrying = RetryingOperation(maxAttempts: 5, makingAttempt: script.attempt)
        let value = try await OperationQueue().run(retrying)
        #expect(value == 3)
        #expect(retrying.attemptCount == 3 && script.made.current == 3)
        #expect(retrying.failedAttempts.map(\.failure) == [.unavailable(attempt: 1), .unavailable(attempt: 2)])
        #expect(!retrying.isCancelled && !retrying.bridge.isTimedOut)
    }

    @Test("Out of attempts: the last attempt's typed failure, never an untyped one")
    func lastFailureWhenAttemptsRunOut() async throws {
        let retrying = RetryingOperation(maxAttempts: 3) { (attempt: Int) async throws(FlakyError) -> Int in
            throw .unavailable(attempt: attempt)
        }
        await #expect(throws: FlakyError.unavailable(attempt: 3)) { try await OperationQueue().run(retrying) }
        #expect(retrying.result == .failure(.unavailable(attempt: 3)))
        #expect(retrying.failedAttempts.map(\.failure) == (1...3).map { FlakyError?.some(.unavailable(attempt: $0)) })
    }

    @Test("A failure the predicate rejects ends the retries at once")
    func permanentFailureIsNotRetried() async throws {
        let script = ScriptedAttempts<FlakyError>([.failure(.unavailable(attempt: 1)), .failure(.badRequest)])
        let retrying = RetryingOperation(
            maxAttempts: 10, retryingWhen: { $0.isTransient }, makingAttempt: script.attempt)
        await #expect(throws: FlakyError.badRequest) { try await OperationQueue().run(retrying) }
        #expect(retrying.attemptCount == 2 && script.made.current == 2)
    }

    @Test("maxAttempts 1 runs the work once and never retries")
    func singleAttempt() async throws {
        let script = ScriptedAttempts<FlakyError>([.failure(.unavailable(attempt: 1))])
        let retrying = RetryingOperation(maxAttempts: 1, makingAttempt: script.attempt)
        await #expect(throws: FlakyError.unavailable(attempt: 1)) { try await OperationQueue().run(retrying) }
        #expect(script.made.current == 1)
    }

    @Test("A constant backoff waits on the clock between attempts, and only then")
    func constantBackoff() async throws {
        let clock = TestClock()
        let script = ScriptedAttempts<FlakyError>([
            .failure(.unavailable(attempt: 1)), .failure(.unavailable(attempt: 2)), .success(3),
        ])
        let retrying = RetryingOperation(
            maxAttempts: 3, backoff: .constant(.seconds(2)), clock: clock, makingAttempt: script.attempt)
        OperationQueue().addOperation(retrying)
        await clock.sleepers(atLeast: 1)
        #expect(script.made.current == 1)
        clock.advance(by: .milliseconds(1999))
        #expect(script.made.current == 1 && clock.pendingSleepers == 1)
        clock.advance(by: .milliseconds(1))
        await clock.sleepers(atLeast: 1)
        #expect(script.made.current == 2)
        #expect(clock.advanceToNextDeadline() == .seconds(2))
        #expect(try await retrying.bridge.value == 3)
        #expect(clock.pendingSleepers == 0)
    }

    @Test("An exponential backoff doubles up to its cap, on the clock")
    func exponentialBackoff() async throws {
        let clock = TestClock()
        let retrying = RetryingOperation(
            maxAttempts: 6, backoff: .exponential(initial: .milliseconds(100), maximum: .milliseconds(500)),
            clock: clock
        ) { (attempt: Int) async throws(FlakyError) -> Int in
            throw .unavailable(attempt: attempt)
        }
        OperationQueue().addOperation(retrying)
        var waits: [Duration] = []
        for _ in 1..<6 {
            await clock.sleepers(atLeast: 1)
            waits.append(try #require(clock.advanceToNextDeadline()))
        }
        #expect(waits == [100, 200, 400, 500, 500].map { .milliseconds($0) })
        await #expect(throws: FlakyError.unavailable(attempt: 6)) { try await retrying.bridge.value }
    }

    @Test("Seeded jitter: the same seed gives the same waits, each within its share of the delay")
    func seededJitter() async throws {
        func waits(seed: UInt64) async throws -> [Duration] {
            let clock = TestClock()
            let backoff = Backoff.exponential(initial: .seconds(1), maximum: .seconds(8)).jittered(by: 0.5, seed: seed)
            let retrying = RetryingOperation(maxAttempts: 5, backoff: backoff, clock: clock) {
                (attempt: Int) async throws(FlakyError) -> Int in
                throw .unavailable(attempt: attempt)
            }
            OperationQueue().addOperation(retrying)
            var waits: [Duration] = []
            for _ in 1..<5 {
                await clock.sleepers(atLeast: 1)
                waits.append(try #require(clock.advanceToNextDeadline()))
            }
            try await retrying.bridge.waitForCompletion()
            return waits
        }
        let first = try await waits(seed: 42)
        #expect(try await waits(seed: 42) == first)
        #expect(try await waits(seed: 43) != first)
        for (wait, full) in zip(first, [1, 2, 4, 8].map { Duration.seconds($0) }) {
            #expect(wait > full * 0.5 && wait <= full)
        }
    }

    @Test("Backoff delays: growth, cap without overflow, zero and negative delays, full jitter")
    func backoffDelays() {
        var generator = SeededGenerator(seed: 7)
        let exponential = Backoff.exponential(initial: .milliseconds(10), multiplier: 3, maximum: .seconds(1))
        #expect(
            (1...6).map { exponential.delay(afterFailedAttempts: $0, using: &generator) }
                == [10, 30, 90, 270, 810, 1000].map { .milliseconds($0) })
        #expect(exponential.delay(afterFailedAttempts: 10_000, using: &generator) == .seconds(1))
        #expect(Backoff.none.delay(afterFailedAttempts: 3, using: &generator) == .zero)
        #expect(Backoff.constant(.seconds(-5)).delay(afterFailedAttempts: 1, using: &generator) == .zero)
        let full = Backoff.constant(.seconds(1)).jittered(by: 1)
        for _ in 0..<1_000 {
            let delay = full.delay(afterFailedAttempts: 1, using: &generator)
            #expect(delay >= .zero && delay <= .seconds(1))
        }
    }

    @Test("Cancelling during the wait between attempts ends it at once; no more attempts")
    func cancelDuringBackoff() async throws {
        let clock = TestClock()
        let script = ScriptedAttempts<FlakyError>([.failure(.unavailable(attempt: 1)), .success(2)])
        let retrying = RetryingOperation(
            maxAttempts: 2, backoff: .constant(.seconds(60)), clock: clock, makingAttempt: script.attempt)
        OperationQueue().addOperation(retrying)
        await clock.sleepers(atLeast: 1)
        retrying.cancel()
        await #expect(throws: FlakyError.cancelled) { try await retrying.bridge.value }
        try await retrying.bridge.waitForCompletion()
        #expect(retrying.isFinished && retrying.isCancelled && !retrying.bridge.isTimedOut)
        #expect(script.made.current == 1 && clock.pendingSleepers == 0)
    }

    @Test("Cancelling during an attempt cancels it, and finishes only once the attempt has ended")
    func cancelDuringAttempt() async throws {
        let attempt = ManualResultOperation<Int, FlakyError>()
        let made = LockedBox(0)
        let retrying = RetryingOperation(maxAttempts: 3) { _ in
            made.withLock { $0 += 1 }
            return attempt
        }
        OperationQueue().addOperation(retrying)
        await attempt.started.wait()
        retrying.cancel()
        await attempt.cancelRequested.wait()
        #expect(attempt.isExecuting && !retrying.isFinished)  // no attempt outlives the retrying operation
        attempt.finish()
        try await retrying.bridge.waitForCompletion()
        #expect(retrying.result == .failure(.cancelled) && made.current == 1)
    }

    @Test("Cancelling the task that runs it cancels the running attempt")
    func cancelTheAwaitingTask() async throws {
        let attempt = ManualResultOperation<Int, FlakyError>()
        let retrying = RetryingOperation(maxAttempts: 3) { _ in attempt }
        let queue = OperationQueue()
        let task = Task { try await queue.run(retrying) }
        await attempt.started.wait()
        task.cancel()
        await attempt.cancelRequested.wait()
        attempt.finish()
        await #expect(throws: FlakyError.cancelled) { try await task.value }
        #expect(retrying.isCancelled && retrying.attemptCount == 1)
    }

    @Test("An attempt cancelled by someone else is not retried: the retrying operation ends cancelled")
    func attemptCancelledElsewhere() async throws {
        let attempt = ManualResultOperation<Int, FlakyError>()
        let retrying = RetryingOperation(maxAttempts: 3) { _ in attempt }
        OperationQueue().addOperation(retrying)
        await attempt.started.wait()
        attempt.cancel()
        attempt.finish()
        await #expect(throws: FlakyError.cancelled) { try await retrying.bridge.value }
        #expect(retrying.isCancelled && retrying.attemptCount == 1)
        #expect(retrying.failedAttempts.map(\.failure) == [.cancelled])
    }

    @Test("An attempt time limit times attempts out; a timed-out attempt is retried")
    func attemptTimeLimit() async throws {
        let clock = TestClock()
        let retrying = RetryingOperation(
            maxAttempts: 3, clock: clock, attemptTimeLimit: .seconds(5), retryingWhen: { $0.isTransient }
        ) { (attempt: Int) async throws(FlakyError) -> Int in
            guard attempt == 3 else {
                try? await clock.sleep(for: .seconds(3600))  // hangs until its task is cancelled
                throw .cancelled
            }
            return attempt
        }
        OperationQueue().addOperation(retrying)
        for _ in 1...2 {
            await clock.sleepers(atLeast: 2)  // the attempt's sleep and its limit
            clock.advance(by: .seconds(5))
        }
        #expect(try await retrying.bridge.value == 3)
        #expect(retrying.failedAttempts.map(\.failure) == [.timedOut, .timedOut])
        #expect(clock.pendingSleepers == 0)
    }

    @Test("A Failure without 'timed out': timed-out attempts are retried; the last one times the operation out")
    func attemptTimeLimitWithoutATimeoutFailure() async throws {
        let clock = TestClock()
        let attempts = Recorder<ManualResultOperation<Int, LookupFailure>>()
        let retrying = RetryingOperation(maxAttempts: 2, clock: clock, attemptTimeLimit: .seconds(1)) { _ in
            let attempt = ManualResultOperation<Int, LookupFailure>()
            attempts.append(attempt)
            return attempt
        }
        OperationQueue().addOperation(retrying)
        for number in 1...2 {
            await clock.sleepers(atLeast: 1)
            clock.advance(by: .seconds(1))
            let attempt = attempts.all[number - 1]
            await attempt.cancelRequested.wait()
            attempt.finish()
        }
        try await retrying.bridge.waitForCompletion()
        #expect(retrying.bridge.isTimedOut && retrying.result == nil)
        await expectTimedOut { () async throws(OperationFailure<LookupFailure>) -> Int in
            try await retrying.bridge.outcomeValue
        }
        #expect(retrying.failedAttempts.count == 2)
        #expect(retrying.failedAttempts.allSatisfy { if case .timedOut = $0 { true } else { false } })
    }

    @Test("A time limit on the retrying operation bounds all attempts and waits: it ends timed out")
    func overallTimeLimit() async throws {
        let clock = TestClock()
        let script = ScriptedAttempts<FlakyError>(Array(repeating: .failure(.unavailable(attempt: 0)), count: 10))
        let retrying = RetryingOperation(
            maxAttempts: 10, backoff: .constant(.seconds(4)), clock: clock, makingAttempt: script.attempt)
        retrying.bridge.limitRunningTime(to: .seconds(10), clock: clock)
        OperationQueue().addOperation(retrying)
        await clock.sleepers(atLeast: 2)  // the limit and the first wait
        clock.advance(by: .seconds(4))
        await clock.sleepers(atLeast: 2)
        clock.advance(by: .seconds(4))
        await clock.sleepers(atLeast: 2)
        clock.advance(by: .seconds(2))  // 10 s: the limit, in the middle of the third wait
        await #expect(throws: FlakyError.timedOut) { try await retrying.bridge.value }
        try await retrying.bridge.waitForCompletion()
        #expect(retrying.bridge.isTimedOut && script.made.current == 3 && clock.pendingSleepers == 0)
    }

    @Test("Attempts that ignore their cancellation: each time limit bounds its attempt (issue 36, item 4)")
    func stubbornAttemptsAreGivenUpOn() async throws {
        let clock = TestClock()
        let release = Gate()
        let attempts = Recorder<AsyncResultOperation<Int, FlakyError>>()
        let retrying = RetryingOperation(maxAttempts: 3, clock: clock, attemptTimeLimit: .milliseconds(100)) {
            (_: Int) -> AsyncResultOperation<Int, FlakyError> in
            let attempt = TaskOperation { () async throws(FlakyError) -> Int in
                await release.wait()  // ignores its cancellation
                return 1
            }
            attempts.append(attempt)
            return attempt
        }
        #expect(retrying.onAttemptTimeout == .cancelAndReturn)
        OperationQueue().addOperation(retrying)
        for number in 1...3 {
            await clock.sleepers(atLeast: 1)  // attempt `number` runs, its limit counting
            #expect(attempts.all.count == number)
            clock.advance(by: .milliseconds(100))
        }
        // Every attempt still runs, none ended: the retrying operation moved on from each, and
        // ends timed out with the last one's failure.
        await #expect(throws: FlakyError.timedOut) { try await retrying.bridge.value }
        try await retrying.bridge.waitForCompletion()
        #expect(retrying.failedAttempts.map(\.failure) == [.timedOut, .timedOut, .timedOut])
        let stubborn = attempts.all
        #expect(stubborn.allSatisfy { $0.bridge.isTimedOut && $0.isExecuting })
        // Nothing is lost: each abandoned attempt ends once its work does, and keeps the timeout.
        release.open()
        for attempt in stubborn { try await attempt.bridge.waitForCompletion() }
        #expect(stubborn.allSatisfy { $0.result == .failure(.timedOut) })
        #expect(clock.pendingSleepers == 0)
    }

    @Test("onAttemptTimeout .cancelAndWait: a timed-out attempt is waited for before the next one")
    func stubbornAttemptsAreWaitedFor() async throws {
        let clock = TestClock()
        let gates = [Gate(), Gate()]
        let timedOut = [Gate(), Gate()]
        let attempts = Recorder<AsyncResultOperation<Int, FlakyError>>()
        let previousEnded = Recorder<Bool>()
        let retrying = RetryingOperation(
            maxAttempts: 2, clock: clock, attemptTimeLimit: .milliseconds(100), onAttemptTimeout: .cancelAndWait
        ) { (number: Int) -> AsyncResultOperation<Int, FlakyError> in
            previousEnded.append(attempts.all.allSatisfy(\.isFinished))
            let attempt = TaskOperation { () async throws(FlakyError) -> Int in
                // Ignores its cancellation, but says it came: the timeout has been decided then.
                await withTaskCancellationHandler {
                    await gates[number - 1].wait()
                } onCancel: {
                    timedOut[number - 1].open()
                }
                return number
            }
            attempts.append(attempt)
            return attempt
        }
        let queue = OperationQueue()
        queue.addOperation(retrying)
        for number in 1...2 {
            await clock.sleepers(atLeast: 1)
            clock.advance(by: .milliseconds(100))
            // The advance only wakes the timer; its timeout must have reached the attempt before
            // the attempt may return, or the attempt's own value would be first.
            await timedOut[number - 1].wait()
            gates[number - 1].open()  // only now may the retrying operation move on
        }
        await #expect(throws: FlakyError.timedOut) { try await retrying.bridge.value }
        #expect(previousEnded.all == [true, true])
        #expect(attempts.all.allSatisfy { $0.isFinished && $0.result == .failure(.timedOut) })
        #expect(clock.pendingSleepers == 0)
    }

    @Test("A retrying operation chains, and its dependents see only the final outcome")
    func dependentsSeeTheFinalOutcome() async throws {
        let script = ScriptedAttempts<FlakyError>([.failure(.unavailable(attempt: 1)), .success(20)])
        let retrying = RetryingOperation(maxAttempts: 2, makingAttempt: script.attempt)
        let doubled = retrying.bridge.then { (value: Int) async throws(FlakyError) -> Int in value * 2 }
        let queue = OperationQueue()
        queue.addOperation(retrying)
        #expect(try await queue.run(doubled) == 40)
    }

    @Test("An attempt with a dependency of its own starts once that dependency has finished")
    func attemptWithDependency() async throws {
        let prerequisite = ManualResultOperation<Int, FlakyError>()
        let attempt = ControlledOperation<Int, FlakyError>(.success(5))
        attempt.addDependency(prerequisite)
        let retrying = RetryingOperation(maxAttempts: 1) { _ in attempt }
        let queue = OperationQueue()
        queue.addOperation(retrying)
        queue.addOperation(prerequisite)
        await prerequisite.started.wait()
        #expect(!attempt.isExecuting && !attempt.isFinished)
        prerequisite.finish(with: .success(1))
        #expect(try await retrying.bridge.value == 5)
    }

    @Test("A factory returning an operation already queued or finished: awaited, never started twice")
    func factoryReturningUsedOperations() async throws {
        let finished = ControlledOperation<Int, FlakyError>(.failure(.unavailable(attempt: 1)))
        _ = try? await OperationQueue().run(finished)
        let again = RetryingOperation(maxAttempts: 3) { _ in finished }
        await #expect(throws: FlakyError.unavailable(attempt: 1)) { try await OperationQueue().run(again) }
        #expect(again.attemptCount == 3 && again.failedAttempts.count == 3)

        let elsewhere = OperationQueue()
        elsewhere.isSuspended = true
        let queued = ManualResultOperation<Int, FlakyError>()
        let owner = Task { await elsewhere.runForOutcome(queued) }  // the package queues it there
        while elsewhere.operationCount == 0 { await Task.yield() }
        let awaiting = RetryingOperation(maxAttempts: 2) { _ in queued }
        OperationQueue().addOperation(awaiting)
        elsewhere.isSuspended = false
        await queued.started.wait()
        queued.finish(with: .success(9))
        #expect(try await awaiting.bridge.value == 9)
        #expect(queued.mainRunCount == 1)
        _ = await owner.value
    }

    @Test(
        "An async factory (a token fetched first, say) is awaited; an async closure returning an operation is a factory"
    )
    func asyncFactory() async throws {
        let tokens = LockedBox(0)
        let script = ScriptedAttempts<FlakyError>([.failure(.unavailable(attempt: 1)), .success(2)])
        let retrying = RetryingOperation(maxAttempts: 2) { number in
            await Task.yield()  // stands for an async token refresh
            tokens.withLock { $0 += 1 }
            return script.attempt(number)
        }
        #expect(try await OperationQueue().run(retrying) == 2)
        #expect(tokens.current == 2)
    }

    @Test("Cancelled before it starts: no attempt is made")
    func cancelledBeforeStart() async throws {
        let script = ScriptedAttempts<FlakyError>([.success(1)])
        let retrying = RetryingOperation(maxAttempts: 2, makingAttempt: script.attempt)
        retrying.cancel()
        await #expect(throws: FlakyError.cancelled) { try await OperationQueue().run(retrying) }
        #expect(script.made.current == 0 && retrying.attemptCount == 0)
    }

    @Test("Randomized races: cancellation against attempts and waits; exactly one outcome, as scripted")
    func randomizedRaces() async throws {
        var generator = Stress.generator(for: "RetryingOperationTests.randomizedRaces")
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 4
        var cancelledCount = 0
        for _ in 0..<Stress.iterations(2_000) {
            let maxAttempts = Int.random(in: 1...4, using: &generator)
            let outcomes: [Result<Int, FlakyError>] = (1...maxAttempts).map { number in
                switch Int.random(in: 0..<4, using: &generator) {
                case 0: .success(number)
                case 1: .failure(.badRequest)
                default: .failure(.unavailable(attempt: number))
                }
            }
            let expected = Self.expectedOutcome(outcomes)
            let backoff: Backoff = Bool.random(using: &generator) ? .none : .constant(.microseconds(50))
            let entered = Gate()
            let release = Gate()
            let retrying = RetryingOperation(
                maxAttempts: maxAttempts, backoff: backoff, retryingWhen: { $0.isTransient }
            ) { (attempt: Int) async throws(FlakyError) -> Int in
                entered.open()
                await release.wait()
                return try outcomes[attempt - 1].get()
            }
            // The cancellation races the release of the attempts, each after a random number of
            // yields; half of the races begin once the first attempt runs, half at the start.
            let afterFirstAttempt = Bool.random(using: &generator)
            let cancelLag = Int.random(in: 0..<150, using: &generator)
            let releaseLag = Int.random(in: 0..<8, using: &generator)
            queue.addOperation(retrying)
            if afterFirstAttempt { await entered.wait() }
            let canceller = Task.detached {
                for _ in 0..<cancelLag { await Task.yield() }
                retrying.cancel()
            }
            let releaser = Task.detached {
                for _ in 0..<releaseLag { await Task.yield() }
                release.open()
            }
            try await retrying.bridge.waitForCompletion()
            await canceller.value
            await releaser.value
            let result = try #require(retrying.result)
            if retrying.isCancelled {
                cancelledCount += 1
                #expect(result == .failure(.cancelled))
            } else {
                #expect(result == expected.result)
                #expect(retrying.attemptCount == expected.attempts)
            }
            #expect(retrying.attemptCount <= maxAttempts && !retrying.bridge.isTimedOut)
        }
        print("RetryingOperationTests.randomizedRaces: \(cancelledCount) of the runs ended cancelled")
    }

    /// The outcome of a run that nothing cancels, and how many attempts it makes.
    private static func expectedOutcome(
        _ outcomes: [Result<Int, FlakyError>]
    ) -> (result: Result<Int, FlakyError>, attempts: Int) {
        for (index, outcome) in outcomes.enumerated() {
            if case .failure(let error) = outcome, error.isTransient, index < outcomes.count - 1 { continue }
            return (outcome, index + 1)
        }
        preconditionFailure("scripts are never empty")
    }

    #if EXIT_TESTS
        @Test(
            "Programmer errors trap with a message: no attempts, a shrinking multiplier, a throwing factory, a jitter outside 0...1"
        )
        func programmerErrors() async {
            await #expect(processExitsWith: .failure) {
                _ = RetryingOperation<Int, FlakyError>(maxAttempts: 0) { _ in ControlledOperation(.success(1)) }
            }
            await #expect(processExitsWith: .failure) {
                _ = Backoff.exponential(initial: .seconds(1), multiplier: 0.5, maximum: .seconds(2))
            }
            await #expect(processExitsWith: .failure) {
                // A throwing closure that returns an operation: a factory must not throw.
                _ = RetryingOperation(maxAttempts: 2) { (_: Int) async throws -> ControlledOperation<Int, FlakyError> in
                    ControlledOperation(.success(1))
                }
            }
            await #expect(processExitsWith: .failure) {
                _ = Backoff.constant(.seconds(1)).jittered(by: 1.5)
            }
        }
    #endif
}

extension OperationFailure {
    /// The operation's own failure, or the matching failure for a timeout or a cancellation — to
    /// compare lists of failures in tests.
    fileprivate var failure: Failure? {
        switch self {
        case .failed(let error): error
        default: nil
        }
    }
}
