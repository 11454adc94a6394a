import Foundation
import OperationBridge
import Testing

/// A failure type that can say "timed out" (and so "cancelled").
enum SlowServiceError: Error, Equatable, TimeoutRepresentable {
    case offline
    case cancelled
    case timedOut

    static var cancellation: SlowServiceError { .cancelled }
    static var timeout: SlowServiceError { .timedOut }
}

/// A legacy error enum: it can express neither cancellation nor a timeout.
enum LookupFailure: Error, Equatable {
    case notFound
}

/// Awaits with a time limit, driven by a test clock: the time is up only when the test says so.
@Suite(.timeLimit(Stress.timeLimit(minutes: 2)))
struct DeadlineAwaitTests {
    @Test("The time runs out: the operation is cancelled and the await returns at once, even if the work goes on")
    func timeoutCancelsAndReturns() async throws {
        let clock = TestClock()
        let queue = OperationQueue()
        let operation = await runningOperation(in: queue)
        let awaiting = Task { () async throws(SlowServiceError) -> Int in
            try await operation.bridge.value(within: .timeout(.seconds(5), clock: clock))
        }
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(4))
        #expect(!operation.isCancelled)
        clock.advance(by: .seconds(1))
        await #expect(throws: SlowServiceError.timedOut) { try await awaiting.value }
        #expect(operation.isCancelled)
        // The work ignored the cancellation: it still runs, and keeps its queue slot.
        #expect(operation.isExecuting)
        operation.finish(with: .success(1))
        try await operation.bridge.waitForCompletion()
        // The first result wins: the timeout, recorded as such (not as a cancellation).
        #expect(operation.result == .failure(.timedOut))
        #expect(operation.bridge.isTimedOut)
        #expect(clock.pendingSleepers == 0)
    }

    @Test("cancelAndWait: the await returns only once the cancelled operation has ended")
    func timeoutCancelsAndWaits() async throws {
        let clock = TestClock()
        let queue = OperationQueue()
        let operation = await runningOperation(in: queue)
        let awaiting = Task { () async throws(SlowServiceError) -> Int in
            defer { #expect(operation.isFinished) }
            return try await queue.run(
                operation, within: .timeout(.seconds(5), clock: clock, onTimeout: .cancelAndWait))
        }
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(5))
        await operation.cancelRequested.wait()
        operation.finish(with: .failure(.offline))
        // Cancelled by the timeout before its outcome was final: a timeout, whatever it reported.
        await #expect(throws: SlowServiceError.timedOut) { try await awaiting.value }
        #expect(clock.pendingSleepers == 0)
    }

    @Test("Finishing in time answers the result and leaves no timer behind")
    func finishesInTime() async throws {
        let clock = TestClock()
        let queue = OperationQueue()
        let operation = await runningOperation(in: queue)
        let awaiting = Task { () async throws(SlowServiceError) -> Int in
            try await operation.bridge.value(within: .timeout(.seconds(5), clock: clock))
        }
        await clock.sleepers(atLeast: 1)
        operation.finish(with: .success(42))
        #expect(try await awaiting.value == 42)
        #expect(clock.pendingSleepers == 0)
        #expect(!operation.isCancelled)
        clock.advance(by: .seconds(10))
        #expect(!operation.isCancelled)
    }

    @Test("A cancellation is never reported as a timeout")
    func cancellationIsNotATimeout() async throws {
        let clock = TestClock()
        let queue = OperationQueue()
        queue.isSuspended = true
        let operation = ManualResultOperation<Int, SlowServiceError>()
        queue.addOperation(operation)
        let awaiting = Task { () async throws(SlowServiceError) -> Int in
            try await operation.bridge.value(within: .timeout(.seconds(5), clock: clock))
        }
        await clock.sleepers(atLeast: 1)
        operation.cancel()
        await #expect(throws: SlowServiceError.cancelled) { try await awaiting.value }
        #expect(clock.pendingSleepers == 0)
        queue.isSuspended = false
        try await operation.bridge.waitForCompletion()
    }

    @Test("Cancelling the awaiting task stops the wait as a cancellation, and the timer with it")
    func taskCancellationIsNotATimeout() async throws {
        let clock = TestClock()
        let operation = ManualResultOperation<Int, LookupFailure>()  // never queued
        let awaiting = Task { () async throws(OperationFailure<LookupFailure>) -> Int in
            try await operation.bridge.outcomeValue(within: .timeout(.seconds(5), clock: clock))
        }
        await clock.sleepers(atLeast: 1)
        awaiting.cancel()
        await #expect { try await awaiting.value } throws: { isCase($0, "cancelled") }
        #expect(clock.pendingSleepers == 0)
        #expect(!operation.isCancelled)  // a non-owning await leaves the operation alone
    }

    @Test("A time limit that has already passed: a pending operation times out at once, a final outcome is answered")
    func zeroAndNegativeTimeouts() async throws {
        for timeout in [Duration.zero, .seconds(-1)] {
            let clock = TestClock()
            let pending = ManualResultOperation<Int, SlowServiceError>()
            await #expect(throws: SlowServiceError.timedOut) {
                try await pending.bridge.value(within: .timeout(timeout, clock: clock))
            }
            #expect(pending.isCancelled)
            let finished = TaskOperation { () async throws(SlowServiceError) -> Int in 7 }
            finished.start()
            try await finished.bridge.waitForCompletion()
            #expect(try await finished.bridge.value(within: .timeout(timeout, clock: clock)) == 7)
            // And on the real clock, through the ContinuousClock timer heap.
            let real = ManualResultOperation<Int, SlowServiceError>()
            await #expect(throws: SlowServiceError.timedOut) { try await real.bridge.value(within: .timeout(timeout)) }
        }
    }

    @Test("Every Failure kind says 'timed out' in its own way")
    func typedTimeouts() async throws {
        let clock = TestClock()
        let legacy = ManualResultOperation<Int, LookupFailure>()
        let legacyAwait = Task { () async throws(OperationFailure<LookupFailure>) -> Int in
            try await legacy.bridge.outcomeValue(within: .deadline(clock.now.advanced(by: .seconds(1)), clock: clock))
        }
        let untyped = ManualResultOperation<Int, any Error>()
        let untypedAwait = Task { try await untyped.bridge.value(within: .timeout(.seconds(1), clock: clock)) }
        await clock.sleepers(atLeast: 2)
        clock.advance(by: .seconds(1))
        await #expect { try await legacyAwait.value } throws: { isCase($0, "timedOut") }
        await #expect(throws: OperationTimeoutError.self) { try await untypedAwait.value }
        #expect(String(describing: OperationFailure<LookupFailure>.timedOut) == "timed out")
    }

    @Test("run with a time limit on a suspended queue: timed out, and the operation finishes without running")
    func runOnASuspendedQueue() async throws {
        let clock = TestClock()
        let queue = OperationQueue()
        queue.isSuspended = true
        let operation = ManualResultOperation<Int, LookupFailure>()
        let awaiting = Task { () async throws(OperationFailure<LookupFailure>) -> Int in
            try await queue.runForOutcomeValue(
                operation, within: .timeout(.seconds(2), clock: clock, onTimeout: .cancelAndWait))
        }
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(2))
        await #expect { try await awaiting.value } throws: { isCase($0, "timedOut") }
        queue.isSuspended = false
        try await operation.bridge.waitForCompletion()
        #expect(operation.mainRunCount == 0)
    }

    @Test("A foreign operation: the time limit cancels it and stops the wait")
    func foreignOperation() async throws {
        let clock = TestClock()
        let untyped = ManualResultOperation<Int, any Error>()
        let glue = BlockOperation {}
        glue.addDependency(untyped)  // never finishes while `untyped` is pending
        let queue = OperationQueue()
        queue.addOperation(glue)
        let awaiting = Task {
            try await queue.run(
                TaskOperation { () async throws -> Int in 1 }, within: .timeout(.seconds(1), clock: clock))
        }
        #expect(try await awaiting.value == 1)
        glue.cancel()
        try await glue.bridge.waitForCompletion()
    }

    @Test("The ContinuousClock timer heap: thousands of deadlines cancelled and fired, interleaved")
    func sharedTimerUnderLoad() async throws {
        let queue = OperationQueue()
        let count = Stress.iterations(2_000)
        let answers = await withTaskGroup(of: (Bool, Bool).self) { group in
            for index in 0..<count {
                group.addTask {
                    if index.isMultiple(of: 2) {
                        // Finishes long before its hour: the deadline is cancelled.
                        let value = try? await queue.run(
                            TaskOperation { () async throws(SlowServiceError) -> Int in index },
                            within: .timeout(
                                .seconds(3600)
                            ))
                        return (true, value == index)
                    }
                    // Never finishes, and its time is already up: the deadline fires.
                    let stuck = ManualResultOperation<Int, SlowServiceError>()
                    do throws(SlowServiceError) {
                        _ = try await stuck.bridge.value(within: .timeout(.zero))
                        return (false, false)
                    } catch {
                        return (false, error == .timedOut && stuck.isCancelled)
                    }
                }
            }
            return await group.reduce(into: [(Bool, Bool)]()) { $0.append($1) }
        }
        #expect(answers.count == count)
        #expect(answers.allSatisfy { $0.1 })
    }

    @Test("Finish racing the timeout: one answer, consistent with the operation, no timer left")
    func finishRacingTheTimeout() async throws {
        var generator = Stress.generator(for: "DeadlineAwaitTests.finishRacingTheTimeout")
        let queue = OperationQueue()
        for _ in 0..<Stress.iterations(2_000) {
            let clock = TestClock()
            let behavior: TimeoutBehavior = Bool.random(using: &generator) ? .cancelAndReturn : .cancelAndWait
            let outcome: Result<Int, SlowServiceError> =
                Bool.random(using: &generator) ? .success(1) : .failure(.offline)
            let finishFirst = Bool.random(using: &generator)
            let operation = await runningOperation(in: queue)
            let awaiting = Task { () async -> Result<Int, SlowServiceError> in
                do throws(SlowServiceError) {
                    return .success(
                        try await operation.bridge.value(
                            within: .timeout(.seconds(1), clock: clock, onTimeout: behavior)))
                } catch {
                    return .failure(error)
                }
            }
            await clock.sleepers(atLeast: 1)
            let finisher = Task.detached {
                if finishFirst { operation.finish(with: outcome) }
                clock.advance(by: .seconds(1))
                if !finishFirst { operation.finish(with: outcome) }
            }
            let answer = await awaiting.value
            await finisher.value
            try await operation.bridge.waitForCompletion()
            switch answer {
            case .success(let value):
                #expect(operation.result == .success(value))
            case .failure(.timedOut):
                #expect(operation.isCancelled && operation.bridge.isTimedOut)
                #expect(operation.result == .failure(.timedOut))
            case .failure(let error):
                #expect(operation.result == .failure(error))
                #expect(!operation.isCancelled)
            }
            #expect(clock.pendingSleepers == 0)
        }
    }
}

/// An operation running in `queue`, whose work ends only when the test finishes it.
private func runningOperation(in queue: OperationQueue) async -> ManualResultOperation<Int, SlowServiceError> {
    let operation = ManualResultOperation<Int, SlowServiceError>()
    queue.addOperation(operation)
    await operation.started.wait()
    return operation
}

/// Whether `error` is the ``OperationFailure`` case named `name` (the type is not `Equatable`).
private func isCase(_ error: any Error, _ name: String) -> Bool {
    guard let failure = error as? OperationFailure<LookupFailure> else { return false }
    switch failure {
    case .failed: return name == "failed"
    case .cancelled: return name == "cancelled"
    case .upstreamFailed: return name == "upstreamFailed"
    case .timedOut: return name == "timedOut"
    case .conditionFailed: return name == "conditionFailed"
    }
}
