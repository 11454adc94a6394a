import Foundation
import OperationBridge
import Testing

/// Large graphs complete through a pipeline. No timing assertion: the cost is measured by the
/// benchmark, not by tests.
@Suite(.timeLimit(Stress.timeLimit(minutes: 2)))
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

    /// The scheduler admits the operations one finish launches in batches (256 at a time, so that
    /// the queue starts the first while it observes the rest): a fan-out over several batches,
    /// the last one partial, whose dependents are in every state a launch meets — to run,
    /// cancelled while pending, already finished (cancelled and started by hand), pending in the
    /// queue already (added by your own code) — in a random order. Every one ends after the
    /// source, runs at most once, and only when not cancelled.
    @Test func aFanOutWiderThanAnAdmissionBatchEndsEveryDependentInItsOwnState() async throws {
        let queue = OperationQueue()
        let release = Trigger()
        let source = GatedResultOperation<Int, StepError>(.success(7), trigger: release)
        let runsAfterTheSource = Guarded(0)
        let runsTooEarly = Guarded(0)
        @Sendable func body() {
            if source.isFinished { runsAfterTheSource.withLock { $0 += 1 } } else { runsTooEarly.withLock { $0 += 1 } }
        }
        enum State: CaseIterable { case toRun, cancelledWhilePending, finished, listedInTheQueue }
        var generator = Stress.generator(for: "aFanOutWiderThanAnAdmissionBatchEndsEveryDependentInItsOwnState")
        var states: [State] = []
        var dependents: [Operation] = []
        for index in 0..<700 {
            let isBlock = index.isMultiple(of: 2)
            // Foundation's `start()` ends a cancelled operation only once it is ready: a cancelled
            // block waits for the source, as a pending one.
            let state = State.allCases.filter { !isBlock || $0 != .finished }.randomElement(using: &generator)!
            let dependent: Operation =
                isBlock
                ? BlockOperation { body() }
                : TaskOperation { () async throws(StepError) -> Int in
                    body()
                    return index
                }
            dependent.addDependency(source)
            switch state {
            case .toRun: break
            case .cancelledWhilePending: dependent.cancel()
            case .finished:
                dependent.cancel()
                dependent.start()
                #expect(dependent.isFinished)
            case .listedInTheQueue: queue.addOperation(dependent)
            }
            states.append(state)
            dependents.append(dependent)
        }
        let pipeline = try Pipeline([source] + dependents.shuffled(using: &generator), on: queue)
        pipeline.start()
        await source.started.wait()
        release.fire()
        try? await pipeline.waitForCompletion()
        #expect(dependents.allSatisfy { $0.isFinished })
        #expect(runsTooEarly.current == 0)
        let cancelled = states.filter { $0 == .finished || $0 == .cancelledWhilePending }.count
        #expect(dependents.filter { $0.isCancelled }.count == cancelled)
        #expect(runsAfterTheSource.current == dependents.count - cancelled)
    }

    /// Wide fan-outs whose dependents fail while later batches are still being observed and
    /// admitted, under both failure policies, randomized (`OPERATIONBRIDGE_STRESS_SCALE` runs more,
    /// `OPERATIONBRIDGE_STRESS_SEED` replays one). Every dependent ends, none before the source,
    /// none twice; with `.cancelDependents` every one runs (a failed leaf stops nothing), with
    /// `.cancelAll` each one runs or is cancelled.
    @Test func wideFanOutsWithFailuresEndEveryDependentOnce() async throws {
        var generator = Stress.generator(for: "wideFanOutsWithFailuresEndEveryDependentOnce")
        for iteration in 0..<Stress.iterations(12) {
            let width = Int.random(in: 257...900, using: &generator)
            let policy: PipelineFailurePolicy = Bool.random(using: &generator) ? .cancelAll : .cancelDependents
            let failing = Set(
                (0..<Int.random(in: 1...4, using: &generator)).map { _ in
                    Int.random(in: 0..<width, using: &generator)
                })
            let queue = OperationQueue()
            queue.maxConcurrentOperationCount = Int.random(in: 1...8, using: &generator)
            let source = TaskOperation { () async throws(StepError) -> Int in 0 }
            let runs = Guarded([Int](repeating: 0, count: width))
            let runsTooEarly = Guarded(0)
            let dependents: [Operation] = (0..<width).map { index in
                @Sendable func ran() {
                    if !source.isFinished { runsTooEarly.withLock { $0 += 1 } }
                    runs.withLock { $0[index] += 1 }
                }
                let dependent: Operation =
                    index.isMultiple(of: 3) && !failing.contains(index)
                    ? BlockOperation { ran() }
                    : TaskOperation { () async throws(StepError) -> Int in
                        ran()
                        if failing.contains(index) { throw .planned(index) }
                        return index
                    }
                dependent.addDependency(source)
                return dependent
            }
            let context = "iteration \(iteration): \(width) dependents, \(policy), failing \(failing.sorted())"
            try? await Pipeline([source] + dependents, on: queue, failurePolicy: policy).waitForCompletion()
            #expect(dependents.allSatisfy { $0.isFinished }, "\(context)")
            #expect(runsTooEarly.current == 0, "\(context)")
            let counts = runs.current
            #expect(counts.allSatisfy { $0 <= 1 }, "\(context)")
            switch policy {
            case .cancelDependents:
                #expect(counts.allSatisfy { $0 == 1 }, "\(context)")
            case .cancelAll:
                #expect(
                    zip(counts, dependents).allSatisfy { $0 == 1 || $1.isCancelled }, "\(context)")
            }
        }
    }
}
