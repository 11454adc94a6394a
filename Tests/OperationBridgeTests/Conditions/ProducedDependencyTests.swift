import Foundation
import OperationBridge
import Testing

/// The `produceDependency` scenarios of ProcedureKit's `ConditionTests`: an operation that must
/// run before a condition is checked (a login before "signed in").
@Suite("Conditions that produce a dependency")
struct ProducedDependencyTests {
    /// A session whose login operation signs it in, or fails.
    final class Session: Sendable {
        let signedIn = LockedBox(false)
        let logins = Counter()
        let loginQueues = Recorder<String?>()

        /// A login operation that signs the session in (or fails with `failure`) before it finishes.
        func login(failing failure: PlainError? = nil) -> HookedProbe<PlainError> {
            logins.increment()
            let operation = HookedProbe<PlainError>(failure.map { .failure($0) } ?? .success(1)) { [signedIn] in
                if failure == nil { signedIn.withLock { $0 = true } }
            }
            operation.name = "login"
            return operation
        }

        /// A login that records the queue it runs on.
        func recordingLogin() -> BlockOperation {
            logins.increment()
            return BlockOperation { [self] in
                loginQueues.append(OperationQueue.current?.name)
                signedIn.withLock { $0 = true }
            }
        }

        var isSignedIn: OperationCondition {
            OperationCondition("signed in") { [signedIn] _ in signedIn.current }
        }
    }

    @Test(
        "The produced operation runs after the operation's dependencies and before the check; dependencies stay direct")
    func runsBeforeTheCheck() async throws {
        let session = Session()
        let queue = OperationQueue()
        let dependency = ProbeOperation(.byTest)
        let loginSawDependencyFinished = LockedBox<Bool?>(nil)
        let upload = ProbeResultOperation<any Error>(.inMain(.success(3)))
        upload.addDependency(dependency)
        upload.bridge.addCondition(
            session.isSignedIn.producingDependency { _ in
                loginSawDependencyFinished.withLock { $0 = dependency.isFinished }
                return session.login()
            })
        queue.addOperation(dependency)
        queue.addOperation(upload)
        await dependency.started.wait()
        #expect(session.logins.value == 0)  // not before the operation's own dependencies
        dependency.finish()
        #expect(try await queue.run(upload) == 3)
        #expect(loginSawDependencyFinished.current == true)
        #expect(session.logins.value == 1)
        #expect(session.signedIn.current)
    }

    @Test("The produced operation is not one of the operation's dependencies (as ProcedureKit)")
    func notListedInDependencies() async throws {
        let session = Session()
        let direct = BlockOperation {}
        let listed = LockedBox<Int?>(nil)
        let upload = ProbeResultOperation<any Error>(.inMain(.success(3)))
        upload.addDependency(direct)
        upload.bridge.addCondition(
            session.isSignedIn.producingDependency { operation in
                defer { listed.withLock { $0 = operation.dependencies.count } }
                return session.login()
            })
        let queue = OperationQueue()
        queue.addOperation(direct)
        #expect(try await queue.run(upload) == 3)
        #expect(listed.current == 1)
    }

    @Test("Handed over by the package (run), the produced operation runs on the same queue — also with one slot")
    func sameQueueWhenKnown() async throws {
        let session = Session()
        let queue = OperationQueue()
        queue.name = "uploads"
        queue.maxConcurrentOperationCount = 1
        let upload = ProbeResultOperation<any Error>(.inMain(.success(3)))
        upload.bridge.addCondition(session.isSignedIn.producingDependency { _ in session.recordingLogin() })
        #expect(try await queue.run(upload) == 3)
        #expect(session.loginQueues.all == ["uploads"])
    }

    @Test("Added with Foundation's addOperation (queue unknown): the produced operation runs on the package's queue")
    func packageQueueOtherwise() async throws {
        let session = Session()
        let queue = OperationQueue()
        queue.name = "uploads"
        let upload = ProbeResultOperation<any Error>(.inMain(.success(3)))
        upload.bridge.addCondition(session.isSignedIn.producingDependency { _ in session.recordingLogin() })
        queue.addOperation(upload)
        try await upload.bridge.waitForCompletion()
        #expect(upload.mainCalls.value == 1)
        #expect(session.loginQueues.all == ["OperationBridge.unbounded"])
    }

    @Test("nil produces nothing: the condition is checked at once")
    func nilProducesNothing() async throws {
        let session = Session()
        session.signedIn.withLock { $0 = true }
        let upload = ProbeResultOperation<any Error>(.inMain(.success(3)))
        upload.bridge.addCondition(
            session.isSignedIn.producingDependency { _ in session.signedIn.current ? nil : session.login() })
        #expect(try await OperationQueue().run(upload) == 3)
        #expect(session.logins.value == 0)
    }

    @Test("A failed produced operation fails the condition without checking it; the error is its failure")
    func producedFails() async throws {
        let session = Session()
        let checks = Counter()
        let upload = ProbeResultOperation<any Error>(.inMain(.success(3)))
        upload.bridge.addCondition(
            OperationCondition("signed in") { _ in
                checks.increment()
                return true
            }
            .producingDependency { _ in session.login(failing: .boom(401)) })
        let outcome = await OperationQueue().runForOutcome(upload)
        let failure = try #require(outcome?.failureValue as? ConditionFailedError)
        #expect(failure.condition == "signed in")
        #expect(failure.underlyingError as? PlainError == .boom(401))
        #expect(failure.reason?.contains("HookedProbe<PlainError> 'login'") == true)
        #expect(checks.value == 0 && upload.mainCalls.value == 0 && !upload.isCancelled)
    }

    @Test("A produced operation cancelled by someone else fails the condition, saying it was cancelled")
    func producedCancelledElsewhere() async throws {
        let login = ManualOperation()
        let upload = ProbeResultOperation<GuardedError>(.inMain(.success(3)))
        upload.bridge.addCondition(OperationCondition("signed in") { _ in true }.producingDependency { _ in login })
        let queue = OperationQueue()
        queue.addOperation(upload)
        await login.started.wait()
        login.cancel()
        login.finish()
        await #expect {
            try await queue.runForOutcomeValue(upload)
        } throws: { error in
            guard case .failed(.condition(let failure)) = error as? OperationFailure<GuardedError> else { return false }
            return failure.reason?.contains("was cancelled") == true
        }
        #expect(!upload.isCancelled && upload.mainCalls.value == 0)
    }

    @Test("silent around a producing condition: a failed produced operation skips quietly")
    func silentProducedFailure() async throws {
        let session = Session()
        let upload = ProbeResultOperation<RepresentableError>(.inMain(.success(3)))
        upload.bridge.addCondition(
            .silent(session.isSignedIn.producingDependency { _ in session.login(failing: .boom(1)) }))
        await #expect(throws: RepresentableError.cancelled) { try await OperationQueue().run(upload) }
        #expect(upload.bridge.silencedConditionFailure?.underlyingError as? PlainError == .boom(1))
    }

    @Test(
        "Cancelled while the produced operation runs: it is cancelled too, and the operation finishes without waiting for it"
    )
    func cancelledWhileProducedRuns() async throws {
        let login = ManualOperation()
        let upload = ProbeResultOperation<any Error>(.inMain(.success(3)))
        upload.bridge.addCondition(OperationCondition("signed in") { _ in true }.producingDependency { _ in login })
        let queue = OperationQueue()
        queue.addOperation(upload)
        await login.started.wait()
        upload.cancel()
        await login.cancelRequested.wait()
        try await upload.bridge.waitForCompletion()
        #expect(upload.isCancelled && upload.mainCalls.value == 0)
        #expect(!login.isFinished)  // still running: the operation did not wait for it
        #expect(upload.bridge.conditionFailure == nil)
        login.finish()
        try await queue.waitForAllOperations()
    }

    @Test("Cancelled while the produced operation waits in its queue: it is cancelled and never runs")
    func cancelledWhileProducedPending() async throws {
        let blocker = ProbeOperation(.byTest)
        let login = ProbeOperation()
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let upload = ProbeResultOperation<any Error>(.inMain(.success(3)))
        let produced = Gate()
        upload.bridge.addCondition(
            OperationCondition("signed in") { _ in true }.producingDependency { _ in
                defer { produced.open() }
                return login
            })
        queue.addOperation(blocker)
        await blocker.started.wait()
        let outcome = Task { await queue.runForOutcome(upload) }
        await produced.wait()
        upload.cancel()
        #expect(await outcome.value?.failureValue is CancellationError)
        blocker.finish()
        try await queue.waitForAllOperations()
        #expect(login.isCancelled && login.mainCalls.value == 0)
    }

    @Test("Cancelled before its conditions are checked, or never queued: nothing is produced")
    func nothingProducedWithoutACheck() async throws {
        let session = Session()
        let cancelled = ProbeResultOperation<any Error>(.inMain(.success(3)))
        cancelled.bridge.addCondition(session.isSignedIn.producingDependency { _ in session.login() })
        cancelled.cancel()
        _ = await OperationQueue().runForOutcome(cancelled)
        do {
            let neverQueued = ProbeResultOperation<any Error>(.inMain(.success(3)))
            neverQueued.bridge.addCondition(session.isSignedIn.producingDependency { _ in session.login() })
        }
        #expect(session.logins.value == 0)
        #expect(cancelled.isCancelled && cancelled.mainCalls.value == 0)
    }

    @Test("One produced operation shared by several operations is added once and awaited by each")
    func sharedProducedOperation() async throws {
        let session = Session()
        let login = session.login()
        let calls = Counter()
        let condition = session.isSignedIn.producingDependency { _ in
            calls.increment()
            return login
        }
        let queue = OperationQueue()
        let uploads = (0..<3).map { _ in ProbeResultOperation<any Error>(.inMain(.success(1))) }
        for upload in uploads { upload.bridge.addCondition(condition) }
        let results = try await withThrowingTaskGroup(of: Int.self) { group in
            for upload in uploads { group.addTask { try await queue.run(upload) } }
            return try await group.reduce(0, +)
        }
        #expect(results == 3)
        #expect(calls.value == 3)  // once per operation
        #expect(login.mainCalls.value == 1)  // added and run once
    }

    @Test("A produced operation that would wait for the operation itself fails the condition instead of hanging")
    func cycle() async throws {
        let upload = ProbeResultOperation<any Error>(.inMain(.success(3)))
        upload.bridge.addCondition(
            OperationCondition("signed in") { _ in true }.producingDependency { operation in operation })
        let other = ProbeResultOperation<any Error>(.inMain(.success(3)))
        other.bridge.addCondition(
            OperationCondition("signed in") { _ in true }.producingDependency { operation in
                let waiting = BlockOperation {}
                waiting.addDependency(operation)
                return waiting
            })
        let queue = OperationQueue()
        for operation in [upload, other] {
            let failure = try #require(await queue.runForOutcome(operation)?.failureValue as? ConditionFailedError)
            #expect(failure.reason?.contains("would wait for the operation itself") == true)
        }
    }

    @Test(
        "In compositions the produced operation runs when its member's turn comes: not at all after an earlier failure")
    func inCompositions() async throws {
        let session = Session()
        let upload = ProbeResultOperation<any Error>(.inMain(.success(3)))
        upload.bridge.addCondition(
            .all([
                OperationCondition("online") { _ in false },
                session.isSignedIn.producingDependency { _ in session.login() },
            ]))
        _ = await OperationQueue().runForOutcome(upload)
        #expect(session.logins.value == 0)
        #expect(upload.bridge.conditionFailure?.condition == "online")

        let guest = ProbeResultOperation<any Error>(.inMain(.success(4)))
        guest.bridge.addCondition(.any([session.isSignedIn.producingDependency { _ in session.login() }]))
        #expect(try await OperationQueue().run(guest) == 4)
        #expect(session.logins.value == 1)
    }

    @Test("A classic AsyncOperation subclass and a typed Failure: the produced failure reaches the typed result")
    func classicAndTyped() async throws {
        let session = Session()
        let classic = ProbeOperation()
        classic.bridge.addCondition(session.isSignedIn.producingDependency { _ in session.login() })
        try await OperationQueue().runUntilFinished(classic)
        #expect(classic.mainCalls.value == 1)

        let typed = ProbeResultOperation<GuardedError>(.inMain(.success(1)))
        typed.bridge.addCondition(
            OperationCondition("signed in") { _ in true }.producingDependency { _ in session.login(failing: .boom(2)) })
        let outcome = await OperationQueue().runForOutcome(typed)
        guard case .condition(let failure)? = outcome?.failureValue else {
            Issue.record("expected a condition failure, got \(String(describing: outcome))")
            return
        }
        #expect(failure.underlyingError as? PlainError == .boom(2))
    }

    #if EXIT_TESTS
        @Test("Misuse: a producing condition added after the start traps, as any condition does")
        func addedAfterStart() async {
            await #expect(processExitsWith: .failure) {
                let operation = ProbeOperation(.byTest)
                operation.start()
                operation.bridge.addCondition(
                    OperationCondition("signed in") { _ in true }.producingDependency { _ in nil })
            }
        }
    #endif
}
