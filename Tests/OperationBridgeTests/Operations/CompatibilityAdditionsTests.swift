import Foundation
import OperationBridge
import Testing

/// `onResult`, overridable `finish(with:)`/`cancel(with:)` and `UpstreamFailedError.rootFailure`.
@Suite struct CompatibilityAdditionsTests {
    enum StepError: Error, UpstreamFailureRepresentable, CancellationRepresentable {
        case broken
        case cancelled
        case upstream(UpstreamFailedError)
        static var cancellation: StepError { .cancelled }
        static func upstreamFailed(_ error: UpstreamFailedError) -> StepError { .upstream(error) }
        var upstreamFailure: UpstreamFailedError? {
            if case .upstream(let error) = self { return error }
            return nil
        }
    }

    final class Failing: AsyncResultOperation<Int, StepError>, @unchecked Sendable {
        override func main() { finish(with: .failure(.broken)) }
    }

    /// A classic subclass overriding the now-open members.
    final class Overriding: AsyncResultOperation<Int, CancellationError>, @unchecked Sendable {
        let calls = Recorder<String>()
        override func main() { finish(with: .success(1)) }
        override func finish(with result: Result<Int, CancellationError>) {
            calls.append("finish(with:)")
            super.finish(with: result)
        }
        override func cancel(with error: CancellationError) {
            calls.append("cancel(with:)")
            super.cancel(with: error)
        }
    }

    @Test func onResultIsCalledOnceWithTheFirstResult() async throws {
        let operation = ControlledOperation<Int, CancellationError>(.success(5))
        let seen = Recorder<Int>()
        operation.onResult = { result in seen.append((try? result.get()) ?? -1) }
        operation.start()
        operation.finish(with: .success(6))  // ignored: the first result wins
        #expect(try await operation.bridge.value == 5)
        #expect(seen.all == [5])
    }

    @Test func onResultSeesTheCancellationFailure() {
        let operation = ControlledOperation<Int, CancellationError>(.success(5))
        let seen = Recorder<Bool>()
        operation.onResult = { result in
            if case .failure = result { seen.append(true) }
        }
        operation.cancel()
        operation.start()
        #expect(seen.all == [true])
        #expect(operation.isFinished)
    }

    @Test("Replacing onResult releases the old callback outside the operation's lock")
    func replacingOnResultReleasesTheOldCallbackOutsideTheLock() {
        // The operation's lock is not reentrant: a callback whose captured object cancels the
        // operation from its deinit would otherwise take it again (a trap).
        let operation = ControlledOperation<Int, CancellationError>(.success(5))
        let released = Trigger()
        do {
            let probe = ReleaseProbe(callingBack: { operation.cancel() }, then: released)
            operation.onResult = { _ in withExtendedLifetime(probe) {} }
        }
        operation.onResult = nil  // drops the last reference to the probe
        #expect(released.hasFired)
        #expect(operation.isCancelled)
    }

    @Test func overriddenFinishAndCancelAreCalled() async throws {
        let queue = OperationQueue()
        let finishing = Overriding()
        #expect(try await queue.run(finishing) == 1)
        #expect(finishing.calls.all == ["finish(with:)"])

        let cancelled = Overriding()
        cancelled.cancel(with: CancellationError())
        cancelled.start()
        #expect(cancelled.calls.all == ["cancel(with:)"])
        #expect(cancelled.isFinished)
    }

    @Test func rootFailureLooksThroughEveryStep() async throws {
        let queue = OperationQueue()
        let first = Failing()
        let second = first.bridge.then { (value: Int) async throws(StepError) -> Int in value + 1 }
        let third = second.bridge.then { (value: Int) async throws -> Int in value + 1 }
        let pipeline = try Pipeline([first, second, third], on: queue)
        let outcome = await pipeline.outcome(of: third)
        guard case .failure(let error as UpstreamFailedError)? = outcome else {
            Issue.record("expected an UpstreamFailedError, got \(String(describing: outcome))")
            return
        }
        let root = try #require(error.rootFailure as? StepError)
        guard case .broken = root else {
            Issue.record("expected the root failure .broken, got \(root)")
            return
        }
    }

    @Test func rootFailureIsNilForACancelledStart() {
        let error = UpstreamFailedError(upstreamType: "Upstream", reason: .cancelled)
        #expect(error.rootFailure == nil)
        let wrapped = UpstreamFailedError(upstreamType: "Outer", reason: .failed(error))
        #expect(wrapped.rootFailure == nil)
    }
}

/// Linux's Foundation keeps unretained pointers from a dependency to its dependents; a cancelled
/// package operation released before its dependency finishes must unlink itself.
@Suite struct DependencyUnlinkingTests {
    final class Quick: AsyncOperation, @unchecked Sendable {
        override func main() { finish() }
    }

    @Test func cancelledOperationsReleasedBeforeTheirDependencyDoNotCrashIt() async throws {
        let gate = Gate()
        let dependency = BlockOperation { gate.blockingWait() }
        let queue = OperationQueue()
        queue.addOperation(dependency)
        var released: [WeakBox<Quick>] = []
        for _ in 0..<200 {
            let operation = Quick()
            operation.addDependency(dependency)
            operation.cancel()
            operation.start()  // cancelled: finishes at once, without waiting for `dependency`
            #expect(operation.isFinished)
            released.append(WeakBox(operation))
        }
        #expect(released.allSatisfy { $0.object == nil })
        gate.open()  // `dependency` finishes after its dependents are gone
        try await dependency.bridge.waitForCompletion()
        try await queue.waitForAllOperations()
    }

    /// Records every call of the overridable dependency members.
    final class OverridingDependencies: AsyncOperation, @unchecked Sendable {
        let calls: Recorder<String>
        init(calls: Recorder<String>) {
            self.calls = calls
            super.init()
        }
        override var dependencies: [Operation] {
            calls.append("dependencies")
            return super.dependencies
        }
        override func removeDependency(_ operation: Operation) {
            calls.append("removeDependency")
            super.removeDependency(operation)
        }
        override func main() { finish() }
    }

    @Test("Unlinking on release calls Foundation's members, never a subclass's overrides")
    func unlinkingDoesNotCallOverrides() async throws {
        let gate = Gate()
        let dependency = BlockOperation { gate.blockingWait() }
        let queue = OperationQueue()
        queue.addOperation(dependency)
        let calls = Recorder<String>()
        var probe: WeakBox<OverridingDependencies>?
        do {
            let operation = OverridingDependencies(calls: calls)
            operation.addDependency(dependency)
            operation.cancel()
            operation.start()
            probe = WeakBox(operation)
        }
        #expect(probe?.object == nil)
        #expect(calls.all.isEmpty)
        gate.open()  // the released operation was unlinked: finishing `dependency` is safe
        try await queue.waitForAllOperations()
    }
}
