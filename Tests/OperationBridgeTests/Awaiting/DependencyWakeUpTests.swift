import Foundation
import Testing

@testable import OperationBridge

/// Linux's queue loses the wake-up of an operation whose last dependency finishes on another
/// thread while `addOperation(_:)` adds it: the queue keeps the stale "not ready" it read, and
/// the operation waits for good in a queue with nothing else to do (Design.md, "Platform
/// facts"). Whatever the package adds to a queue still runs. The race is made certain: the
/// operation's readiness is read, then the dependency finishes, then the stale read is returned.
/// Linux only: Darwin's queue follows readiness by KVO.
@Suite(.timeLimit(Stress.timeLimit(minutes: 1)))
struct DependencyWakeUpTests {
    #if !canImport(Darwin)
        enum Entry: CaseIterable, Sendable {
            case run
            case pipeline
            case results
        }

        /// `descheduled`: the adding thread pauses 10 ms between its read and the dependency's
        /// finish, as a descheduled thread on a busy machine would — longer than the package's
        /// operations heal by themselves (CI once hung here in the results sequence's case). What
        /// the package adds runs however long the pause: it announces the readiness again once
        /// `addOperation(_:)` has returned. (A stand-in for the scheduler, not a timing window:
        /// without the pause the outcome is the same.)
        @Test(arguments: Entry.allCases, [false, true])
        func anOperationAddedWhileItsDependencyFinishesRuns(entry: Entry, descheduled: Bool) async throws {
            let dependency = BlockOperation {}
            let dependent = StaleReadinessOperation {
                // Inside `addOperation(_:)`, after the queue read "not ready": the dependency
                // finishes, and Foundation tells the dependent (not yet in its queue) at once.
                if descheduled { Thread.sleep(forTimeInterval: 0.01) }
                dependency.start()
            }
            dependent.addDependency(dependency)
            dependent.armed.set(true)
            let queue = OperationQueue()
            switch entry {
            case .run:
                #expect(await queue.run(dependent) == 7)
            case .pipeline:
                #expect(try await Pipeline([dependent], on: queue).value(of: dependent) == 7)
            case .results:
                let results = try queue.results(of: [dependent])
                #expect(await results.collect() == [.success(7)])
            }
        }

        /// The package's operations heal the lost wake-up themselves: added with your own
        /// `addOperation(_:)` while the dependency finishes, they still run. (Without the healing
        /// in `AsyncOperation.isReady`, the operation never runs: this test fails at its suite's
        /// time limit.)
        ///
        /// The healing covers a "ready" answer within two or three milliseconds of the stale
        /// "not ready" (Design.md, "Platform facts"), which the race here gives microseconds
        /// apart — unless the adding thread is descheduled in between, as CI72's plain run, all
        /// tests at once on two cores, once did: the operation then waited for good, as
        /// documented. So the test asserts the healing when the race took less than 2 ms
        /// (guaranteed inside the window), and otherwise records the documented gap as a known
        /// issue and cancels the operation, which then finishes.
        @Test func aPackageOperationYouAddWhileItsDependencyFinishesRuns() async throws {
            let dependency = BlockOperation {}
            let dependent = StaleReadinessOperation { dependency.start() }
            dependent.addDependency(dependency)
            dependent.armed.set(true)
            let queue = OperationQueue()
            queue.addOperation(dependent)
            #expect(dependent.firstArmedReadiness.current == false)  // the race did happen
            let span = try #require(dependent.trick.raceNanoseconds.current)
            if span < 2_000_000 {
                try await dependent.bridge.waitForCompletion()
                #expect(dependent.result == .success(7))
            } else {
                let pause = "the adding thread was descheduled for \(span / 1_000_000) ms in the race"
                withKnownIssue(Comment(rawValue: pause), isIntermittent: true) {
                    #expect(dependent.isFinished)
                }
                dependent.cancel()
                try await dependent.bridge.waitForCompletion()
            }
        }

        /// An operation that is not the package's, added by the package while its dependency
        /// finishes, runs too: the package announces its readiness again after adding it.
        @Test func anotherOperationThePackageAddsWhileItsDependencyFinishesRuns() async throws {
            let dependency = BlockOperation {}
            let ran = Guarded(false)
            let dependent = StaleReadinessBlockOperation { dependency.start() }
            dependent.addExecutionBlock { ran.set(true) }
            dependent.addDependency(dependency)
            dependent.armed.set(true)
            try await OperationQueue().runUntilFinished(dependent)
            #expect(dependent.firstArmedReadiness.current == false)
            #expect(ran.current)
        }

        /// Randomized races: a dependency finishing on another thread while the dependent — the
        /// package's operation, added with a plain `addOperation(_:)` — is being added, in either
        /// order. Every dependent runs. A liveness check of those interleavings, not the test of
        /// the healing: the stale store needs the finish to land within a few instructions of
        /// `addOperation(_:)`, and even with the finishing thread spinning instead of sleeping
        /// this loop passes with the healing switched off (measured); the two tests above make the
        /// race certain and fail without it. Stops at the first dependent that does not run, or
        /// when the suite's time limit cancels it. (`OPERATIONBRIDGE_STRESS_SCALE` scales the
        /// count.)
        @Test func dependentsAddedWhileTheirDependenciesFinishAllRun() async throws {
            let queue = OperationQueue()
            var generator = Stress.generator(for: "dependentsAddedWhileTheirDependenciesFinishAllRun")
            for _ in 0..<Stress.iterations(1_000) {
                try Task.checkCancellation()
                let dependency = BlockOperation {}
                let dependent = TaskOperation { () async -> Int in 1 }
                dependent.addDependency(dependency)
                let go = Guarded(false)
                let finisher = Thread {
                    while !go.current {}
                    dependency.start()
                }
                finisher.start()
                if Bool.random(using: &generator) {
                    go.set(true)
                    queue.addOperation(dependent)
                } else {
                    queue.addOperation(dependent)
                    go.set(true)
                }
                let value = await dependent.bridge.value
                try #require(value == 1)
            }
        }

        /// Why the scheduler may add a step without announcing its readiness again: a step whose
        /// dependencies are all the package's operations in the same graph is added only after
        /// their finish observers ran, which is after Foundation counted them finished — so the
        /// first time its queue asks, the step is already ready, and no stale "not ready" can be
        /// cached (`OperationQueue.enqueue(_:settledDependencies:)`). A chain step and the leaves
        /// of a fan-out, launched together. The exception: the queue thread that started the
        /// dependency found it finished right after its `start()` returned and counts it itself,
        /// while the observers run — the dependency then knows that another thread read its
        /// `isFinished` meanwhile, and the scheduler announces the steps instead
        /// (`FinishCountedElsewhereTests`). Rare: not once in 48,000 steps of a chain.
        @Test(arguments: [1, 8])
        func aStepAddedAfterItsPackageDependenciesFinishIsReadyWhenItsQueueFirstAsks(dependents: Int) async throws {
            let dependency = TaskOperation { () async -> Int in 1 }
            let steps = (0..<dependents).map { _ in
                let step = StaleReadinessOperation {}
                step.addDependency(dependency)
                step.armed.set(true)  // after `addDependency(_:)`, which asks too on Linux
                return step
            }
            try await Pipeline([dependency] + steps, on: OperationQueue()).waitForCompletion()
            for step in steps {
                #expect(step.firstArmedReadiness.current == true || dependency.wasFinishReadElsewhere)
                #expect(step.result == .success(7))
            }
        }
    #endif
}

/// Makes Linux's race certain: the first time an armed operation is asked `isReady`, it reads
/// Foundation's answer (kept in `firstArmedReadiness`), runs `meanwhile` (a dependency
/// finishing), then returns the answer it read — stale by then.
private final class StaleReadinessTrick: Sendable {
    let armed = Guarded(false)
    let firstArmedReadiness = Guarded<Bool?>(nil)
    /// From just before the armed query read its answer to the end of `meanwhile`: an upper
    /// bound of the time between the stale "not ready" and the "ready" the dependency's finish
    /// gave (uptime nanoseconds, the clock of `AsyncOperation.isReady`'s healing).
    let raceNanoseconds = Guarded<UInt64?>(nil)
    private let meanwhile: @Sendable () -> Void

    init(meanwhile: @escaping @Sendable () -> Void) {
        self.meanwhile = meanwhile
    }

    /// The answer to give, `ready` being what Foundation answered just now, read from `since`
    /// (uptime nanoseconds) on.
    func answer(_ ready: Bool, since: UInt64) -> Bool {
        let firstArmedQuery = armed.withLock { armed in
            defer { armed = false }
            return armed
        }
        if firstArmedQuery {
            firstArmedReadiness.set(ready)
            meanwhile()
            raceNanoseconds.set(DispatchTime.now().uptimeNanoseconds - since)
        }
        return ready
    }
}

/// An operation that answers `isReady` through a `StaleReadinessTrick`.
private protocol StaleReadiness: AnyObject {
    var trick: StaleReadinessTrick { get }
}

extension StaleReadiness {
    var armed: Guarded<Bool> { trick.armed }
    var firstArmedReadiness: Guarded<Bool?> { trick.firstArmedReadiness }
}

/// Reports 7, with the stale first readiness of `StaleReadinessTrick`.
private final class StaleReadinessOperation: AsyncResultOperation<Int, Never>, StaleReadiness, @unchecked Sendable {
    // Safety: immutable, and the trick is thread-safe.
    let trick: StaleReadinessTrick

    init(meanwhile: @escaping @Sendable () -> Void) {
        trick = StaleReadinessTrick(meanwhile: meanwhile)
        super.init()
    }

    override var isReady: Bool {
        let since = DispatchTime.now().uptimeNanoseconds
        return trick.answer(super.isReady, since: since)
    }

    override func main() { finish(with: .success(7)) }
}

/// A `BlockOperation` — not the package's — with the stale first readiness of
/// `StaleReadinessTrick`.
private final class StaleReadinessBlockOperation: BlockOperation, StaleReadiness, @unchecked Sendable {
    // Safety: immutable, and the trick is thread-safe.
    let trick: StaleReadinessTrick

    init(meanwhile: @escaping @Sendable () -> Void) {
        trick = StaleReadinessTrick(meanwhile: meanwhile)
        super.init()
    }

    override var isReady: Bool {
        let since = DispatchTime.now().uptimeNanoseconds
        return trick.answer(super.isReady, since: since)
    }
}
