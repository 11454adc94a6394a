import Foundation
import OperationBridge
import Testing

/// `within:` on every await (issue 35 items 6 and 7): the awaits that exist without a limit exist
/// with one, for every `Failure`, each answering in its own typed way. Driven by a test clock:
/// the time is up only when the test says so.
@Suite(.timeLimit(Stress.timeLimit(minutes: 2)))
struct TimeLimitTests {
    @Test("Never: value(within:) and run(_:within:) answer nil when the time runs out, and the operation is timed out")
    func neverAnswersNil() async throws {
        let clock = TestClock()
        let pending = ManualResultOperation<Int, Never>()  // never queued: only the limit ends it
        let awaiting = Task { await pending.bridge.value(within: .timeout(.seconds(5), clock: clock)) }
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(5))
        #expect(await awaiting.value == nil)
        #expect(pending.bridge.isTimedOut)
        #expect(pending.isCancelled)

        let queue = OperationQueue()
        queue.isSuspended = true
        let queued = ManualResultOperation<Int, Never>()
        let running = Task { await queue.run(queued, within: .timeout(.seconds(1), clock: clock)) }
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(1))
        #expect(await running.value == nil)
        #expect(queued.bridge.isTimedOut)
        queue.isSuspended = false
        try await queued.bridge.waitForCompletion()
        #expect(queued.mainRunCount == 0)  // timed out before it started: it never ran
        #expect(clock.pendingSleepers == 0)
    }

    @Test("Never: a value in time is answered, and no timer is left")
    func neverAnswersTheValueInTime() async throws {
        let clock = TestClock()
        let queue = OperationQueue()
        #expect(await queue.run(TaskOperation { 6 * 7 }, within: .timeout(.seconds(5), clock: clock)) == 42)
        #expect(clock.pendingSleepers == 0)
    }

    @Test("A Failure that says only 'cancelled': the time running out throws its cancellation value, with isTimedOut")
    func cancellationOnlyFailureThrowsItsCancellation() async throws {
        let clock = TestClock()
        let operation = ManualResultOperation<Int, TransferError>()
        let awaiting = Task { () async throws(TransferError) -> Int in
            try await operation.bridge.value(within: .timeout(.seconds(2), clock: clock))
        }
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(2))
        await #expect(throws: TransferError.cancelled) { try await awaiting.value }
        #expect(operation.bridge.isTimedOut)  // how a timeout is told from a cancellation

        // Through the queue, owning the operation.
        let queue = OperationQueue()
        queue.isSuspended = true
        let queued = ManualResultOperation<Int, TransferError>()
        let running = Task { () async throws(TransferError) -> Int in
            try await queue.run(queued, within: .deadline(clock.now.advanced(by: .seconds(3)), clock: clock))
        }
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(3))
        await #expect(throws: TransferError.cancelled) { try await running.value }
        #expect(queued.bridge.isTimedOut)
        queue.isSuspended = false
        try await queued.bridge.waitForCompletion()
    }

    @Test("A real cancellation of such an operation is not a timeout")
    func cancellationOnlyFailureCancelledIsNotTimedOut() async throws {
        let clock = TestClock()
        let operation = ManualResultOperation<Int, TransferError>()
        let awaiting = Task { () async throws(TransferError) -> Int in
            try await operation.bridge.value(within: .timeout(.seconds(2), clock: clock))
        }
        await clock.sleepers(atLeast: 1)
        operation.cancel()
        await #expect(throws: TransferError.cancelled) { try await awaiting.value }
        #expect(!operation.bridge.isTimedOut)
        #expect(clock.pendingSleepers == 0)
    }

    @Test("Any Operation: waitForCompletion(within:) throws OperationTimeoutError and cancels it; in time it returns")
    func waitForCompletionWithinALimit() async throws {
        let clock = TestClock()
        let block = BlockOperation {}  // never queued
        let waiting = Task {
            try await block.bridge.waitForCompletion(within: .timeout(.seconds(1), clock: clock))
        }
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(1))
        await #expect(throws: OperationTimeoutError()) { try await waiting.value }
        #expect(block.isCancelled)

        let queue = OperationQueue()
        let quick = BlockOperation {}
        queue.addOperation(quick)
        try await quick.bridge.waitForCompletion(within: .timeout(.seconds(60), clock: clock))
        #expect(!quick.isCancelled)
        #expect(clock.pendingSleepers == 0)
    }

    @Test(
        "runUntilFinished(_:within:): a plain operation held back past the limit is cancelled, and the call throws OperationTimeoutError"
    )
    func runUntilFinishedWithinALimit() async throws {
        let clock = TestClock()
        let queue = OperationQueue()
        let blocker = BlockOperation {}
        let held = BlockOperation {}
        held.addDependency(blocker)  // not ready until the blocker has run
        let running = Task {
            try await queue.runUntilFinished(held, within: .timeout(.seconds(1), clock: clock))
        }
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(1))
        await #expect(throws: OperationTimeoutError()) { try await running.value }
        #expect(held.isCancelled)
        // `held` must outlive `blocker`'s run: Foundation's dependency keeps an unretained pointer
        // to a cancelled dependent that finished early (Design.md, "Platform facts").
        queue.addOperation(blocker)
        try await queue.waitForAllOperations()
        #expect(held.isFinished)
    }

    @Test("A TimeLimit is a description: a timeout counts from the await that uses it, not from its creation")
    func timeoutCountsFromTheAwait() async throws {
        let clock = TestClock()
        let limit = TimeLimit.timeout(.seconds(5), clock: clock)
        clock.advance(by: .seconds(60))  // long before the await
        let operation = ManualResultOperation<Int, SlowServiceError>()
        let awaiting = Task { () async throws(SlowServiceError) -> Int in
            try await operation.bridge.value(within: limit)
        }
        await clock.sleepers(atLeast: 1)
        #expect(!operation.isCancelled)
        operation.finish(with: .success(3))
        #expect(try await awaiting.value == 3)
        // The same value serves a second await, counted from its own start.
        let second = ManualResultOperation<Int, SlowServiceError>()
        let again = Task { () async throws(SlowServiceError) -> Int in try await second.bridge.value(within: limit) }
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(4))
        #expect(!second.isCancelled)
        clock.advance(by: .seconds(1))
        await #expect(throws: SlowServiceError.timedOut) { try await again.value }
    }
}
