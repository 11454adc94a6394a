import Foundation
import OperationBridge
import Testing

/// How `results(of:)` and `values(of:)` schedule operations that depend on each other: through
/// the pipeline scheduler, each added to the queue only once its dependencies have finished.
@Suite(.timeLimit(Stress.timeLimit(minutes: 1)))
struct OperationQueueBatchesTests {
    @Test func aDependentIsQueuedOnlyOnceItsDependencyHasFinished() async throws {
        let queue = OperationQueue()
        let release = Trigger()
        let upstream = GatedResultOperation<Int, StepError>(.success(1), trigger: release)
        let downstream = AddingOperation(adding: 1)
        downstream.takeInput(from: upstream)
        // Given dependent first: the dependencies decide, not the array.
        var iterator = try queue.results(of: [downstream, upstream], order: .completion).makeAsyncIterator()
        await upstream.started.wait()
        #expect(queue.operations.contains(upstream))
        #expect(!queue.operations.contains(downstream))
        release.fire()
        let first = try #require(await iterator.next())
        #expect(first.index == 1)
        let second = try #require(await iterator.next())
        #expect(second.index == 0)
        #expect(second.result == .success(2))
        #expect(await iterator.next() == nil)
    }

    @Test func aChainIsDeliveredInChainOrder() async throws {
        let count = 200
        let queue = OperationQueue()
        var chain: [AsyncResultOperation<Int, StepError>] = [GatedResultOperation(.success(0))]
        for _ in 1..<count {
            let next = AddingOperation(adding: 1)
            next.takeInput(from: chain[chain.count - 1])
            chain.append(next)
        }
        var expected = 0
        for await element in try queue.results(of: chain.reversed(), order: .completion) {
            // Completion order of a chain is the chain's order.
            #expect(element.result == .success(expected))
            expected += 1
        }
        #expect(expected == count)
    }

    @Test func aFailureStopsItsDependentsOnlyInTheResultsSequence() async throws {
        let queue = OperationQueue()
        let failing = GatedResultOperation<Int, StepError>(.failure(.planned(0)))
        let dependentRuns = Guarded(0)
        let dependent = TaskOperation { () async throws(StepError) -> Int in
            dependentRuns.withLock { $0 += 1 }
            return 1
        }
        dependent.addDependency(failing)
        let independent = GatedResultOperation<Int, StepError>(.success(2))
        let sequence = try queue.results(of: [failing, dependent, independent], order: .submission)
        let results = await sequence.collect()
        #expect(results[0] == .failure(.planned(0)))
        #expect(results[2] == .success(2))
        // The dependent did not run and reports why, rather than a cancellation.
        #expect(dependent.rootCause == .planned(0))
        #expect(dependentRuns.current == 0)
        #expect(sequence.firstFailure?.index == 0)
        #expect(sequence.firstFailure?.error as? StepError == .planned(0))
    }

    @Test func aFailureInTheValuesSequenceCancelsEverythingElse() async throws {
        let queue = OperationQueue()
        let failing = GatedResultOperation<Int, StepError>(.failure(.planned(0)), trigger: Trigger())
        let independent = GatedResultOperation<Int, StepError>(.success(1), trigger: Trigger())
        let sequence = try queue.values(of: [failing, independent])
        let collecting = Task { () async throws(StepError) -> [Int] in try await sequence.collect() }
        await failing.started.wait()
        await independent.started.wait()
        failing.trigger?.fire()
        await #expect(throws: StepError.planned(0)) { _ = try await collecting.value }
        try await independent.bridge.waitForCompletion()
        #expect(independent.result == .failure(.cancelled))
    }

    @Test func aDependencyOutsideTheBatchIsHonoured() async throws {
        let queue = OperationQueue()
        let elsewhere = OperationQueue()
        let release = Trigger()
        let external = GatedResultOperation<Int, StepError>(.success(0), trigger: release)
        let externalFinishedAtStart = Guarded<Bool?>(nil)
        let step = TaskOperation { () async throws(StepError) -> Int in
            externalFinishedAtStart.set(external.isFinished)
            return 1
        }
        step.addDependency(external)
        elsewhere.addOperation(external)
        let collecting = Task { try await queue.results(of: [step]).collect() }
        await external.started.wait()
        release.fire()
        #expect(try await collecting.value == [.success(1)])
        #expect(externalFinishedAtStart.current == true)
    }

    @Test func aCycleIsReportedBeforeAnythingIsQueued() throws {
        let queue = OperationQueue()
        queue.isSuspended = true
        let first = GatedResultOperation<Int, StepError>(.success(1))
        let second = GatedResultOperation<Int, StepError>(.success(2))
        let unrelated = GatedResultOperation<Int, StepError>(.success(3))
        first.addDependency(second)
        second.addDependency(first)
        #expect(throws: PipelineError.self) { _ = try queue.results(of: [unrelated, first, second]) }
        #expect(throws: PipelineError.self) { _ = try queue.values(of: [first, second, unrelated]) }
        #expect(throws: PipelineError.self) { _ = try OperationResults(observing: [first, second]) }
        #expect(queue.operationCount == 0)
        #expect(first.mainRuns + second.mainRuns + unrelated.mainRuns == 0)
    }
}
