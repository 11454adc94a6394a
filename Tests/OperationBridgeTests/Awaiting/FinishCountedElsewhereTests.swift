import Foundation
import Testing

@testable import OperationBridge

#if !canImport(Darwin)
    /// Linux's queue counts a finished operation out of its dependents inside the operation's
    /// `isFinished` notifications — unless the queue thread that started it finds it finished
    /// first, right after its `start()` returned: that thread then counts it, and the
    /// notifications on the finishing thread return before it is done, so the package's finish
    /// observers can run before a dependent is counted ready (Design.md, "Platform facts"). The
    /// package notes that another thread read `isFinished` while the notifications were being
    /// sent, and its pipelines then announce the next step's readiness instead of taking its
    /// dependency as settled. The race is made certain: the operation is finished from a thread
    /// of its own, which is held inside its notifications (by the cancellation of the
    /// operation's running-time limit, on a clock of the test's) until the queue thread has
    /// counted the operation.
    @Suite(.timeLimit(Stress.timeLimit(minutes: 1)))
    struct FinishCountedElsewhereTests {
        /// How long a blocked thread waits for the step it needs, beyond the suite's time limit:
        /// the whole suite at once can keep a task from running for most of a minute, and only
        /// a regression that breaks the race's order waits longer (the time limit then fails the
        /// test, and the thread lets go afterwards).
        static var patience: DispatchTime { .now() + .seconds(300) }

        /// The thread a call runs on, comparable across closures.
        private static func currentThread() -> UInt { UInt(pthread_self()) }

        /// The thread the finish ran its observers on — the pipeline's scheduler among them,
        /// which added `next` there — asked `next` whether it is ready twice: inside
        /// `addOperation(_:)`, and once more after it, to announce its readiness if it is ready
        /// and not started (`OperationQueue.enqueue`). Taken as settled, the second question is
        /// left out, and a stale "not ready" stored by `addOperation(_:)` while the other thread
        /// counts `next` ready would strand it (a Linux lost wake-up). The queue thread that
        /// counts the finish is held until then, so the count cannot change meanwhile.
        @Test("A finish that the starting queue thread counts is not taken as settled, and the pipeline goes on")
        func aFinishCountedByTheStartingThread() async throws {
            let counted = DispatchSemaphore(value: 0)
            let countedOn = LockedBox<UInt?>(nil)
            let first = FinishedFromItsOwnThreadDuringStart(whileFinishing: { problems in
                if counted.wait(timeout: Self.patience) != .success {
                    problems.withLock { $0.append("the queue thread did not count the finish") }
                }
            })
            // A dependent in no queue: Foundation asks it `isReady` on the thread that counts the
            // operation out of its dependents, which waits there until `finish()` has returned.
            let witness = CountingWitness { ready in
                guard ready else { return }
                countedOn.withLock { $0 = Self.currentThread() }
                counted.signal()
                if first.finishReturned.wait(timeout: Self.patience) != .success {
                    first.problems.withLock { $0.append("finish() did not return") }
                }
            }
            let next = ReadinessAskedOperation()
            next.addDependency(first)
            witness.addDependency(first)

            let pipeline = try Pipeline([first, next], on: OperationQueue())
            #expect(await pipeline.value(of: next) == 7)
            #expect(await first.finishReturnedForTheTest.wait())
            let finishingThread = try #require(first.finishingThread.current)
            #expect(countedOn.current != nil)
            #expect(countedOn.current != finishingThread, "counted by the queue thread, not the finishing one")
            #expect(first.wasFinishReadElsewhere)
            #expect(next.askedOn.current.filter { $0 == finishingThread }.count == 2)
            #expect(first.problems.current.isEmpty)
            withExtendedLifetime(witness) {}
        }

        /// Counted inside the notifications, on the thread that then runs the observers: nobody
        /// else read `isFinished` meanwhile.
        @Test("A finish counted inside its own notifications is taken as settled")
        func aFinishCountedInsideItsNotifications() async throws {
            let first = FinishesInMain()
            let next = TaskOperation { 7 }
            next.addDependency(first)
            let pipeline = try Pipeline([first, next], on: OperationQueue())
            #expect(await pipeline.value(of: next) == 7)
            #expect(!first.wasFinishReadElsewhere)
        }
    }

    /// An operation that `main()` finishes on a thread of its own, held inside the finish
    /// notifications — in the cancellation of the operation's running-time limit, which comes
    /// after `isFinished` has become `true` — while `main()` returns, so that the queue thread finds
    /// it finished before the notifications have told Foundation so.
    ///
    /// Safety: immutable but for `finishingThread` and `problems`, which are `LockedBox`es.
    private final class FinishedFromItsOwnThreadDuringStart: AsyncOperation, @unchecked Sendable {
        private let clock: CancellationHookClock
        private let inNotifications = DispatchSemaphore(value: 0)
        let finishingThread = LockedBox<UInt?>(nil)
        /// What went wrong on the operation's threads, for the test to report.
        let problems = LockedBox<[String]>([])

        /// `whileFinishing` runs on the finishing thread, inside the notifications, and appends
        /// what went wrong to the list it is given.
        init(whileFinishing: @escaping @Sendable (LockedBox<[String]>) -> Void) {
            let (inNotifications, problems) = (inNotifications, problems)
            clock = CancellationHookClock {
                inNotifications.signal()
                whileFinishing(problems)
            }
            super.init()
            bridge.limitRunningTime(to: .seconds(3600), clock: clock)
        }

        /// Signalled once `finish()` has returned on the finishing thread, for the queue thread.
        let finishReturned = DispatchSemaphore(value: 0)
        /// Fired once `finish()` has returned on the finishing thread, for the test: the
        /// pipeline's next step may finish before the observers that added it have returned.
        let finishReturnedForTheTest = Trigger()

        override func main() {
            // The limit's timer sleeps on the clock: finishing cancels it.
            if clock.sleeping.wait(timeout: FinishCountedElsewhereTests.patience) != .success {
                problems.withLock { $0.append("the time limit's timer never slept") }
            }
            let finisher = Thread { [self] in
                finishingThread.withLock { $0 = UInt(pthread_self()) }
                finish()
                finishReturned.signal()
                finishReturnedForTheTest.fire()
            }
            finisher.start()
            if inNotifications.wait(timeout: FinishCountedElsewhereTests.patience) != .success {
                problems.withLock { $0.append("the finish was not held inside its notifications") }
            }
            // Returning now: the queue thread finds the operation finished.
        }
    }

    /// An operation that finishes inside `main()`, on the queue thread.
    private final class FinishesInMain: AsyncOperation, @unchecked Sendable {
        override func main() { finish() }
    }

    /// Reports 7, and keeps the thread of each `isReady` question.
    private final class ReadinessAskedOperation: AsyncResultOperation<Int, Never>, @unchecked Sendable {
        // Safety: a `LockedBox`.
        let askedOn = LockedBox<[UInt]>([])

        override var isReady: Bool {
            askedOn.withLock { $0.append(UInt(pthread_self())) }
            return super.isReady
        }

        override func main() { finish(with: .success(7)) }
    }

    /// A plain operation that reports each readiness answer it gives.
    private final class CountingWitness: Operation, @unchecked Sendable {
        private let onAnswer: @Sendable (Bool) -> Void

        init(_ onAnswer: @escaping @Sendable (Bool) -> Void) {
            self.onAnswer = onAnswer
        }

        override var isReady: Bool {
            let ready = super.isReady
            onAnswer(ready)
            return ready
        }
    }

    /// A clock whose sleepers wait until their task is cancelled; the cancellation calls
    /// `onCancel` on the cancelling thread first.
    ///
    /// Safety: `state` is only touched while holding its lock; `onCancel` is immutable.
    private final class CancellationHookClock: Clock, @unchecked Sendable {
        typealias Instant = ContinuousClock.Instant
        typealias Duration = Swift.Duration

        /// Signalled when a sleeper has registered its cancellation handler.
        let sleeping = DispatchSemaphore(value: 0)
        private let onCancel: @Sendable () -> Void
        private let state = LockedBox<(cancelled: Bool, continuation: CheckedContinuation<Void, Never>?)>((false, nil))

        init(onCancel: @escaping @Sendable () -> Void) {
            self.onCancel = onCancel
        }

        var now: Instant { ContinuousClock.now }
        var minimumResolution: Duration { .zero }

        func sleep(until deadline: Instant, tolerance: Duration?) async throws {
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let cancelled = state.withLock { state -> Bool in
                        if !state.cancelled { state.continuation = continuation }
                        return state.cancelled
                    }
                    if cancelled { continuation.resume() }
                    sleeping.signal()
                }
            } onCancel: {
                onCancel()
                let continuation = state.withLock { state in
                    state.cancelled = true
                    return state.continuation.take()
                }
                continuation?.resume()
            }
            throw CancellationError()
        }
    }
#endif
