import Foundation
import OperationBridge
import Testing

/// A `Failure` that cannot express cancellation: such operations end cancelled *without* a
/// result. `value` is not offered for them (there would be nothing to throw — a compile-time
/// property that a test cannot check); `outcome` and `runForOutcome` answer `nil`.
@Suite(.timeLimit(Stress.timeLimit(minutes: 1)))
struct AwaitingWithoutCancellationFailureTests {
    enum NoResultCase: String, CaseIterable, Sendable {
        /// Cancelled before its queue started it.
        case cancelledBeforeStart
        /// Cancelled while running; its work then ends with `finish()`.
        case cancelledWhileRunning
        /// The awaiting task is cancelled; the operation never runs.
        case awaitingTaskCancelled
    }

    @Test("outcome answers nil", arguments: NoResultCase.allCases)
    func outcomeIsNil(scenario: NoResultCase) async {
        let operation = ManualResultOperation<Int, ParseError>()
        let queue = OperationQueue()
        let awaiter = Task { await operation.bridge.outcome }
        switch scenario {
        case .cancelledBeforeStart:
            operation.cancel()
            queue.addOperation(operation)
        case .cancelledWhileRunning:
            queue.addOperation(operation)
            await operation.started.wait()
            operation.cancel()
            operation.finish()
        case .awaitingTaskCancelled:
            awaiter.cancel()
        }

        #expect(await awaiter.value == nil)
        #expect(operation.result == nil)
        #expect(operation.isCancelled == (scenario != .awaitingTaskCancelled))
        // `outcome` answers as soon as the outcome is decided: cancelled before its start, the
        // operation is finished by its queue a moment later (CI23 read `isFinished` before).
        if scenario != .awaitingTaskCancelled { try? await operation.bridge.waitForCompletion() }
        #expect(operation.isFinished == (scenario != .awaitingTaskCancelled))
    }

    @Test("outcome answers the failure the operation did report")
    func outcomeReportsFailure() async {
        let operation = ControlledOperation<Int, ParseError>(.failure(.malformed))
        let awaiter = Task { await operation.bridge.outcome }
        OperationQueue().addOperation(operation)
        #expect(await awaiter.value == .failure(.malformed))
    }

    @Test("runForOutcome answers nil when the task is cancelled before the operation starts")
    func runForOutcomeCancelledBeforeStart() async {
        let queue = OperationQueue()
        queue.isSuspended = true
        let operation = ManualResultOperation<Int, ParseError>()
        let runner = Task {
            cancelCurrentTask()
            return await queue.runForOutcome(operation)
        }
        #expect(await runner.value == nil)
        #expect(operation.isCancelled)
        queue.isSuspended = false
        try? await operation.bridge.waitForCompletion()
        #expect(operation.mainRunCount == 0)
        #expect(operation.result == nil)
    }

    @Test("runForOutcome answers nil when the cancelled running operation ends without a result")
    func runForOutcomeCancelledWhileRunning() async {
        let queue = OperationQueue()
        let operation = ManualResultOperation<Int, ParseError>()
        let runner = Task { await queue.runForOutcome(operation) }
        await operation.started.wait()
        runner.cancel()
        // The task's cancellation reaches the operation; its work then stops without a result.
        await operation.cancelRequested.wait()
        operation.finish()
        #expect(await runner.value == nil)
        #expect(operation.isFinished)
    }

    @Test("runForOutcome returns the result")
    func runForOutcomeReturnsResult() async {
        let queue = OperationQueue()
        #expect(await queue.runForOutcome(ControlledOperation<Int, ParseError>(.success(1))) == .success(1))
        #expect(
            await queue.runForOutcome(ControlledOperation<Int, ParseError>(.failure(.malformed)))
                == .failure(.malformed))
    }
}
