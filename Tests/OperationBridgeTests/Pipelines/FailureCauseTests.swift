import Foundation
import OperationBridge
import Testing

/// The cause of a failure is never turned into "cancelled": a step that does not run because of
/// an upstream failure reports that failure — directly, through glue operations, transitively,
/// under either failure policy, in pipelines and in results sequences. Only a real cancellation
/// reads as one.
@Suite(.timeLimit(Stress.timeLimit(minutes: 1)))
struct FailureCauseTests {
    /// `a → glue → c`, with `c` taking its input from `a`: the issue's example.
    @Test(
        "A failed upstream reaches a chained step through a glue BlockOperation",
        arguments: [PipelineFailurePolicy.cancelDependents, .cancelAll])
    func throughGlue(policy: PipelineFailurePolicy) async throws {
        let queue = OperationQueue()
        let a = GatedResultOperation<Int, StepError>(.failure(.planned(1)))
        let glue = BlockOperation {}
        glue.addDependency(a)
        let c = AddingOperation(adding: 1)
        c.takeInput(from: a)
        c.addDependency(glue)
        let pipeline = try Pipeline([a, glue, c], on: queue, failurePolicy: policy)
        await #expect(throws: StepError.self) { try await pipeline.value(of: c) }
        #expect(c.rootCause == .planned(1))
        #expect(!c.isCancelled)
        #expect(c.mainRuns == 0)
        #expect(pipeline.firstFailure?.operation === a)
        #expect(pipeline.firstFailure?.index == 0)
    }

    @Test(
        "Through several glue operations to a step that only depends on them",
        arguments: [PipelineFailurePolicy.cancelDependents, .cancelAll])
    func transitivelyThroughGlue(policy: PipelineFailurePolicy) async throws {
        let queue = OperationQueue()
        let root = GatedResultOperation<Int, StepError>(.failure(.planned(7)))
        let first = BlockOperation {}
        first.addDependency(root)
        let second = BlockOperation {}
        second.addDependency(first)
        let ran = Guarded(false)
        let last = TaskOperation { () async throws(StepError) -> Int in
            ran.set(true)
            return 1
        }
        last.addDependency(second)
        let independent = GatedResultOperation<Int, StepError>(.success(3), trigger: Trigger())
        let pipeline = try Pipeline([root, first, second, last, independent], on: queue, failurePolicy: policy)
        pipeline.start()
        try await last.bridge.waitForCompletion()
        #expect(last.rootCause == .planned(7))
        #expect(!ran.current)
        switch policy {
        // Glue keeps Foundation's semantics: it runs after its failed dependency; the cause goes
        // on through it.
        case .cancelDependents: #expect(!first.isCancelled && !second.isCancelled)
        // `.cancelAll` says otherwise, explicitly.
        case .cancelAll: #expect(first.isCancelled && second.isCancelled)
        }
        independent.trigger?.fire()
        try await pipeline.waitForCompletion()
        switch policy {
        case .cancelDependents: #expect(independent.result == .success(3))
        // Under `.cancelAll` the independent step is stopped too — as a real cancellation.
        case .cancelAll: #expect(independent.result == .failure(.cancelled))
        }
    }

    @Test("A step stopped by an upstream failure stays so: a later cancel() changes neither isCancelled nor the cause")
    func aStoppedStepIsNotCancelledLater() async throws {
        let queue = OperationQueue()
        let root = GatedResultOperation<Int, StepError>(.failure(.planned(3)))
        let blocker = GatedResultOperation<Int, StepError>(.success(0), trigger: Trigger())
        let step = TaskOperation { () async throws(InexpressibleError) -> Int in 1 }
        step.addDependency(root)
        step.addDependency(blocker)
        let pipeline = try Pipeline([root, blocker, step], on: queue)
        pipeline.start()
        // Decided while it still waits for `blocker`: stopped by the root's failure.
        #expect(await step.bridge.outcome == nil)
        step.cancel()
        #expect(!step.isCancelled)
        #expect(step.bridge.upstreamFailure?.rootFailure as? StepError == .planned(3))
        blocker.trigger?.fire()
        try await pipeline.waitForCompletion()
        #expect(!step.isCancelled)
        #expect(step.bridge.upstreamFailure?.rootFailure as? StepError == .planned(3))
    }

    @Test("A step whose error type can express nothing keeps the cause; awaiting it says upstreamFailed")
    func inexpressibleErrorKeepsTheCause() async throws {
        let queue = OperationQueue()
        let root = GatedResultOperation<Int, StepError>(.failure(.planned(2)))
        let glue = BlockOperation {}
        glue.addDependency(root)
        let step = TaskOperation { () async throws(InexpressibleError) -> Int in 1 }
        step.addDependency(glue)
        let pipeline = try Pipeline([root, glue, step], on: queue)
        do {
            _ = try await pipeline.outcomeValue(of: step)
            Issue.record("expected an upstream failure")
        } catch .upstreamFailed(let error) {
            #expect(error.rootFailure as? StepError == .planned(2))
        } catch {
            Issue.record("expected .upstreamFailed, got \(error)")
        }
        #expect(step.result == nil)
        #expect(!step.isCancelled)
        #expect(pipeline.firstFailure?.error as? StepError == .planned(2))
    }

    @Test("In a results sequence too: the dependent reports the failure, firstFailure names it")
    func inAResultsSequence() async throws {
        let queue = OperationQueue()
        let a = GatedResultOperation<Int, StepError>(.failure(.planned(4)))
        let b = a.bridge.then { (value: Int) async throws(StepError) -> Int in value }
        let c = TaskOperation { () async throws(StepError) -> Int in 1 }
        c.addDependency(b)
        let results = try queue.results(of: [a, b, c], order: .submission)
        let collected = await results.collect()
        #expect(collected[0] == .failure(.planned(4)))
        #expect(b.rootCause == .planned(4))
        #expect(c.rootCause == .planned(4))
        #expect(results.firstFailure?.index == 0)
    }

    @Test("A real cancellation reads as one: pipeline.cancel() and a cancelled awaiting task")
    func realCancellationReadsAsCancellation() async throws {
        let queue = OperationQueue()
        let head = GatedResultOperation<Int, StepError>(.success(1), trigger: Trigger())
        let tail = AddingOperation(adding: 1)
        tail.takeInput(from: head)
        let pipeline = try Pipeline([head, tail], on: queue)
        pipeline.start()
        await head.started.wait()
        pipeline.cancel()
        try await pipeline.waitForCompletion()
        #expect(head.result == .failure(.cancelled))
        #expect(tail.isCancelled)
        #expect(tail.bridge.upstreamFailure == nil)
        #expect(pipeline.firstFailure == nil)  // cancelled as a whole: no step failed on its own
    }
}
