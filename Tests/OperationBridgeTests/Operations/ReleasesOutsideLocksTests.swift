import Foundation
import OperationBridge
import Testing

/// What the package lets go of — a clock, an upstream operation, what a callback captured — may
/// be the last reference to an object of the user's, whose `deinit` may call back into the
/// package. The package's locks are not reentrant, so each of these is released after the lock
/// that guarded it: without that, each test here traps ("Recursive call to lock Mutex") or, for
/// an `NSLock`, deadlocks.
@Suite("Objects of the user's are released outside the package's locks")
struct ReleasesOutsideLocksTests {
    /// A clock that is a class and holds a probe: released with the clock. Tells time as
    /// `ContinuousClock` does; the tests never let a limit expire.
    final class ProbeHoldingClock: Clock, Sendable {
        let probe: ReleaseProbe
        private let base = ContinuousClock()

        init(_ probe: ReleaseProbe) { self.probe = probe }

        var now: ContinuousClock.Instant { base.now }
        var minimumResolution: Duration { base.minimumResolution }

        func sleep(until deadline: ContinuousClock.Instant, tolerance: Duration?) async throws {
            try await base.sleep(until: deadline, tolerance: tolerance)
        }
    }

    @Test("Replacing an operation's running-time limit releases the old clock after the lock")
    func replacingALimitReleasesTheOldClockAfterTheLock() {
        let operation = ControlledOperation<Int, CancellationError>(.success(5))
        let released = Trigger()
        do {
            // The callback takes the operation's lock.
            let clock = ProbeHoldingClock(ReleaseProbe(callingBack: { operation.cancel() }, then: released))
            operation.bridge.limitRunningTime(to: .seconds(3600), clock: clock)
        }
        #expect(!released.hasFired)  // the limit not yet armed holds the clock
        operation.bridge.limitRunningTime(to: .seconds(3600))  // replaces it: the last reference
        #expect(released.hasFired)
        #expect(operation.isCancelled)
    }

    @Test("A limit never armed is released after the lock when the operation finishes without running")
    func aLimitNeverArmedIsReleasedAfterTheLock() {
        let operation = ControlledOperation<Int, CancellationError>(.success(5))
        let released = Trigger()
        do {
            // The callback takes the operation's lock.
            let clock = ProbeHoldingClock(
                ReleaseProbe(callingBack: { _ = operation.bridge.isTimedOut }, then: released))
            operation.bridge.limitRunningTime(to: .seconds(3600), clock: clock)
        }
        operation.cancel()
        #expect(!released.hasFired)  // the limit not yet armed holds the clock until the finish
        operation.start()  // finishes without running: the limit is never armed
        #expect(released.hasFired)
        #expect(operation.isFinished)
    }

    @Test("Naming a new upstream releases the one it replaces after the lock")
    func replacingTheTypedUpstreamReleasesItAfterTheLock() {
        let step = TypedUpstreamPolicyTests.Doubling()
        let released = Trigger()
        do {
            // The callback takes the step's lock.
            let first = ManualResultOperation<Int, TransferError>(
                probe: ReleaseProbe(callingBack: { step.cancel() }, then: released))
            step.takeInput(from: first)
            step.removeDependency(first)  // now only the step's typed upstream holds it
        }
        #expect(!released.hasFired)
        let second = ControlledOperation<Int, CancellationError>(.success(21))
        step.takeInput(from: second)
        #expect(released.hasFired)
        #expect(step.isCancelled)
        #expect(step.dependencies == [second])
    }

    @Test(
        "Replacing a pipeline's pending running-time limit releases the old clock after the lock",
        .timeLimit(Stress.timeLimit(minutes: 1)))
    func replacingAPipelineLimitReleasesTheOldClockAfterTheLock() throws {
        let pipeline = try Pipeline([ControlledOperation<Int, CancellationError>(.success(1))], on: OperationQueue())
        let released = Trigger()
        do {
            // The callback takes the run's lock (an NSLock: a deadlock, not a trap).
            let clock = ProbeHoldingClock(ReleaseProbe(callingBack: { _ = pipeline.isTimedOut }, then: released))
            pipeline.limitRunningTime(to: .seconds(3600), clock: clock)
        }
        #expect(!released.hasFired)
        pipeline.limitRunningTime(to: .seconds(3600))
        #expect(released.hasFired)
        #expect(!pipeline.isTimedOut)
    }
}
