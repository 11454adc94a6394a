import Foundation
import OperationBridge
import Testing

/// Conditions that always hold or fail, counting their checks (ProcedureKit's `TrueCondition` and
/// `FalseCondition`, in the package's terms).
struct CountedCondition: Sendable {
    let checks = Counter()
    let condition: OperationCondition

    init(_ name: String, holds: Bool) {
        let checks = self.checks
        condition = OperationCondition(name) { _ in
            checks.increment()
            return holds
        }
    }
}

/// The scenarios of ProcedureKit's `NegatedConditionTests`, `SilentConditionTests` (with its
/// `IgnoredCondition` ones) and the compound conditions of its `ConditionTests`, in the package's
/// terms: a failed condition fails the operation without cancelling it; a silent one cancels it.
@Suite("Composed conditions")
struct ConditionCompositionTests {
    static let holds = OperationCondition("holds") { _ in true }
    static let fails = OperationCondition("fails") { _ in false }

    /// Runs a `ProbeResultOperation<any Error>` guarded by `conditions` and tells what happened.
    private func run(_ conditions: OperationCondition...) async -> (
        ProbeResultOperation<any Error>, Result<Int, any Error>?
    ) {
        let operation = ProbeResultOperation<any Error>(.inMain(.success(7)))
        for condition in conditions { operation.bridge.addCondition(condition) }
        let outcome = await OperationQueue().runForOutcome(operation)
        return (operation, outcome)
    }

    // MARK: - negated

    @Test("negated: a condition that holds makes it fail, as a failure (not a cancellation), named 'not (…)'")
    func negatedHoldingFails() async throws {
        let (operation, outcome) = await run(.negated(Self.holds))
        let failure = try #require(outcome?.failureValue as? ConditionFailedError)
        #expect(failure.condition == "not (holds)")
        #expect(failure.reason == "'holds' holds")
        #expect(operation.bridge.conditionFailure?.condition == "not (holds)")
        #expect(operation.mainCalls.value == 0 && !operation.isCancelled)
        #expect(operation.bridge.silencedConditionFailure == nil)
    }

    @Test("negated: a failing condition — loud, silent, or throwing — makes it hold")
    func negatedFailingHolds() async throws {
        for inner in [
            Self.fails, .silent(Self.fails),
            OperationCondition("throws") { (_: Operation) throws(PlainError) in throw .boom(1) },
        ] {
            let (operation, outcome) = await run(.negated(inner))
            #expect(try outcome?.get() == 7)
            #expect(operation.mainCalls.value == 1)
        }
        let (_, twice) = await run(.negated(.negated(Self.holds)))
        #expect(try twice?.get() == 7)
    }

    @Test("negated with a Failure adopting ConditionFailureRepresentable: the typed failure names the negation")
    func negatedTyped() async throws {
        let operation = ProbeResultOperation<GuardedError>(.inMain(.success(1)))
        operation.bridge.addCondition(.negated(Self.holds))
        await #expect {
            try await OperationQueue().runForOutcomeValue(operation)
        } throws: { error in
            guard case .failed(.condition(let failure)) = error as? OperationFailure<GuardedError> else { return false }
            return failure.condition == "not (holds)"
        }
    }

    // MARK: - silent

    @Test(
        "silent: a failing condition cancels the operation instead of failing it; each Failure answers a cancellation",
        arguments: FailureKind.allCases)
    func silentFailureCancels(kind: FailureKind) async throws {
        switch kind {
        case .cancellationError:
            try await checkSilentSkip(ProbeResultOperation<CancellationError>(.inMain(.success(1))), kind)
        case .anyError: try await checkSilentSkip(ProbeResultOperation<any Error>(.inMain(.success(1))), kind)
        case .representable:
            try await checkSilentSkip(ProbeResultOperation<RepresentableError>(.inMain(.success(1))), kind)
        case .plain: try await checkSilentSkip(ProbeResultOperation<PlainError>(.inMain(.success(1))), kind)
        }
    }

    private func checkSilentSkip<Failure: Error>(_ operation: ProbeResultOperation<Failure>, _ kind: FailureKind)
        async throws
    {
        operation.name = "sync"
        operation.bridge.addCondition(.silent(OperationCondition("sync enabled") { _ in false }))
        let outcome = await OperationQueue().runForOutcome(operation)
        #expect(Outcome(outcome) == kind.cancellationOutcome)
        // The outcome is answered once decided (the cancellation); the queue finishes the
        // operation a moment later (CI25 read `isFinished` before).
        try? await operation.bridge.waitForCompletion()
        #expect(operation.isCancelled && operation.isFinished)
        #expect(operation.mainCalls.value == 0)
        #expect(operation.bridge.conditionFailure == nil)
        let silenced = try #require(operation.bridge.silencedConditionFailure)
        #expect(silenced.condition == "sync enabled" && silenced.operationName == "sync")
        // Every await answers exactly as for an operation cancelled by hand (the differential
        // twin): never `.conditionFailed`.
        let twin = ProbeResultOperation<Failure>(.inMain(.success(1)))
        twin.cancel()
        let twinOutcome = await OperationQueue().runForOutcome(twin)
        #expect(Outcome(outcome) == Outcome(twinOutcome))
        let (skipped, cancelled) = (await outcomeValueError(of: operation), await outcomeValueError(of: twin))
        #expect(skipped == cancelled && skipped != nil)
    }

    /// What `bridge.outcomeValue` throws, described.
    private func outcomeValueError<Failure: Error>(of operation: ProbeResultOperation<Failure>) async -> String? {
        do throws(OperationFailure<Failure>) {
            _ = try await operation.bridge.outcomeValue
            return nil
        } catch {
            switch error {
            case .failed(let failure): return "failed(\(Outcome.describe(failure)))"
            case .conditionFailed: return "conditionFailed"
            default: return "\(error)"
            }
        }
    }

    @Test(
        "silent: a plain AsyncOperation is cancelled; run-and-await returns once it has finished; its cancel() override is called"
    )
    func silentPlainOperation() async throws {
        let operation = ManualOperation()
        operation.bridge.addCondition(.silent(Self.fails))
        try await OperationQueue().runUntilFinished(operation)
        await operation.cancelRequested.wait()
        #expect(operation.isCancelled && operation.isFinished)
        #expect(operation.bridge.silencedConditionFailure?.condition == "fails")
    }

    @Test("silent: run throws the cancellation — CancellationError for any Error, Failure.cancellation for typed")
    func silentRunThrowsCancellation() async throws {
        let untyped = ProbeResultOperation<any Error>(.inMain(.success(1)))
        untyped.bridge.addCondition(.silent(Self.fails))
        await #expect(throws: CancellationError.self) { try await OperationQueue().run(untyped) }
        let typed = ProbeResultOperation<RepresentableError>(.inMain(.success(1)))
        typed.bridge.addCondition(.silent(Self.fails))
        await #expect(throws: RepresentableError.cancelled) { try await OperationQueue().run(typed) }
    }

    @Test("silent: a condition that holds lets the operation run; silent(silent(…)) changes nothing; the name")
    func silentHoldsAndNesting() async throws {
        let (ran, outcome) = await run(.silent(Self.holds))
        #expect(try outcome?.get() == 7 && ran.mainCalls.value == 1)
        let (nested, _) = await run(.silent(.silent(Self.fails)))
        #expect(nested.isCancelled && nested.bridge.silencedConditionFailure?.condition == "fails")
        #expect(OperationCondition.silent(Self.fails).name == "silent (fails)")
    }

    @Test("silent, then a condition that holds: the operation does not run (unlike ProcedureKit's IgnoredCondition)")
    func silentThenHolding() async throws {
        let later = CountedCondition("later", holds: true)
        let (operation, _) = await run(.silent(Self.fails), later.condition)
        #expect(operation.isCancelled && operation.mainCalls.value == 0)
        #expect(later.checks.value == 0)  // the check stopped at the silenced condition
    }

    @Test("A failing condition before a silent one fails the operation: the first that does not hold decides")
    func loudBeforeSilent() async throws {
        let (operation, outcome) = await run(Self.fails, .silent(Self.fails))
        #expect((outcome?.failureValue as? ConditionFailedError)?.condition == "fails")
        #expect(!operation.isCancelled && operation.bridge.silencedConditionFailure == nil)
    }

    @Test(
        "A silent skip propagates quietly: a dependent with noFailedDependencies(cancelledDependencies: .skip) is skipped too"
    )
    func silentChain() async throws {
        let queue = OperationQueue()
        let first = ProbeResultOperation<any Error>(.inMain(.success(1)))
        first.bridge.addCondition(.silent(Self.fails))
        let second = ProbeResultOperation<any Error>(.inMain(.success(2)))
        second.addDependency(first)
        second.bridge.addCondition(.noFailedDependencies(cancelledDependencies: .skip))
        queue.addOperation(first)
        let outcome = await queue.runForOutcome(second)
        #expect(outcome?.failureValue is CancellationError)
        #expect(second.isCancelled && second.mainCalls.value == 0)
        #expect(second.bridge.silencedConditionFailure?.reason?.contains("was cancelled") == true)
        #expect(first.bridge.silencedConditionFailure?.condition == "fails")
    }

    @Test("A cancellation before the silent condition fails stays the operation's own: no silencedConditionFailure")
    func cancelledWhileSilentConditionChecks() async throws {
        let entered = Gate()
        let answer = Gate()
        let operation = ProbeResultOperation<any Error>(.inMain(.success(1)))
        operation.bridge.addCondition(
            .silent(
                OperationCondition("slow") { _ in
                    entered.open()
                    await answer.wait()
                    return false
                }))
        let queue = OperationQueue()
        queue.addOperation(operation)
        await entered.wait()
        operation.cancel()
        try await operation.bridge.waitForCompletion()
        answer.open()
        #expect(operation.isCancelled && operation.mainCalls.value == 0)
        #expect(operation.bridge.silencedConditionFailure == nil)
    }

    @Test("A result given before the start wins over a silent condition: the operation finishes with it, not cancelled")
    func decidedBeforeSilentCondition() async throws {
        let entered = Gate()
        let answer = Gate()
        let operation = ProbeResultOperation<any Error>(.inMain(.success(1)))
        operation.bridge.addCondition(
            .silent(
                OperationCondition("slow") { _ in
                    entered.open()
                    await answer.wait()
                    return false
                }))
        let queue = OperationQueue()
        queue.addOperation(operation)
        await entered.wait()
        operation.finish(with: .success(42))
        answer.open()
        try await operation.bridge.waitForCompletion()
        #expect(!operation.isCancelled && operation.mainCalls.value == 0)
        #expect(try operation.result?.get() == 42)
        #expect(operation.bridge.silencedConditionFailure == nil)
    }

    // MARK: - all

    @Test("all: empty holds; members checked in order; the first that does not hold decides and stops the check")
    func allOfConditions() async throws {
        let (empty, emptyOutcome) = await run(.all([]))
        #expect(try emptyOutcome?.get() == 7 && empty.mainCalls.value == 1)

        let (_, both) = await run(.all([Self.holds, Self.holds]))
        #expect(try both?.get() == 7)

        let after = CountedCondition("after", holds: true)
        let (stopped, outcome) = await run(.all([Self.holds, Self.fails, after.condition]))
        let failure = try #require(outcome?.failureValue as? ConditionFailedError)
        #expect(failure.condition == "fails")  // the member's own failure, not the composition's
        #expect(after.checks.value == 0)
        #expect(stopped.mainCalls.value == 0 && !stopped.isCancelled)

        let (first, _) = await run(.all([Self.fails, Self.holds]))
        #expect(first.bridge.conditionFailure?.condition == "fails")
        #expect(OperationCondition.all([Self.holds, Self.fails]).name == "all of (holds, fails)")
    }

    @Test("all: a silenced member silences the whole; nested all of alls")
    func allSilencedAndNested() async throws {
        let (silenced, _) = await run(.all([.silent(Self.fails), Self.holds]))
        #expect(silenced.isCancelled && silenced.bridge.silencedConditionFailure?.condition == "fails")
        let (silencedFirst, _) = await run(.all([.silent(Self.fails), Self.fails]))
        #expect(silencedFirst.isCancelled && silencedFirst.bridge.conditionFailure == nil)
        let (nested, outcome) = await run(.all([.all([Self.holds, Self.holds]), .all([Self.holds])]))
        #expect(try outcome?.get() == 7 && nested.mainCalls.value == 1)
        let (nestedFailing, _) = await run(.all([.all([Self.fails, Self.fails]), .all([Self.fails])]))
        #expect(nestedFailing.bridge.conditionFailure?.condition == "fails")
    }

    @Test("all keeps a throwing member's error as the failure's underlyingError")
    func allKeepsUnderlyingError() async throws {
        enum SessionError: Error, Equatable { case expired }
        let throwing = OperationCondition("signed in") { (_: Operation) throws(SessionError) in throw .expired }
        let (operation, _) = await run(.all([Self.holds, throwing]))
        #expect(operation.bridge.conditionFailure?.underlyingError as? SessionError == .expired)
    }

    // MARK: - any

    @Test("any: the first member that holds decides; none holding fails with every member's reason")
    func anyOfConditions() async throws {
        let after = CountedCondition("after", holds: false)
        let (holds, outcome) = await run(.any([Self.fails, Self.holds, after.condition]))
        #expect(try outcome?.get() == 7 && holds.mainCalls.value == 1)
        #expect(after.checks.value == 0)

        let (_, single) = await run(.any([Self.holds]))
        #expect(try single?.get() == 7)

        let throwing = OperationCondition("signed in") { (_: Operation) throws(PlainError) in throw .boom(3) }
        let (failed, failedOutcome) = await run(.any([Self.fails, throwing]))
        let failure = try #require(failedOutcome?.failureValue as? ConditionFailedError)
        #expect(failure.condition == "any of (fails, signed in)")
        #expect(failure.reason == "none holds: 'fails'; 'signed in': boom(3)")
        #expect(failed.mainCalls.value == 0 && !failed.isCancelled)
    }

    @Test("any: empty fails with a reason; silenced only when every member was; nested")
    func anyEdges() async throws {
        let (empty, _) = await run(.any([]))
        #expect(empty.bridge.conditionFailure?.reason == "it has no conditions")
        #expect(!empty.isCancelled && empty.mainCalls.value == 0)

        let (silencedAndHolding, outcome) = await run(.any([.silent(Self.fails), Self.holds]))
        #expect(try outcome?.get() == 7 && silencedAndHolding.mainCalls.value == 1)

        let (silencedAndLoud, _) = await run(.any([.silent(Self.fails), Self.fails]))
        #expect(
            !silencedAndLoud.isCancelled
                && silencedAndLoud.bridge.conditionFailure?.condition.hasPrefix("any of") == true)

        let (allSilenced, _) = await run(.any([.silent(Self.fails), .silent(Self.fails)]))
        #expect(
            allSilenced.isCancelled
                && allSilenced.bridge.silencedConditionFailure?.condition.hasPrefix("any of") == true)

        let (nested, nestedOutcome) = await run(
            .any([.any([Self.fails, Self.fails]), .any([Self.fails, Self.holds])]))
        #expect(try nestedOutcome?.get() == 7 && nested.mainCalls.value == 1)
        let (nestedFailing, _) = await run(.any([.any([Self.fails]), .any([Self.fails])]))
        #expect(nestedFailing.bridge.conditionFailure != nil)
    }

    @Test("Compositions nest: any of (all of (…), not (…)), silent around a composition")
    func nestedCompositions() async throws {
        let onWiFi = Self.fails
        let charging = Self.holds
        let userAskedNow = Self.holds
        let (operation, outcome) = await run(.any([.all([onWiFi, charging]), .negated(.negated(userAskedNow))]))
        #expect(try outcome?.get() == 7 && operation.mainCalls.value == 1)
        let (silenced, _) = await run(.silent(.all([Self.holds, .negated(Self.holds)])))
        #expect(silenced.isCancelled && silenced.bridge.silencedConditionFailure?.condition == "not (holds)")
    }

    @Test("Compositions work on a classic AsyncOperation subclass, a TaskOperation and a chained step")
    func compositionsOnEveryKind() async throws {
        let queue = OperationQueue()
        let classic = ProbeOperation()
        classic.bridge.addCondition(.all([Self.holds, .negated(Self.fails)]))
        try await queue.runUntilFinished(classic)
        #expect(classic.mainCalls.value == 1)

        let task = TaskOperation { () async throws(RepresentableError) -> Int in 5 }
        task.bridge.addCondition(.silent(.any([Self.fails])))
        await #expect(throws: RepresentableError.cancelled) { try await queue.run(task) }
        #expect(task.bridge.silencedConditionFailure != nil)

        let upstream = ProbeResultOperation<any Error>(.inMain(.success(1)))
        let step = upstream.bridge.then { (value: Int) async throws(any Error) -> Int in value + 1 }
        step.bridge.addCondition(.negated(Self.fails))
        queue.addOperation(upstream)
        #expect(try await queue.run(step) == 2)
    }

    #if EXIT_TESTS
        @Test("Misuse traps with a message: a key composed, a composed condition added after the start")
        func compositionMisuse() async {
            await #expect(processExitsWith: .failure) {
                _ = OperationCondition.negated(.mutuallyExclusive("network"))
            }
            await #expect(processExitsWith: .failure) {
                _ = OperationCondition.all([OperationCondition("holds") { _ in true }, .mutuallyExclusive("network")])
            }
            await #expect(processExitsWith: .failure) {
                _ = OperationCondition.mutuallyExclusive("network").producingDependency { _ in nil }
            }
            await #expect(processExitsWith: .failure) {
                let operation = ProbeOperation(.byTest)
                operation.start()
                operation.bridge.addCondition(.silent(.negated(OperationCondition("holds") { _ in true })))
            }
            await #expect(processExitsWith: .failure) {
                let operation = ProbeOperation()
                operation.bridge.addCondition(.any([OperationCondition("holds") { _ in true }]))
                operation.start()  // by hand, before its conditions were checked
            }
        }
    #endif
}
