import Foundation
import OperationBridge
import Testing

/// `count` operations that succeed with `index * 10` once their trigger fires.
private func gatedOperations(_ count: Int) -> (operations: [GatedResultOperation<Int, StepError>], triggers: [Trigger])
{
    let triggers = (0..<count).map { _ in Trigger() }
    let operations = triggers.enumerated().map { index, trigger in
        GatedResultOperation<Int, StepError>(.success(index * 10), trigger: trigger)
    }
    return (operations, triggers)
}

@Suite(.timeLimit(Stress.timeLimit(minutes: 1)))
struct OperationResultsTests {
    // MARK: - Order

    @Test(arguments: [[3, 0, 4, 1, 2], [0, 1, 2, 3, 4], [4, 3, 2, 1, 0]])
    func completionOrderFollowsTheOperationsAsTheyFinish(finishingOrder: [Int]) async throws {
        let queue = OperationQueue()
        let (operations, triggers) = gatedOperations(5)
        var iterator = try queue.results(of: operations, order: .completion).makeAsyncIterator()
        for index in finishingOrder {
            // Only this operation can finish: the others wait for their triggers.
            triggers[index].fire()
            let element = try #require(await iterator.next())
            #expect(element.index == index)
            #expect(element.operation === operations[index])
            #expect(element.result == .success(index * 10))
        }
        #expect(await iterator.next() == nil)
    }

    @Test func submissionOrderWaitsForTheEarlierOperations() async throws {
        let queue = OperationQueue()
        let (operations, triggers) = gatedOperations(5)
        var iterator = try queue.results(of: operations, order: .submission).makeAsyncIterator()
        // 3, 1 and 4 finish first; none of them may come before 0.
        for index in [3, 1, 4] {
            triggers[index].fire()
            try await operations[index].bridge.waitForCompletion()
        }
        triggers[0].fire()
        var element = try #require(await iterator.next())
        #expect(element.index == 0)
        element = try #require(await iterator.next())  // already finished
        #expect(element.index == 1)
        triggers[2].fire()
        for expected in 2..<5 {
            element = try #require(await iterator.next())
            #expect(element.index == expected)
            #expect(element.operation === operations[expected])
            #expect(element.result == .success(expected * 10))
        }
        #expect(await iterator.next() == nil)
    }

    @Test(arguments: [[4, 3, 2, 1, 0], [2, 0, 4, 1, 3], [1, 0, 3, 2, 4]])
    func submissionOrderDeliversAnOperationOnlyAfterAllBeforeIt(finishingOrder: [Int]) async throws {
        let queue = OperationQueue()
        let (operations, triggers) = gatedOperations(5)
        let sequence = try queue.results(of: operations, order: .submission)
        let consumer = Task {
            var delivered: [Int] = []
            for await element in sequence {
                // Everything before this position has finished (it was delivered already).
                #expect(operations[...element.index].allSatisfy { $0.isFinished })
                delivered.append(element.index)
            }
            return delivered
        }
        for index in finishingOrder {
            triggers[index].fire()
            try await operations[index].bridge.waitForCompletion()
        }
        #expect(await consumer.value == [0, 1, 2, 3, 4])
    }

    // MARK: - Ending early

    @Test(arguments: bothResultOrders)
    func breakingOutOfTheLoopCancelsTheRest(order: ResultOrder) async throws {
        let queue = OperationQueue()
        let first = GatedResultOperation<Int, StepError>(.success(1))
        // These end only when cancelled.
        let rest = (0..<4).map { _ in GatedResultOperation<Int, StepError>(.success(0), trigger: Trigger()) }
        let operations = [first] + rest
        var delivered: [Int] = []
        for await element in try queue.results(of: operations, order: order) {
            delivered.append(element.index)
            break
        }
        #expect(delivered == [0])
        #expect(rest.allSatisfy { $0.isCancelled })
        try await rest.waitForCompletion()
        for operation in rest { #expect(operation.result == .failure(.cancelled)) }
        #expect(first.result == .success(1))
        try await queue.waitForAllOperations()
    }

    @Test func droppingTheIteratorBeforeTheFirstElementCancelsEverything() async throws {
        let queue = OperationQueue()
        let (operations, _) = gatedOperations(3)
        do {
            let iterator = try queue.results(of: operations).makeAsyncIterator()
            _ = iterator
        }
        #expect(operations.allSatisfy { $0.isCancelled })
        try await operations.waitForCompletion()
        #expect(operations.allSatisfy { $0.result == .failure(.cancelled) })
    }

    @Test(arguments: bothResultOrders)
    func cancellingTheConsumingTaskCancelsTheRest(order: ResultOrder) async throws {
        let queue = OperationQueue()
        let first = GatedResultOperation<Int, StepError>(.success(1))
        let rest = (0..<4).map { _ in GatedResultOperation<Int, StepError>(.success(0), trigger: Trigger()) }
        let sequence = try queue.results(of: [first] + rest, order: order)
        let received = Trigger()
        let consumer = Task {
            var delivered: [Int] = []
            for await element in sequence {
                delivered.append(element.index)
                received.fire()
            }
            return delivered
        }
        await received.wait()
        consumer.cancel()
        // The loop ends, having seen only what had finished.
        #expect(await consumer.value == [0])
        #expect(rest.allSatisfy { $0.isCancelled })
        try await rest.waitForCompletion()
        for operation in rest { #expect(operation.result == .failure(.cancelled)) }
    }

    @Test func aConsumerCancelledBeforeIteratingCancelsEverything() async throws {
        let queue = OperationQueue()
        let (operations, _) = gatedOperations(3)
        let sequence = try queue.results(of: operations)
        let consumer = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            var count = 0
            for await _ in sequence { count += 1 }
            return count
        }
        #expect(await consumer.value == 0)
        #expect(operations.allSatisfy { $0.isCancelled })
        try await operations.waitForCompletion()
    }

    // MARK: - Successes and failures

    @Test(arguments: bothResultOrders)
    func successesAndFailuresAreAllDelivered(order: ResultOrder) async throws {
        let queue = OperationQueue()
        let planned: [Result<Int, StepError>] = [
            .success(0), .failure(.planned(1)), .success(2), .failure(.planned(3)), .success(4),
        ]
        let operations = planned.map { GatedResultOperation($0) }
        var seen: [Int: Result<Int, StepError>?] = [:]
        for await element in try queue.results(of: operations, order: order) {
            #expect(seen[element.index] == nil, "position \(element.index) delivered twice")
            seen[element.index] = element.result
        }
        // A failure does not stop the results sequence, nor cancel independent operations.
        #expect(seen.count == planned.count)
        for (index, result) in planned.enumerated() { #expect(seen[index] == result) }
        #expect(!operations.contains { $0.isCancelled })
    }

    @Test func anOperationCancelledWithoutAResultIsDeliveredWithNone() async throws {
        let queue = OperationQueue()
        let plain = GatedResultOperation<Int, InexpressibleError>(.success(1))
        let cancelled = GatedResultOperation<Int, InexpressibleError>(.success(2))
        cancelled.cancel()
        let results = try await queue.results(of: [plain, cancelled], order: .submission).collect()
        #expect(results == [.success(1), nil])
    }

    // MARK: - Edge cases

    @Test func emptyInputEndsAtOnce() async throws {
        let queue = OperationQueue()
        let none: [AsyncResultOperation<Int, StepError>] = []
        for order in bothResultOrders {
            var count = 0
            for await _ in try queue.results(of: none, order: order) { count += 1 }
            #expect(count == 0)
            #expect(try await queue.results(of: none, order: order).collect().isEmpty)
            #expect(try await queue.results(of: none, order: order).allSucceeded())
        }
    }

    @Test(arguments: bothResultOrders)
    func theSameOperationTwiceRunsOnceAndIsDeliveredForBothPositions(order: ResultOrder) async throws {
        let queue = OperationQueue()
        let repeated = GatedResultOperation<Int, StepError>(.success(7))
        let other = GatedResultOperation<Int, StepError>(.success(8))
        let operations = [repeated, other, repeated]
        var delivered: [Int] = []
        for await element in try queue.results(of: operations, order: order) {
            delivered.append(element.index)
            #expect(element.operation === operations[element.index])
            #expect(element.result == .success(element.index == 1 ? 8 : 7))
        }
        #expect(delivered.sorted() == [0, 1, 2])
        if order == .submission { #expect(delivered == [0, 1, 2]) }
        #expect(repeated.mainRuns == 1)
        #expect(other.mainRuns == 1)
    }

    @Test(arguments: bothResultOrders)
    func tenThousandOperationsStreamWithNoneLostOrDuplicated(order: ResultOrder) async throws {
        let count = 10_000
        let queue = OperationQueue()
        let operations = (0..<count).map { GatedResultOperation<Int, StepError>(.success($0)) }
        var seen = [Bool](repeating: false, count: count)
        var delivered = 0
        var previous = -1
        var mismatches = 0
        for await element in try queue.results(of: operations, order: order) {
            if seen[element.index] { mismatches += 1 }
            seen[element.index] = true
            if element.result != .success(element.index) || element.operation !== operations[element.index] {
                mismatches += 1
            }
            if order == .submission {
                if element.index != previous + 1 { mismatches += 1 }
                previous = element.index
            }
            delivered += 1
        }
        #expect(delivered == count)
        #expect(mismatches == 0)
        #expect(seen.allSatisfy { $0 })
    }

    // MARK: - collect() and allSucceeded()

    @Test func collectReturnsEveryResultInSubmissionOrder() async throws {
        let queue = OperationQueue()
        let (operations, triggers) = gatedOperations(4)
        let collecting = Task { try await queue.results(of: operations, order: .completion).collect() }
        for index in [2, 0, 3, 1] { triggers[index].fire() }
        #expect(try await collecting.value == [.success(0), .success(10), .success(20), .success(30)])
    }

    @Test func collectInACancelledTaskReportsWhatTheCancelledOperationsEndWith() async throws {
        let queue = OperationQueue()
        let first = GatedResultOperation<Int, StepError>(.success(1))
        let rest = (0..<3).map { _ in GatedResultOperation<Int, StepError>(.success(0), trigger: Trigger()) }
        let sequence = try queue.results(of: [first] + rest, order: .submission)
        let collecting = Task { await sequence.collect() }
        try await first.bridge.waitForCompletion()
        for operation in rest { await operation.started.wait() }
        collecting.cancel()
        let results = await collecting.value
        #expect(results.count == 4)
        #expect(results[0] == .success(1))
        #expect(results[1...].allSatisfy { $0 == .failure(.cancelled) })
        #expect(rest.allSatisfy { $0.isCancelled })
        try await rest.waitForCompletion()
    }

    @Test func allSucceededIsTrueWhenEveryOperationSucceeded() async throws {
        let queue = OperationQueue()
        let operations = (0..<20).map { GatedResultOperation<Int, StepError>(.success($0)) }
        #expect(try await queue.results(of: operations).allSucceeded())
    }

    @Test func allSucceededStopsAtTheFirstFailureAndCancelsTheRest() async throws {
        let queue = OperationQueue()
        let failing = GatedResultOperation<Int, StepError>(.failure(.planned(0)))
        let rest = (0..<3).map { _ in GatedResultOperation<Int, StepError>(.success(1), trigger: Trigger()) }
        #expect(try await queue.results(of: [failing] + rest).allSucceeded() == false)
        #expect(rest.allSatisfy { $0.isCancelled })
        try await rest.waitForCompletion()
    }

    @Test func allSucceededIsFalseForACancelledOperation() async throws {
        let queue = OperationQueue()
        let cancelled = GatedResultOperation<Int, InexpressibleError>(.success(1))
        cancelled.cancel()
        let fine = GatedResultOperation<Int, InexpressibleError>(.success(2))
        #expect(try await queue.results(of: [fine, cancelled], order: .submission).allSucceeded() == false)
    }

    /// The classic aggregate pattern — a finished operation that depends on all the others —
    /// next to its async replacement.
    @Test func allSucceededReplacesTheClassicAggregateOperation() async throws {
        let classicQueue = OperationQueue()
        let classicDownloads = (0..<5).map { GatedResultOperation<Int, StepError>(.success($0)) }
        let verdict = Guarded<Bool?>(nil)
        let aggregate = BlockOperation {
            verdict.set(classicDownloads.allSatisfy { $0.result.map { (try? $0.get()) != nil } ?? false })
        }
        for download in classicDownloads { aggregate.addDependency(download) }
        classicQueue.addOperation(aggregate)
        for download in classicDownloads { classicQueue.addOperation(download) }
        try await aggregate.bridge.waitForCompletion()

        let downloads = (0..<5).map { GatedResultOperation<Int, StepError>(.success($0)) }
        let allSucceeded = try await OperationQueue().results(of: downloads).allSucceeded()
        #expect(verdict.current == allSucceeded)
        #expect(allSucceeded)
    }

    // MARK: - Observing operations queued elsewhere

    @Test func observingOperationsQueuedElsewhere() async throws {
        let elsewhere = OperationQueue()
        let (operations, triggers) = gatedOperations(3)
        for operation in operations { elsewhere.addOperation(operation) }
        let finishedEarlier = GatedResultOperation<Int, StepError>(.success(99))
        finishedEarlier.start()
        var iterator = try OperationResults(observing: operations + [finishedEarlier], order: .completion)
            .makeAsyncIterator()
        var element = try #require(await iterator.next())
        #expect(element.index == 3)  // already finished: delivered at once
        for index in [1, 2, 0] {
            triggers[index].fire()
            element = try #require(await iterator.next())
            #expect(element.index == index)
            #expect(element.result == .success(index * 10))
        }
        #expect(await iterator.next() == nil)
    }

    @Test func leavingALoopOverObservedOperationsCancelsThem() async throws {
        let elsewhere = OperationQueue()
        let (operations, _) = gatedOperations(3)
        let finished = GatedResultOperation<Int, StepError>(.success(1))
        elsewhere.addOperation(finished)
        for operation in operations { elsewhere.addOperation(operation) }
        for await element in try OperationResults(observing: [finished] + operations, order: .submission) {
            #expect(element.index == 0)
            break
        }
        #expect(operations.allSatisfy { $0.isCancelled })
        try await operations.waitForCompletion()
        #expect(operations.allSatisfy { $0.result == .failure(.cancelled) })
    }

    // MARK: - Single iteration and Sendable

    #if EXIT_TESTS
        @Test func iteratingTwiceTraps() async {
            await #expect(processExitsWith: .failure) {
                let queue = OperationQueue()
                let sequence = try queue.results(of: [GatedResultOperation<Int, StepError>(.success(1))])
                var first = sequence.makeAsyncIterator()
                _ = await first.next()
                _ = sequence.makeAsyncIterator()
            }
        }
    #endif

    @Test func theSequenceIsSendable() async throws {
        let queue = OperationQueue()
        let operations = (0..<3).map { GatedResultOperation<Int, StepError>(.success($0)) }
        let sequence = try queue.results(of: operations, order: .submission)
        requireSendable(sequence)
        // Compile-time check: the sequence can be captured by a `@Sendable` closure and consumed
        // in another task. (Its iterator is explicitly *not* `Sendable`: its `Sendable`
        // conformance is marked unavailable, so sharing one does not compile — nothing to check
        // at run time.)
        let consume: @Sendable () async -> [Result<Int, StepError>?] = { await sequence.collect() }
        #expect(await Task.detached(operation: consume).value == [.success(0), .success(1), .success(2)])
    }

    @Test func elementsAreSendable() async throws {
        let queue = OperationQueue()
        let sequence = try queue.results(of: [GatedResultOperation<Int, StepError>(.success(1))])
        for await element in sequence {
            requireSendable(element)
            let handOff: @Sendable () -> Int = { element.index }
            #expect(handOff() == 0)
        }
    }
}
