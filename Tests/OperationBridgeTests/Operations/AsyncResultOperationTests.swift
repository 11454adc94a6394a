import Foundation
import OperationBridge
import Testing

@Suite(.timeLimit(Stress.timeLimit(minutes: 1)))
struct AsyncResultOperationTests {
    // MARK: - Results

    @Test func finishWithStoresTheResultAndFinishes() async {
        let operation = ProbeResultOperation<PlainError>(.byTest)
        operation.start()
        #expect(operation.result == nil)
        #expect(operation.lifecycleSnapshot == .executing)

        operation.finish(with: .success(7))
        #expect(operation.result == .success(7))
        #expect(operation.lifecycleSnapshot == .finished)
        #expect(await operation.bridge.outcome == .success(7))
    }

    @Test func runOnAQueueReturnsTheValueOrThrowsTheTypedFailure() async throws {
        let queue = OperationQueue()
        let succeeding = ProbeResultOperation<RepresentableError>(.inMain(.success(5)))
        #expect(try await queue.run(succeeding) == 5)

        let failing = ProbeResultOperation<RepresentableError>(.inMain(.failure(.boom(9))))
        await #expect(throws: RepresentableError.boom(9)) {
            try await queue.run(failing)
        }
        #expect(failing.mainCalls.value == 1)
    }

    @Test func theFirstResultWins() {
        let operation = ProbeResultOperation<PlainError>(.byTest)
        operation.start()
        operation.finish(with: .success(1))
        operation.finish(with: .success(2))
        operation.finish(with: .failure(.boom(3)))
        operation.cancel(with: .boom(4))
        operation.cancel()
        #expect(operation.result == .success(1))
        #expect(operation.lifecycleSnapshot == .finished, "cancelling a finished operation changes nothing")
    }

    @Test func aResultGivenBeforeStartIsKeptAndReportedWhenStarted() {
        let operation = ProbeResultOperation<PlainError>(.inMain(.success(99)))
        operation.finish(with: .success(1))
        operation.finish(with: .success(2))
        #expect(operation.result == .success(1))
        #expect(operation.lifecycleSnapshot == .pending, "never finished before it is started")

        operation.start()
        #expect(operation.result == .success(1))
        #expect(operation.lifecycleSnapshot == .finished)
        #expect(operation.mainCalls.value == 0)
    }

    @Test func cancelWithAFailureWinsOverTheWorksLaterResult() async throws {
        let queue = OperationQueue()
        let operation = ProbeResultOperation<PlainError>(.byTest)
        queue.addOperation(operation)
        await operation.started.wait()

        operation.cancel(with: .boom(4))
        #expect(operation.result == .failure(.boom(4)))
        #expect(operation.lifecycleSnapshot == .cancelledExecuting, "cancellation does not finish by itself")
        operation.cancel()
        operation.finish(with: .success(1))
        #expect(operation.result == .failure(.boom(4)))
        #expect(operation.lifecycleSnapshot == .cancelledFinished)
    }

    // MARK: - Cancellation failures

    enum CancelMoment: String, CaseIterable, Sendable {
        case beforeStart
        case whileRunning
    }

    @Test(arguments: FailureKind.allCases, CancelMoment.allCases)
    func cancellationBecomesTheFailureTypesCancellation(kind: FailureKind, moment: CancelMoment) async {
        let observed: CancellationObservation
        switch kind {
        case .cancellationError: observed = await cancel(CancellationError.self, moment: moment)
        case .anyError: observed = await cancel((any Error).self, moment: moment)
        case .representable: observed = await cancel(RepresentableError.self, moment: moment)
        case .plain: observed = await cancel(PlainError.self, moment: moment)
        }
        // The failure is recorded as soon as the operation is cancelled.
        #expect(observed.resultAfterCancel == kind.cancellationOutcome)
        #expect(observed.finalResult == kind.cancellationOutcome)
        #expect(observed.awaited == kind.cancellationOutcome)
        #expect(observed.finalState == .cancelledFinished)
        #expect(observed.mainCalls == (moment == .beforeStart ? 0 : 1))
    }

    struct CancellationObservation {
        var resultAfterCancel: Outcome
        var finalResult: Outcome
        var awaited: Outcome
        var finalState: LifecycleSnapshot
        var mainCalls: Int
    }

    /// Cancels a result operation with `Failure` before or while it runs; its work, once
    /// released, sees `isCancelled` and calls `finish()`.
    private func cancel<Failure: Error>(_: Failure.Type, moment: CancelMoment) async -> CancellationObservation {
        let queue = OperationQueue()
        let gate = Gate()
        let operation = ProbeResultOperation<Failure>(.whenOpened(gate, .success(1)))
        let resultAfterCancel: Outcome
        switch moment {
        case .beforeStart:
            operation.cancel()
            resultAfterCancel = Outcome(operation.result)
            queue.addOperation(operation)
        case .whileRunning:
            queue.addOperation(operation)
            await operation.started.wait()
            operation.cancel()
            resultAfterCancel = Outcome(operation.result)
            gate.open()
        }
        // Cancelled before it started, the outcome is decided: `outcome` may answer before the
        // queue has finished the operation; the final state is read once it has.
        let awaited = Outcome(await operation.bridge.outcome)
        try? await operation.bridge.waitForCompletion()
        return CancellationObservation(
            resultAfterCancel: resultAfterCancel,
            finalResult: Outcome(operation.result),
            awaited: awaited,
            finalState: operation.lifecycleSnapshot,
            mainCalls: operation.mainCalls.value
        )
    }

    /// The design (OperationBridge.docc/Design.md): where `Failure` cannot express cancellation, the operation ends cancelled
    /// *without a result* — a value its work reports after the cancellation won is dropped, so
    /// that `result` and `isCancelled` agree.
    @Test func aCancelledOperationEndsWithoutAResultWhenTheFailureTypeCannotExpressCancellation() async {
        let operation = ProbeResultOperation<PlainError>(.byTest)
        operation.start()
        operation.cancel()
        #expect(operation.result == nil)
        operation.finish(with: .success(3))
        #expect(operation.result == nil)
        #expect(operation.isCancelled)
        #expect(operation.lifecycleSnapshot == .cancelledFinished)
    }

    @Test func defaultCancelNeverTrapsInASubclassThatDoesNotOverrideIt() async throws {
        // `NeverEndingOperation` overrides `cancel()`; these do not.
        let queue = OperationQueue()
        let plain = ProbeResultOperation<PlainError>(.byTest)
        let anyError = ProbeResultOperation<any Error>(.byTest)
        queue.addOperationsWithoutWaiting([plain, anyError])
        await plain.started.wait()
        await anyError.started.wait()
        for _ in 0..<3 {
            plain.cancel()
            anyError.cancel()
        }
        plain.finish()
        anyError.finish()
        try await queue.waitForAllOperations()
        #expect(plain.result == nil)
        #expect(Outcome(anyError.result) == .failure("CancellationError"))
    }

    // MARK: - Threads

    @Test(arguments: [false, true])
    func theResultIsReadableFromManyThreadsWhileTheOperationEnds(alsoCancel: Bool) async {
        let rounds = Stress.iterations(40)
        let problems = await onDispatchThread { () -> [String] in
            var problems: [String] = []
            for round in 0..<rounds {
                let operation = ProbeResultOperation<CancellationError>(.byTest)
                operation.start()
                let seen = Recorder<Outcome>()
                let readerProblems = Recorder<String>()
                DispatchQueue.concurrentPerform(iterations: 12) { index in
                    switch index {
                    case 0:
                        operation.finish(with: .success(round))
                    case 1 where alsoCancel:
                        operation.cancel()
                    default:
                        var first: Outcome?
                        for _ in 0..<200 {
                            let finished = operation.isFinished
                            _ = operation.isExecuting
                            let outcome = Outcome(operation.result)
                            if finished && outcome == .none {
                                readerProblems.append("finished without a result")
                            }
                            guard outcome != .none else { continue }
                            if let first, first != outcome {
                                readerProblems.append("result changed from \(first) to \(outcome)")
                            }
                            first = first ?? outcome
                        }
                        if let first { seen.append(first) }
                    }
                }
                let final = Outcome(operation.result)
                let allowed: Set<Outcome> =
                    alsoCancel ? [.success(round), .failure("CancellationError")] : [.success(round)]
                if !allowed.contains(final) { problems.append("round \(round): result \(final)") }
                if operation.lifecycleSnapshot.isFinished == false { problems.append("round \(round): not finished") }
                if seen.all.contains(where: { $0 != final }) {
                    problems.append("round \(round): readers saw \(Set(seen.all)), final \(final)")
                }
                problems += readerProblems.all.map { "round \(round): \($0)" }
            }
            return problems
        }
        let problemCount = problems.count
        #expect(problemCount == 0, "\(problems.prefix(10).joined(separator: "\n"))")
    }

    // MARK: - Programmer errors

    #if EXIT_TESTS
        @Test func finishWithoutAResultTrapsWithAClearMessage() async throws {
            let exit = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                let operation = ProbeResultOperation<PlainError>(.byTest)
                operation.start()
                operation.finish()
            }
            let message = String(decoding: try #require(exit).standardErrorContent, as: UTF8.self)
            #expect(message.contains("ProbeResultOperation<PlainError>"))
            #expect(message.contains("call finish(with:)"))
        }
    #endif

    // MARK: - Memory

    @Test func finishedResultOperationsAreReleased() async throws {
        let underlying = DispatchQueue(label: "AsyncResultOperationTests.release")
        let queue = OperationQueue()
        queue.underlyingQueue = underlying
        var references: [WeakBox<Operation>] = []
        do {
            let succeeding = ProbeResultOperation<RepresentableError>(.inMain(.success(1)))
            let failing = ProbeResultOperation<any Error>(.inMain(.failure(PlainError.boom(1))))
            let cancelled = ProbeResultOperation<PlainError>(.inMain(.success(1)))
            cancelled.cancel()
            references = [succeeding, failing, cancelled].map { WeakBox<Operation>($0) }

            #expect(try await queue.run(succeeding) == 1)
            queue.addOperationsWithoutWaiting([failing, cancelled])
            #expect(await failing.bridge.outcome != nil)
            #expect(await cancelled.bridge.outcome == nil)
            try await queue.waitForAllOperations()
        }
        await drain(underlying)
        for reference in references {
            #expect(reference.object == nil)
        }
    }
}
