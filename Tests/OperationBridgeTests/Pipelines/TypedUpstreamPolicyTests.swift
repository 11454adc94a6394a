import Foundation
import OperationBridge
import Testing

/// Under `.cancelDependents`, a chained step reports the failure of the upstream it takes its
/// input from itself; any other failed dependency gets it stopped by the scheduler, so it never
/// runs — and it reports that failure too, not a cancellation.
@Suite struct TypedUpstreamPolicyTests {
    final class Doubling: ChainedAsyncResultOperation<Int, Int, CancellationError>, @unchecked Sendable {
        let ran = Recorder<Int>()
        override func main() {
            ran.append(input ?? -1)
            finish(with: .success((input ?? 0) * 2))
        }
    }

    /// `CancellationError` cannot say "the upstream failed": the classic step has not opted in to
    /// being stopped, so it runs as Foundation runs it, with the input it takes (Design.md,
    /// "Classic semantics by default").
    @Test func aFailedDependencyThatIsNotTheTypedUpstreamLetsAClassicStepRun() async throws {
        let queue = OperationQueue()
        let input = ControlledOperation<Int, CancellationError>(.success(21))
        let other = ControlledOperation<Int, CancellationError>(.failure(CancellationError()))
        let step = Doubling()
        step.takeInput(from: input)
        step.addDependency(other)
        step.addDependency(input)
        other.addDependency(input)  // `other` fails after `input` succeeded
        let pipeline = try Pipeline([input, other, step], on: queue, failurePolicy: .cancelDependents)
        try await pipeline.waitForCompletion()
        #expect(!step.isCancelled)
        #expect(step.ran.all == [21])
        #expect(step.result.map { try? $0.get() } == 42)
        #expect(step.bridge.upstreamFailure == nil)
    }

    /// A step whose `Failure` can say so is stopped, and reports the failure, not a cancellation.
    @Test func aFailedDependencyThatIsNotTheTypedUpstreamStopsAStepThatCanSaySo() async throws {
        let queue = OperationQueue()
        let input = ControlledOperation<Int, any Error>(.success(21))
        let other = ControlledOperation<Int, any Error>(.failure(CancellationError()))
        let step = ChainedTaskOperation<Int, Int, any Error>(inputFrom: input) { value in value * 2 }
        step.addDependency(other)
        other.addDependency(input)
        let pipeline = try Pipeline([input, other, step], on: queue, failurePolicy: .cancelDependents)
        try await pipeline.waitForCompletion()
        #expect(!step.isCancelled)
        #expect(step.bridge.upstreamFailure?.upstreamType.contains("ControlledOperation") == true)
        #expect(input.result.map { try? $0.get() } == 21)
    }

    @Test func aFailedTypedUpstreamIsReportedByTheStep() async throws {
        let queue = OperationQueue()
        let input = ControlledOperation<Int, any Error>(.failure(CancellationError()))
        let step = ChainedTaskOperation<Int, Int, any Error>(inputFrom: input) { value in value * 2 }
        let pipeline = try Pipeline([input, step], on: queue, failurePolicy: .cancelDependents)
        try await pipeline.waitForCompletion()
        guard case .failure(let error as UpstreamFailedError)? = step.result else {
            Issue.record("expected an UpstreamFailedError, got \(String(describing: step.result))")
            return
        }
        #expect(error.upstreamType.contains("ControlledOperation"))
        #expect(!step.isCancelled)
    }
}
