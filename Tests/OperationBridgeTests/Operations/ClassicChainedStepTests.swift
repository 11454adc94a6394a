import Foundation
import OperationBridge
import Testing

// A classic chained step, written as the articles write one: its own error enum (a `canceled`
// case and a `missingInputURL` case, adopting none of the package's protocols), `cancel()`
// overridden to call `cancel(with: .canceled)`, and `main()` reporting a missing input itself.

/// The classic upstream: resolves a short link, or fails.
private final class UnfurlURLOperation: AsyncResultOperation<URL, UnfurlURLOperation.Error>, @unchecked Sendable {
    enum Error: Swift.Error, Equatable {
        case canceled
        case notFound
    }

    private let resolved: URL?

    init(resolving resolved: URL?) {
        self.resolved = resolved
        super.init()
    }

    override func main() {
        finish(with: resolved.map(Result.success) ?? .failure(.notFound))
    }

    override func cancel() {
        cancel(with: .canceled)
    }
}

/// The classic chained step: the article's title fetcher, with a fake page instead of the network.
private final class FetchTitleChainedOperation: ChainedAsyncResultOperation<
    URL, String, FetchTitleChainedOperation.Error
>,
@unchecked Sendable
{
    enum Error: Swift.Error, Equatable {
        case canceled
        case missingInputURL
    }

    let mainCalls = Counter()

    override func main() {
        mainCalls.increment()
        guard let input = input else { return finish(with: .failure(.missingInputURL)) }
        finish(with: .success("Title of \(input.lastPathComponent)"))
    }

    override func cancel() {
        cancel(with: .canceled)
    }
}

/// A classic step whose error enum adopts only ``CancellationRepresentable``: it can say
/// "cancelled", not "the upstream failed".
private final class CancellationOnlyStep: ChainedAsyncResultOperation<URL, String, CancellationOnlyStep.Error>,
    @unchecked Sendable
{
    enum Error: Swift.Error, Equatable, CancellationRepresentable {
        case canceled
        case missingInputURL
        static var cancellation: Error { .canceled }
    }

    let mainCalls = Counter()

    override func main() {
        mainCalls.increment()
        guard let input else { return finish(with: .failure(.missingInputURL)) }
        finish(with: .success(input.absoluteString))
    }
}

/// Item 1 of issue 35: a classic chained step whose `Failure` cannot say "the upstream failed"
/// behaves as its hand-copied base class did — `main()` runs with a nil input and the step
/// reports its own failure; it always ends with a result, and `isCancelled` agrees with it.
@Suite(.timeLimit(Stress.timeLimit(minutes: 1)))
struct ClassicChainedStepTests {
    enum UpstreamEnding: String, CaseIterable, Sendable {
        case failed
        case cancelled
    }

    enum Connection: String, CaseIterable, Sendable {
        /// `addDependency(_:)`, as the article connects the steps.
        case classic
        /// `takeInput(from:)`.
        case typed
    }

    private static func upstream(_ ending: UpstreamEnding) -> UnfurlURLOperation {
        let unfurl = UnfurlURLOperation(resolving: ending == .failed ? nil : URL(string: "https://example.com/a")!)
        if ending == .cancelled { unfurl.cancel() }
        return unfurl
    }

    private static func connect(
        _ step: ChainedAsyncResultOperation<URL, String, some Error>, to upstream: UnfurlURLOperation,
        _ connection: Connection
    ) {
        switch connection {
        case .classic: step.addDependency(upstream)
        case .typed: step.takeInput(from: upstream)
        }
    }

    @Test(
        "The article's chain: after a failed or cancelled upstream, main() runs without input and the step reports it",
        arguments: UpstreamEnding.allCases, Connection.allCases)
    func theArticlesChainAfterAnUpstreamFailure(ending: UpstreamEnding, connection: Connection) async throws {
        let queue = OperationQueue()
        let unfurlOperation = Self.upstream(ending)
        let fetchTitleOperation = FetchTitleChainedOperation()
        Self.connect(fetchTitleOperation, to: unfurlOperation, connection)
        queue.addOperationsWithoutWaiting([unfurlOperation, fetchTitleOperation])
        try await fetchTitleOperation.bridge.waitForCompletion()

        // The article's own line, `print(fetchTitleOperation.result!)`, must not trap.
        let result = try #require(fetchTitleOperation.result)
        #expect(result == .failure(.missingInputURL))
        #expect(!fetchTitleOperation.isCancelled)
        #expect(fetchTitleOperation.mainCalls.value == 1)
        #expect(fetchTitleOperation.input == nil)
        // It ran: nothing stopped it.
        #expect(fetchTitleOperation.bridge.upstreamFailure == nil)
    }

    @Test("The default policy follows what Failure can express")
    func theDefaultPolicyFollowsWhatFailureCanExpress() {
        // Cannot say "the upstream failed": the classic behaviour.
        #expect(FetchTitleChainedOperation().upstreamFailurePolicy == .runWithoutInput)
        #expect(CancellationOnlyStep().upstreamFailurePolicy == .runWithoutInput)
        #expect(
            ChainedProbe<Int, CancellationError>(body: { _ in .success(0) }).upstreamFailurePolicy == .runWithoutInput)
        #expect(ChainedProbe<Int, Never>(body: { _ in .success(0) }).upstreamFailurePolicy == .runWithoutInput)
        // Can say it (adopts `UpstreamFailureRepresentable`, or is `any Error`): skip with the cause.
        #expect(ChainedProbe<Int, UpstreamAwareError>(body: { _ in .success(0) }).upstreamFailurePolicy == .fail)
        #expect(ChainedProbe<Int, any Error>(body: { _ in .success(0) }).upstreamFailurePolicy == .fail)
        #expect(ChainedProbe<Int, UpstreamFailedError>(body: { _ in .success(0) }).upstreamFailurePolicy == .fail)
        // A closure step cannot run without its input: it skips, whatever its `Failure`.
        let upstream = UnfurlURLOperation(resolving: nil)
        #expect(
            upstream.bridge.then { (url: URL) async throws(PlainError) -> Int in url.absoluteString.count }
                .upstreamFailurePolicy == .fail)
        #expect(
            upstream.bridge.then { (url: URL) async -> Int in url.absoluteString.count }.upstreamFailurePolicy == .fail)
    }

    @Test("A step that adopts only CancellationRepresentable runs without input too, and is not cancelled")
    func cancellationOnlyFailureRunsWithoutInput() async throws {
        let queue = OperationQueue()
        let unfurl = UnfurlURLOperation(resolving: nil)
        let step = CancellationOnlyStep()
        step.takeInput(from: unfurl)
        queue.addOperationsWithoutWaiting([unfurl, step])
        try await step.bridge.waitForCompletion()
        #expect(step.result == .failure(.missingInputURL))
        #expect(!step.isCancelled)
        #expect(step.mainCalls.value == 1)
    }

    @Test("Skipping stays available to a classic step: the explicit .fail policy")
    func theExplicitFailPolicySkips() async throws {
        let queue = OperationQueue()
        let unfurl = UnfurlURLOperation(resolving: nil)
        let step = CancellationOnlyStep()
        step.upstreamFailurePolicy = .fail
        #expect(step.upstreamFailurePolicy == .fail)
        step.takeInput(from: unfurl)
        queue.addOperationsWithoutWaiting([unfurl, step])
        try await step.bridge.waitForCompletion()
        #expect(step.mainCalls.value == 0)
        // Its `Failure` can only stand in with its cancellation value; the cause is kept, and the
        // step is not cancelled.
        #expect(step.result == .failure(.canceled))
        #expect(!step.isCancelled)
        #expect(step.bridge.upstreamFailure?.rootFailure as? UnfurlURLOperation.Error == .notFound)
    }

    @Test("In a Pipeline, the classic step whose input provider failed runs without input as well")
    func inAPipeline() async throws {
        let queue = OperationQueue()
        let unfurl = UnfurlURLOperation(resolving: nil)
        let fetchTitle = FetchTitleChainedOperation()
        fetchTitle.addDependency(unfurl)
        let pipeline = try Pipeline([unfurl, fetchTitle], on: queue)
        try await pipeline.waitForCompletion()
        #expect(fetchTitle.result == .failure(.missingInputURL))
        #expect(!fetchTitle.isCancelled)
        #expect(fetchTitle.mainCalls.value == 1)
        #expect(pipeline.firstFailure?.operation === unfurl)
    }

    @Test("A real cancellation still reads as one: the result is the step's own cancellation failure")
    func aRealCancellationReadsAsOne() async throws {
        let queue = OperationQueue()
        let unfurl = UnfurlURLOperation(resolving: URL(string: "https://example.com/a")!)
        let fetchTitle = FetchTitleChainedOperation()
        fetchTitle.addDependency(unfurl)
        fetchTitle.cancel()
        queue.addOperationsWithoutWaiting([unfurl, fetchTitle])
        try await fetchTitle.bridge.waitForCompletion()
        #expect(fetchTitle.result == .failure(.canceled))
        #expect(fetchTitle.isCancelled)
        #expect(fetchTitle.mainCalls.value == 0)
    }
}
