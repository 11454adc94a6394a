import Foundation
import OperationBridge
import Testing

/// Running-time limits until an instant (`limitRunningTime(until:clock:)`, ProcedureKit's
/// `TimeoutObserver(until:)`), driven by a test clock: the same limit as a duration, with a
/// deadline fixed when it is set.
@Suite(.timeLimit(Stress.timeLimit(minutes: 2)))
struct RunningTimeDeadlineTests {
    @Test("The deadline is an instant: time spent pending counts, and the operation times out at it")
    func deadlineIsAnInstant() async throws {
        let clock = TestClock()
        let queue = OperationQueue()
        queue.isSuspended = true
        let operation = ManualResultOperation<Int, SlowServiceError>()
        operation.bridge.limitRunningTime(until: clock.now.advanced(by: .seconds(5)), clock: clock)
        queue.addOperation(operation)
        clock.advance(by: .seconds(3))  // pending: nothing is timed out, no timer counts yet
        #expect(clock.pendingSleepers == 0 && !operation.isCancelled)
        queue.isSuspended = false
        await operation.started.wait()
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(1))
        #expect(!operation.isCancelled)
        clock.advance(by: .seconds(1))  // 5 s after the limit was set, 2 s after the start
        await operation.cancelRequested.wait()
        #expect(operation.bridge.isTimedOut && operation.result == .failure(.timedOut))
        operation.finish()
        await #expect(throws: SlowServiceError.timedOut) { try await operation.bridge.value }
        #expect(clock.pendingSleepers == 0)
    }

    @Test("A deadline passed before queueing times the operation out when it starts: its work never runs")
    func passedBeforeQueueing() async throws {
        let clock = TestClock()
        clock.advance(by: .seconds(10))
        for deadline in [clock.now, clock.now.advanced(by: .seconds(-1))] {
            let ran = LockedBox(0)
            let operation = TaskOperation { () async throws(SlowServiceError) -> Int in
                ran.withLock { $0 += 1 }
                return 1  // would win against a timer racing it
            }
            operation.bridge.limitRunningTime(until: deadline, clock: clock)
            OperationQueue().addOperation(operation)
            await #expect(throws: SlowServiceError.timedOut) { try await operation.bridge.value }
            try await operation.bridge.waitForCompletion()
            #expect(operation.bridge.isTimedOut && operation.isCancelled && ran.current == 0)
            #expect(clock.pendingSleepers == 0)
        }
    }

    @Test("A deadline that passes while the operation is pending times it out when it starts, before its work")
    func passedWhilePending() async throws {
        let clock = TestClock()
        let queue = OperationQueue()
        queue.isSuspended = true
        let operation = ManualResultOperation<Int, SlowServiceError>()
        operation.bridge.limitRunningTime(until: clock.now.advanced(by: .seconds(1)), clock: clock)
        queue.addOperation(operation)
        clock.advance(by: .seconds(2))
        queue.isSuspended = false
        await #expect(throws: SlowServiceError.timedOut) { try await operation.bridge.value }
        try await operation.bridge.waitForCompletion()
        #expect(operation.mainRunCount == 0 && operation.bridge.isTimedOut)
        #expect(clock.pendingSleepers == 0)
    }

    @Test("Set on a running operation: a passed deadline times it out at once, a later one when reached")
    func setWhileRunning() async throws {
        let clock = TestClock()
        let queue = OperationQueue()
        let passed = ManualResultOperation<Int, SlowServiceError>()
        queue.addOperation(passed)
        await passed.started.wait()
        passed.bridge.limitRunningTime(until: clock.now, clock: clock)
        #expect(passed.bridge.isTimedOut && passed.result == .failure(.timedOut))
        passed.finish()

        let later = ManualResultOperation<Int, SlowServiceError>()
        queue.addOperation(later)
        await later.started.wait()
        later.bridge.limitRunningTime(until: clock.now.advanced(by: .seconds(2)), clock: clock)
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(2))
        await later.cancelRequested.wait()
        #expect(later.bridge.isTimedOut)
        later.finish()
        try await later.bridge.waitForCompletion()
        #expect(clock.pendingSleepers == 0)
    }

    @Test("Set twice before the start: the last one wins, deadline or duration; once counting, later calls do nothing")
    func setTwice() async throws {
        let clock = TestClock()
        let queue = OperationQueue()
        // The earlier deadline is replaced by the later one: not the earliest that wins.
        let replaced = ManualResultOperation<Int, SlowServiceError>()
        replaced.bridge.limitRunningTime(until: clock.now.advanced(by: .seconds(1)), clock: clock)
        replaced.bridge.limitRunningTime(until: clock.now.advanced(by: .seconds(10)), clock: clock)
        await startAndCountLimit(replaced, on: queue, clock: clock)
        clock.advance(by: .seconds(9))
        #expect(!replaced.isCancelled)
        clock.advance(by: .seconds(1))
        await replaced.cancelRequested.wait()
        #expect(replaced.bridge.isTimedOut)
        replaced.finish()

        // A passed deadline replaced by a duration: the duration counts from the start.
        let revived = ManualResultOperation<Int, SlowServiceError>()
        revived.bridge.limitRunningTime(until: clock.now, clock: clock)
        revived.bridge.limitRunningTime(to: .seconds(3), clock: clock)
        await startAndCountLimit(revived, on: queue, clock: clock)
        #expect(!revived.isCancelled && revived.mainRunCount == 1)
        clock.advance(by: .seconds(3))
        await revived.cancelRequested.wait()
        #expect(revived.bridge.isTimedOut)
        revived.finish()

        // A duration replaced by a passed deadline: timed out at the start.
        let shortened = ManualResultOperation<Int, SlowServiceError>()
        shortened.bridge.limitRunningTime(to: .seconds(3), clock: clock)
        shortened.bridge.limitRunningTime(until: clock.now, clock: clock)
        queue.addOperation(shortened)
        try await shortened.bridge.waitForCompletion()
        #expect(shortened.bridge.isTimedOut && shortened.mainRunCount == 0)

        // Counting already: a later, earlier deadline changes nothing.
        let counting = ManualResultOperation<Int, SlowServiceError>()
        counting.bridge.limitRunningTime(to: .seconds(10), clock: clock)
        await startAndCountLimit(counting, on: queue, clock: clock)
        counting.bridge.limitRunningTime(until: clock.now, clock: clock)
        counting.bridge.limitRunningTime(until: clock.now.advanced(by: .seconds(1)), clock: clock)
        clock.advance(by: .seconds(1))
        #expect(!counting.isCancelled && clock.pendingSleepers == 1)
        clock.advance(by: .seconds(9))
        await counting.cancelRequested.wait()
        #expect(counting.bridge.isTimedOut)
        counting.finish()
        try await counting.bridge.waitForCompletion()
        #expect(clock.pendingSleepers == 0)
    }

    @Test("A cancelled operation with a passed deadline finishes cancelled, not timed out; a finished one ignores it")
    func cancelledOrFinished() async throws {
        let clock = TestClock()
        let queue = OperationQueue()
        let cancelled = ManualResultOperation<Int, SlowServiceError>()
        cancelled.bridge.limitRunningTime(until: clock.now.advanced(by: .seconds(1)), clock: clock)
        cancelled.cancel()
        cancelled.bridge.limitRunningTime(until: clock.now, clock: clock)  // set after the cancel: the same
        clock.advance(by: .seconds(2))
        queue.addOperation(cancelled)
        await #expect(throws: SlowServiceError.cancelled) { try await cancelled.bridge.value }
        try await cancelled.bridge.waitForCompletion()
        #expect(cancelled.isCancelled && !cancelled.bridge.isTimedOut && cancelled.mainRunCount == 0)

        let finished = ManualResultOperation<Int, SlowServiceError>()
        queue.addOperation(finished)
        await finished.started.wait()
        finished.finish(with: .success(4))
        try await finished.bridge.waitForCompletion()
        finished.bridge.limitRunningTime(until: clock.now, clock: clock)
        finished.bridge.limitRunningTime(until: clock.now.advanced(by: .seconds(1)), clock: clock)
        #expect(!finished.bridge.isTimedOut && finished.result == .success(4))
        #expect(clock.pendingSleepers == 0)
    }

    @Test("A deadline on the continuous clock: an operation that ends in time is not timed out, and no timer is left")
    func continuousClockInTime() async throws {
        let operation = TaskOperation { () async throws(SlowServiceError) -> Int in 5 }
        operation.bridge.limitRunningTime(until: .now + .seconds(3600))
        #expect(try await OperationQueue().run(operation) == 5)
        #expect(!operation.bridge.isTimedOut)
    }

    @Test("The deadline racing the start: timed out either way, before its work or by its timer; no timer left")
    func deadlineRacingTheStart() async throws {
        var generator = Stress.generator(for: "RunningTimeDeadlineTests.deadlineRacingTheStart")
        let queue = OperationQueue()
        var timedOutAtStart = 0
        let iterations = Stress.iterations(2_000)
        for _ in 0..<iterations {
            let clock = TestClock()
            let operation = ManualResultOperation<Int, SlowServiceError>()
            operation.bridge.limitRunningTime(until: clock.now.advanced(by: .seconds(1)), clock: clock)
            let lag = Int.random(in: 0..<4, using: &generator)
            let start = Gate()
            let ticker = Task.detached {
                await start.wait()
                for _ in 0..<lag { await Task.yield() }
                clock.advance(by: .seconds(1))
            }
            let adder = Task.detached {
                await start.wait()
                queue.addOperation(operation)
            }
            start.open()
            await ticker.value
            await adder.value
            // The deadline has passed now: whatever the order, the operation times out — at the
            // start, or by its timer (which fires at once for a passed deadline). Either way
            // through `cancel()`.
            await operation.cancelRequested.wait()
            operation.finish()
            try await operation.bridge.waitForCompletion()
            #expect(operation.bridge.isTimedOut && operation.result == .failure(.timedOut))
            if operation.mainRunCount == 0 { timedOutAtStart += 1 }
            #expect(clock.pendingSleepers == 0)
        }
        print(
            "RunningTimeDeadlineTests.deadlineRacingTheStart: \(timedOutAtStart) of \(iterations) timed out at the start"
        )
    }

    /// Adds `operation` to `queue` and returns once it has started and its limit counts.
    private func startAndCountLimit(
        _ operation: ManualResultOperation<Int, SlowServiceError>,
        on queue: OperationQueue,
        clock: TestClock
    ) async {
        queue.addOperation(operation)
        await operation.started.wait()
        await clock.sleepers(atLeast: 1)
    }
}
