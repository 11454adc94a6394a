import Foundation
import OperationBridge
import Testing

/// Releasing the last reference to a long chain that has run must not recurse once per step:
/// Darwin's secondary threads (GCD, the cooperative pool) have 512 KiB of stack, and peers'
/// trackers show this cascade crashing apps. Steps let go of their upstreams as they finish (and
/// pipelines unlink the operations that are not the package's), so a finished chain is a set of
/// unrelated operations. Each chain is built one way, run to the end, and released on a `Thread`
/// whose stack is 512 KiB; a recursive release would overflow it and crash the test process.
///
/// 100,000 steps by default (`OPERATIONBRIDGE_STRESS_SCALE` scales it; the sanitizer runs use
/// 20,000, still far deeper than the stack allows for a recursive release).
@Suite(.timeLimit(.minutes(5)))
struct LongChainReleaseTests {
    static let length = Stress.iterations(100_000)

    enum Construction: String, CaseIterable, Sendable {
        /// `upstream.then { … }`, run step by step with `queue.run`.
        case then
        /// `ChainedTaskOperation(inputFrom:)` (`takeInput(from:)`), run step by step.
        case takeInput
        /// `TaskOperation`s linked with `addDependency(_:)`, run step by step.
        case addDependency
        /// `then` steps handed to a `Pipeline`.
        case thenInAPipeline
        /// `BlockOperation`s linked with `addDependency(_:)`, handed to a `Pipeline`.
        case blockOperationsInAPipeline
        /// `then` steps handed to `results(of:)`.
        case thenInAResultsSequence
    }

    @Test(arguments: Construction.allCases)
    func releasingAFinishedChainDoesNotRecurse(construction: Construction) async throws {
        let queue = OperationQueue()
        let headReleased = Trigger()
        let tailReleased = Trigger()
        let chain = ChainBox(
            try await run(
                Self.length, construction, on: queue,
                probes: (DeinitProbe(headReleased), DeinitProbe(tailReleased))))
        // Nothing links the finished steps any more (deterministic: steps unlink before their
        // awaiters resume, pipelines before they count a step as finished).
        #expect(chain.operations.allSatisfy { $0.dependencies.isEmpty })
        await releaseOnASmallStack(chain)
        // Freed — by the small thread, or by a thread that still held one step for a moment
        // after finishing it; either way without recursing through the chain.
        #expect(await headReleased.wait())
        #expect(await tailReleased.wait())
    }

    /// Builds a chain of `length` steps whose first and last steps hold `probes`, and runs it to
    /// the end.
    private func run(
        _ length: Int, _ construction: Construction, on queue: OperationQueue,
        probes: (head: DeinitProbe, tail: DeinitProbe)
    ) async throws -> [Operation] {
        switch construction {
        case .then, .thenInAPipeline, .thenInAResultsSequence:
            var steps: [AsyncResultOperation<Int, Never>] = [ProbedStart(probes.head)]
            for _ in 2..<length { steps.append(steps.last!.then { $0 + 1 }) }
            steps.append(ProbedIncrement(inputFrom: steps.last!, probes.tail))
            switch construction {
            case .then:
                for step in steps { _ = await queue.run(step) }
            case .thenInAPipeline:
                try await Pipeline(steps, on: queue).waitForCompletion()
            default:
                _ = await (try queue.results(of: steps)).collect()
            }
            #expect(steps.last!.result == .success(length - 1))
            return steps
        case .takeInput:
            var steps: [AsyncResultOperation<Int, Never>] = [ProbedStart(probes.head)]
            for _ in 2..<length {
                steps.append(ChainedTaskOperation(inputFrom: steps.last!) { (value: Int) async -> Int in value + 1 })
            }
            steps.append(ProbedIncrement(inputFrom: steps.last!, probes.tail))
            for step in steps { _ = await queue.run(step) }
            #expect(steps.last!.result == .success(length - 1))
            return steps
        case .addDependency:
            var steps: [AsyncResultOperation<Int, Never>] = [ProbedStart(probes.head)]
            for index in 1..<length {
                let step: AsyncResultOperation<Int, Never> =
                    index == length - 1 ? ProbedStart(probes.tail) : TaskOperation { index }
                step.addDependency(steps.last!)
                steps.append(step)
            }
            for step in steps { _ = await queue.run(step) }
            return steps
        case .blockOperationsInAPipeline:
            var steps: [Operation] = []
            for index in 0..<length {
                let probe = index == 0 ? probes.head : index == length - 1 ? probes.tail : nil
                let step = ProbedBlockOperation(releaseProbe: probe) {}
                if let previous = steps.last { step.addDependency(previous) }
                steps.append(step)
            }
            try await Pipeline(steps, on: queue).waitForCompletion()
            return steps
        }
    }
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
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let thread = Thread {
            box.operations = []
            continuation.resume()
        }
        thread.stackSize = 512 * 1024
        thread.start()
    }
}
