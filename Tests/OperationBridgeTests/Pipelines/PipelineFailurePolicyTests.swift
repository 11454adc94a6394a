import Foundation
import OperationBridge
import Testing

/// A graph with a failing step, its dependents of every kind, and an independent branch that is
/// still running when the failure happens:
///
///     failing ──► plain ──► glue            earlier (finished before the failure)
///        │
///        └──► chained ──► afterChained      branchHead (running) ──► branchTail
private struct FailureGraph {
    let failureTrigger = Trigger()
    let branchTrigger = Trigger()
    let log = Recorder<String>()
    let earlier: GatedResultOperation<Int, StepError>
    let failing: GatedResultOperation<Int, StepError>
    let plain: TaskOperation<Int, StepError>
    let glue: BlockOperation
    let chained: ChainedTaskOperation<Int, Int, StepError>
    let afterChained: TaskOperation<Int, StepError>
    let branchHead: GatedResultOperation<Int, StepError>
    let branchTail: AddingOperation

    init() {
        let log = self.log
        earlier = GatedResultOperation(.success(100))
        failing = GatedResultOperation(.failure(.planned(0)), trigger: failureTrigger)
        plain = TaskOperation { () async throws(StepError) -> Int in
            log.append("plain")
            return 1
        }
        plain.addDependency(failing)
        glue = BlockOperation { log.append("glue") }
        glue.addDependency(plain)
        chained = failing.bridge.then { (value: Int) async throws(StepError) -> Int in
            log.append("chained")
            return value
        }
        afterChained = TaskOperation { () async throws(StepError) -> Int in
            log.append("afterChained")
            return 3
        }
        afterChained.addDependency(chained)
        branchHead = GatedResultOperation(.success(10), trigger: branchTrigger)
        branchTail = AddingOperation(adding: 1)
        branchTail.takeInput(from: branchHead)
    }

    var operations: [Operation] {
        [glue, plain, failing, chained, afterChained, branchTail, branchHead, earlier]
    }

    /// Starts the pipeline, lets `earlier` finish and `branchHead` start, then fails `failing`.
    func run(_ pipeline: Pipeline) async throws {
        pipeline.start()
        try await earlier.bridge.waitForCompletion()
        await branchHead.started.wait()
        await failing.started.wait()
        failureTrigger.fire()
        try await failing.bridge.waitForCompletion()
    }
}

/// A result operation the test finishes by hand, from a dispatch thread (not the cooperative
/// pool, which the test's own task needs).
private final class HandFinishedOperation: AsyncResultOperation<Int, StepError>, @unchecked Sendable {
    let started = Trigger()

    override func main() { started.fire() }

    func finishElsewhere(with result: Result<Int, StepError>) {
        DispatchQueue.global().async { self.finish(with: result) }
    }
}

/// A failure type whose conversion of an upstream failure blocks until the test opens a gate:
/// a step of this type, stopped by an upstream failure, holds the thread that stops it, so the
/// test can act while that thread is in the middle of stopping dependents. (Only the package's
/// steps are stopped under the default policy, without `cancel()`; the conversion is the user
/// code that runs on that thread.) Used by one test only: the gate is the type's.
private enum SlowToStopError: Error, UpstreamFailureRepresentable {
    case upstream(UpstreamFailedError)

    static let stopping = Trigger()
    static let release = Gate()

    static func upstreamFailed(_ error: UpstreamFailedError) -> SlowToStopError {
        stopping.fire()
        release.blockingWait()
        return .upstream(error)
    }
}

@Suite(.timeLimit(Stress.timeLimit(minutes: 1)))
struct PipelineFailurePolicyTests {
    @Test func cancelDependentsIsTheDefault() async throws {
        let graph = FailureGraph()
        let pipeline = try Pipeline(graph.operations, on: OperationQueue())
        try await graph.run(pipeline)
        try await graph.glue.bridge.waitForCompletion()
        #expect(graph.plain.bridge.upstreamFailure != nil)
        #expect(!graph.branchHead.isCancelled)
        graph.branchTrigger.fire()
        try await pipeline.waitForCompletion()
    }

    @Test func cancelDependentsStopsTheFailedStepsDependentsWithItsFailureAndLetsTheRestFinish() async throws {
        let graph = FailureGraph()
        let pipeline = try Pipeline(graph.operations, on: OperationQueue(), failurePolicy: .cancelDependents)
        try await graph.run(pipeline)
        // The failed step's dependents end before the independent branch is released.
        try await [graph.glue, graph.afterChained].waitForCompletion()
        #expect(!graph.branchHead.isCancelled && !graph.branchHead.isFinished)
        graph.branchTrigger.fire()
        try await pipeline.waitForCompletion()

        #expect(graph.failing.result == .failure(.planned(0)))
        // Dependents, transitively, never run and report the failure — not a cancellation.
        #expect(graph.plain.rootCause == .planned(0))
        #expect(!graph.plain.isCancelled)
        // A `BlockOperation` is not the package's: it runs, as Foundation runs it.
        #expect(!graph.glue.isCancelled)
        #expect(pipeline.firstFailure?.operation === graph.failing)
        #expect(pipeline.firstFailure?.index == 2)
        // The chained dependent reports the failure in its own type…
        #expect(!graph.chained.isCancelled)
        guard case .failure(.upstream(let upstream))? = graph.chained.result,
            case .failed(let cause) = upstream.reason
        else {
            Issue.record("expected an upstream failure, got \(String(describing: graph.chained.result))")
            return
        }
        #expect(cause as? StepError == .planned(0))
        // …and, having failed, stops its own dependents with the same root cause.
        #expect(graph.afterChained.rootCause == .planned(0))
        #expect(graph.log.all == ["glue"])
        // The independent branch and the step finished earlier are untouched.
        #expect(graph.earlier.result == .success(100))
        #expect(graph.branchHead.result == .success(10))
        #expect(graph.branchTail.result == .success(11))
    }

    @Test func cancelAllStopsTheDependentsWithTheFailureAndCancelsEverythingElse() async throws {
        let graph = FailureGraph()
        let pipeline = try Pipeline(graph.operations, on: OperationQueue(), failurePolicy: .cancelAll)
        try await graph.run(pipeline)
        try await pipeline.waitForCompletion()

        #expect(graph.failing.result == .failure(.planned(0)))
        #expect(graph.earlier.result == .success(100))  // finished before the failure
        // The independent branch, running or not started, is cancelled…
        #expect(graph.branchHead.result == .failure(.cancelled))
        #expect(graph.branchTail.result == .failure(.cancelled))
        #expect(graph.branchTail.mainRuns == 0)
        // …while the failed step's dependents, transitively, report its failure.
        #expect(graph.plain.rootCause == .planned(0))
        #expect(graph.chained.rootCause == .planned(0))
        #expect(graph.afterChained.rootCause == .planned(0))
        #expect(graph.glue.isCancelled)
        #expect(pipeline.firstFailure?.operation === graph.failing)
        #expect(pipeline.firstFailure?.error as? StepError == .planned(0))
        #expect(graph.log.all.isEmpty)
        #expect(!graph.branchTrigger.hasFired)
    }

    @Test func underCancelAllTheFailureIsReportedBeforeTheCancellationsItCauses() async throws {
        let queue = OperationQueue()
        let failing = GatedResultOperation<Int, StepError>(.failure(.planned(0)), trigger: Trigger())
        let running = (0..<3).map { _ in GatedResultOperation<Int, StepError>(.success(1), trigger: Trigger()) }
        let pipeline = try Pipeline(running + [failing], on: queue, failurePolicy: .cancelAll)
        var iterator = pipeline.finishedSteps.makeAsyncIterator()
        for step in running + [failing] { await step.started.wait() }
        failing.trigger?.fire()
        let first = try #require(await iterator.next())
        #expect(first.operation === failing)
        #expect(first.failed)
        var rest = 0
        while let step = await iterator.next() {
            #expect(step.failed)
            rest += 1
        }
        #expect(rest == 3)
    }

    @Test(arguments: [PipelineFailurePolicy.cancelDependents, .cancelAll])
    func aCancelledStepCountsAsAFailure(policy: PipelineFailurePolicy) async throws {
        let queue = OperationQueue()
        let cancelledGlue = BlockOperation {}
        cancelledGlue.cancel()
        let dependent = AddingOperation(adding: 1, input: 1)
        dependent.addDependency(cancelledGlue)
        let independent = GatedResultOperation<Int, StepError>(.success(5))
        let pipeline = try Pipeline([cancelledGlue, dependent, independent], on: queue, failurePolicy: policy)
        try await pipeline.waitForCompletion()
        // It did not run because its upstream was cancelled: it says so, without reading as
        // cancelled itself.
        guard case .failure(.upstream(let error))? = dependent.result, case .cancelled = error.reason else {
            Issue.record("expected an upstream cancellation, got \(String(describing: dependent.result))")
            return
        }
        #expect(!dependent.isCancelled)
        #expect(dependent.mainRuns == 0)
        #expect(pipeline.firstFailure?.operation === cancelledGlue)
        if policy == .cancelDependents {
            #expect(independent.result == .success(5))
        }
    }

    @Test func aDependentIsCancelledBeforeItIsQueuedEvenWhenItsLastDependencyFinishesMeanwhile() async throws {
        // `failing` fails on thread A, which stops its dependents one after the other: first
        // `slow` (whose failure type holds thread A), then `dependent`. Meanwhile `other`, the
        // last dependency of `dependent`, finishes on thread B, which queues `dependent`. It
        // must not run: it was marked stopped when `failing` failed.
        let queue = OperationQueue()
        let failing = HandFinishedOperation()
        let other = HandFinishedOperation()
        let slow = TaskOperation { () async throws(SlowToStopError) -> Int in 0 }
        slow.addDependency(failing)
        let ran = Guarded(false)
        let dependent = TaskOperation { () async throws(StepError) -> Int in
            ran.set(true)
            return 1
        }
        dependent.addDependency(failing)
        dependent.addDependency(other)
        let pipeline = try Pipeline([failing, other, slow, dependent], on: queue)
        pipeline.start()
        await failing.started.wait()
        await other.started.wait()
        failing.finishElsewhere(with: .failure(.planned(0)))
        await SlowToStopError.stopping.wait()
        other.finishElsewhere(with: .success(2))
        try await dependent.bridge.waitForCompletion()
        SlowToStopError.release.open()
        try await pipeline.waitForCompletion()
        #expect(!ran.current)
        #expect(dependent.rootCause == .planned(0))
    }

    @Test func aChainedStepIsStoppedWhenADependencyThatIsNotItsInputFails() async throws {
        // PipelineFailurePolicy.cancelDependents: "A ChainedAsyncResultOperation whose input
        // comes from the failed step reports it itself" — one whose input comes from elsewhere is
        // stopped by the scheduler, with the failure.
        let queue = OperationQueue()
        let input = GatedResultOperation<Int, StepError>(.success(1))
        let failedGlue = BlockOperation {}
        failedGlue.cancel()
        let ran = Guarded(false)
        let chained = input.bridge.then { (value: Int) async throws(StepError) -> Int in
            ran.set(true)
            return value
        }
        chained.addDependency(failedGlue)
        let fixedInput = AddingOperation(adding: 1, input: 1)
        let failing = GatedResultOperation<Int, StepError>(.failure(.planned(0)))
        fixedInput.addDependency(failing)
        let pipeline = try Pipeline([input, failedGlue, chained, failing, fixedInput], on: queue)
        try await pipeline.waitForCompletion()
        guard case .failure(.upstream(let error))? = chained.result, case .cancelled = error.reason else {
            Issue.record("expected an upstream cancellation, got \(String(describing: chained.result))")
            return
        }
        #expect(!ran.current)
        // An input given at creation is not taken from the failed step either.
        #expect(fixedInput.rootCause == .planned(0))
        #expect(fixedInput.mainRuns == 0)
    }
}
