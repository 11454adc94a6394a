import Foundation
import OperationBridge
import Testing

/// The scenarios of ProcedureKit's `NoFailedDependenciesConditionTests`, with what a cancelled
/// dependency does chosen by ``OperationCondition/CancelledDependencies``.
@Suite("noFailedDependencies and cancelled dependencies")
struct NoFailedDependenciesTests {
    /// A finished dependency of each kind the scenarios need.
    enum Dependency: CaseIterable, Sendable {
        case succeeded, failed, cancelled, timedOut, stoppedByItsCondition, failedGroup, cancelledBlock
    }

    private func make(_ dependency: Dependency) throws -> Operation {
        switch dependency {
        case .succeeded:
            return ProbeResultOperation<PlainError>(.inMain(.success(1)))
        case .failed:
            return ProbeResultOperation<PlainError>(.inMain(.failure(.boom(1))))
        case .cancelled:
            let operation = ProbeResultOperation<PlainError>(.inMain(.success(1)))
            operation.cancel()
            return operation
        case .timedOut:
            // A running-time limit of zero times it out when it starts: cancelled, but a failure.
            let operation = ProbeResultOperation<RepresentableError>(.inMain(.success(1)))
            operation.bridge.limitRunningTime(to: .zero)
            return operation
        case .stoppedByItsCondition:
            let operation = ProbeResultOperation<PlainError>(.inMain(.success(1)))
            operation.bridge.addCondition(OperationCondition("never") { _ in false })
            return operation
        case .failedGroup:
            return try GroupOperation<Void, any Error>([ProbeResultOperation<PlainError>(.inMain(.failure(.boom(2))))])
        case .cancelledBlock:
            let operation = BlockOperation {}
            operation.cancel()
            return operation
        }
    }

    /// Runs an operation guarded by `condition` after `dependencies` have finished.
    private func run(
        after dependencies: [Dependency],
        _ condition: OperationCondition
    ) async throws -> ProbeResultOperation<any Error> {
        let queue = OperationQueue()
        let guarded = ProbeResultOperation<any Error>(.inMain(.success(9)))
        // Every dependency attached and the condition added before any dependency is queued: on
        // Linux a condition added while a dependency finishes can be passed over by the queue, and
        // the start traps (Misuse.md; CI22); and a condition checked before the last dependency
        // was attached does not see it (CI27).
        let made = try dependencies.map(make)
        for dependency in made { guarded.addDependency(dependency) }
        guarded.bridge.addCondition(condition)
        for dependency in made { queue.addOperation(dependency) }
        _ = await queue.runForOutcome(guarded)
        try await queue.waitForAllOperations()
        return guarded
    }

    @Test("No dependencies, or successful ones: the operation runs, whatever the policy")
    func succeeds() async throws {
        for policy in [OperationCondition.CancelledDependencies.fail, .skip, .ignore] {
            #expect(try await run(after: [], .noFailedDependencies(cancelledDependencies: policy)).mainCalls.value == 1)
            #expect(
                try await run(after: [.succeeded], .noFailedDependencies(cancelledDependencies: policy)).mainCalls.value
                    == 1)
        }
    }

    @Test("A cancelled dependency fails the default condition, and .fail: today's behaviour")
    func cancelledFailsByDefault() async throws {
        for condition in [OperationCondition.noFailedDependencies, .noFailedDependencies(cancelledDependencies: .fail)]
        {
            let guarded = try await run(after: [.succeeded, .cancelled], condition)
            #expect(guarded.mainCalls.value == 0 && !guarded.isCancelled)
            #expect(guarded.bridge.conditionFailure?.reason?.contains("failed: cancelled") == true)
        }
    }

    @Test("A cancelled dependency with .ignore: the operation runs; a cancelled BlockOperation too")
    func cancelledIgnored() async throws {
        let guarded = try await run(
            after: [.cancelled, .cancelledBlock, .succeeded], .noFailedDependencies(cancelledDependencies: .ignore))
        #expect(guarded.mainCalls.value == 1)
        #expect(try guarded.result?.get() == 9)
    }

    @Test(
        "A cancelled dependency with .skip: the operation is cancelled, not failed (ProcedureKit's ignoreCancellations)"
    )
    func cancelledSkips() async throws {
        let guarded = try await run(after: [.cancelled], .noFailedDependencies(cancelledDependencies: .skip))
        #expect(guarded.mainCalls.value == 0 && guarded.isCancelled)
        #expect(guarded.result?.failureValue is CancellationError)
        #expect(guarded.bridge.conditionFailure == nil)
        let silenced = try #require(guarded.bridge.silencedConditionFailure)
        #expect(silenced.condition == "no failed dependencies")
        #expect(silenced.reason?.contains("was cancelled") == true)
    }

    @Test(
        "A failed dependency fails the condition whatever the policy, also next to cancelled ones",
        arguments: [
            Dependency.failed, .timedOut, .stoppedByItsCondition, .failedGroup,
        ])
    func failuresAlwaysFail(failure: Dependency) async throws {
        for policy in [OperationCondition.CancelledDependencies.fail, .skip, .ignore] {
            let guarded = try await run(
                after: [.cancelled, failure, .succeeded], .noFailedDependencies(cancelledDependencies: policy))
            #expect(guarded.mainCalls.value == 0, "\(policy)")
            #expect(!guarded.isCancelled, "\(policy)")
            #expect(guarded.bridge.conditionFailure?.condition == "no failed dependencies", "\(policy)")
            #expect(guarded.bridge.conditionFailure?.reason?.contains("was cancelled") == false, "\(policy)")
        }
    }

    @Test("A typed Failure adopting ConditionFailureRepresentable, and a classic one: skipped reads as cancelled")
    func typedFailures() async throws {
        let queue = OperationQueue()
        let cancelled = BlockOperation {}
        cancelled.cancel()
        let typed = ProbeResultOperation<GuardedError>(.inMain(.success(1)))
        let classic = ProbeResultOperation<PlainError>(.inMain(.success(1)))
        for guarded in [typed, classic] as [AsyncOperation] {
            guarded.addDependency(cancelled)
            guarded.bridge.addCondition(.noFailedDependencies(cancelledDependencies: .skip))
        }
        queue.addOperation(cancelled)
        await #expect {
            try await queue.runForOutcomeValue(classic)
        } throws: { error in
            guard case .cancelled = error as? OperationFailure<PlainError> else { return false }
            return true
        }
        // GuardedError can say "a condition failed" but not "cancelled": no result, cancelled.
        #expect(await queue.runForOutcome(typed) == nil)
        #expect(typed.isCancelled && typed.bridge.silencedConditionFailure != nil)
    }
}
