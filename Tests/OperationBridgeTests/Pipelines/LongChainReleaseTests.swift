import Foundation
import OperationBridge
import Testing

/// Releasing the last reference to a long chain must not recurse once per step, whether the
/// chain ran or not: Darwin's secondary threads (GCD, the cooperative pool) have 512 KiB of stack,
/// and peers' trackers show this cascade crashing apps. Foundation recurses (a few thousand
/// unqueued `BlockOperation`s overflow such a stack, see the exit test below); the package's
/// operations hand their links to `IterativeRelease` as they are freed instead, and keep
/// `dependencies` as Foundation does until then. Each chain is built one way, run to the end,
/// cancelled or left alone, and released on a `Thread` whose stack is 512 KiB; a recursive
/// release would overflow it and crash the test process.
///
/// 100,000 steps by default (`OPERATIONBRIDGE_STRESS_SCALE` scales it; the sanitizer runs use
/// 20,000, still far deeper than the stack allows for a recursive release).
@Suite(.timeLimit(Stress.timeLimit(minutes: 5)))
struct LongChainReleaseTests {
    static let length = Stress.iterations(100_000)

    enum Construction: String, CaseIterable, Sendable {
        /// `upstream.then { … }`; run step by step with `queue.run`.
        case then
        /// `ChainedTaskOperation(inputFrom:)` (`takeInput(from:)`); run step by step.
        case takeInput
        /// `TaskOperation`s linked with `addDependency(_:)`; run step by step.
        case addDependency
        /// `then` steps; run by a `Pipeline`.
        case thenInAPipeline
        /// `then` steps; run through `results(of:)`.
        case thenInAResultsSequence
        /// `then` steps as a `GroupOperation`'s children; run by the group.
        case groupChildren
        /// Package steps with a glue `BlockOperation` after every fourth one; run by a `Pipeline`.
        case withGlueOperations
    }

    /// What happens to the chain before it is released.
    enum Fate: String, CaseIterable, Sendable {
        /// Run to the end.
        case ran
        /// Built and dropped, never queued (a screen closed before it started).
        case neverRan
        /// Every step cancelled, never queued.
        case cancelledBeforeQueueing
    }

    @Test(arguments: Construction.allCases, Fate.allCases)
    func releasingAChainDoesNotRecurse(construction: Construction, fate: Fate) async throws {
        let headReleased = Trigger()
        let tailReleased = Trigger()
        let chain = ChainBox(
            try await build(
                Self.length, construction, fate,
                probes: (DeinitProbe(headReleased), DeinitProbe(tailReleased))))
        // `dependencies` is kept, as Foundation keeps it, after the steps finished or not.
        #expect(chain.operations[1..<Self.length].allSatisfy { !$0.dependencies.isEmpty })
        // Released head first, the order an array drops its elements: every step but the last
        // is still held by its dependent, so freeing the last one frees the whole chain.
        await releaseOnASmallStack(chain)
        #expect(await headReleased.wait())
        #expect(await tailReleased.wait())
    }

    /// Builds a chain of `length` steps whose first and last steps hold `probes`, and runs it,
    /// cancels it or leaves it as `fate` says. The group's children are returned with the group
    /// last, so that the group is released after them.
    private func build(
        _ length: Int, _ construction: Construction, _ fate: Fate,
        probes: (head: DeinitProbe, tail: DeinitProbe)
    ) async throws -> [Operation] {
        let steps = makeSteps(length, construction, probes: probes)
        switch fate {
        case .neverRan:
            return steps
        case .cancelledBeforeQueueing:
            for step in steps { step.cancel() }
            #expect(steps.allSatisfy { $0.isCancelled && !$0.isFinished })
            return steps
        case .ran:
            let queue = OperationQueue()
            switch construction {
            case .then, .takeInput, .addDependency:
                for step in steps { try await queue.runUntilFinished(step) }
            case .thenInAPipeline, .withGlueOperations:
                try await Pipeline(steps, on: queue).waitForCompletion()
            case .thenInAResultsSequence:
                _ = await (try queue.results(of: steps.map { $0 as! AsyncResultOperation<Int, Never> })).collect()
            case .groupChildren:
                let group = try GroupOperation<Void, Never>(steps)
                try await queue.runUntilFinished(group)
                #expect(group.isFinished)
                #expect(steps.allSatisfy { $0.isFinished })
                return steps + [group]
            }
            #expect(steps.allSatisfy { $0.isFinished })
            if let last = steps.last as? AsyncResultOperation<Int, Never>, construction != .addDependency {
                #expect(last.result == .success(construction == .withGlueOperations ? 1 : length - 1))
            }
            return steps
        }
    }

    private func makeSteps(
        _ length: Int, _ construction: Construction, probes: (head: DeinitProbe, tail: DeinitProbe)
    ) -> [Operation] {
        switch construction {
        case .then, .thenInAPipeline, .thenInAResultsSequence, .groupChildren:
            var steps: [AsyncResultOperation<Int, Never>] = [ProbedStart(probes.head)]
            for _ in 2..<length { steps.append(steps.last!.bridge.then { $0 + 1 }) }
            steps.append(ProbedIncrement(inputFrom: steps.last!, probes.tail))
            return steps
        case .takeInput:
            var steps: [AsyncResultOperation<Int, Never>] = [ProbedStart(probes.head)]
            for _ in 2..<length {
                steps.append(ChainedTaskOperation(inputFrom: steps.last!) { (value: Int) async -> Int in value + 1 })
            }
            steps.append(ProbedIncrement(inputFrom: steps.last!, probes.tail))
            return steps
        case .addDependency:
            var steps: [AsyncResultOperation<Int, Never>] = [ProbedStart(probes.head)]
            for index in 1..<length {
                let step: AsyncResultOperation<Int, Never> =
                    index == length - 1 ? ProbedStart(probes.tail) : TaskOperation { index }
                step.addDependency(steps.last!)
                steps.append(step)
            }
            return steps
        case .withGlueOperations:
            // Each step depends on the one before it, a `BlockOperation` every fourth step; the
            // last takes its input from the last `TaskOperation` (0), so its result is 1.
            var steps: [Operation] = [ProbedStart(probes.head)]
            var lastResult: AsyncResultOperation<Int, Never> = steps[0] as! AsyncResultOperation<Int, Never>
            for index in 1..<length {
                let step: Operation
                if index == length - 1 {
                    step = ProbedIncrement(inputFrom: lastResult, probes.tail)
                } else if index % 4 == 0 {
                    step = BlockOperation {}
                } else {
                    let result = TaskOperation { 0 }
                    lastResult = result
                    step = result
                }
                step.addDependency(steps.last!)
                steps.append(step)
            }
            return steps
        }
    }

    #if EXIT_TESTS
        /// The differential half: Foundation's own operations free a chain recursively, so a chain
        /// of 20,000 plain `BlockOperation`s that never ran overflows a 512 KiB stack when
        /// released. The package's operations above do not; operations that are not the
        /// package's keep Foundation's behaviour (the Pipelines article, "Very long chains").
        @Test func foundationsOwnChainOverflowsTheSameStack() async {
            await #expect(processExitsWith: .failure) {
                await releaseOnASmallStack(ChainBox(blockOperationChain(20_000)))
            }
        }
    #endif
}

/// `length` `BlockOperation`s, each depending on the one before.
private func blockOperationChain(_ length: Int) -> [Operation] {
    var steps: [Operation] = []
    for _ in 0..<length {
        let step = BlockOperation {}
        if let previous = steps.last { step.addDependency(previous) }
        steps.append(step)
    }
    return steps
}

/// A first step that reports 0 and says when it is freed.
private final class ProbedStart: AsyncResultOperation<Int, Never>, @unchecked Sendable {
    // Safety: immutable.
    private let probe: DeinitProbe

    init(_ probe: DeinitProbe) {
        self.probe = probe
        super.init()
    }

    override func main() { finish(with: .success(0)) }
}

/// A chained step that adds 1 to its input and says when it is freed.
private final class ProbedIncrement: ChainedAsyncResultOperation<Int, Int, Never>, @unchecked Sendable {
    // Safety: immutable.
    private let probe: DeinitProbe

    init(inputFrom upstream: AsyncResultOperation<Int, Never>, _ probe: DeinitProbe) {
        self.probe = probe
        super.init()
        takeInput(from: upstream)
    }

    override func main() { finish(with: .success((input ?? -1) + 1)) }
}

/// Holds the only strong references to a chain's operations.
final class ChainBox: @unchecked Sendable {
    // Safety: written once at creation and cleared once, on the releasing thread, while the test
    // waits.
    var operations: [Operation]

    init(_ operations: [Operation]) {
        self.operations = operations
    }
}

/// Drops the box's references on a new thread with a 512 KiB stack — the size of Darwin's
/// secondary threads — and waits until it has.
func releaseOnASmallStack(_ box: ChainBox) async {
    await resumeOrdered { (continuation: CheckedContinuation<Void, Never>) in
        let thread = Thread {
            box.operations = []
            continuation.resume()
        }
        thread.stackSize = 512 * 1024
        thread.start()
    }
}
