import Foundation
import OperationBridge
import Testing

/// Typed awaiting for every `Failure`: `value` and `run` throw `Failure` where it can express
/// cancellation, `any Error` for `any Error`, and answer an optional for `Never`; for every
/// `Failure` — the way for legacy error enums without a `cancelled` case, where `value` and
/// `run` are unavailable — `outcomeValue` and `runForOutcomeValue` throw `OperationFailure`.
@Suite(.timeLimit(Stress.timeLimit(minutes: 1)))
struct TypedAwaitingTests {
    /// A legacy error enum: no `cancelled` case, no upstream case.
    enum LookupError: Error, Equatable {
        case notFound
    }

    final class Lookup: AsyncResultOperation<String, LookupError>, @unchecked Sendable {
        let answer: Result<String, LookupError>
        init(_ answer: Result<String, LookupError>) {
            self.answer = answer
            super.init()
        }
        override func main() { finish(with: answer) }
    }

    // MARK: - Failure == Never

    @Test("Never: value and run answer the value without try, also written inline")
    func neverFailingValueAndRun() async {
        let queue = OperationQueue()
        #expect(await queue.addTask { 6 * 7 }.bridge.value == 42)
        #expect(await queue.run(TaskOperation { 7 }) == 7)
        let inTask = Task { await queue.run(TaskOperation { 8 }) }
        #expect(await inTask.value == 8)
        let step = TaskOperation { () async -> Int in 1 }
        let pipeline = try? Pipeline([step], on: queue)
        #expect(await pipeline?.value(of: step) == 1)
    }

    @Test("Never: cancelled before its closure ran, value is nil")
    func neverFailingCancelled() async {
        let operation = TaskOperation { () async -> Int in 1 }
        operation.cancel()
        #expect(await operation.bridge.value == nil)
        let queue = OperationQueue()
        queue.isSuspended = true
        let owned = Task { await queue.run(TaskOperation { () async -> Int in 2 }) }
        owned.cancel()
        #expect(await owned.value == nil)
    }

    // MARK: - Failures that can express nothing

    @Test("A legacy error type: value throws OperationFailure, typed, for every ending")
    func legacyErrorValue() async {
        let queue = OperationQueue()
        let found = Lookup(.success("42"))
        queue.addOperation(found)
        #expect((try? await found.bridge.outcomeValue) == "42")

        let missing = Lookup(.failure(.notFound))
        queue.addOperation(missing)
        do {
            _ = try await missing.bridge.outcomeValue
            Issue.record("expected a failure")
        } catch .failed(let error) {
            #expect(error == .notFound)
        } catch {
            Issue.record("expected .failed, got \(error)")
        }

        let cancelled = Lookup(.success("never"))
        cancelled.cancel()
        do {
            _ = try await cancelled.bridge.outcomeValue
            Issue.record("expected a cancellation")
        } catch .cancelled {
            #expect(cancelled.result == nil)
        } catch {
            Issue.record("expected .cancelled, got \(error)")
        }
    }

    @Test("A legacy error type: a step stopped by its upstream throws .upstreamFailed with the root")
    func legacyErrorUpstream() async {
        let queue = OperationQueue()
        let upstream = Lookup(.failure(.notFound))
        let step = upstream.bridge.then { (text: String) async throws(LookupError) -> Int in text.count }
        queue.addOperation(upstream)
        queue.addOperation(step)
        do {
            _ = try await step.bridge.outcomeValue
            Issue.record("expected an upstream failure")
        } catch .upstreamFailed(let error) {
            #expect(error.rootFailure as? LookupError == .notFound)
        } catch {
            Issue.record("expected .upstreamFailed, got \(error)")
        }
        #expect(!step.isCancelled)
    }

    @Test(
        "A legacy error type: runForOutcomeValue throws OperationFailure; the owning task's cancellation is .cancelled")
    func legacyErrorRun() async {
        let queue = OperationQueue()
        do {
            _ = try await queue.runForOutcomeValue(Lookup(.failure(.notFound)))
            Issue.record("expected a failure")
        } catch .failed(.notFound) {
        } catch {
            Issue.record("expected .failed(.notFound), got \(error)")
        }
        queue.isSuspended = true
        let owned = Task { () async -> String in
            do {
                return try await queue.runForOutcomeValue(Lookup(.success("late")))
            } catch {
                return "\(error)"
            }
        }
        owned.cancel()
        #expect(await owned.value == "cancelled")
        queue.isSuspended = false
    }

    @Test("OperationFailure can be an operation's own Failure: it expresses cancellation")
    func operationFailureAsFailureType() async {
        let operation = TaskOperation { () async throws(OperationFailure<LookupError>) -> Int in
            throw .failed(.notFound)
        }
        operation.cancel()
        do {
            _ = try await operation.bridge.value
        } catch {
            // `value` throws `Failure` itself here: OperationFailure is CancellationRepresentable.
            let typed: OperationFailure<LookupError> = error
            if case .cancelled = typed {} else { Issue.record("got \(typed)") }
        }
    }

    // MARK: - Values of results sequences

    @Test("collectValues and collectOutcomeValues: all values, or the first failure, typed")
    func collectValuesForEveryFailureKind() async throws {
        let queue = OperationQueue()
        let numbers = (0..<5).map { number in TaskOperation { () async throws(TransferError) -> Int in number } }
        let values = try await queue.results(of: numbers).collectValues()
        #expect(values == [0, 1, 2, 3, 4])

        let lookups = try queue.results(of: [Lookup(.success("a")), Lookup(.failure(.notFound))])
        do {
            _ = try await lookups.collectOutcomeValues()
            Issue.record("expected a failure")
        } catch .failed(let error) {
            #expect(error == .notFound)
        } catch {
            Issue.record("expected .failed, got \(error)")
        }

        await #expect(throws: TransferError.offline) {
            try await queue.results(
                of: [TaskOperation { () async throws(TransferError) -> Int in throw .offline }]
            ).collectValues()
        }
        let untyped = try await queue.results(of: [TaskOperation { () async throws -> Int in 9 }]).collectValues()
        #expect(untyped == [9])
    }

    @Test("collectValues cancels the operations that have not finished at the first failure")
    func collectValuesCancelsTheRest() async throws {
        let queue = OperationQueue()
        let failing = GatedResultOperation<Int, StepError>(.failure(.planned(0)))
        let waiting = GatedResultOperation<Int, StepError>(.success(1), trigger: Trigger())
        await #expect(throws: StepError.planned(0)) {
            try await queue.results(of: [failing, waiting]).collectValues()
        }
        try await waiting.bridge.waitForCompletion()
        #expect(waiting.result == .failure(.cancelled))
    }
}

/// A decided outcome is answered at once: an operation cancelled (or given its result) before it
/// started will never run, and nothing can change its outcome — also when it is never queued.
@Suite(.timeLimit(Stress.timeLimit(minutes: 1)))
struct DecidedOutcomeTests {
    @Test("value of an operation cancelled but never queued answers its cancellation at once")
    func cancelledNeverQueued() async {
        let operation = ManualResultOperation<Int, TransferError>()
        operation.cancel()
        await #expect(throws: TransferError.cancelled) { try await operation.bridge.value }
        #expect(await operation.bridge.outcome == .failure(.cancelled))
        #expect(!operation.isFinished)  // it finishes when something starts it
    }

    @Test("An await already waiting is answered when the operation is cancelled, never queued")
    func waitingThenCancelled() async {
        let operation = ManualResultOperation<Int, TransferError>()
        let answer = Task { try await operation.bridge.value }
        let outcome = Task { await operation.bridge.outcome }
        operation.cancel()
        await #expect(throws: TransferError.cancelled) { try await answer.value }
        #expect(await outcome.value == .failure(.cancelled))
    }

    @Test("A result given before the operation started is answered at once")
    func resultBeforeStart() async throws {
        let operation = ManualResultOperation<Int, TransferError>()
        let answer = Task { try await operation.bridge.value }
        operation.finish(with: .success(5))
        #expect(try await answer.value == 5)
        #expect(operation.mainRunCount == 0)
    }

    @Test("Without a result to express it, the outcome is nil; outcomeValue throws .cancelled")
    func cancelledWithoutResult() async {
        let operation = ManualResultOperation<Int, ParseError>()
        operation.cancel()
        #expect(await operation.bridge.outcome == nil)
        do {
            _ = try await operation.bridge.outcomeValue
        } catch {
            if case .cancelled = error {} else { Issue.record("got \(error)") }
        }
    }

    @Test("waitForCompletion still waits for the finish; the awaiting task's cancellation answers it")
    func waitForCompletionWaitsForTheFinish() async {
        let operation = ManualResultOperation<Int, TransferError>()
        operation.cancel()
        let waiter = Task { try await operation.bridge.waitForCompletion() }
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        operation.start()  // a cancelled operation finishes when started
        try? await operation.bridge.waitForCompletion()
        #expect(operation.isFinished)
    }
}
