import Foundation
import Testing

@testable import OperationBridge

#if !canImport(Darwin)
    /// The Linux observer of operations that are not the package's (`FinishProbe`): the Foundation
    /// behaviour it stands on, exactly-once callbacks, and its lifetime — an operation refers to its
    /// dependents through unretained pointers, so a probe must stay alive while it is linked and be
    /// unlinked before it goes.
    @Suite(.timeLimit(Stress.timeLimit(minutes: 1)))
    struct FinishProbeTests {
        /// The thread a callback runs on, comparable across closures.
        private static func currentThread() -> UInt { UInt(pthread_self()) }

        @Test("Foundation asks a dependent that is in no queue isReady on the thread that finishes its dependency")
        func foundationAsksAnUnqueuedDependent() async {
            let dependency = BlockOperation {}
            let blockThread = LockedBox<UInt?>(nil)
            dependency.addExecutionBlock { blockThread.withLock { $0 = Self.currentThread() } }
            let asked = OneShotSignal()
            let dependent = ReadinessRecordingOperation { ready in
                if ready { asked.fire() }
            }
            dependent.addDependency(dependency)
            let askedBeforeFinish = dependent.answers.current
            let queue = OperationQueue()
            queue.maxConcurrentOperationCount = 1
            queue.addOperation(dependency)

            #expect(await asked.wait())
            #expect(askedBeforeFinish.allSatisfy { !$0.ready }, "not ready while the dependency runs")
            let readyAnswers = dependent.answers.current.filter(\.ready)
            #expect(readyAnswers.count == 1)
            #expect(readyAnswers.first?.thread == blockThread.current, "asked on the thread that ran the dependency")
            #expect(!dependent.isExecuting && !dependent.isFinished, "the dependent itself never runs")
            withExtendedLifetime((dependency, dependent)) {}
        }

        @Test("The callback runs once, on the thread that finishes the operation, and the probe is then released")
        func callbackRunsOnceOnTheFinishingThread() async {
            let operation = BlockOperation {}
            let blockThread = LockedBox<UInt?>(nil)
            operation.addExecutionBlock { blockThread.withLock { $0 = Self.currentThread() } }
            let calls = Recorder<UInt>()
            let called = OneShotSignal()
            var probe = FinishProbe.observe(operation) {
                calls.append(Self.currentThread())
                called.fire()
            }
            #expect(probe != nil)
            let released = WeakBox(probe!)
            probe = nil
            #expect(released.object != nil, "an armed probe keeps itself alive")
            OperationQueue().addOperation(operation)

            #expect(await called.wait())
            try? await operation.bridge.waitForCompletion()
            #expect(calls.all == [blockThread.current!])
            // The finishing thread lets go of the probe once it has asked every dependent.
            var spins = 0
            while released.object != nil && spins < 10_000 {
                await Task.yield()
                spins += 1
            }
            #expect(released.object == nil, "a probe that has called back is released")
        }

        @Test("An operation that has finished already: no probe, and the callback is never called")
        func finishedOperation() {
            let operation = BlockOperation {}
            operation.start()
            let calls = LockedBox(0)
            #expect(FinishProbe.observe(operation) { calls.withLock { $0 += 1 } } == nil)
            #expect(FinishObservation.observe(operation) { calls.withLock { $0 += 1 } } == nil)
            #expect(calls.current == 0)
        }

        @Test("A discarded probe is unlinked and released; the operation then finishes without calling it")
        func discardUnlinksAndReleases() async throws {
            let operation = BlockOperation {}
            let calls = LockedBox(0)
            var probe = FinishProbe.observe(operation) { calls.withLock { $0 += 1 } }
            let released = WeakBox(probe!)
            probe?.discard(observing: operation)
            probe = nil
            #expect(released.object == nil, "released once discarded")
            // Linked still, the freed probe would be followed here (a use-after-free).
            try await OperationQueue().runUntilFinished(operation)
            #expect(calls.current == 0)
        }

        @Test("Observing, finishing and discarding race: the callback runs at most once, never inside observe")
        func observeFinishDiscardRace() async {
            var random = Stress.generator(for: "FinishProbeTests.observeFinishDiscardRace")
            let rounds = Stress.iterations(2_000)
            let queue = OperationQueue()
            var violations: [String] = []
            for round in 0..<rounds {
                let operation = BlockOperation {}
                let discards = Bool.random(using: &random)
                let calls = LockedBox(0)
                let calledInsideObserve = LockedBox(false)
                let observerThread = LockedBox<UInt?>(nil)
                let called = OneShotSignal()
                let observed = LockedBox<Bool?>(nil)
                let done = DispatchGroup()
                done.enter()
                DispatchQueue.global().async {
                    observerThread.withLock { $0 = Self.currentThread() }
                    let probe = FinishProbe.observe(operation) {
                        calls.withLock { $0 += 1 }
                        // Inside `observe` only if the observing thread is still marked as observing.
                        if observerThread.current == Self.currentThread() { calledInsideObserve.withLock { $0 = true } }
                        called.fire()
                    }
                    observerThread.withLock { $0 = nil }
                    observed.withLock { $0 = probe != nil }
                    if discards { probe?.discard(observing: operation) }
                    done.leave()
                }
                queue.addOperation(operation)
                await resumeOrdered { continuation in
                    done.notify(queue: .global()) { continuation.resume() }
                }
                try? await operation.bridge.waitForCompletion()
                if observed.current == true && !discards { _ = await called.wait() }
                if calls.current > 1 { violations.append("round \(round): called \(calls.current) times") }
                if calledInsideObserve.current { violations.append("round \(round): called inside observe") }
                if observed.current == false && calls.current != 0 {
                    violations.append("round \(round): called although observe answered nil")
                }
            }
            #expect(violations.isEmpty, "\(violations.prefix(5))")
        }
    }

    /// An operation that is never queued and records each `isReady` answer with its thread.
    private final class ReadinessRecordingOperation: Operation, @unchecked Sendable {
        struct Answer: Sendable {
            let ready: Bool
            let thread: UInt
        }

        let answers = LockedBox<[Answer]>([])
        private let onAnswer: @Sendable (Bool) -> Void

        init(_ onAnswer: @escaping @Sendable (Bool) -> Void) {
            self.onAnswer = onAnswer
        }

        override var isReady: Bool {
            let ready = super.isReady
            answers.withLock {
                $0.append(Answer(ready: ready, thread: UInt(pthread_self())))
            }
            onAnswer(ready)
            return ready
        }
    }
#endif
