import Foundation
import OperationBridge
import Testing

/// A failure that can express a failed condition.
enum GuardedError: Error, ConditionFailureRepresentable {
    case own
    case condition(ConditionFailedError)
    static func conditionFailed(_ error: ConditionFailedError) -> GuardedError { .condition(error) }
}

/// A failure whose conversion of a failed condition waits at a gate the test opens, so that a
/// test can look at the operation between "the condition failed" and "the outcome is decided".
enum BlockingConditionError: Error, ConditionFailureRepresentable {
    case condition(ConditionFailedError)

    /// Opened when the conversion begins; the conversion returns once the second gate opens.
    static let hooks = LockedBox<(converting: Gate, release: Gate)?>(nil)

    var isCondition: Bool { true }

    static func conditionFailed(_ error: ConditionFailedError) -> BlockingConditionError {
        if let (converting, release) = hooks.current {
            converting.open()
            // Blocks the check's task (a thread of the cooperative pool) until the test opens
            // the gate; the test itself never waits for that task meanwhile.
            release.blockingWait()
        }
        return .condition(error)
    }
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

    @Test("A Failure that cannot say it: not cancelled, no result, the reason in conditionFailure and the wrapper")
    func failedConditionInexpressible() async throws {
        let operation = ProbeResultOperation<PlainError>(.inMain(.success(1)))
        operation.bridge.addCondition(OperationCondition("never") { _ in false })
        let plain = ProbeOperation()
        plain.bridge.addCondition(OperationCondition("never") { _ in false })
        let queue = OperationQueue()
        #expect(await queue.runForOutcome(operation) == nil)
        try await queue.runUntilFinished(plain)
        #expect(!operation.isCancelled && !plain.isCancelled)
        #expect(operation.result == nil)
        #expect(operation.bridge.conditionFailure?.condition == "never")
        #expect(plain.bridge.conditionFailure?.condition == "never")
        #expect(operation.mainCalls.value == 0 && plain.mainCalls.value == 0)
        await #expect {
            try await operation.bridge.outcomeValue
        } throws: { error in
            guard case .conditionFailed(let failure) = error as? OperationFailure<PlainError> else { return false }
            return failure.condition == "never"
        }
    }

    @Test("run-and-await a classic Failure whose condition fails: .conditionFailed, not .cancelled")
    func runForOutcomeValueSaysConditionFailed() async throws {
        let operation = ProbeResultOperation<PlainError>(.inMain(.success(1)))
        operation.bridge.addCondition(OperationCondition("quota") { _ in false })
        await #expect {
            try await OperationQueue().runForOutcomeValue(operation)
        } throws: { error in
            guard case .conditionFailed(let failure) = error as? OperationFailure<PlainError> else { return false }
            return failure.condition == "quota"
        }
        #expect(!operation.isCancelled)
    }

    @Test("A Failure that can only say cancelled: the stand-in result, not cancelled; outcomeValue says the condition")
    func failedConditionCancellationOnly() async throws {
        let operation = ProbeResultOperation<RepresentableError>(.inMain(.success(1)))
        operation.bridge.addCondition(OperationCondition("never") { _ in false })
        let queue = OperationQueue()
        let outcome = await queue.runForOutcome(operation)
        #expect(outcome?.failureValue == .cancelled)  // the stand-in: a finished result operation has a result
        #expect(!operation.isCancelled)
        #expect(operation.bridge.conditionFailure?.condition == "never")
        await #expect {
            try await operation.bridge.outcomeValue
        } throws: { error in
            guard case .conditionFailed = error as? OperationFailure<RepresentableError> else { return false }
            return true
        }
        // `value` throws `Failure`, which has nothing else to say: its cancellation value.
        await #expect(throws: RepresentableError.cancelled) { try await operation.bridge.value }
    }

    @Test("A throwing check fails its condition with the error, which reaches conditionFailure and the wrapper")
    func throwingCondition() async throws {
        enum SessionError: Error, Equatable { case expired }
        let typed = ProbeResultOperation<PlainError>(.inMain(.success(1)))
        typed.bridge.addCondition(
            OperationCondition("signed in") { (_: Operation) throws(SessionError) in throw .expired })
        let untyped = ProbeResultOperation<any Error>(.inMain(.success(1)))
        untyped.bridge.addCondition(
            OperationCondition("signed in") { _ in
                await Task.yield()
                throw SessionError.expired
            })
        let passes = ProbeResultOperation<any Error>(.inMain(.success(3)))
        passes.bridge.addCondition(OperationCondition("signed in") { _ in })
        let queue = OperationQueue()
        await #expect {
            try await queue.runForOutcomeValue(typed)
        } throws: { error in
            guard case .conditionFailed(let failure) = error as? OperationFailure<PlainError> else { return false }
            return failure.underlyingError as? SessionError == .expired && "\(failure)".contains("expired")
        }
        let failure = try #require(await queue.runForOutcome(untyped)?.failureValue as? ConditionFailedError)
        #expect(failure.underlyingError as? SessionError == .expired)
        #expect(untyped.bridge.conditionFailure?.underlyingError as? SessionError == .expired)
        #expect(!typed.isCancelled && !untyped.isCancelled)
        #expect(typed.mainCalls.value == 0 && untyped.mainCalls.value == 0)
        #expect(try await queue.run(passes) == 3)
    }

    @Test("A chained step after a step stopped by its condition reports the condition, not a cancellation")
    func chainedStepAfterConditionFailure() async throws {
        let guarded = ProbeResultOperation<RepresentableError>(.inMain(.success(1)))
        guarded.bridge.addCondition(OperationCondition("feature flag") { _ in false })
        let next = guarded.bridge.then { (value: Int) async throws(any Error) -> Int in value + 1 }
        let queue = OperationQueue()
        queue.addOperation(guarded)
        let outcome = await queue.runForOutcome(next)
        let upstream = try #require(next.bridge.upstreamFailure ?? outcome?.failureValue as? UpstreamFailedError)
        #expect((upstream.rootFailure as? ConditionFailedError)?.condition == "feature flag")
        #expect(!next.isCancelled && !guarded.isCancelled)
    }

    @Test("A results sequence stops at a failed condition with .conditionFailed")
    func resultsSequenceSaysConditionFailed() async throws {
        let guarded = ProbeResultOperation<PlainError>(.inMain(.success(1)))
        guarded.bridge.addCondition(OperationCondition("never") { _ in false })
        let other = ProbeResultOperation<PlainError>(.inMain(.success(2)))
        await #expect {
            try await OperationQueue().results(of: [guarded, other]).collectOutcomeValues()
        } throws: { error in
            guard case .conditionFailed = error as? OperationFailure<PlainError> else { return false }
            return true
        }
    }

    @Test("While a failed condition is being converted to Failure, the operation is not ready and does not run")
    func notReadyUntilTheOutcomeIsDecided() async throws {
        let converting = Gate()
        let release = Gate()
        BlockingConditionError.hooks.withLock { $0 = (converting, release) }
        defer { BlockingConditionError.hooks.withLock { $0 = nil } }
        let operation = ProbeResultOperation<BlockingConditionError>(.inMain(.success(1)))
        operation.bridge.addCondition(OperationCondition("never") { _ in false })
        // The conversion blocks a thread of the cooperative pool; the test looks at the operation
        // from a thread of its own meanwhile, so that it never needs the pool to let it go.
        let readyDuringConversion = LockedBox<Bool?>(nil)
        let looked = Gate()
        Thread.detachNewThread {
            converting.blockingWait()
            // The condition has failed and `Failure.conditionFailed(_:)` is running: the outcome is
            // not decided yet, so the operation must not look ready to its queue…
            readyDuringConversion.withLock { $0 = operation.isReady }
            // …nor be started when the queue looks again.
            operation.willChangeValue(forKey: "isReady")
            operation.didChangeValue(forKey: "isReady")
            release.open()
            looked.open()
        }
        let queue = OperationQueue()
        queue.addOperation(operation)
        await looked.wait()
        try await operation.bridge.waitForCompletion()
        #expect(readyDuringConversion.current == false)
        #expect(operation.mainCalls.value == 0)
        #expect(operation.result?.failureValue?.isCondition == true)
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
            // Started by hand while its failed condition is being turned into its result: the
            // gate has not passed, so the start traps rather than running `main()`.
            await #expect(processExitsWith: .failure) {
                let converting = Gate()
                BlockingConditionError.hooks.withLock { $0 = (converting, Gate()) }
                let operation = ProbeResultOperation<BlockingConditionError>(.inMain(.success(1)))
                operation.bridge.addCondition(OperationCondition("never") { _ in false })
                _ = operation.isReady  // begins the check, as a queue would
                await converting.wait()
                operation.start()
            }
        }
    #endif
}
