import Foundation
import OperationBridge
import Testing

/// An operation that ends only when cancelled (or when its trigger fires, which these tests never
/// do).
private func untilCancelled() -> GatedResultOperation<Int, StepError> {
    GatedResultOperation(.success(-1), trigger: Trigger())
}

/// A classic operation that runs until cancelled and finishes inside `cancel()`, on the
/// cancelling thread — as many hand-written operations do.
private final class FinishesWhenCancelledOperation: AsyncResultOperation<Int, StepError>, @unchecked Sendable {
    let started = Trigger()

    override func main() {
        started.fire()
        // `cancel()` may have come while the operation was starting (`isExecuting` still false).
        if isCancelled { finish() }
    }

    override func cancel() {
        super.cancel()
        if isExecuting { finish() }
    }
}

/// How the operations still running end once they are cancelled.
enum CancelledOperationEnding: String, CaseIterable, Sendable, CustomStringConvertible {
    /// Later, on another thread (a task wakes up and finishes the operation).
    case afterwards
    /// Synchronously, inside `cancel()`.
    case insideCancel

    var description: String { rawValue }
}

@Suite(.timeLimit(Stress.timeLimit(minutes: 1)))
struct OperationValuesTests {
    @Test(arguments: bothResultOrders)
    func valuesOfSuccessfulOperations(order: ResultOrder) async throws {
        let queue = OperationQueue()
        let operations = (0..<10).map { GatedResultOperation<Int, StepError>(.success($0 * 2)) }
        var seen: [Int: Int] = [:]
        for try await element in try queue.values(of: operations, order: order) {
            #expect(element.operation === operations[element.index])
            seen[element.index] = element.value
        }
        #expect(seen == Dictionary(uniqueKeysWithValues: (0..<10).map { ($0, $0 * 2) }))
        let fresh = (0..<10).map { GatedResultOperation<Int, StepError>(.success($0 * 2)) }
        #expect(try await queue.values(of: fresh, order: order).collect() == (0..<10).map { $0 * 2 })
    }

    @Test func submissionOrderWithGates() async throws {
        let queue = OperationQueue()
        let triggers = (0..<4).map { _ in Trigger() }
        let operations = triggers.enumerated().map { GatedResultOperation<Int, StepError>(.success($0), trigger: $1) }
        var iterator = try queue.values(of: operations, order: .submission).makeAsyncIterator()
        for index in [2, 3, 1] {
            triggers[index].fire()
            try await operations[index].bridge.waitForCompletion()
        }
        triggers[0].fire()
        for expected in 0..<4 {
            let element = try #require(try await iterator.next())
            #expect(element.index == expected)
            #expect(element.value == expected)
        }
        #expect(try await iterator.next() == nil)
    }

    @Test(arguments: bothResultOrders)
    func theFirstFailureIsThrownTypedAndCancelsTheRest(order: ResultOrder) async throws {
        let queue = OperationQueue()
        let failureTrigger = Trigger()
        let succeeding = GatedResultOperation<Int, StepError>(.success(0))
        let failing = GatedResultOperation<Int, StepError>(.failure(.planned(1)), trigger: failureTrigger)
        let rest = (0..<3).map { _ in untilCancelled() }
        var iterator = try queue.values(of: [succeeding, failing] + rest, order: order).makeAsyncIterator()

        let first = try #require(try await iterator.next())
        #expect(first.index == 0 && first.value == 0)
        failureTrigger.fire()
        do {
            _ = try await iterator.next()
            Issue.record("the failure should have been thrown")
        } catch {
            let typed: StepError = error  // typed throws
            #expect(typed == .planned(1))
        }
        // The sequence has ended.
        #expect(try await iterator.next() == nil)
        try await rest.waitForCompletion()
        for operation in rest {
            #expect(operation.isCancelled)
            #expect(operation.result == .failure(.cancelled))
        }
    }

    @Test(arguments: bothResultOrders, CancelledOperationEnding.allCases)
    func aFailureIsNotHiddenByTheCancellationsItCauses(order: ResultOrder, ending: CancelledOperationEnding)
        async throws
    {
        // The failing operation is last in submission order, and the ones before it are still
        // running when it fails: they are cancelled because of it, but what the caller learns is
        // the failure itself, not a cancellation it never asked for.
        let queue = OperationQueue()
        let running: [AsyncResultOperation<Int, StepError>]
        let started: [Trigger]
        switch ending {
        case .afterwards:
            let operations = (0..<3).map { _ in untilCancelled() }
            (running, started) = (operations, operations.map(\.started))
        case .insideCancel:
            let operations = (0..<3).map { _ in FinishesWhenCancelledOperation() }
            (running, started) = (operations, operations.map(\.started))
        }
        let failureTrigger = Trigger()
        let failing = GatedResultOperation<Int, StepError>(.failure(.planned(3)), trigger: failureTrigger)
        let sequence = try queue.values(of: running + [failing], order: order)
        let collecting = Task { () async throws(StepError) -> [Int] in try await sequence.collect() }
        for trigger in started + [failing.started] { await trigger.wait() }
        failureTrigger.fire()
        do {
            _ = try await collecting.value
            Issue.record("collect() should have thrown")
        } catch {
            #expect(error as? StepError == .planned(3))
        }
        try await running.waitForCompletion()
        #expect(running.allSatisfy { $0.result == .failure(.cancelled) })
    }

    @Test func successesAndFailuresInCompletionOrder() async throws {
        let queue = OperationQueue()
        let triggers = (0..<5).map { _ in Trigger() }
        let planned: [Result<Int, StepError>] = [
            .success(0), .success(1), .failure(.planned(2)), .success(3), .failure(.planned(4)),
        ]
        let operations = (0..<5).map { GatedResultOperation(planned[$0], trigger: triggers[$0]) }
        var iterator = try queue.values(of: operations, order: .completion).makeAsyncIterator()
        for index in [1, 3, 0] {
            triggers[index].fire()
            let element = try #require(try await iterator.next())
            #expect(element.index == index)
        }
        triggers[2].fire()
        await #expect(throws: StepError.planned(2)) { _ = try await iterator.next() }
        #expect(try await iterator.next() == nil)
        try await operations[4].bridge.waitForCompletion()
        #expect(operations[4].result == .failure(.cancelled))
    }

    @Test func aCancelledOperationThrowsTheCancellationFailure() async throws {
        let queue = OperationQueue()
        let cancelled = GatedResultOperation<Int, StepError>(.success(1))
        cancelled.cancel()
        await #expect(throws: StepError.cancelled) {
            _ = try await queue.values(of: [cancelled]).collect()
        }
    }

    @Test func anyErrorOperationsThrowCancellationErrorWhenCancelledWithoutAResult() async throws {
        let queue = OperationQueue()
        let fine = GatedResultOperation<Int, any Error>(.success(1))
        #expect(try await queue.values(of: [fine]).collect() == [1])
        let cancelled = GatedResultOperation<Int, any Error>(.success(1))
        cancelled.cancel()
        await #expect(throws: CancellationError.self) {
            _ = try await OperationQueue().values(of: [cancelled]).collect()
        }
    }

    @Test func emptyInput() async throws {
        let queue = OperationQueue()
        let none: [AsyncResultOperation<Int, StepError>] = []
        #expect(try await queue.values(of: none).collect() == [])
        var count = 0
        for try await _ in try queue.values(of: none, order: .submission) { count += 1 }
        #expect(count == 0)
    }

    @Test func theSameOperationTwice() async throws {
        let queue = OperationQueue()
        let repeated = GatedResultOperation<Int, StepError>(.success(5))
        let other = GatedResultOperation<Int, StepError>(.success(6))
        #expect(try await queue.values(of: [repeated, other, repeated], order: .submission).collect() == [5, 6, 5])
        #expect(repeated.mainRuns == 1)
    }

    @Test func breakingOutOfTheLoopCancelsTheRest() async throws {
        let queue = OperationQueue()
        let first = GatedResultOperation<Int, StepError>(.success(1))
        let rest = (0..<3).map { _ in untilCancelled() }
        for try await element in try queue.values(of: [first] + rest, order: .submission) {
            #expect(element.value == 1)
            break
        }
        #expect(rest.allSatisfy { $0.isCancelled })
        try await rest.waitForCompletion()
    }

    @Test func cancellingTheConsumingTaskEndsCollectWithTheCancellationFailure() async throws {
        let queue = OperationQueue()
        let first = GatedResultOperation<Int, StepError>(.success(1))
        let rest = (0..<3).map { _ in untilCancelled() }
        let sequence = try queue.values(of: [first] + rest)
        let collecting = Task { () async throws(StepError) -> [Int] in try await sequence.collect() }
        for operation in rest { await operation.started.wait() }
        collecting.cancel()
        await #expect(throws: StepError.cancelled) { _ = try await collecting.value }
        #expect(rest.allSatisfy { $0.isCancelled })
        try await rest.waitForCompletion()
    }

    @Test func valuesOfATenThousandOperationBatch() async throws {
        let count = 10_000
        let queue = OperationQueue()
        let operations = (0..<count).map { GatedResultOperation<Int, StepError>(.success($0)) }
        #expect(try await queue.values(of: operations, order: .submission).collect() == Array(0..<count))
    }

    #if EXIT_TESTS
        @Test func iteratingTwiceTraps() async {
            await #expect(processExitsWith: .failure) {
                let queue = OperationQueue()
                let sequence = try queue.values(of: [GatedResultOperation<Int, StepError>(.success(1))])
                _ = sequence.makeAsyncIterator()
                _ = sequence.makeAsyncIterator()
            }
        }
    #endif

    @Test func theSequenceIsSendable() async throws {
        let sequence = try OperationQueue().values(of: [GatedResultOperation<Int, StepError>(.success(4))])
        requireSendable(sequence)
        // Compile-time check; the iterator's `Sendable` conformance is unavailable on purpose.
        let consume: @Sendable () async throws -> [Int] = { try await sequence.collect() }
        #expect(try await Task.detached(operation: consume).value == [4])
    }
}
