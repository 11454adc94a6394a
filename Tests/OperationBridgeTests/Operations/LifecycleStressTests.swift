import Foundation
import OperationBridge
import Testing

@Suite(.timeLimit(Stress.timeLimit(minutes: 20)))
struct LifecycleStressTests {
    // MARK: - cancelAllOperations over many mixed operations

    enum CancelAllMode: String, CaseIterable, Sendable {
        /// `cancelAllOperations()` on a running queue. A cancelled upstream finishes at once, so
        /// its dependent may start — and end by the upstream failure policy — before the loop
        /// reaches it.
        case runningQueue
        /// The queue is suspended while cancelling: every operation is cancelled before a
        /// cancelled one starts.
        case suspendedWhileCancelling
    }

    /// How an operation may end.
    struct Ending: Hashable, CustomStringConvertible {
        var state: LifecycleSnapshot
        var outcome: Outcome

        static func cancelled(_ outcome: Outcome) -> Ending { Ending(state: .cancelledFinished, outcome: outcome) }

        var description: String { "\(state) \(outcome)" }
    }

    @Test(arguments: CancelAllMode.allCases)
    func cancelAllOperationsOverAThousandMixedOperations(mode: CancelAllMode) async throws {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 8
        let gate = Gate()
        let blockRuns = Counter()
        var operations: [Operation] = []
        var allowed: [ObjectIdentifier: Set<Ending>] = [:]
        var chainedMainCalls: [Counter] = []

        func add<Failure: Error>(_ operation: AsyncResultOperation<Int, Failure>, endings: Set<Ending>) {
            operations.append(operation)
            allowed[ObjectIdentifier(operation)] = endings
        }
        /// The ending of a chained operation that started after its upstream had been
        /// cancelled, and before it was cancelled itself.
        func afterCancelledUpstream(_ ending: Ending) -> Set<Ending> {
            mode == .runningQueue ? [ending] : []
        }

        for index in 0..<1_000 {
            switch index % 10 {
            case 0:
                operations.append(ProbeOperation(.whenOpened(gate)))
            case 1:
                add(
                    ProbeResultOperation<CancellationError>(.whenOpened(gate, .success(index))),
                    endings: [.cancelled(FailureKind.cancellationError.cancellationOutcome)]
                )
            case 2:
                add(
                    ProbeResultOperation<any Error>(.whenOpened(gate, .success(index))),
                    endings: [.cancelled(FailureKind.anyError.cancellationOutcome)]
                )
            case 3:
                add(
                    ProbeResultOperation<PlainError>(.whenOpened(gate, .success(index))),
                    endings: [.cancelled(FailureKind.plain.cancellationOutcome)]
                )
            case 4:
                add(
                    ProbeResultOperation<RepresentableError>(.whenOpened(gate, .success(index))),
                    endings: [.cancelled(FailureKind.representable.cancellationOutcome)]
                )
            case 5:
                // Typed injection from the `RepresentableError` operation just before.
                let upstream = try #require(operations.last as? ProbeResultOperation<RepresentableError>)
                let operation = ChainedProbe<Int, any Error>(body: { .success($0 ?? -1) })
                operation.takeInput(from: upstream)
                chainedMainCalls.append(operation.mainCalls)
                let upstreamCancelled = UpstreamFailedError(
                    upstreamType: String(describing: type(of: upstream)),
                    reason: .cancelled
                )
                add(
                    operation,
                    endings: Set([.cancelled(FailureKind.anyError.cancellationOutcome)])
                        .union(
                            afterCancelledUpstream(
                                Ending(
                                    state: .finished,
                                    outcome: Outcome(Result<Int, any Error>.failure(upstreamCancelled))
                                )
                            )
                        )
                )
            case 6:
                // Classic chaining from the `PlainError` operation: without a result either
                // way. Cancelled when its own cancellation comes first; otherwise (on a running
                // queue, started after its upstream was cancelled) stopped by the upstream
                // failure, which `PlainError` cannot express: not cancelled, no result
                // (`upstreamFailure` says why; see CancellationSemantics).
                let upstream = try #require(operations[index - 3] as? ProbeResultOperation<PlainError>)
                let operation = ChainedProbe<Int, PlainError>(body: { .success($0 ?? -1) })
                // Explicitly: the classic default (`.runWithoutInput`) would run it with a nil
                // input; this test is about what cancellation leaves, with no work run.
                operation.upstreamFailurePolicy = .fail
                operation.addDependency(upstream)
                chainedMainCalls.append(operation.mainCalls)
                add(
                    operation,
                    endings: Set([.cancelled(.none)])
                        .union(afterCancelledUpstream(Ending(state: .finished, outcome: .none))))
            case 7:
                operations.append(BlockOperation { blockRuns.increment() })
            case 8:
                add(NeverEndingOperation(), endings: [.cancelled(FailureKind.cancellationError.cancellationOutcome)])
            default:
                let upstream = try #require(operations[index - 8] as? ProbeResultOperation<CancellationError>)
                let operation = ChainedProbe<Int, RepresentableError>(body: { .success($0 ?? -1) })
                // As in case 6: `RepresentableError` cannot say "the upstream failed", so the
                // classic default would run it with a nil input when it starts after its
                // upstream was cancelled; this test is about what cancellation leaves.
                operation.upstreamFailurePolicy = .fail
                operation.takeInput(from: upstream)
                chainedMainCalls.append(operation.mainCalls)
                let cancellation = FailureKind.representable.cancellationOutcome
                add(
                    operation,
                    endings: Set([.cancelled(cancellation)])
                        .union(afterCancelledUpstream(Ending(state: .finished, outcome: cancellation)))
                )
            }
        }
        queue.addOperationsWithoutWaiting(operations)
        let awaiters = operations.enumerated().filter { $0.offset % 25 == 0 }.map { _, operation in
            Task { try await operation.bridge.waitForCompletion() }
        }

        switch mode {
        case .runningQueue:
            queue.cancelAllOperations()
        case .suspendedWhileCancelling:
            queue.isSuspended = true
            queue.cancelAllOperations()
            queue.isSuspended = false
        }
        gate.open()
        try await queue.waitForAllOperations()
        for awaiter in awaiters { try await awaiter.value }

        var problems: [String] = []
        for (index, operation) in operations.enumerated() {
            let state = operation.lifecycleSnapshot
            guard let endings = allowed[ObjectIdentifier(operation)] else {
                // A plain `AsyncOperation` is cancelled before it starts or while it waits;
                // a block operation may have run before `cancelAllOperations()`.
                let acceptable =
                    operation is BlockOperation ? state.isFinished && !state.isExecuting : state == .cancelledFinished
                if !acceptable { problems.append("#\(index) \(type(of: operation)): \(state)") }
                continue
            }
            let ending = Ending(state: state, outcome: Self.outcome(of: operation))
            if !endings.contains(ending) {
                problems.append("#\(index) \(type(of: operation)): \(ending), expected one of \(endings)")
            }
        }
        let problemCount = problems.count
        #expect(problemCount == 0, "\(problems.prefix(20).joined(separator: "\n"))")
        #expect(blockRuns.value <= 100)
        // Upstreams were cancelled or gated until after the cancellation: no chained operation
        // ran its work.
        #expect(chainedMainCalls.allSatisfy { $0.value == 0 })
    }

    private static func outcome(of operation: Operation) -> Outcome {
        switch operation {
        case let operation as AsyncResultOperation<Int, CancellationError>: Outcome(operation.result)
        case let operation as AsyncResultOperation<Int, any Error>: Outcome(operation.result)
        case let operation as AsyncResultOperation<Int, PlainError>: Outcome(operation.result)
        case let operation as AsyncResultOperation<Int, RepresentableError>: Outcome(operation.result)
        default: .failure("unexpected operation type \(type(of: operation))")
        }
    }

    // MARK: - Randomized cancel/finish races

    /// Each iteration races `cancel()` (or `cancel(with:)`) against one or two
    /// `finish(with:)` calls — and, for operations started by hand, against `start()` — on
    /// different threads, while tasks await the operation and some of them are cancelled.
    ///
    /// Checks: exactly one result is stored and it never changes; it is one of the results
    /// offered (or the cancellation failure, or none when the failure type cannot express
    /// cancellation and the operation was cancelled); the operation finishes exactly once
    /// (`main()` runs at most once, the completion block runs once); every awaiter is answered,
    /// with that same result.
    ///
    /// `OPERATIONBRIDGE_STRESS_SCALE` changes the number of iterations,
    /// `OPERATIONBRIDGE_STRESS_SEED` replays a run.
    @Test func randomizedCancelFinishRaces() async throws {
        let seed = Stress.seed()
        let iterations = Stress.iterations(2_000)
        print(
            "LifecycleStressTests.randomizedCancelFinishRaces: \(iterations) iterations, seed \(seed) "
                + "(replay with OPERATIONBRIDGE_STRESS_SEED=\(seed))"
        )
        var generator = SeededGenerator(seed: seed)
        let queue = OperationQueue()
        let completions = Latch(count: iterations)
        var completionCounters: [Counter] = []
        var problems: [String] = []

        for iteration in 0..<iterations {
            let plan = RacePlan.random(using: &generator)
            let counter = Counter()
            completionCounters.append(counter)
            let completion: @Sendable () -> Void = {
                counter.increment()
                completions.arrive()
            }
            let found: [String]
            switch plan.kind {
            case .cancellationError:
                found = await race(plan, on: queue, completion: completion) { _ in CancellationError() }
            case .anyError:
                found = await race(plan, on: queue, completion: completion) { PlainError.boom($0) as any Error }
            case .representable:
                found = await race(plan, on: queue, completion: completion) { RepresentableError.boom($0) }
            case .plain:
                found = await race(plan, on: queue, completion: completion) { PlainError.boom($0) }
            }
            problems += found.map { "iteration \(iteration) \(plan): \($0)" }
        }

        await completions.wait()
        let completionCounts = completionCounters.map(\.value)
        #expect(completionCounts.allSatisfy { $0 == 1 }, "completion blocks ran \(Set(completionCounts)) times")
        let problemCount = problems.count
        #expect(problemCount == 0, "seed \(seed):\n\(problems.prefix(10).joined(separator: "\n"))")
    }

    struct RacePlan: CustomStringConvertible {
        enum Start: CaseIterable {
            /// Added to a queue before the race.
            case queue
            /// `start()` is one of the racers.
            case racingByHand
            /// Started by hand before the race.
            case byHandFirst
        }

        enum Offer: CustomStringConvertible {
            case success(Int)
            case failure(Int)

            var description: String {
                switch self {
                case .success(let value): "success(\(value))"
                case .failure(let code): "failure(\(code))"
                }
            }
        }

        var kind: FailureKind
        var start: Start
        var offers: [Offer]
        var cancelsWithFailure: Bool
        /// For each awaiting task: whether it is cancelled during the race.
        var awaiters: [Bool]
        var submissionOrder: [Int]

        static func random(using generator: inout SeededGenerator) -> RacePlan {
            let kind = FailureKind.allCases.randomElement(using: &generator)!
            let start = Start.allCases.randomElement(using: &generator)!
            let offers = (0..<Int.random(in: 1...2, using: &generator)).map { index in
                Bool.random(using: &generator) ? Offer.success(index + 1) : Offer.failure(index + 1)
            }
            let awaiters = (0..<Int.random(in: 0...3, using: &generator)).map { _ in
                Int.random(in: 0..<4, using: &generator) == 0
            }
            // Racers: 0 is the cancellation, 1... the offers, then `start()` when racing by hand.
            let racerCount = 1 + offers.count + (start == .racingByHand ? 1 : 0)
            return RacePlan(
                kind: kind,
                start: start,
                offers: offers,
                cancelsWithFailure: Bool.random(using: &generator),
                awaiters: awaiters,
                submissionOrder: Array(0..<racerCount).shuffled(using: &generator)
            )
        }

        var description: String {
            "[\(kind) \(start) offers: \(offers) cancelWith: \(cancelsWithFailure) awaiters: \(awaiters) "
                + "order: \(submissionOrder)]"
        }
    }

    private func race<Failure: Error>(
        _ plan: RacePlan,
        on queue: OperationQueue,
        completion: @escaping @Sendable () -> Void,
        failure makeFailure: @escaping @Sendable (Int) -> Failure
    ) async -> [String] {
        let operation = ProbeResultOperation<Failure>(.byTest)
        operation.completionBlock = completion
        let offered: [Result<Int, Failure>] = plan.offers.map { offer in
            switch offer {
            case .success(let value): .success(value)
            case .failure(let code): .failure(makeFailure(code))
            }
        }
        let cancellationFailure = makeFailure(-1)

        var allowed = Set(offered.map { Outcome($0) })
        if plan.cancelsWithFailure {
            allowed.insert(Outcome(Result<Int, Failure>.failure(cancellationFailure)))
        } else {
            allowed.insert(plan.kind.cancellationOutcome)
        }

        let awaiters = plan.awaiters.map { _ in Task { Outcome(await operation.bridge.outcome) } }

        switch plan.start {
        case .queue: queue.addOperation(operation)
        case .byHandFirst: operation.start()
        case .racingByHand: break
        }

        let cancelsWithFailure = plan.cancelsWithFailure
        var racers: [@Sendable () -> Void] = [
            {
                if cancelsWithFailure {
                    operation.cancel(with: cancellationFailure)
                } else {
                    operation.cancel()
                }
            }
        ]
        racers += offered.map { result in { operation.finish(with: result) } }
        if plan.start == .racingByHand {
            racers.append { operation.start() }
        }
        let group = DispatchGroup()
        for index in plan.submissionOrder {
            DispatchQueue.global().async(group: group, execute: racers[index])
        }
        for (awaiter, cancelled) in zip(awaiters, plan.awaiters) where cancelled {
            awaiter.cancel()
        }
        await resumeOrdered { continuation in
            group.notify(queue: .global()) { continuation.resume() }
        }

        // The operation has been started and offered a result: it finishes.
        let final = Outcome(await operation.bridge.outcome)
        // A decided outcome is answered before the operation has finished; the state is read
        // once it has.
        try? await operation.bridge.waitForCompletion()
        var problems: [String] = []
        if !allowed.contains(final) { problems.append("result \(final) is none of \(allowed)") }
        if final == .none && !operation.isCancelled { problems.append("no result, yet not cancelled") }
        if Outcome(operation.result) != final { problems.append("the result changed after finishing") }
        let state = operation.lifecycleSnapshot
        if !state.isFinished || state.isExecuting { problems.append("ended in state \(state)") }
        if operation.mainCalls.value > 1 { problems.append("main() ran \(operation.mainCalls.value) times") }
        for (awaiter, cancelled) in zip(awaiters, plan.awaiters) {
            let answer = await awaiter.value
            if answer != final && !(cancelled && answer == .none) {
                problems.append("an awaiter (cancelled: \(cancelled)) got \(answer), the result is \(final)")
            }
        }
        return problems
    }
}
