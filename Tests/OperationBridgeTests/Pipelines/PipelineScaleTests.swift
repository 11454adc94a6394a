import Foundation
import OperationBridge
import Testing

/// Large graphs complete through a pipeline. No timing assertion: the cost is measured by the
/// benchmark, not by tests.
@Suite(.timeLimit(.minutes(2)))
struct PipelineScaleTests {
    static let size = 2_000

    @Test func aTwoThousandStepMixedChainCompletes() async throws {
        let queue = OperationQueue()
        let source = TaskOperation { () async throws(StepError) -> Int in 0 }
        var steps: [Operation] = [source]
        var last: AsyncResultOperation<Int, StepError> = source
        let glueRuns = Guarded(0)
        for index in 1..<Self.size {
            let next: AsyncResultOperation<Int, StepError>
            if index.isMultiple(of: 2) {
                next = last.bridge.then { (value: Int) async throws(StepError) -> Int in value + 1 }
            } else {
                let adding = AddingOperation(adding: 1)
                adding.takeInput(from: last)
                next = adding
            }
            if index.isMultiple(of: 10) {
                // Glue between two links: the next link also waits for it.
                let glue = BlockOperation { glueRuns.withLock { $0 += 1 } }
                glue.addDependency(last)
                next.addDependency(glue)
                steps.append(glue)
            }
            steps.append(next)
            last = next
        }
        let pipeline = try Pipeline(steps.reversed(), on: queue)
        #expect(try await pipeline.value(of: last) == Self.size - 1)
        try await pipeline.waitForCompletion()
        #expect(glueRuns.current == (Self.size - 1) / 10)
        #expect(steps.allSatisfy { $0.isFinished && !$0.isCancelled })
    }

    @Test func aTwoThousandOperationFanOutCompletes() async throws {
        let queue = OperationQueue()
        let release = Trigger()
        let source = GatedResultOperation<Int, StepError>(.success(7), trigger: release)
        let runs = Guarded(0)
        var dependents: [Operation] = []
        for index in 0..<Self.size {
            let dependent: Operation
            switch index % 3 {
            case 0:
                dependent = BlockOperation { runs.withLock { $0 += 1 } }
                dependent.addDependency(source)
            case 1:
                dependent = TaskOperation { () async throws(StepError) -> Int in
                    runs.withLock { $0 += 1 }
                    return index
                }
                dependent.addDependency(source)
            default:
                dependent = source.bridge.then { (value: Int) async throws(StepError) -> Int in
                    runs.withLock { $0 += 1 }
                    return value + index
                }
            }
            dependents.append(dependent)
        }
        let pipeline = try Pipeline([source] + dependents, on: queue)
        pipeline.start()
        await source.started.wait()
        // The dependents wait in the pipeline, not in the queue.
        #expect(queue.operationCount == 1)
        release.fire()
        try await pipeline.waitForCompletion()
        #expect(runs.current == Self.size)
        #expect(dependents.allSatisfy { $0.isFinished && !$0.isCancelled })
    }

    @Test func aTwoThousandStepChainStreamsThroughTheResultsSequenceInOrder() async throws {
        let queue = OperationQueue()
        var chain: [AsyncResultOperation<Int, StepError>] = [GatedResultOperation(.success(0))]
        for _ in 1..<Self.size {
            chain.append(
                chain[chain.count - 1].bridge.then { (value: Int) async throws(StepError) -> Int in value + 1 })
        }
        var expected = 0
        for await element in try queue.results(of: chain.shuffled(), order: .completion) {
            #expect(element.result == .success(expected))
            expected += 1
        }
        #expect(expected == Self.size)
    }

    @Test func cancellingATwoThousandStepChainInTheMiddleEndsEveryStep() async throws {
        let queue = OperationQueue()
        let middle = Self.size / 2
        let runs = Guarded(0)
        let blocker = GatedResultOperation<Int, StepError>(.success(0), trigger: Trigger())
        var chain: [AsyncResultOperation<Int, StepError>] = [GatedResultOperation(.success(0))]
        for index in 1..<Self.size {
            let next: AsyncResultOperation<Int, StepError>
            if index == middle {
                blocker.addDependency(chain[chain.count - 1])
                next = blocker
            } else {
                next = TaskOperation { () async throws(StepError) -> Int in
                    runs.withLock { $0 += 1 }
                    return index
                }
                next.addDependency(chain[chain.count - 1])
            }
            chain.append(next)
        }
        let pipeline = try Pipeline(chain, on: queue)
        pipeline.start()
        await blocker.started.wait()
        pipeline.cancel()
        try await pipeline.waitForCompletion()
        #expect(runs.current == middle - 1)
        #expect(chain[..<middle].allSatisfy { $0.result.map { (try? $0.get()) != nil } == true })
        #expect(chain[middle...].allSatisfy { $0.result == .failure(.cancelled) })
    }
}
