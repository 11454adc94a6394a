import Foundation
import OperationBridge
import Testing

/// The failure where a chain's failure started, whatever its first step's error type.
private enum ChainStartError: Error, Equatable {
    case notFound
}

/// A legacy chained step whose error enum adopts only ``CancellationRepresentable``: it can say
/// "cancelled", not "the upstream failed". With a nil input it reports `.missingInput` itself.
private final class LegacyParseStep: ChainedAsyncResultOperation<Int, Int, LegacyParseStep.Error>, @unchecked Sendable {
    enum Error: Swift.Error, Equatable, CancellationRepresentable {
        case canceled
        case missingInput
        static var cancellation: Error { .canceled }
    }

    let mainCalls = Counter()

    override func main() {
        mainCalls.increment()
        guard let input else { return finish(with: .failure(.missingInput)) }
        finish(with: .success(input * 2))
    }
}

/// Item 3 of issue 35: `rootFailure` is where the failure started, through steps of any
/// `Failure` type — also through a step that could only stand in for it with its cancellation
/// value, and through one that ran without its input and reported its own failure.
@Suite(.timeLimit(Stress.timeLimit(minutes: 1)))
struct RootFailureTests {
    enum Scheduling: String, CaseIterable, Sendable {
        /// Added to a queue, as classic code does.
        case queue
        /// Run through a ``Pipeline``.
        case pipeline
    }

    enum MiddlePolicy: String, CaseIterable, Sendable {
        /// The default for a `Failure` that cannot say "the upstream failed": `main()` runs
        /// without input and the step reports its own failure.
        case byDefault
        /// `.fail`: the step is skipped, standing in with its cancellation value.
        case explicitFail
    }

    private static func run(_ operations: [Operation], _ scheduling: Scheduling) async throws {
        switch scheduling {
        case .queue:
            OperationQueue().addOperationsWithoutWaiting(operations)
            try await operations.waitForCompletion()
        case .pipeline:
            try await Pipeline(operations, on: OperationQueue()).waitForCompletion()
        }
    }

    @Test(
        "fetch fails with .notFound → a step that adopts only CancellationRepresentable → then: the root is .notFound",
        arguments: Scheduling.allCases, MiddlePolicy.allCases)
    func theRootSurvivesACancellationOnlyStep(scheduling: Scheduling, policy: MiddlePolicy) async throws {
        let fetch = GatedResultOperation<Int, ChainStartError>(.failure(.notFound))
        let legacy = LegacyParseStep()
        legacy.takeInput(from: fetch)
        if policy == .explicitFail { legacy.upstreamFailurePolicy = .fail }
        let last = legacy.bridge.then { (value: Int) async throws(StepError) -> Int in value + 1 }
        try await Self.run([fetch, legacy, last], scheduling)

        // The last step did not run: it reports its upstream's failure, and where it started.
        let upstream = try #require(last.bridge.upstreamFailure)
        #expect(upstream.rootFailure as? ChainStartError == .notFound)
        #expect(!last.isCancelled)
        guard case .failure(.upstream(let reported))? = last.result else {
            Issue.record("expected an upstream failure, got \(String(describing: last.result))")
            return
        }
        #expect(reported.rootFailure as? ChainStartError == .notFound)
        #expect(!legacy.isCancelled)

        switch policy {
        case .byDefault:
            // The middle step ran and failed on its own: that failure is real, and it is what the
            // last step's upstream reported; it followed the failure upstream of it, which the
            // error keeps (`causedBy`), so the root is still `.notFound`.
            #expect(legacy.mainCalls.value == 1)
            #expect(legacy.result == .failure(.missingInput))
            #expect(legacy.bridge.upstreamFailure == nil)
            guard case .failed(let middle) = upstream.reason else {
                Issue.record("expected a failed upstream, got \(upstream.reason)")
                return
            }
            #expect(middle as? LegacyParseStep.Error == .missingInput)
            #expect(upstream.causedBy?.rootFailure as? ChainStartError == .notFound)
        case .explicitFail:
            // The middle step was skipped: `.canceled` only stands in for the upstream failure.
            #expect(legacy.mainCalls.value == 0)
            #expect(legacy.result == .failure(.canceled))
            #expect(legacy.bridge.upstreamFailure?.rootFailure as? ChainStartError == .notFound)
        }
    }

    @Test("Through a step whose Failure can express nothing, skipped explicitly", arguments: Scheduling.allCases)
    func theRootSurvivesAStepThatCanExpressNothing(scheduling: Scheduling) async throws {
        let fetch = GatedResultOperation<Int, ChainStartError>(.failure(.notFound))
        let middle = ChainedProbe<Int, PlainError>(body: { .success($0 ?? -1) })
        middle.upstreamFailurePolicy = .fail
        middle.takeInput(from: fetch)
        let last = middle.bridge.then { (value: Int) async throws(StepError) -> Int in value }
        try await Self.run([fetch, middle, last], scheduling)
        #expect(middle.result == nil)
        #expect(!middle.isCancelled)
        #expect(last.bridge.upstreamFailure?.rootFailure as? ChainStartError == .notFound)
    }

    @Test("A middle step that ran without input and succeeded ends the chain of failures")
    func aMiddleStepThatRecoveredEndsTheChain() async throws {
        let fetch = GatedResultOperation<Int, ChainStartError>(.failure(.notFound))
        let middle = ChainedProbe<Int, PlainError>(body: { .success($0 ?? 0) })
        middle.takeInput(from: fetch)
        let last = middle.bridge.then { (value: Int) async throws(StepError) -> Int in value + 1 }
        try await Self.run([fetch, middle, last], .queue)
        #expect(middle.result == .success(0))
        #expect(last.result == .success(1))
        #expect(last.bridge.upstreamFailure == nil)
    }

    @Test(
        "Through a step whose Failure carries the upstream failure without exposing it to rootFailure",
        arguments: Scheduling.allCases)
    func theRootSurvivesARepresentableStepThatDoesNotExposeIt(scheduling: Scheduling) async throws {
        let fetch = GatedResultOperation<Int, ChainStartError>(.failure(.notFound))
        // `StepError` adopts `UpstreamFailureRepresentable` but keeps the default `upstreamFailure`
        // (nil): rootFailure cannot look inside it.
        let middle = fetch.bridge.then { (value: Int) async throws(StepError) -> Int in value }
        let last = middle.bridge.then { (value: Int) async throws(StepError) -> Int in value }
        try await Self.run([fetch, middle, last], scheduling)
        let upstream = try #require(last.bridge.upstreamFailure)
        guard case .failed(let reported) = upstream.reason, case .upstream? = reported as? StepError else {
            Issue.record("expected the middle step's own report, got \(upstream.reason)")
            return
        }
        #expect(upstream.rootFailure as? ChainStartError == .notFound)
    }

    @Test("rootFailure follows causedBy where it cannot look inside an error")
    func rootFailureFollowsCausedBy() {
        let start = UpstreamFailedError(upstreamType: "Fetch", reason: .failed(ChainStartError.notFound))
        let error = UpstreamFailedError(upstreamType: "Legacy", reason: .failed(PlainError.boom(1)), causedBy: start)
        #expect(error.rootFailure as? ChainStartError == .notFound)
        #expect(error.description == "Upstream operation Legacy failed: boom(1)")
        let cancelled = UpstreamFailedError(upstreamType: "Legacy", reason: .cancelled, causedBy: start)
        #expect(cancelled.rootFailure == nil)  // a real cancellation of the step itself
        let plain = UpstreamFailedError(upstreamType: "Legacy", reason: .failed(PlainError.boom(1)))
        #expect(plain.rootFailure as? PlainError == .boom(1))
    }
}
