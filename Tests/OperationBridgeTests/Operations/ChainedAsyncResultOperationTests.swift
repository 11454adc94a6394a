import Foundation
import OperationBridge
import Testing

/// A chained operation that only overrides `main()`, so it inherits `init(input:)` and
/// `init(inputFrom:)`.
private final class IncrementOperation: ChainedAsyncResultOperation<Int, Int, any Error>, @unchecked Sendable {
    struct MissingInput: Error {}

    override func main() {
        guard let input else { return finish(with: .failure(MissingInput())) }
        finish(with: .success(input + 1))
    }
}

@Suite(.timeLimit(Stress.timeLimit(minutes: 1)))
struct ChainedAsyncResultOperationTests {
    private static func passThrough<Failure: Error>(_ failure: Failure) -> @Sendable (Int?) -> Result<Int, Failure> {
        { input in input.map { .success($0) } ?? .failure(failure) }
    }

    // MARK: - Classic chaining through dependencies

    @Test func classicChainingTakesTheInputFromADependency() async throws {
        let queue = OperationQueue()
        let upstream = ProbeResultOperation<PlainError>(.whenOpened(Gate.alreadyOpen(), .success(20)))
        let chained = ChainedProbe<Int, PlainError>(body: Self.passThrough(.boom(0)))
        chained.addDependency(upstream)
        #expect(chained.input == nil)
        queue.addOperationsWithoutWaiting([chained, upstream])

        #expect(await chained.bridge.outcome == .success(20))
        #expect(chained.inputsSeen.all == [20])
        #expect(chained.input == 20)
    }

    @Test func classicChainingTakesTheFirstDependencyWhoseOutputIsAnInput() async throws {
        let queue = OperationQueue()
        let text = ProducerOperation(producing: "not an Int")
        let block = BlockOperation {}
        let wrongSuccessType = ControlledOperation<String, PlainError>(.success("also not an Int"))
        let first = ProducerOperation(producing: 1)
        let second = ProbeResultOperation<PlainError>(.inMain(.success(2)))
        let chained = ChainedProbe<Int, PlainError>(body: Self.passThrough(.boom(0)))
        for dependency in [text, block, wrongSuccessType, first, second] {
            chained.addDependency(dependency)
        }
        queue.addOperationsWithoutWaiting([text, block, wrongSuccessType, first, second, chained])

        #expect(await chained.bridge.outcome == .success(1))
        #expect(chained.inputsSeen.all == [1])
    }

    @Test func aFailedUpstreamIsSkippedWhenAnotherDependencyProvidesTheInput() async throws {
        let queue = OperationQueue()
        let failed = ProbeResultOperation<PlainError>(.inMain(.failure(.boom(1))))
        let succeeded = ProbeResultOperation<PlainError>(.inMain(.success(2)))
        let chained = ChainedProbe<Int, PlainError>(body: Self.passThrough(.boom(0)))
        chained.addDependency(failed)
        chained.addDependency(succeeded)
        queue.addOperationsWithoutWaiting([failed, succeeded, chained])

        #expect(await chained.bridge.outcome == .success(2))
    }

    @Test func anInputGivenAtCreationWins() async throws {
        let queue = OperationQueue()
        let upstream = ProbeResultOperation<PlainError>(.inMain(.success(1)))
        let typed = ProbeResultOperation<PlainError>(.inMain(.success(2)))
        let chained = ChainedProbe<Int, PlainError>(input: 5, body: Self.passThrough(.boom(0)))
        #expect(chained.input == 5)
        chained.addDependency(upstream)
        chained.takeInput(from: typed)
        queue.addOperationsWithoutWaiting([upstream, typed, chained])

        #expect(await chained.bridge.outcome == .success(5))
    }

    @Test func withoutAnUpstreamMainRunsWithoutInput() async throws {
        let queue = OperationQueue()
        let unrelatedFailure = ControlledOperation<String, PlainError>(.failure(.boom(1)))
        let chained = ChainedProbe<Int, PlainError>(body: Self.passThrough(.boom(0)))
        chained.addDependency(unrelatedFailure)
        queue.addOperationsWithoutWaiting([unrelatedFailure, chained])

        #expect(await chained.bridge.outcome == .failure(.boom(0)))
        #expect(chained.inputsSeen.all == [nil])
    }

    @Test func resultOperationsProvideTheirSuccessValueAsOutput() async {
        let succeeding = ProbeResultOperation<PlainError>(.byTest)
        #expect(succeeding.output == nil)
        succeeding.start()
        succeeding.finish(with: .success(3))
        #expect(succeeding.output as? Int == 3)

        let failing = ProbeResultOperation<PlainError>(.inMain(.failure(.boom(1))))
        failing.start()
        #expect(failing.output == nil)
    }

    // MARK: - Typed injection

    @Test func takeInputFromAddsTheDependencyAndPassesTheValue() async throws {
        let queue = OperationQueue()
        let upstream = ProbeResultOperation<PlainError>(.whenOpened(Gate.alreadyOpen(), .success(41)))
        let chained = ChainedProbe<Int, any Error>(body: Self.passThrough(PlainError.boom(0)))
        chained.takeInput(from: upstream)
        #expect(chained.dependencies.contains { $0 === upstream })
        queue.addOperationsWithoutWaiting([chained, upstream])

        #expect(try await chained.bridge.value == 41)
        #expect(chained.input == 41)
    }

    /// The step keeps its input and its typed upstream in one field (Design.md, "Memory per
    /// operation"): the resolved input replaces the upstream, which stays a dependency.
    @Test func theResolvedInputReplacesTheTypedUpstream() async throws {
        let queue = OperationQueue()
        let chained = ChainedProbe<Int, any Error>(body: Self.passThrough(PlainError.boom(0)))
        var upstreamReference: WeakBox<Operation>?
        do {
            let upstream = ProbeResultOperation<PlainError>(.inMain(.success(41)))
            upstreamReference = WeakBox(upstream)
            chained.takeInput(from: upstream)
            // Started here, not queued: a queue's worker thread lets go of an operation it ran
            // only after its finish has been told, so the upstream could outlive the await by a
            // moment in a queue's hands (CI76, under ThreadSanitizer). Only the step may keep it.
            upstream.start()
            queue.addOperation(chained)
            #expect(try await chained.bridge.value == 41)
            try await queue.waitForAllOperations()
            // Foundation's dependency is the step's only reference left to its upstream.
            #expect(chained.dependencies.contains { $0 === upstream })
            chained.removeDependency(upstream)
        }
        #expect(upstreamReference?.object == nil, "the step still holds its typed upstream")
        #expect(chained.input == 41)
    }

    @Test func initInputFromChainsTypedOperations() async throws {
        let queue = OperationQueue()
        let head = ProbeResultOperation<RepresentableError>(.inMain(.success(1)))
        let second = IncrementOperation(inputFrom: head)
        let third = IncrementOperation(inputFrom: second)
        queue.addOperationsWithoutWaiting([third, second, head])

        #expect(try await third.bridge.value == 3)
        #expect(second.input == 1)
        #expect(third.input == 2)
    }

    @Test func theTypedUpstreamWinsOverOtherDependencies() async throws {
        let queue = OperationQueue()
        let classic = ProducerOperation(producing: 1)
        let typed = ProbeResultOperation<PlainError>(.inMain(.success(2)))
        let chained = ChainedProbe<Int, PlainError>(body: Self.passThrough(.boom(0)))
        chained.addDependency(classic)
        chained.takeInput(from: typed)
        queue.addOperationsWithoutWaiting([classic, typed, chained])

        #expect(await chained.bridge.outcome == .success(2))
    }

    // MARK: - Upstream failure and cancellation policy

    enum UpstreamEnding: String, CaseIterable, Sendable {
        /// Finished with `PlainError.boom(1)`.
        case failed
        /// Cancelled; its `Failure` cannot express cancellation, so it has no result.
        case cancelledWithoutResult
        /// Cancelled; its result is a `CancellationError`.
        case cancelledWithFailure

        var expectedReason: String {
            self == .failed ? "failed(PlainError.boom(1))" : "cancelled"
        }
    }

    enum Connection: String, CaseIterable, Sendable {
        /// `takeInput(from:)`.
        case typed
        /// `addDependency(_:)` and the classic scan.
        case classic
    }

    /// What a chained operation reported after its upstream ended without an input.
    struct PolicyObservation {
        enum Ending: Equatable {
            /// A failure carrying the upstream error.
            case upstreamFailure
            /// The failure type's cancellation failure.
            case cancellationFailure
            /// No result.
            case noResult
            case unexpected(Outcome)
        }

        var ending: Ending
        var upstreamError: UpstreamFailedError?
        /// The cause the operation keeps (`upstreamFailure`), whatever its `Failure` could express.
        var upstreamCause: UpstreamFailedError?
        var state: LifecycleSnapshot
        var mainCalls: Int
    }

    @Test(arguments: UpstreamEnding.allCases, Connection.allCases)
    func anyErrorFailsWithUpstreamFailedError(upstream: UpstreamEnding, connection: Connection) async throws {
        let observed = await runDownstream(of: upstream, connection: connection, failure: (any Error).self) {
            result in
            guard case .failure(let error as UpstreamFailedError) = result else { return nil }
            return error
        }
        #expect(observed.ending == .upstreamFailure)
        let error = try #require(observed.upstreamError)
        #expect(Self.describe(error.reason) == upstream.expectedReason)
        #expect(error.upstreamName == "upstream")
        #expect(error.upstreamType.hasPrefix("ProbeResultOperation<"))
        #expect(observed.mainCalls == 0)
        #expect(observed.state == .finished)
    }

    @Test(arguments: UpstreamEnding.allCases, Connection.allCases)
    func upstreamFailureRepresentableCarriesTheError(upstream: UpstreamEnding, connection: Connection) async throws {
        let observed = await runDownstream(of: upstream, connection: connection, failure: UpstreamAwareError.self) {
            result in
            guard case .failure(.upstream(let error)) = result else { return nil }
            return error
        }
        #expect(observed.ending == .upstreamFailure)
        let error = try #require(observed.upstreamError)
        #expect(Self.describe(error.reason) == upstream.expectedReason)
        #expect(observed.mainCalls == 0)
        #expect(observed.state == .finished)
    }

    /// Told to skip (`.fail`), a step whose `Failure` can say "cancelled" but not "the upstream
    /// failed" stands in with its cancellation failure — not cancelled, the cause kept.
    @Test(arguments: UpstreamEnding.allCases, [FailureKind.cancellationError, .representable])
    func otherwiseTheCancellationFailureIsReported(upstream: UpstreamEnding, kind: FailureKind) async throws {
        let observed: PolicyObservation
        switch kind {
        case .cancellationError:
            observed = await runDownstream(
                of: upstream, connection: .typed, failure: CancellationError.self, policy: .fail)
        case .representable:
            observed = await runDownstream(
                of: upstream, connection: .typed, failure: RepresentableError.self, policy: .fail)
        case .anyError, .plain:
            Issue.record("not a case of this test")
            return
        }
        #expect(observed.ending == .cancellationFailure)
        #expect(observed.mainCalls == 0)
        #expect(observed.state.isFinished)
        #expect(!observed.state.isExecuting)
        #expect(!observed.state.isCancelled)
        #expect(observed.upstreamCause != nil)
    }

    /// Only a real cancellation reads as one: a step told to skip (`.fail`) has no result when
    /// its `Failure` can express nothing, is not cancelled, and keeps the cause.
    @Test(arguments: UpstreamEnding.allCases, Connection.allCases)
    func withNothingExpressibleTheOperationEndsWithoutResultKeepingTheCause(
        upstream: UpstreamEnding,
        connection: Connection
    ) async throws {
        let observed = await runDownstream(
            of: upstream, connection: connection, failure: PlainError.self, policy: .fail
        ) { _ in nil }
        #expect(observed.ending == .noResult)
        #expect(observed.mainCalls == 0)
        #expect(observed.state == .finished)
        let cause = try #require(observed.upstreamCause)
        #expect(Self.describe(cause.reason) == upstream.expectedReason)
    }

    @Test(arguments: UpstreamEnding.allCases, Connection.allCases)
    func runWithoutInputKeepsTheClassicBehaviour(upstream: UpstreamEnding, connection: Connection) async throws {
        let queue = OperationQueue()
        let head = Self.makeUpstream(upstream)
        let chained = ChainedProbe<Int, PlainError>(body: Self.passThrough(.boom(0)))
        chained.upstreamFailurePolicy = .runWithoutInput
        #expect(chained.upstreamFailurePolicy == .runWithoutInput)
        connect(chained, to: head, connection)
        queue.addOperationsWithoutWaiting([head, chained])

        #expect(await chained.bridge.outcome == .failure(.boom(0)))
        #expect(chained.inputsSeen.all == [nil])
        #expect(chained.mainCalls.value == 1)
    }

    /// By default a step whose `Failure` cannot say "the upstream failed" runs as the classic
    /// class did (ClassicChainedStepTests has the matrix).
    @Test(arguments: UpstreamEnding.allCases, Connection.allCases)
    func byDefaultAClassicFailureRunsWithoutInput(upstream: UpstreamEnding, connection: Connection) async throws {
        let observed = await runDownstream(of: upstream, connection: connection, failure: PlainError.self)
        #expect(observed.ending == .unexpected(.success(-1)))
        #expect(observed.mainCalls == 1)
        #expect(observed.state == .finished)
        #expect(observed.upstreamCause == nil)
    }

    @Test func theDefaultPolicyFollowsFailure() {
        #expect(
            ChainedProbe<Int, PlainError>(body: Self.passThrough(.boom(0))).upstreamFailurePolicy == .runWithoutInput)
        #expect(ChainedProbe<Int, any Error>(body: Self.passThrough(PlainError.boom(0))).upstreamFailurePolicy == .fail)
    }

    @Test func aCancelledChainedOperationDoesNotResolveItsInput() async throws {
        let queue = OperationQueue()
        let gate = Gate()
        let upstream = ProbeResultOperation<PlainError>(.whenOpened(gate, .success(1)))
        let chained = ChainedProbe<Int, any Error>(body: Self.passThrough(PlainError.boom(0)))
        chained.takeInput(from: upstream)
        queue.addOperationsWithoutWaiting([upstream, chained])

        chained.cancel()
        #expect(Outcome(await chained.bridge.outcome) == .failure("CancellationError"))
        gate.open()
        try await queue.waitForAllOperations()
        #expect(chained.input == nil)
        #expect(chained.mainCalls.value == 0)
        #expect(upstream.result == .success(1))
    }

    @Test func upstreamFailedErrorNamesTheUpstream() {
        let failed = UpstreamFailedError(
            upstreamType: "Unfurl", upstreamName: "link", reason: .failed(PlainError.boom(2)))
        #expect(failed.description == "Upstream operation Unfurl 'link' failed: boom(2)")
        let cancelled = UpstreamFailedError(upstreamType: "Unfurl", reason: .cancelled)
        #expect(cancelled.description == "Upstream operation Unfurl was cancelled")
    }

    // MARK: - Memory

    @Test func finishedChainsAreReleased() async throws {
        let underlying = DispatchQueue(label: "ChainedAsyncResultOperationTests.release")
        let queue = OperationQueue()
        queue.underlyingQueue = underlying
        var references: [WeakBox<Operation>] = []
        do {
            let head = ProbeResultOperation<PlainError>(.inMain(.success(1)))
            let typed = IncrementOperation(inputFrom: head)
            let classic = ChainedProbe<Int, any Error>(body: Self.passThrough(PlainError.boom(0)))
            classic.addDependency(typed)
            let failedHead = ProbeResultOperation<PlainError>(.inMain(.failure(.boom(1))))
            let failedTail = IncrementOperation(inputFrom: failedHead)
            references = [head, typed, classic, failedHead, failedTail].map { WeakBox<Operation>($0) }

            queue.addOperationsWithoutWaiting([classic, typed, head, failedTail, failedHead])
            #expect(try await classic.bridge.value == 2)
            await #expect(throws: UpstreamFailedError.self) { try await failedTail.bridge.value }
            try await queue.waitForAllOperations()
        }
        await drain(underlying)
        for reference in references {
            #expect(reference.object == nil)
        }
    }

    // MARK: - Helpers

    private static func makeUpstream(_ ending: UpstreamEnding) -> any Operation & ChainedOperationOutputProviding {
        switch ending {
        case .failed:
            let upstream = ProbeResultOperation<PlainError>(.inMain(.failure(.boom(1))))
            upstream.name = "upstream"
            return upstream
        case .cancelledWithoutResult:
            let upstream = ProbeResultOperation<PlainError>(.inMain(.success(1)))
            upstream.name = "upstream"
            upstream.cancel()
            return upstream
        case .cancelledWithFailure:
            let upstream = ProbeResultOperation<CancellationError>(.inMain(.success(1)))
            upstream.name = "upstream"
            upstream.cancel()
            return upstream
        }
    }

    private func connect<Failure: Error>(
        _ chained: ChainedProbe<Int, Failure>,
        to upstream: any Operation & ChainedOperationOutputProviding,
        _ connection: Connection
    ) {
        switch connection {
        case .classic:
            chained.addDependency(upstream)
        case .typed:
            if let upstream = upstream as? ProbeResultOperation<PlainError> {
                chained.takeInput(from: upstream)
            } else if let upstream = upstream as? ProbeResultOperation<CancellationError> {
                chained.takeInput(from: upstream)
            } else {
                preconditionFailure("unexpected upstream \(upstream)")
            }
        }
    }

    /// Runs an upstream that ends as `upstream` says and a dependent chained operation with
    /// `Failure`, and reports how the dependent ended.
    private func runDownstream<Failure: Error>(
        of upstream: UpstreamEnding,
        connection: Connection,
        failure _: Failure.Type,
        policy: UpstreamFailurePolicy? = nil,
        upstreamError: (Result<Int, Failure>?) -> UpstreamFailedError? = { _ in nil }
    ) async -> PolicyObservation {
        let queue = OperationQueue()
        let head = Self.makeUpstream(upstream)
        let chained = ChainedProbe<Int, Failure>(body: { .success($0 ?? -1) })
        if let policy { chained.upstreamFailurePolicy = policy }
        connect(chained, to: head, connection)
        queue.addOperationsWithoutWaiting([head, chained])

        let result = await chained.bridge.outcome
        let carried = upstreamError(result)
        let ending: PolicyObservation.Ending
        if carried != nil {
            ending = .upstreamFailure
        } else if result == nil {
            ending = .noResult
        } else if let cancellation = FailureKind.cancellationOutcome(of: Failure.self),
            Outcome(result) == cancellation
        {
            ending = .cancellationFailure
        } else {
            ending = .unexpected(Outcome(result))
        }
        return PolicyObservation(
            ending: ending,
            upstreamError: carried,
            upstreamCause: chained.bridge.upstreamFailure,
            state: chained.lifecycleSnapshot,
            mainCalls: chained.mainCalls.value
        )
    }

    private static func describe(_ reason: UpstreamFailedError.Reason) -> String {
        switch reason {
        case .failed(let error): "failed(\(Outcome.describe(error)))"
        case .cancelled: "cancelled"
        case .noInput: "noInput"
        }
    }

    /// A failed upstream that cancels `victim` the moment the victim, resolving its input, asks
    /// whether the upstream was cancelled: the victim is cancelled while it is executing but
    /// before its `main()` would run.
    final class CancellingUpstream: AsyncResultOperation<Int, PlainError>, @unchecked Sendable {
        weak var victim: Operation?
        override var isCancelled: Bool {
            if isFinished { victim?.cancel() }
            return super.isCancelled
        }
        override func main() { finish(with: .failure(.boom(5))) }
    }

    @Test("Cancelled while resolving a failed upstream's input, the operation still finishes")
    func cancelledWhileResolvingItsInputStillFinishes() async throws {
        for connection in Connection.allCases {
            let upstream = CancellingUpstream()
            let chained = ChainedProbe<Int, PlainError>(body: Self.passThrough(.boom(0)))
            chained.upstreamFailurePolicy = .fail
            upstream.victim = chained
            switch connection {
            case .typed: chained.takeInput(from: upstream)
            case .classic: chained.addDependency(upstream)
            }
            let queue = OperationQueue()
            queue.addOperationsWithoutWaiting([upstream, chained])
            try await chained.bridge.waitForCompletion()
            #expect(chained.lifecycleSnapshot == .cancelledFinished)
            #expect(chained.mainCalls.value == 0)
        }
    }
}

extension FailureKind {
    /// The cancellation outcome of `Failure`, when it is one of the kinds the tests use.
    static func cancellationOutcome<Failure: Error>(of _: Failure.Type) -> Outcome? {
        switch Failure.self {
        case is CancellationError.Type: FailureKind.cancellationError.cancellationOutcome
        case is RepresentableError.Type: FailureKind.representable.cancellationOutcome
        default: nil
        }
    }
}
