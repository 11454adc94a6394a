import Foundation
import OperationBridge
import Testing

/// A condition is a guarantee: an operation whose condition fails never runs `main()`, whatever
/// its queue does meanwhile (issue 36, item 1).
///
/// Each round builds a fresh queue of random width and fills it with a guarded operation (it
/// finishes asynchronously, as the classic subclasses do) and other operations that keep the
/// queue rescanning its operations — each finish makes Linux's queue ask every waiting operation
/// `isReady` again — added before it, after it, or in one `addOperations` call. The guard is a
/// synchronous or `async` predicate that fails, passes or throws, or ``OperationCondition/noFailedDependencies``
/// after a dependency that fails or succeeds; the guarded operation's `Failure` is `any Error`,
/// an enum adopting ``ConditionFailureRepresentable``, or a classic enum that can say neither.
/// Several rounds run at once, so that the machine is loaded.
///
/// Checked every round: a failed condition never runs `main()`, always names the condition in
/// `conditionFailure`, never reads as a cancellation, and a result operation whose `Failure`
/// can say it stores it; a passing one runs `main()` exactly once. A round that never finishes —
/// a readiness change the queue lost — fails the suite's time limit.
///
/// Before the fix, `main()` ran past a failed condition in 0 to 6 of the ~5,700 failing rounds
/// of a run (five runs in six failed), and a passing round hung about once in 3 to 10 runs.
/// After: none in 30 runs (300,000 rounds), none hung.
///
/// 10,000 rounds by default; `OPERATIONBRIDGE_STRESS_SCALE` scales them (CI's ThreadSanitizer
/// run uses 0.2), `OPERATIONBRIDGE_STRESS_SEED` replays a run (the seed is printed).
@Suite(.timeLimit(Stress.timeLimit(minutes: 10)))
struct ConditionStressTests {
    @Test("A failed condition never runs main(), on busy queues of random width")
    func failedConditionNeverRuns() async throws {
        var generator = Stress.generator(for: "ConditionStressTests")
        let rounds = Stress.iterations(10_000)
        let plans = (0..<rounds).map { _ in RoundPlan.random(using: &generator) }
        let tally = Tally()
        await Stress.runInLanes(plans) { plan in await plan.run(into: tally) }
        let failing = plans.filter { !$0.guardPasses }.count
        print(
            "ConditionStressTests: \(rounds) rounds, \(failing) with a failing condition; "
                + "main() ran in \(tally.ranDespiteFailure.value) of them; \(tally.violations.all.count) violations")
        #expect(tally.violations.all.isEmpty, "\(tally.violations.all.prefix(5))")
        #expect(failing > 0 && failing < rounds)
    }

    /// What went wrong, over all rounds.
    final class Tally: Sendable {
        let violations = Recorder<String>()
        let ranDespiteFailure = Counter()
    }

    enum Guard: CaseIterable {
        case syncFalse, asyncFalse, syncTrue, asyncTrue, throwing
        case noFailedDependenciesAfterFailure, noFailedDependenciesAfterSuccess
    }

    enum FailureKind: CaseIterable {
        case anyError, representable, plain
    }

    enum Arrival: CaseIterable {
        /// The guarded operation first, then the others, one `addOperation` each.
        case guardedFirst
        /// The others first.
        case guardedLast
        /// All in one `addOperations` call.
        case together
    }

    struct RoundPlan: Sendable {
        let guardKind: Guard
        let failure: FailureKind
        let arrival: Arrival
        /// `nil`: Foundation's default width.
        let width: Int?
        /// How many other operations; each finishes at once (`BlockOperation`) or asynchronously.
        let others: [Bool]

        static func random(using generator: inout SeededGenerator) -> RoundPlan {
            RoundPlan(
                guardKind: Guard.allCases.randomElement(using: &generator)!,
                failure: FailureKind.allCases.randomElement(using: &generator)!,
                arrival: Arrival.allCases.randomElement(using: &generator)!,
                width: Bool.random(using: &generator) ? nil : Int.random(in: 1...4, using: &generator),
                others: (0..<Int.random(in: 0...10, using: &generator)).map { _ in Bool.random(using: &generator) })
        }

        var guardPasses: Bool {
            switch guardKind {
            case .syncTrue, .asyncTrue, .noFailedDependenciesAfterSuccess: true
            case .syncFalse, .asyncFalse, .throwing, .noFailedDependenciesAfterFailure: false
            }
        }

        func run(into tally: Tally) async {
            switch failure {
            case .anyError: await run(AsyncFinishingProbe<any Error>(), into: tally)
            case .representable: await run(AsyncFinishingProbe<GuardedError>(), into: tally)
            case .plain: await run(AsyncFinishingProbe<PlainError>(), into: tally)
            }
        }

        private func run<Failure: Error>(_ guarded: AsyncFinishingProbe<Failure>, into tally: Tally) async {
            let queue = OperationQueue()
            if let width { queue.maxConcurrentOperationCount = width }
            var operations: [Operation] = []
            switch guardKind {
            case .syncFalse:
                guarded.bridge.addCondition(OperationCondition("never") { _ in false })
            case .asyncFalse:
                guarded.bridge.addCondition(
                    OperationCondition("never, later") { _ in
                        await Task.yield()
                        return false
                    })
            case .syncTrue:
                guarded.bridge.addCondition(OperationCondition("always") { _ in true })
            case .asyncTrue:
                guarded.bridge.addCondition(
                    OperationCondition("always, later") { _ in
                        await Task.yield()
                        return true
                    })
            case .throwing:
                guarded.bridge.addCondition(
                    OperationCondition("throws") { (_: Operation) throws(StressConditionError) in
                        throw StressConditionError.refused
                    })
            case .noFailedDependenciesAfterFailure, .noFailedDependenciesAfterSuccess:
                let fails = guardKind == .noFailedDependenciesAfterFailure
                let dependency = AsyncFinishingProbe<PlainError>(fails ? .failure(.boom(1)) : .success(1))
                guarded.addDependency(dependency)
                guarded.bridge.addCondition(.noFailedDependencies)
                operations.append(dependency)
            }
            let others: [Operation] = self.others.map { finishesLater in
                finishesLater ? AsyncFinishingProbe<PlainError>() : BlockOperation {}
            }
            switch arrival {
            case .guardedFirst: operations += [guarded] + others
            case .guardedLast: operations += others + [guarded]
            case .together: operations += [guarded] + others
            }
            enqueue(operations, on: queue)
            try? await guarded.bridge.waitForCompletion()
            try? await queue.waitForAllOperations()
            check(guarded, into: tally)
        }

        /// Adds `operations` to `queue` as ``arrival`` says. Synchronous: `addOperations(_:waitUntilFinished:)`
        /// is unavailable from async code.
        private func enqueue(_ operations: [Operation], on queue: OperationQueue) {
            if arrival == .together {
                queue.addOperations(operations, waitUntilFinished: false)
            } else {
                for operation in operations { queue.addOperation(operation) }
            }
        }

        private func check<Failure: Error>(_ guarded: AsyncFinishingProbe<Failure>, into tally: Tally) {
            let mainCalls = guarded.mainCalls.value
            var problems: [String] = []
            if guardPasses {
                if mainCalls != 1 { problems.append("main() ran \(mainCalls) times") }
                if let failure = guarded.bridge.conditionFailure { problems.append("conditionFailure \(failure)") }
            } else {
                if mainCalls != 0 {
                    tally.ranDespiteFailure.increment()
                    problems.append("main() ran \(mainCalls) times")
                }
                if guarded.bridge.conditionFailure == nil { problems.append("no conditionFailure") }
                if guarded.isCancelled { problems.append("isCancelled") }
                if case .success? = guarded.result { problems.append("a success result") }
                if failure != .plain && guarded.result == nil { problems.append("no result") }
            }
            if !guarded.isFinished { problems.append("not finished") }
            if !problems.isEmpty {
                tally.violations.append("\(self): \(problems.joined(separator: ", "))")
            }
        }
    }
}

/// A result operation whose `main()` finishes it asynchronously, as classic subclasses do.
final class AsyncFinishingProbe<Failure: Error>: AsyncResultOperation<Int, Failure>, @unchecked Sendable {
    let mainCalls = Counter()
    private let outcomeToReport: Result<Int, Failure>

    init(_ result: Result<Int, Failure> = .success(1)) {
        outcomeToReport = result
        super.init()
    }

    override func main() {
        mainCalls.increment()
        DispatchQueue.global().async { [self] in
            if isCancelled { finish() } else { finish(with: outcomeToReport) }
        }
    }
}

/// The reason a throwing condition gives.
enum StressConditionError: Error {
    case refused
}
