import Foundation
import OperationBridge
import Testing

/// A step that records that it ran and whether its dependencies had all finished by then.
private func recordingStep(
    _ name: String,
    into log: Recorder<String>,
    value: Int = 0
) -> TaskOperation<Int, StepError> {
    TaskOperation { () async throws(StepError) -> Int in
        log.append(name)
        return value
    }
}

@Suite(.timeLimit(Stress.timeLimit(minutes: 1)))
struct PipelineTests {
    @Test(
        "A fan-out's dependents go to the queue in batches of up to 256 when their source finishes; so do independent steps"
    )
    func stepsLaunchedTogetherAreAddedInBatches() async throws {
        let queue = EnqueueRecordingQueue()
        let source = TaskOperation { () async -> Int in 0 }
        let dependents = (0..<100).map { index in
            let dependent = TaskOperation { () async -> Int in index }
            dependent.addDependency(source)
            return dependent
        }
        // Glue of your own among them: admitted in the same batch.
        let glue = BlockOperation {}
        glue.addDependency(source)
        let fanOut: [Operation] = [source, glue] + dependents
        try await Pipeline(fanOut, on: queue).waitForCompletion()
        #expect(queue.batches.all.contains(101))
        #expect(fanOut.allSatisfy { $0.isFinished && !$0.isCancelled })

        let independent = (0..<50).map { index in TaskOperation { () async -> Int in index } }
        try await Pipeline(independent, on: queue).waitForCompletion()
        #expect(queue.batches.all.last == 50)
        #expect(independent.allSatisfy { $0.isFinished })

        // Wider than a batch: in order, 256 at a time, the rest last.
        let wideSource = TaskOperation { () async -> Int in 0 }
        let wide = (0..<600).map { index in
            let dependent = TaskOperation { () async -> Int in index }
            dependent.addDependency(wideSource)
            return dependent
        }
        let before = queue.batches.all.count
        try await Pipeline([wideSource] + wide, on: queue).waitForCompletion()
        #expect(Array(queue.batches.all.dropFirst(before)) == [256, 256, 88])
        #expect(wide.allSatisfy { $0.isFinished && !$0.isCancelled })
    }

    // MARK: - Running

    @Test("Operations listed twice run once, and the pipeline's positions are those of the list without them")
    func operationsListedTwiceRunOnceAtTheirFirstPosition() async throws {
        // The scheduler leaves duplicates out itself; a pipeline given some schedules the list
        // again without them, so that its positions (`finishedSteps`, `firstFailure`) index
        // `operations`.
        let queue = OperationQueue()
        let runs = Recorder<String>()
        let source = recordingStep("source", into: runs)
        let failing = TaskOperation { () async throws(StepError) -> Int in
            runs.append("failing")
            throw .planned(1)
        }
        failing.addDependency(source)
        let glue = BlockOperation { runs.append("glue") }
        glue.addDependency(failing)
        let pipeline = try Pipeline([source, failing, source, glue, failing, glue], on: queue)
        #expect(pipeline.operations.map(ObjectIdentifier.init) == [source, failing, glue].map(ObjectIdentifier.init))
        var delivered: [Int: ObjectIdentifier] = [:]
        for await step in pipeline.finishedSteps { delivered[step.index] = ObjectIdentifier(step.operation) }
        #expect(delivered == [0: ObjectIdentifier(source), 1: ObjectIdentifier(failing), 2: ObjectIdentifier(glue)])
        #expect(runs.all == ["source", "failing", "glue"])
        let firstFailure = try #require(pipeline.firstFailure)
        #expect(firstFailure.index == 1 && firstFailure.operation === failing)
    }

    @Test func aMixedPipelineHandsBackTypedResults() async throws {
        let queue = OperationQueue()
        let source = GatedResultOperation<Int, StepError>(.success(20))
        let doubled = source.bridge.then { (value: Int) async throws(StepError) -> Int in value * 2 }
        let adding = AddingOperation(adding: 2)
        adding.takeInput(from: doubled)
        let sideEffects = Recorder<String>()
        let glue = BlockOperation { sideEffects.append("glue") }
        glue.addDependency(adding)
        let pipeline = try Pipeline([glue, adding, doubled, source], on: queue)
        #expect(try await pipeline.value(of: adding) == 42)
        #expect(await pipeline.outcome(of: doubled) == .success(40))
        try await pipeline.waitForCompletion()
        #expect(sideEffects.all == ["glue"])
        #expect(pipeline.operations.count == 4)
    }

    @Test func anOperationListedTwiceRunsOnce() async throws {
        let queue = OperationQueue()
        let step = GatedResultOperation<Int, StepError>(.success(1))
        let other = GatedResultOperation<Int, StepError>(.success(2))
        let pipeline = try Pipeline([step, other, step], on: queue)
        #expect(pipeline.operations.count == 2)
        #expect(pipeline.operations[0] === step && pipeline.operations[1] === other)
        pipeline.start()
        pipeline.start()  // idempotent
        try await pipeline.waitForCompletion()
        #expect(step.mainRuns == 1 && other.mainRuns == 1)
    }

    @Test func nothingRunsBeforeStart() async throws {
        let queue = OperationQueue()
        let step = GatedResultOperation<Int, StepError>(.success(1))
        let pipeline = try Pipeline([step], on: queue)
        #expect(queue.operationCount == 0)
        #expect(step.mainRuns == 0)
        #expect(try await pipeline.value(of: step) == 1)  // awaiting starts it
    }

    @Test func anEmptyPipelineIsFinishedAtOnce() async throws {
        let pipeline = try Pipeline([], on: OperationQueue())
        try await pipeline.waitForCompletion()
        var count = 0
        for await _ in pipeline.finishedSteps { count += 1 }
        #expect(count == 0)
    }

    @Test func dependentsAreQueuedOnlyOnceTheirDependenciesHaveFinished() async throws {
        let queue = OperationQueue()
        let release = Trigger()
        let source = GatedResultOperation<Int, StepError>(.success(1), trigger: release)
        let chain = source.bridge.then { (value: Int) async throws(StepError) -> Int in value + 1 }
        let fanOut = (0..<50).map { _ in
            let step = BlockOperation {}
            step.addDependency(source)
            return step
        }
        let pipeline = try Pipeline([chain, source] + fanOut, on: queue)
        pipeline.start()
        await source.started.wait()
        // Only the source is in the queue: its dependents wait in the pipeline, not in the queue
        // (which on Linux rescans every pending operation whenever one finishes).
        #expect(queue.operations.map(ObjectIdentifier.init) == [ObjectIdentifier(source)])
        release.fire()
        try await pipeline.waitForCompletion()
        #expect(chain.result == .success(2))
        #expect(fanOut.allSatisfy { $0.isFinished && !$0.isCancelled })
    }

    @Test func aChainedStepAfterAFailureReportsTheUpstreamFailure() async throws {
        let queue = OperationQueue()
        let source = GatedResultOperation<Int, StepError>(.failure(.planned(1)))
        let ran = Guarded(false)
        let step = source.bridge.then { (value: Int) async throws(StepError) -> Int in
            ran.set(true)
            return value
        }
        let pipeline = try Pipeline([source, step], on: queue)
        do {
            _ = try await pipeline.value(of: step)
            Issue.record("the step should have failed")
        } catch {
            guard case .upstream(let upstream) = error, case .failed(let cause) = upstream.reason else {
                Issue.record("expected an upstream failure, got \(error)")
                return
            }
            #expect(cause as? StepError == .planned(1))
            #expect(upstream.upstreamType.contains("GatedResultOperation"))
        }
        #expect(!ran.current)
    }

    @Test func outcomeIsNilForAStepCancelledWithoutAResult() async throws {
        let queue = OperationQueue()
        let step = GatedResultOperation<Int, InexpressibleError>(.success(1))
        step.cancel()
        let pipeline = try Pipeline([step], on: queue)
        #expect(await pipeline.outcome(of: step) == nil)
    }

    // MARK: - Cycles

    @Test func aCycleIsReportedBeforeAnythingRuns() throws {
        let queue = OperationQueue()
        let log = Recorder<String>()
        let first = recordingStep("first", into: log)
        let second = recordingStep("second", into: log)
        let third = recordingStep("third", into: log)
        let behind = recordingStep("behind", into: log)
        let unrelated = recordingStep("unrelated", into: log)
        first.name = "first"
        second.name = "second"
        third.name = "third"
        second.addDependency(first)
        third.addDependency(second)
        first.addDependency(third)
        behind.addDependency(third)
        let error = #expect(throws: PipelineError.self) {
            _ = try Pipeline([unrelated, first, second, third, behind], on: queue)
        }
        guard case .dependencyCycle(let operations)? = error else { return }
        let involved = Set(operations.map(ObjectIdentifier.init))
        #expect(involved == Set([first, second, third, behind].map(ObjectIdentifier.init)))
        #expect(error?.description.contains("first") == true)
        #expect(queue.operationCount == 0)
        #expect(log.all.isEmpty)
        #expect([first, second, third, behind, unrelated].allSatisfy { !$0.isExecuting && !$0.isFinished })
    }

    // MARK: - Dependencies outside the pipeline

    @Test func aDependencyQueuedElsewhereIsHonoured() async throws {
        let queue = OperationQueue()
        let elsewhere = OperationQueue()
        let release = Trigger()
        let external = GatedResultOperation<Int, StepError>(.success(1), trigger: release)
        elsewhere.addOperation(external)
        let externalFinishedAtStart = Guarded<Bool?>(nil)
        let step = TaskOperation { () async throws(StepError) -> Int in
            externalFinishedAtStart.set(external.isFinished)
            return 2
        }
        step.addDependency(external)
        let after = AddingOperation(adding: 1)
        after.takeInput(from: step)
        let pipeline = try Pipeline([step, after], on: queue)
        pipeline.start()
        await external.started.wait()
        #expect(!step.isExecuting && !step.isFinished)
        release.fire()
        #expect(try await pipeline.value(of: after) == 3)
        #expect(externalFinishedAtStart.current == true)
    }

    @Test func aDependencyThatAlreadyFinishedIsHonoured() async throws {
        let queue = OperationQueue()
        let external = BlockOperation {}
        external.start()
        let step = AddingOperation(adding: 1, input: 1)
        step.addDependency(external)
        let pipeline = try Pipeline([step], on: queue)
        #expect(try await pipeline.value(of: step) == 2)
    }

    @Test func anOperationStartedBeforeThePipelineIsOnlyObserved() async throws {
        let queue = OperationQueue()
        let release = Trigger()
        let running = GatedResultOperation<Int, StepError>(.success(5), trigger: release)
        running.start()
        let after = AddingOperation(adding: 1)
        after.takeInput(from: running)
        let pipeline = try Pipeline([running, after], on: queue)
        pipeline.start()
        #expect(!queue.operations.contains(running))
        release.fire()
        #expect(try await pipeline.value(of: after) == 6)
        #expect(running.mainRuns == 1)
    }

    @Test func cancellingEndsAStepWaitingForAnExternalDependencyThatNeverFinishes() async throws {
        let queue = OperationQueue()
        let neverQueued = BlockOperation {}
        let ran = Guarded(false)
        let step = TaskOperation { () async throws(StepError) -> Int in
            ran.set(true)
            return 1
        }
        step.addDependency(neverQueued)
        let pipeline = try Pipeline([step], on: queue)
        pipeline.start()
        pipeline.cancel()
        try await pipeline.waitForCompletion()
        #expect(step.result == .failure(.cancelled))
        #expect(!ran.current)
    }

    /// On Linux, an operation tracks its dependents with unretained pointers, and a cancelled
    /// operation finishes without waiting for its dependencies: if it were deallocated before
    /// them, the dependency would touch freed memory when it finishes (a crash seen in the
    /// random-graph test). The pipeline keeps such a step alive until its outside dependencies
    /// have finished.
    @Test func aCancelledStepOutlivesItsUnfinishedOutsideDependency() async throws {
        let queue = OperationQueue()
        let elsewhere = OperationQueue()
        let release = Trigger()
        let external = GatedResultOperation<Int, StepError>(.success(1), trigger: release)
        elsewhere.addOperation(external)
        let stepReleased = Trigger()
        var weakStep: WeakBox<TaskOperation<Int, StepError>>?
        do {
            let step = TaskOperation { [probe = DeinitProbe(stepReleased)] () async throws(StepError) -> Int in
                withExtendedLifetime(probe) { 2 }
            }
            step.addDependency(external)
            weakStep = WeakBox(step)
            let pipeline = try Pipeline([step], on: queue)
            pipeline.start()
            await external.started.wait()
            pipeline.cancel()
            try await pipeline.waitForCompletion()
            #expect(step.result == .failure(.cancelled))
            #expect(!external.isFinished)
        }
        #expect(weakStep?.object != nil, "released while its dependency can still reach it")
        release.fire()
        try await external.bridge.waitForCompletion()
        #expect(await stepReleased.wait())
        #expect(weakStep?.object == nil)
    }

    // MARK: - Cancellation in the middle

    @Test func cancellingThePipelineInTheMiddle() async throws {
        let queue = OperationQueue()
        let log = Recorder<String>()
        let first = GatedResultOperation<Int, StepError>(.success(1))
        let running = GatedResultOperation<Int, StepError>(.success(2), trigger: Trigger())
        running.addDependency(first)
        let third = recordingStep("third", into: log)
        third.addDependency(running)
        let fourth = third.bridge.then { (value: Int) async throws(StepError) -> Int in
            log.append("fourth")
            return value
        }
        let otherBranch = GatedResultOperation<Int, StepError>(.success(3), trigger: Trigger())
        let glue = BlockOperation { log.append("glue") }
        glue.addDependency(otherBranch)
        let pipeline = try Pipeline([first, running, third, fourth, otherBranch, glue], on: queue)
        pipeline.start()
        await running.started.wait()
        await otherBranch.started.wait()
        pipeline.cancel()
        try await pipeline.waitForCompletion()
        #expect(first.result == .success(1))
        #expect(running.result == .failure(.cancelled))
        #expect(otherBranch.result == .failure(.cancelled))
        #expect(third.result == .failure(.cancelled))
        #expect(fourth.result == .failure(.cancelled))
        #expect(glue.isCancelled && glue.isFinished)
        #expect(log.all.isEmpty)
    }

    @Test func cancellingATaskAwaitingAValueCancelsThePipeline() async throws {
        let queue = OperationQueue()
        let log = Recorder<String>()
        let first = GatedResultOperation<Int, StepError>(.success(1))
        let running = GatedResultOperation<Int, StepError>(.success(2), trigger: Trigger())
        running.addDependency(first)
        let last = running.bridge.then { (value: Int) async throws(StepError) -> Int in
            log.append("last")
            return value
        }
        let sideBranch = GatedResultOperation<Int, StepError>(.success(3), trigger: Trigger())
        let pipeline = try Pipeline([first, running, last, sideBranch], on: queue)
        let awaiting = Task { () async throws(StepError) -> Int in try await pipeline.value(of: last) }
        await running.started.wait()
        await sideBranch.started.wait()
        awaiting.cancel()
        // The task gets the step's own cancellation failure.
        await #expect(throws: StepError.cancelled) { _ = try await awaiting.value }
        try await pipeline.waitForCompletion()
        #expect(running.result == .failure(.cancelled))
        #expect(sideBranch.result == .failure(.cancelled))
        #expect(last.result == .failure(.cancelled))
        #expect(first.result == .success(1))
        #expect(log.all.isEmpty)
    }

    @Test func cancellingATaskAwaitingAnOutcomeCancelsThePipeline() async throws {
        let queue = OperationQueue()
        let running = GatedResultOperation<Int, InexpressibleError>(.success(1), trigger: Trigger())
        let after = running.bridge.then { (value: Int) async throws(InexpressibleError) -> Int in value }
        let pipeline = try Pipeline([running, after], on: queue)
        let awaiting = Task { await pipeline.outcome(of: after) }
        await running.started.wait()
        awaiting.cancel()
        #expect(await awaiting.value == nil)
        try await pipeline.waitForCompletion()
        #expect(running.isCancelled && after.isCancelled)
    }

    @Test func cancellingATaskWaitingForThePipelineCancelsIt() async throws {
        let queue = OperationQueue()
        let running = GatedResultOperation<Int, StepError>(.success(1), trigger: Trigger())
        let after = AddingOperation(adding: 1)
        after.takeInput(from: running)
        let pipeline = try Pipeline([running, after], on: queue)
        let waiting = Task { try await pipeline.waitForCompletion() }
        await running.started.wait()
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        try await pipeline.waitForCompletion()
        #expect(running.result == .failure(.cancelled))
        #expect(after.result == .failure(.cancelled))
        #expect(after.mainRuns == 0)
    }

    @Test func everyAwaiterIsAnsweredWhenThePipelineIsCancelled() async throws {
        let queue = OperationQueue()
        let steps = (0..<5).map { _ in GatedResultOperation<Int, StepError>(.success(1), trigger: Trigger()) }
        for index in 1..<steps.count { steps[index].addDependency(steps[index - 1]) }
        let pipeline = try Pipeline(steps, on: queue)
        pipeline.start()
        let answers = steps.map { step in Task { await step.bridge.outcome } }
        await steps[0].started.wait()
        pipeline.cancel()
        for answer in answers { #expect(await answer.value == .failure(.cancelled)) }
    }

    // MARK: - finishedSteps

    @Test func finishedStepsFollowTheStepsAsTheyFinish() async throws {
        let queue = OperationQueue()
        let triggers = (0..<3).map { _ in Trigger() }
        let first = GatedResultOperation<Int, StepError>(.success(0), trigger: triggers[0])
        let second = GatedResultOperation<Int, StepError>(.success(1), trigger: triggers[1])
        let failing = GatedResultOperation<Int, StepError>(.failure(.planned(2)), trigger: triggers[2])
        let dependent = BlockOperation {}
        dependent.addDependency(failing)
        let pipeline = try Pipeline([first, second, failing, dependent], on: queue)
        var iterator = pipeline.finishedSteps.makeAsyncIterator()
        for index in [1, 0, 2] {
            triggers[index].fire()
            let step = try #require(await iterator.next())
            #expect(step.index == index)
            #expect(step.operation === pipeline.operations[index])
            #expect(step.failed == (index == 2))
        }
        let last = try #require(await iterator.next())
        #expect(last.index == 3)
        // Not the package's: it ran after its failed dependency, as Foundation runs it.
        #expect(!last.failed)
        #expect(!dependent.isCancelled)
        #expect(await iterator.next() == nil)
    }

    @Test func leavingTheFinishedStepsLoopCancelsThePipeline() async throws {
        let queue = OperationQueue()
        let quick = GatedResultOperation<Int, StepError>(.success(0))
        let rest = (0..<3).map { _ in GatedResultOperation<Int, StepError>(.success(1), trigger: Trigger()) }
        let pipeline = try Pipeline([quick] + rest, on: queue)
        for await step in pipeline.finishedSteps {
            #expect(step.index == 0)
            break
        }
        #expect(rest.allSatisfy { $0.isCancelled })
        try await pipeline.waitForCompletion()
        #expect(rest.allSatisfy { $0.result == .failure(.cancelled) })
    }

    @Test func cancellingTheTaskIteratingFinishedStepsCancelsThePipeline() async throws {
        let queue = OperationQueue()
        let quick = GatedResultOperation<Int, StepError>(.success(0))
        let rest = (0..<3).map { _ in GatedResultOperation<Int, StepError>(.success(1), trigger: Trigger()) }
        let pipeline = try Pipeline([quick] + rest, on: queue)
        let received = Trigger()
        let iterating = Task {
            var indices: [Int] = []
            for await step in pipeline.finishedSteps {
                indices.append(step.index)
                received.fire()
            }
            return indices
        }
        await received.wait()
        iterating.cancel()
        #expect(await iterating.value == [0])
        #expect(rest.allSatisfy { $0.isCancelled })
        try await pipeline.waitForCompletion()
    }

    #if EXIT_TESTS
        @Test func iteratingFinishedStepsTwiceTraps() async {
            await #expect(processExitsWith: .failure) {
                let pipeline = try Pipeline([BlockOperation {}], on: OperationQueue())
                _ = pipeline.finishedSteps.makeAsyncIterator()
                _ = pipeline.finishedSteps.makeAsyncIterator()
            }
        }
    #endif

    @Test func thePipelineAndFinishedStepsAreSendable() async throws {
        let pipeline = try Pipeline([GatedResultOperation<Int, StepError>(.success(1))], on: OperationQueue())
        requireSendable(pipeline)
        requireSendable(pipeline.finishedSteps)
        // Compile-time check: consumed from another task. The iterator's `Sendable` conformance
        // is unavailable on purpose.
        let count: @Sendable () async -> Int = {
            var count = 0
            for await step in pipeline.finishedSteps {
                requireSendable(step)
                count += 1
            }
            return count
        }
        #expect(await Task.detached(operation: count).value == 1)
    }

    // MARK: - Memory

    @Test func thePipelineAndItsStepsAreReleasedWhenDone() async throws {
        let queue = OperationQueue()
        let released = (0..<5).map { _ in Trigger() }
        var weakOperations: [WeakBox<Operation>] = []
        var weakPipeline: WeakBox<Pipeline>?
        do {
            let source = TaskOperation { [probe = DeinitProbe(released[0])] () async throws(StepError) -> Int in
                withExtendedLifetime(probe) { 1 }
            }
            let step = source.bridge.then {
                [probe = DeinitProbe(released[1])] (value: Int) async throws(StepError) -> Int in
                withExtendedLifetime(probe) { value + 1 }
            }
            let glue = ProbedBlockOperation(releaseProbe: DeinitProbe(released[2])) {}
            glue.addDependency(step)
            let classic = GatedResultOperation<Int, StepError>(
                .failure(.planned(0)),
                releaseProbe: DeinitProbe(released[4])
            )
            // Not the package's: it runs after the failed `classic`, as Foundation runs it.
            let afterFailure = ProbedBlockOperation(releaseProbe: DeinitProbe(released[3])) {}
            afterFailure.addDependency(classic)
            let pipeline = try Pipeline([source, step, glue, classic, afterFailure], on: queue)
            weakOperations = [source, step, glue, classic, afterFailure].map { WeakBox($0) }
            weakPipeline = WeakBox(pipeline)
            #expect(try await pipeline.value(of: step) == 2)
            try await pipeline.waitForCompletion()
            #expect(!afterFailure.isCancelled)
        }
        for trigger in released { #expect(await trigger.wait()) }
        #expect(weakOperations.allSatisfy { $0.object == nil })
        #expect(weakPipeline?.object == nil)
    }
}
