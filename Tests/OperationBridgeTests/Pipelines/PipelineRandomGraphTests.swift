import Foundation
import OperationBridge
import Testing

// Random dependency graphs of every kind of step, with random failures and cancellations.
//
// Two modes:
// - *exact*: `.cancelDependents`, failures and cancellations decided before the run. The outcome
//   of every step is computed from the plan and checked.
// - *chaos*: either policy; besides, running steps cancel other steps, or the whole pipeline.
//   Only the invariants are checked.
//
// Invariants, in both modes: no step's work starts before every one of its dependencies
// (inside or outside the pipeline) has finished — each step checks `isFinished` on all its
// dependencies when its work starts —, no work runs twice, every step ends, every awaiter is
// answered, and every operation is released once the pipeline is done.

/// What the step's work does when it runs, and what it checks.
private final class StepProbe: Sendable {
    // A struct, not a tuple: a tuple holding a `WeakBox` crashes the 6.3 compiler here.
    private struct State {
        var operation: WeakBox<Operation>?
        var runs = 0
        var sideEffect: (@Sendable () -> Void)?
    }

    let index: Int
    let violations: Recorder<String>
    private let state = Guarded(State())

    init(index: Int, violations: Recorder<String>) {
        self.index = index
        self.violations = violations
    }

    func attach(_ operation: Operation) { state.withLock { $0.operation = WeakBox(operation) } }

    func setSideEffect(_ effect: @escaping @Sendable () -> Void) { state.withLock { $0.sideEffect = effect } }

    var runs: Int { state.withLock { $0.runs } }

    /// Called when the step's work starts.
    func run() {
        let (operation, runs, sideEffect) = state.withLock { state in
            state.runs += 1
            return (state.operation?.object, state.runs, state.sideEffect)
        }
        if runs > 1 { violations.append("step \(index) ran \(runs) times") }
        guard let operation else {
            violations.append("step \(index) ran without its operation")
            return
        }
        for dependency in operation.dependencies where !dependency.isFinished {
            violations.append("step \(index) started before \(dependency.name ?? "a dependency") finished")
        }
        sideEffect?()
    }
}

/// A classic result step: checks in `main()`, then finishes there or on another thread.
private final class ScriptedStep: AsyncResultOperation<Int, StepError>, @unchecked Sendable {
    let probe: StepProbe
    let planned: Result<Int, StepError>
    let finishesElsewhere: Bool
    private let releaseProbe: DeinitProbe

    init(probe: StepProbe, planned: Result<Int, StepError>, finishesElsewhere: Bool, releaseProbe: DeinitProbe) {
        self.probe = probe
        self.planned = planned
        self.finishesElsewhere = finishesElsewhere
        self.releaseProbe = releaseProbe
        super.init()
    }

    override func main() {
        probe.run()
        guard finishesElsewhere else { return finish(with: planned) }
        DispatchQueue.global().async { [self] in finish(with: planned) }
    }
}

/// A classic chained step: adds 1,000 to its input, or fails as planned.
private final class ScriptedChainedStep: ChainedAsyncResultOperation<Int, Int, StepError>, @unchecked Sendable {
    let probe: StepProbe
    let fails: Bool
    private let releaseProbe: DeinitProbe

    init(probe: StepProbe, fails: Bool, releaseProbe: DeinitProbe) {
        self.probe = probe
        self.fails = fails
        self.releaseProbe = releaseProbe
        super.init()
    }

    override func main() {
        probe.run()
        guard let input else { return finish(with: .failure(.planned(-1))) }
        finish(with: fails ? .failure(.planned(probe.index)) : .success(input + 1_000))
    }
}

/// One step of a random graph.
private struct PlannedStep {
    enum Kind: CaseIterable {
        case task
        case classic
        case block
        case thenStep
        case classicChained

        var isChained: Bool { self == .thenStep || self == .classicChained }
        var hasResult: Bool { self != .block }
    }

    enum External {
        /// An operation that finished before the pipeline was built.
        case finished
        /// An operation queued on another queue, finishing after the pipeline has started.
        case queuedElsewhere
    }

    var kind: Kind
    /// Earlier steps this one depends on (for a chained step, including its input).
    var dependencies: [Int] = []
    /// For a chained step, the step its input comes from.
    var input: Int?
    var fails = false
    var cancelledBeforeStart = false
    var external: External?
    /// Chaos: the step this one cancels when its work runs.
    var cancelsStep: Int?
    /// Chaos: whether this step cancels the pipeline when its work runs.
    var cancelsPipeline = false
}

private struct GraphPlan {
    var steps: [PlannedStep]
    var policy: PipelineFailurePolicy
    var chaos: Bool
    /// The order the steps are handed to the pipeline.
    var order: [Int]
    /// Result steps awaited through `Pipeline.outcome(of:)` or the operation's `outcome`.
    var awaited: [Int]
    var maxConcurrentOperationCount: Int

    static func random(size: Int, using generator: inout SeededGenerator) -> GraphPlan {
        let chaos = Double.random(in: 0..<1, using: &generator) < 0.3
        // A few failures and cancellations per graph whatever its size: each one cancels its
        // dependents, so a fixed rate would leave little of a large graph running.
        let failureRate = min(0.1, 4 / Double(size))
        let cancellationRate = min(0.05, 2 / Double(size))
        var steps: [PlannedStep] = []
        for index in 0..<size {
            var step = PlannedStep(kind: PlannedStep.Kind.allCases.randomElement(using: &generator)!)
            if step.kind.isChained {
                // The input comes from a recent result step; without one, the step is a task.
                let recent = (max(0, index - 16)..<index).filter { steps[$0].kind.hasResult }
                if let input = recent.randomElement(using: &generator) {
                    step.input = input
                    step.dependencies = [input]
                } else {
                    step.kind = .task
                }
            }
            if index > 0 {
                let extra = [0, 0, 1, 1, 1, 2, 2, 3, 4].randomElement(using: &generator)!
                for _ in 0..<extra {
                    let dependency =
                        Bool.random(using: &generator)
                        ? index - 1 - Int.random(in: 0..<min(index, 8), using: &generator)
                        : Int.random(in: 0..<index, using: &generator)
                    // In exact mode a chained step's other dependencies are foreign operations,
                    // whose failure (or one they pass on) stops it (the policy is then unambiguous).
                    if step.kind.isChained && !chaos && steps[dependency].kind != .block { continue }
                    if !step.dependencies.contains(dependency) { step.dependencies.append(dependency) }
                }
            }
            step.fails = step.kind.hasResult && Double.random(in: 0..<1, using: &generator) < failureRate
            step.cancelledBeforeStart = Double.random(in: 0..<1, using: &generator) < cancellationRate
            if Double.random(in: 0..<1, using: &generator) < 0.03 {
                step.external = Bool.random(using: &generator) ? .finished : .queuedElsewhere
            }
            if chaos {
                if Double.random(in: 0..<1, using: &generator) < cancellationRate {
                    step.cancelsStep = Int.random(in: 0..<size, using: &generator)
                }
                step.cancelsPipeline = Double.random(in: 0..<1, using: &generator) < 0.3 / Double(size)
            }
            steps.append(step)
        }
        let resultSteps = steps.indices.filter { steps[$0].kind.hasResult }
        return GraphPlan(
            steps: steps,
            policy: chaos && Bool.random(using: &generator) ? .cancelAll : .cancelDependents,
            chaos: chaos,
            order: Array(0..<size).shuffled(using: &generator),
            awaited: Array(resultSteps.shuffled(using: &generator).prefix(6)),
            maxConcurrentOperationCount: [1, 2, 3, 8, OperationQueue.defaultMaxConcurrentOperationCount]
                .randomElement(using: &generator)!
        )
    }

    /// What a step ends with in exact mode.
    enum Expected: Equatable, CustomStringConvertible {
        /// It ran and succeeded (with this value, for a result step).
        case succeeded(Int)
        /// It ran and failed as planned.
        case failedAsPlanned
        /// It did not run: cancelled.
        case cancelled
        /// It did not run because a step it depends on failed, and reports that failure (a
        /// `BlockOperation` runs instead, as Foundation runs it). `upstreamWasCancelled` tells whether the failed
        /// step ended cancelled, when only its input step failed; `nil` when other dependencies
        /// failed too (which one stopped it first depends on timing).
        case upstreamFailed(upstreamWasCancelled: Bool?)

        var ran: Bool {
            switch self {
            case .succeeded, .failedAsPlanned: true
            case .cancelled, .upstreamFailed: false
            }
        }

        var failed: Bool {
            if case .succeeded = self { return false }
            return true
        }

        var description: String {
            switch self {
            case .succeeded(let value): "succeeded(\(value))"
            case .failedAsPlanned: "failedAsPlanned"
            case .cancelled: "cancelled"
            case .upstreamFailed(let cancelled):
                "upstreamFailed(upstreamWasCancelled: \(cancelled.map { "\($0)" } ?? "either"))"
            }
        }
    }

    /// The outcome of every step under `.cancelDependents` without mid-run cancellations.
    ///
    /// A `BlockOperation` is not the package's: after a failed dependency it still runs, as
    /// Foundation runs it, and passes the failure on to the steps after it.
    func expectedOutcomes() -> [Expected] {
        var expected: [Expected] = []
        // Whether the step failed, or ran after a failure and passes it on (a `BlockOperation`).
        var passesFailureOn: [Bool] = []
        for (index, step) in steps.enumerated() {
            let failedDependencies = step.dependencies.filter { passesFailureOn[$0] && $0 != step.input }
            defer { passesFailureOn.append(expected[index].failed || !failedDependencies.isEmpty) }
            if step.cancelledBeforeStart {
                expected.append(.cancelled)
            } else if !failedDependencies.isEmpty && step.kind == .block {
                expected.append(.succeeded(index))
            } else if !failedDependencies.isEmpty {
                expected.append(.upstreamFailed(upstreamWasCancelled: nil))
            } else if let input = step.input, expected[input].failed {
                expected.append(.upstreamFailed(upstreamWasCancelled: expected[input] == .cancelled))
            } else if step.fails {
                expected.append(.failedAsPlanned)
            } else if let input = step.input, case .succeeded(let value) = expected[input] {
                expected.append(.succeeded(value + 1_000))
            } else {
                expected.append(.succeeded(index))
            }
        }
        return expected
    }
}

/// Everything a finished run leaves for the leak check: no strong reference to any operation.
private struct RunLeftovers {
    var released: [Trigger] = []
    var operations: [WeakBox<Operation>] = []
    var pipeline: WeakBox<Pipeline>?
}

@Suite(.timeLimit(Stress.timeLimit(minutes: 20)))
struct PipelineRandomGraphTests {
    @Test func randomGraphsKeepDependencyOrderAnswerEveryAwaiterAndLeakNothing() async throws {
        let seed = Stress.seed()
        print("PipelineRandomGraphTests: seed \(seed) (replay with OPERATIONBRIDGE_STRESS_SEED=\(seed))")
        var generator = SeededGenerator(seed: seed)
        let iterations = Stress.iterations(200)
        // Sizes up to 300 by default, up to 1,000 for larger stress scales; the first graph
        // always has the largest size.
        let largest = min(1_000, max(20, Int(300 * Stress.scale)))
        for iteration in 0..<iterations {
            let size =
                iteration == 0
                ? (Stress.scale >= 1 ? 1_000 : largest) : Int.random(in: 1...largest, using: &generator)
            let plan = GraphPlan.random(size: size, using: &generator)
            let context = "seed \(seed), iteration \(iteration), \(plan.steps.count) steps, chaos: \(plan.chaos)"
            let leftovers = try await run(plan, context: context)
            for trigger in leftovers.released {
                #expect(await trigger.wait(), "an operation was never released (\(context))")
            }
            let alive = leftovers.operations.filter { $0.object != nil }.count
            #expect(alive == 0, "\(alive) operations still alive (\(context))")
            #expect(leftovers.pipeline?.object == nil, "the pipeline is still alive (\(context))")
        }
    }

    private func run(_ plan: GraphPlan, context: String) async throws -> RunLeftovers {
        var leftovers = RunLeftovers()
        let violations = Recorder<String>()
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = plan.maxConcurrentOperationCount
        let elsewhere = OperationQueue()
        var externalTriggers: [Trigger] = []

        func releaseProbe() -> DeinitProbe {
            let trigger = Trigger()
            leftovers.released.append(trigger)
            return DeinitProbe(trigger)
        }

        // Build the operations.
        let probes = plan.steps.indices.map { StepProbe(index: $0, violations: violations) }
        var operations: [Operation] = []
        var resultOperations: [Int: AsyncResultOperation<Int, StepError>] = [:]
        for (index, step) in plan.steps.enumerated() {
            let probe = probes[index]
            let planned: Result<Int, StepError> = step.fails ? .failure(.planned(index)) : .success(index)
            let operation: Operation
            switch step.kind {
            case .task:
                let fails = step.fails
                let task = TaskOperation { [releaseProbe = releaseProbe()] () async throws(StepError) -> Int in
                    probe.run()
                    await Task.yield()
                    if fails { throw .planned(index) }
                    return withExtendedLifetime(releaseProbe) { index }
                }
                resultOperations[index] = task
                operation = task
            case .classic:
                let classic = ScriptedStep(
                    probe: probe,
                    planned: planned,
                    finishesElsewhere: index % 2 == 0,
                    releaseProbe: releaseProbe()
                )
                resultOperations[index] = classic
                operation = classic
            case .block:
                operation = ProbedBlockOperation(releaseProbe: releaseProbe()) { probe.run() }
            case .thenStep:
                let fails = step.fails
                let upstream = resultOperations[step.input!]!
                let chained = upstream.bridge.then {
                    [releaseProbe = releaseProbe()] (value: Int) async throws(StepError) -> Int in
                    probe.run()
                    if fails { throw .planned(index) }
                    return withExtendedLifetime(releaseProbe) { value + 1_000 }
                }
                resultOperations[index] = chained
                operation = chained
            case .classicChained:
                let chained = ScriptedChainedStep(probe: probe, fails: step.fails, releaseProbe: releaseProbe())
                chained.takeInput(from: resultOperations[step.input!]!)
                resultOperations[index] = chained
                operation = chained
            }
            operation.name = "step \(index)"
            probe.attach(operation)
            for dependency in step.dependencies where dependency != step.input {
                operation.addDependency(operations[dependency])
            }
            switch step.external {
            case .finished?:
                let external = ProbedBlockOperation(releaseProbe: releaseProbe()) {}
                external.name = "finished external dependency of step \(index)"
                external.start()
                operation.addDependency(external)
                leftovers.operations.append(WeakBox(external))
            case .queuedElsewhere?:
                let trigger = Trigger()
                let external = GatedResultOperation<Int, StepError>(
                    .success(0),
                    trigger: trigger,
                    releaseProbe: releaseProbe()
                )
                external.name = "external dependency of step \(index)"
                elsewhere.addOperation(external)
                externalTriggers.append(trigger)
                operation.addDependency(external)
                leftovers.operations.append(WeakBox(external))
            case nil:
                break
            }
            if step.cancelledBeforeStart { operation.cancel() }
            operations.append(operation)
        }
        leftovers.operations += operations.map { WeakBox($0) }

        let pipeline = try Pipeline(plan.order.map { operations[$0] }, on: queue, failurePolicy: plan.policy)
        leftovers.pipeline = WeakBox(pipeline)
        let pipelineCancelledByAStep = Guarded(false)
        for (index, step) in plan.steps.enumerated() {
            let target = step.cancelsStep.map { WeakBox(operations[$0]) }
            let cancelsPipeline = step.cancelsPipeline
            guard target != nil || cancelsPipeline else { continue }
            probes[index].setSideEffect { [weak pipeline] in
                target?.object?.cancel()
                if cancelsPipeline {
                    pipelineCancelledByAStep.set(true)
                    pipeline?.cancel()
                }
            }
        }

        // Awaiters, some owning the pipeline, some not.
        let awaiters = plan.awaited.enumerated().map { number, index in
            let operation = resultOperations[index]!
            return (
                index,
                number.isMultiple(of: 2)
                    ? Task { await pipeline.outcome(of: operation) }
                    : Task { await operation.bridge.outcome }
            )
        }

        // Run, and follow the steps as they finish.
        var steps = pipeline.finishedSteps.makeAsyncIterator()
        for trigger in externalTriggers { trigger.fire() }
        var delivered = [Bool](repeating: false, count: operations.count)
        var deliveredFailed = [Bool?](repeating: nil, count: operations.count)
        while let step = await steps.next() {
            let node = plan.order[step.index]
            if delivered[node] { violations.append("step \(node) delivered twice") }
            delivered[node] = true
            deliveredFailed[node] = step.failed
            if step.operation !== operations[node] { violations.append("step \(node) delivered as another operation") }
        }
        for (index, awaiter) in awaiters {
            let answer = await awaiter.value
            if answer != resultOperations[index]!.result {
                violations.append("awaiter of step \(index) got \(String(describing: answer))")
            }
        }
        try await pipeline.waitForCompletion()

        // Every step ended.
        for (index, operation) in operations.enumerated() where !operation.isFinished {
            violations.append("step \(index) did not finish")
        }
        if !pipelineCancelledByAStep.current {
            for index in operations.indices where !delivered[index] {
                violations.append("step \(index) was not delivered by finishedSteps")
            }
        }

        // What each step did.
        func failed(_ index: Int) -> Bool {
            resultOperations[index]?.endedInFailure ?? operations[index].isCancelled
        }
        for (index, step) in plan.steps.enumerated() {
            let ran = probes[index].runs == 1
            if ran && step.cancelledBeforeStart { violations.append("step \(index) ran although cancelled before") }
            // In chaos mode a `cancel()` racing the end of a `BlockOperation` may set its
            // `isCancelled` after it finished (and was delivered) — Foundation's cancel checks
            // `isFinished` first, without a lock. A result step's outcome is fixed when it ends.
            let outcomeIsFixed = !plan.chaos || step.kind.hasResult
            if outcomeIsFixed, let reported = deliveredFailed[index], reported != failed(index) {
                violations.append("step \(index) delivered with failed: \(reported)")
            }
        }
        if plan.chaos {
            for index in plan.steps.indices where probes[index].runs == 0 {
                // A step that did not run was cancelled, or reports the upstream failure that
                // stopped it (then it is not cancelled).
                let reportsUpstream: Bool
                if case .failure(.upstream)? = resultOperations[index]?.result {
                    reportsUpstream = !operations[index].isCancelled
                } else {
                    reportsUpstream = false
                }
                let explained = operations[index].isCancelled || reportsUpstream
                if !explained {
                    violations.append("step \(index) neither ran, nor was cancelled, nor reports a failure")
                }
            }
        } else {
            let expected = plan.expectedOutcomes()
            for (index, step) in plan.steps.enumerated() {
                let outcome = expected[index]
                if (probes[index].runs == 1) != outcome.ran {
                    violations.append("step \(index) ran \(probes[index].runs) times, expected \(outcome)")
                }
                if failed(index) != outcome.failed {
                    violations.append("step \(index) failed: \(failed(index)), expected \(outcome)")
                }
                guard let operation = resultOperations[index] else {
                    if operations[index].isCancelled == outcome.ran {
                        violations.append("block step \(index) cancelled: \(operations[index].isCancelled)")
                    }
                    continue
                }
                switch (outcome, operation.result) {
                case (.succeeded(let value), .success(let actual)?) where value == actual: break
                case (.failedAsPlanned, .failure(.planned(index))?): break
                case (.cancelled, .failure(.cancelled)?): break
                case (.upstreamFailed(let upstreamWasCancelled), .failure(.upstream(let error))?):
                    let reasonWasCancellation: Bool
                    if case .cancelled = error.reason {
                        reasonWasCancellation = true
                    } else {
                        reasonWasCancellation = false
                    }
                    if operation.isCancelled || operation.bridge.upstreamFailure == nil {
                        violations.append(
                            "step \(index) reports an upstream failure but is cancelled or lost its cause")
                    }
                    if upstreamWasCancelled.map({ $0 != reasonWasCancellation }) ?? false
                        || !error.upstreamType.contains("Operation")
                            && !error.upstreamType.contains("Step")
                    {
                        violations.append("step \(index) (\(step.kind)) reported \(error), expected \(outcome)")
                    }
                default:
                    violations.append(
                        "step \(index) (\(step.kind)) ended with \(String(describing: operation.result)), expected \(outcome)"
                    )
                }
            }
        }
        let found = violations.all
        #expect(found.isEmpty, "\(found.count) violations (\(context)): \(found.prefix(10))")
        return leftovers
    }
}
