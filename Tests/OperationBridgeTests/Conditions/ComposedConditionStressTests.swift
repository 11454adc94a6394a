import Foundation
import OperationBridge
import Testing

/// Composed conditions and produced dependencies under races: a cancellation racing the verdict
/// (a failure deciding the outcome, a silent condition cancelling the operation) and a produced
/// operation racing the guarded operation's cancellation, on busy queues of random width.
///
/// Each round builds a random condition tree — leaves that hold or fail, synchronously or after
/// a suspension, under `negated`, `silent`, `all`, `any` and `producingDependency` (a produced
/// operation that succeeds or fails, finishing asynchronously) — attaches one or two of them to
/// an operation whose `Failure` is `any Error`, an enum adopting ``ConditionFailureRepresentable``
/// or a classic enum, and hands it to a queue (Foundation's `addOperation` or the package's
/// `runForOutcome`) among other operations. The operation is not cancelled, cancelled before it
/// is queued, cancelled from another thread while its conditions may be checked, or cancelled by
/// its own produced operation as that starts. The verdict the tree must reach is computed from
/// the tree itself.
///
/// Checked every round: the operation finishes and every awaiter is answered (a hang fails the
/// suite's time limit); `main()` runs at most once, only when the verdict is "holds", and only
/// after every produced operation has finished; without a cancellation the outcome is exactly the
/// verdict's (ran / failed with ``Bridge/conditionFailure`` and not cancelled / cancelled with
/// ``Bridge/silencedConditionFailure``); with one, the outcome is never both failed and cancelled,
/// a silenced failure always comes with `isCancelled`, a condition failure never does; every
/// produced operation finishes.
///
/// 4,000 rounds by default; `OPERATIONBRIDGE_STRESS_SCALE` scales them,
/// `OPERATIONBRIDGE_STRESS_SEED` replays a run (the seed is printed).
@Suite(.timeLimit(Stress.timeLimit(minutes: 10)))
struct ComposedConditionStressTests {
    @Test("Composed and producing conditions racing cancellation never run main() past a verdict, never hang")
    func composedConditionsUnderRaces() async throws {
        var generator = Stress.generator(for: "ComposedConditionStressTests")
        let rounds = Stress.iterations(4_000)
        let plans = (0..<rounds).map { _ in RoundPlan.random(using: &generator) }
        let tally = Tally()
        await Stress.runInLanes(plans) { plan in await plan.run(into: tally) }
        var verdicts: [String: Int] = [:]
        for plan in plans { verdicts["\(plan.verdict)", default: 0] += 1 }
        print(
            "ComposedConditionStressTests: \(rounds) rounds, verdicts \(verdicts.sorted { $0.key < $1.key }), "
                + "\(tally.producedRuns.value) produced operations ran; \(tally.violations.all.count) violations")
        #expect(tally.violations.all.isEmpty, "\(tally.violations.all.prefix(5))")
        #expect(verdicts.count == 3)
    }

    final class Tally: Sendable {
        let violations = Recorder<String>()
        let producedRuns = Counter()
    }

    enum Verdict: Hashable, CustomStringConvertible {
        case holds, fails, silenced
        var description: String {
            switch self {
            case .holds: "holds"
            case .fails: "fails"
            case .silenced: "silenced"
            }
        }
    }

    /// A condition tree.
    indirect enum Node: Sendable, CustomStringConvertible {
        case leaf(holds: Bool, suspends: Bool)
        case negated(Node)
        case silent(Node)
        case all([Node])
        case any([Node])
        case producing(Node, producedFails: Bool)

        static func random(depth: Int, using generator: inout SeededGenerator) -> Node {
            let pick = depth >= 3 ? 0 : Int.random(in: 0...5, using: &generator)
            switch pick {
            case 1: return .negated(random(depth: depth + 1, using: &generator))
            case 2: return .silent(random(depth: depth + 1, using: &generator))
            case 3, 4:
                let members = (0..<Int.random(in: 0...3, using: &generator)).map { _ in
                    random(depth: depth + 1, using: &generator)
                }
                return pick == 3 ? .all(members) : .any(members)
            case 5:
                return .producing(
                    random(depth: depth + 1, using: &generator),
                    producedFails: Int.random(in: 0..<4, using: &generator) == 0)
            default:
                return .leaf(holds: Bool.random(using: &generator), suspends: Bool.random(using: &generator))
            }
        }

        /// The verdict the package must reach, as documented.
        var verdict: Verdict {
            switch self {
            case .leaf(let holds, _): return holds ? .holds : .fails
            case .producing(let node, let producedFails): return producedFails ? .fails : node.verdict
            case .negated(let node): return node.verdict == .holds ? .fails : .holds
            case .silent(let node): return node.verdict == .holds ? .holds : .silenced
            case .all(let members): return members.lazy.map(\.verdict).first { $0 != .holds } ?? .holds
            case .any(let members):
                let verdicts = members.map(\.verdict)
                if verdicts.contains(.holds) { return .holds }
                if !verdicts.isEmpty && verdicts.allSatisfy({ $0 == .silenced }) { return .silenced }
                return .fails
            }
        }

        /// The condition, making produced operations into `produced`.
        func condition(
            producing produced: Recorder<HookedProbe<PlainError>>, onStart: @escaping @Sendable () -> Void, tally: Tally
        ) -> OperationCondition {
            switch self {
            case .leaf(let holds, let suspends):
                return OperationCondition(holds ? "yes" : "no") { _ in
                    if suspends { await Task.yield() }
                    return holds
                }
            case .negated(let node):
                return .negated(node.condition(producing: produced, onStart: onStart, tally: tally))
            case .silent(let node): return .silent(node.condition(producing: produced, onStart: onStart, tally: tally))
            case .all(let members):
                return .all(members.map { $0.condition(producing: produced, onStart: onStart, tally: tally) })
            case .any(let members):
                return .any(members.map { $0.condition(producing: produced, onStart: onStart, tally: tally) })
            case .producing(let node, let producedFails):
                return node.condition(producing: produced, onStart: onStart, tally: tally).producingDependency { _ in
                    let operation = HookedProbe<PlainError>(
                        producedFails ? .failure(.boom(1)) : .success(1), onMain: onStart)
                    produced.append(operation)
                    tally.producedRuns.increment()
                    return operation
                }
            }
        }

        var description: String {
            switch self {
            case .leaf(let holds, let suspends): (holds ? "T" : "F") + (suspends ? "~" : "")
            case .negated(let node): "!\(node)"
            case .silent(let node): "silent(\(node))"
            case .all(let members): "all(\(members.map(\.description).joined(separator: ",")))"
            case .any(let members): "any(\(members.map(\.description).joined(separator: ",")))"
            case .producing(let node, let fails): "produce\(fails ? "✗" : "✓")(\(node))"
            }
        }
    }

    enum Cancellation: CaseIterable, Sendable {
        case none, beforeQueueing, racing, whenProducedStarts
    }

    enum FailureKind: CaseIterable {
        case anyError, representable, plain
    }

    struct RoundPlan: Sendable, CustomStringConvertible {
        let trees: [Node]
        let failure: FailureKind
        let cancellation: Cancellation
        let packageAdmits: Bool
        let width: Int?
        let others: Int

        var verdict: Verdict { trees.lazy.map(\.verdict).first { $0 != .holds } ?? .holds }

        static func random(using generator: inout SeededGenerator) -> RoundPlan {
            RoundPlan(
                trees: (0..<Int.random(in: 1...2, using: &generator)).map { _ in
                    Node.random(depth: 0, using: &generator)
                },
                failure: FailureKind.allCases.randomElement(using: &generator)!,
                cancellation: Int.random(in: 0..<3, using: &generator) == 0
                    ? Cancellation.allCases.randomElement(using: &generator)! : .none,
                packageAdmits: Bool.random(using: &generator),
                width: Bool.random(using: &generator) ? nil : Int.random(in: 1...3, using: &generator),
                others: Int.random(in: 0...4, using: &generator))
        }

        var description: String {
            "\(trees) \(failure) cancel:\(cancellation) package:\(packageAdmits) width:\(width.map(String.init) ?? "-")"
        }

        func run(into tally: Tally) async {
            switch failure {
            case .anyError: await run((any Error).self, into: tally)
            case .representable: await run(GuardedError.self, into: tally)
            case .plain: await run(PlainError.self, into: tally)
            }
        }

        private func run<Failure: Error>(_: Failure.Type, into tally: Tally) async {
            let queue = OperationQueue()
            if let width { queue.maxConcurrentOperationCount = width }
            let produced = Recorder<HookedProbe<PlainError>>()
            let cancelled = LockedBox(false)
            let ranBeforeProducedFinished = LockedBox(false)
            let guarded = HookedProbe<Failure>(.success(1)) {
                if produced.all.contains(where: { !$0.isFinished }) { ranBeforeProducedFinished.withLock { $0 = true } }
            }
            let cancel: @Sendable () -> Void = { [weak guarded] in
                cancelled.withLock { $0 = true }
                guarded?.cancel()
            }
            // The produced operations cancel the guarded one as they start, when the plan says so.
            let onProducedStart: @Sendable () -> Void
            if cancellation == .whenProducedStarts { onProducedStart = cancel } else { onProducedStart = {} }
            for tree in trees {
                guarded.bridge.addCondition(tree.condition(producing: produced, onStart: onProducedStart, tally: tally))
            }
            if cancellation == .beforeQueueing { cancel() }
            let others: [Operation] = (0..<self.others).map { index in
                index.isMultiple(of: 2) ? BlockOperation {} : AsyncFinishingProbe<PlainError>()
            }
            for other in others { queue.addOperation(other) }
            if cancellation == .racing {
                DispatchQueue.global().async { cancel() }
            }
            let stage = LockedBox("queueing")
            // A hang names its round: when the suite's time limit cancels the test, the round
            // still waiting says where it stands (no timer of its own).
            await withTaskCancellationHandler {
                if packageAdmits {
                    stage.withLock { $0 = "runForOutcome" }
                    _ = await queue.runForOutcome(guarded)
                } else {
                    queue.addOperation(guarded)
                }
                stage.withLock { $0 = "waiting for the guarded operation" }
                try? await guarded.bridge.waitForCompletion()
                stage.withLock { $0 = "waiting for the produced operations" }
                for operation in produced.all { try? await operation.bridge.waitForCompletion() }
                stage.withLock { $0 = "waiting for the queue" }
                try? await queue.waitForAllOperations()
            } onCancel: { [self] in
                let report =
                    "HUNG at \(stage.current): \(self) cancelled:\(cancelled.current) guarded "
                    + "\(guarded.lifecycleSnapshot) ready:\(guarded.isReady) \(guarded.bridge.pendingDiagnostics); produced "
                    + produced.all.map { "\($0.lifecycleSnapshot) \($0.bridge.pendingDiagnostics)" }.joined(
                        separator: " | ")
                FileHandle.standardError.write(Data((report + "\n").utf8))
                tally.violations.append(report)
            }
            check(guarded, cancelled: cancelled.current, ranEarly: ranBeforeProducedFinished.current, into: tally)
        }

        private func check<Failure: Error>(
            _ guarded: HookedProbe<Failure>, cancelled: Bool, ranEarly: Bool, into tally: Tally
        ) {
            var problems: [String] = []
            let mainCalls = guarded.mainCalls.value
            let failure = guarded.bridge.conditionFailure
            let silenced = guarded.bridge.silencedConditionFailure
            if !guarded.isFinished { problems.append("not finished") }
            if mainCalls > 1 || (mainCalls == 1 && verdict != .holds) {
                problems.append("main() ran \(mainCalls) times")
            }
            if ranEarly { problems.append("main() ran before a produced operation finished") }
            if failure != nil && guarded.isCancelled { problems.append("failed and cancelled") }
            if silenced != nil && !guarded.isCancelled { problems.append("silenced but not cancelled") }
            if failure != nil && silenced != nil { problems.append("failed and silenced") }
            if failure != nil && verdict != .fails { problems.append("conditionFailure \(failure!) for \(verdict)") }
            if silenced != nil && verdict != .silenced { problems.append("silenced \(silenced!) for \(verdict)") }
            if !cancelled {
                switch verdict {
                case .holds:
                    if mainCalls != 1 || guarded.isCancelled { problems.append("did not run") }
                case .fails:
                    if failure == nil { problems.append("no conditionFailure") }
                    if self.failure != .plain && guarded.result == nil { problems.append("no result") }
                case .silenced:
                    if silenced == nil || !guarded.isCancelled { problems.append("not skipped") }
                }
            }
            if !problems.isEmpty { tally.violations.append("\(self): \(problems.joined(separator: ", "))") }
        }
    }

}

/// A result operation that calls `onMain` as `main()` begins, then finishes asynchronously (as
/// classic subclasses do) with its planned result, or without one once cancelled.
final class HookedProbe<Failure: Error>: AsyncResultOperation<Int, Failure>, @unchecked Sendable {
    let mainCalls = Counter()
    private let planned: Result<Int, Failure>
    private let onMain: @Sendable () -> Void

    init(_ planned: Result<Int, Failure>, onMain: @escaping @Sendable () -> Void) {
        self.planned = planned
        self.onMain = onMain
        super.init()
    }

    override func main() {
        mainCalls.increment()
        onMain()
        DispatchQueue.global().async { [self] in
            if isCancelled { finish() } else { finish(with: planned) }
        }
    }
}
