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

    @Test func aFailedDependencyThatIsNotTheTypedUpstreamStopsTheStep() async throws {
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
        // `CancellationError` cannot name the upstream: the result is its cancellation value,
        // the operation is not cancelled, and the cause is kept.
        #expect(!step.isCancelled)
        #expect(step.bridge.upstreamFailure?.upstreamType.contains("ControlledOperation") == true)
        #expect(step.ran.all.isEmpty)
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
