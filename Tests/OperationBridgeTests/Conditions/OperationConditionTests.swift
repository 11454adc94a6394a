import Foundation
import OperationBridge
import Testing

/// A failure that can express a failed condition.
enum GuardedError: Error, ConditionFailureRepresentable {
    case own
    case condition(ConditionFailedError)
    static func conditionFailed(_ error: ConditionFailedError) -> GuardedError { .condition(error) }
}

@Suite("Operation conditions")
struct OperationConditionTests {
    @Test("A failed condition finishes the operation without running it; `any Error` stores the error")
    func failedConditionUntyped() async throws {
        let operation = ProbeResultOperation<any Error>(.inMain(.success(1)))
        operation.name = "upload"
        operation.bridge.addCondition(OperationCondition("signed in") { _ in false })
        let queue = OperationQueue()
        let outcome = await queue.runForOutcome(operation)
        let error = try #require(outcome?.failureValue as? ConditionFailedError)
        #expect(error.condition == "signed in")
        #expect(error.operationName == "upload")
        #expect("\(error)".contains("condition 'signed in' failed"))
        #expect(operation.mainCalls.value == 0)
        #expect(operation.bridge.conditionFailure?.condition == "signed in")
        #expect(!operation.isCancelled)
    }

    @Test("A Failure adopting ConditionFailureRepresentable reports the failed condition in its type")
    func failedConditionTyped() async throws {
        let operation = ProbeResultOperation<GuardedError>(.inMain(.success(1)))
        operation.bridge.addCondition(OperationCondition("quota left") { _ in false })
        let queue = OperationQueue()
        await #expect {
            try await queue.runForOutcomeValue(operation)
        } throws: { error in
            guard case .failed(.condition(let failure)) = error as? OperationFailure<GuardedError> else { return false }
            return failure.condition == "quota left"
        }
        #expect(operation.mainCalls.value == 0)
    }

    @Test("A Failure that cannot say it: the operation ends cancelled, the reason in conditionFailure")
    func failedConditionInexpressible() async throws {
        let operation = ProbeResultOperation<PlainError>(.inMain(.success(1)))
        operation.bridge.addCondition(OperationCondition("never") { _ in false })
        let plain = ProbeOperation()
        plain.bridge.addCondition(OperationCondition("never") { _ in false })
        let queue = OperationQueue()
        #expect(await queue.runForOutcome(operation) == nil)
        try await queue.runUntilFinished(plain)
        #expect(operation.isCancelled && plain.isCancelled)
        #expect(operation.bridge.conditionFailure?.condition == "never")
        #expect(plain.bridge.conditionFailure?.condition == "never")
        #expect(operation.mainCalls.value == 0 && plain.mainCalls.value == 0)
    }

    @Test("A passing condition lets the operation run; conditions run after the dependencies have finished")
    func passingConditionAfterDependencies() async throws {
        let dependency = ProbeOperation(.byTest)
        let sawDependencyFinished = LockedBox<Bool?>(nil)
        let operation = ProbeResultOperation<Never>(.inMain(.success(5)))
        operation.addDependency(dependency)
        operation.bridge.addCondition(
            OperationCondition("after dependency") { _ in
                sawDependencyFinished.withLock { $0 = dependency.isFinished }
                return true
            })
        let queue = OperationQueue()
        queue.addOperation(dependency)
        queue.addOperation(operation)
        await dependency.started.wait()
        dependency.finish()
        #expect(await queue.run(operation) == 5)
        #expect(sawDependencyFinished.current == true)
    }

    @Test("An async condition holds no queue slot while it waits: a queue with one slot runs other work")
    func asyncConditionHoldsNoSlot() async throws {
        let entered = Gate()
        let answer = Gate()
        let operation = ProbeResultOperation<Never>(.inMain(.success(1)))
        operation.bridge.addCondition(
            OperationCondition("remote check") { _ in
                entered.open()
                await answer.wait()
                return true
            })
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        queue.addOperation(operation)
        await entered.wait()
        try await queue.runUntilFinished(BlockOperation {})
        #expect(operation.mainCalls.value == 0)
        answer.open()
        #expect(await queue.run(operation) == 1)
    }

    @Test("Cancelling while a condition is being checked cancels its task and finishes the operation")
    func cancelDuringCheck() async throws {
        let entered = Gate()
        let sawCancellation = LockedBox(false)
        let operation = ProbeResultOperation<CancellationError>(.inMain(.success(1)))
        operation.bridge.addCondition(
            OperationCondition("slow") { _ in
                entered.open()
                await withTaskCancellationHandler {
                    await Gate().wait()  // never opens by itself
                } onCancel: {
                    sawCancellation.withLock { $0 = true }
                }
                return true
            })
        let queue = OperationQueue()
        queue.addOperation(operation)
        await entered.wait()
        operation.cancel()
        try await operation.bridge.waitForCompletion()
        #expect(operation.isCancelled && operation.mainCalls.value == 0)
        #expect(sawCancellation.current)
    }

    @Test("noFailedDependencies: a failed dependency keeps the operation from running, a successful one does not")
    func noFailedDependencies() async throws {
        let queue = OperationQueue()
        let failing = ProbeResultOperation<PlainError>(.inMain(.failure(.boom(1))))
        failing.name = "fetch"
        let guarded = ProbeResultOperation<any Error>(.inMain(.success(1)))
        guarded.addDependency(failing)
        guarded.bridge.addCondition(.noFailedDependencies)
        queue.addOperation(failing)
        let outcome = await queue.runForOutcome(guarded)
        let error = try #require(outcome?.failureValue as? ConditionFailedError)
        #expect(error.condition == "no failed dependencies")
        #expect(error.reason?.contains("'fetch'") == true)
        #expect(guarded.mainCalls.value == 0)

        let succeeding = ProbeResultOperation<PlainError>(.inMain(.success(1)))
        let runs = ProbeResultOperation<any Error>(.inMain(.success(2)))
        runs.addDependency(succeeding)
        runs.bridge.addCondition(.noFailedDependencies)
        queue.addOperation(succeeding)
        #expect(try await queue.run(runs) == 2)
    }

    @Test("In a pipeline, a failed condition is a failure: the root cause dependents report names it")
    func pipelineSeesConditionFailure() async throws {
        let guarded = ProbeResultOperation<PlainError>(.inMain(.success(1)))
        guarded.bridge.addCondition(OperationCondition("feature flag") { _ in false })
        let dependent = ProbeResultOperation<any Error>(.inMain(.success(2)))
        dependent.addDependency(guarded)
        let pipeline = try Pipeline([guarded, dependent], on: OperationQueue())
        try await pipeline.waitForCompletion()
        let first = try #require(pipeline.firstFailure)
        #expect(first.index == 0)
        #expect((first.error as? ConditionFailedError)?.condition == "feature flag")
        #expect((dependent.bridge.upstreamFailure?.rootFailure as? ConditionFailedError)?.condition == "feature flag")
        #expect(dependent.mainCalls.value == 0)
    }

    @Test("Conditions are checked in order; the first failure stops the check")
    func checkedInOrder() async throws {
        let checked = Recorder<String>()
        let operation = ProbeOperation()
        for name in ["a", "b", "c"] {
            operation.bridge.addCondition(
                OperationCondition(name) { _ in
                    checked.append(name)
                    return name != "b"
                })
        }
        try await OperationQueue().runUntilFinished(operation)
        #expect(checked.all == ["a", "b"])
        #expect(operation.bridge.conditionFailure?.condition == "b")
    }

    #if EXIT_TESTS
        @Test(
            "Programmer errors trap with a message: a condition added after the start, a gated operation started by hand"
        )
        func programmerErrors() async {
            await #expect(processExitsWith: .failure) {
                let operation = ProbeOperation(.byTest)
                operation.start()
                operation.bridge.addCondition(.noFailedDependencies)
            }
            await #expect(processExitsWith: .failure) {
                let operation = ProbeOperation()
                operation.bridge.addCondition(.noFailedDependencies)
                operation.start()
            }
        }
    #endif
}
