import Foundation
import OperationBridge
import Testing

/// Randomized races between an operation finishing, being cancelled, being started or queued,
/// and its awaiting tasks being cancelled — before, while and after they register. Every
/// awaiter must be answered exactly once, with an answer consistent with the operation's
/// final result.
///
/// Sizes scale with `OPERATIONBRIDGE_STRESS_SCALE`; each run prints its seed, and
/// `OPERATIONBRIDGE_STRESS_SEED` replays it.
@Suite(.timeLimit(Stress.timeLimit(minutes: 20)))
struct AwaitingStressTests {
    /// The ways an awaiter can await: the three non-owning APIs and the two owning
    /// run-and-await APIs.
    enum Awaiter: CaseIterable, Sendable {
        case value
        case outcome
        case waitForCompletion
        case run
        case runForOutcome

        var owns: Bool { self == .run || self == .runForOutcome }

        func answer(from operation: AsyncResultOperation<Int, TransferError>, queue: OperationQueue) async
            -> AwaitAnswer
        {
            switch self {
            case .value: return await AwaitStyle.value.answer(from: operation)
            case .outcome: return await AwaitStyle.outcome.answer(from: operation)
            case .waitForCompletion: return await AwaitStyle.waitForCompletion.answer(from: operation)
            case .run:
                do throws(TransferError) {
                    return .success(try await queue.run(operation))
                } catch {
                    return .failure(error)
                }
            case .runForOutcome:
                switch await queue.runForOutcome(operation) {
                case .success(let value)?: return .success(value)
                case .failure(let error)?: return .failure(error)
                case nil: return .stoppedWaiting
                }
            }
        }

        /// The answers allowed when the operation ended with `final`.
        func allowedAnswers(final: Result<Int, TransferError>, taskCancelled: Bool) -> [AwaitAnswer] {
            let style: AwaitStyle
            switch self {
            case .value: style = .value
            case .outcome: style = .outcome
            case .waitForCompletion: style = .waitForCompletion
            case .run:
                let finished = AwaitStyle.value.expected(forFinished: final)
                // A cancelled owner is answered with the operation's cancellation failure when it
                // stops waiting before the operation has run.
                return taskCancelled ? [finished, .failure(.cancelled)] : [finished]
            case .runForOutcome:
                // The operation's own result, whether it finished or was given up: the first
                // result stored (a success, or the cancellation failure) is the final one.
                return [AwaitStyle.outcome.expected(forFinished: final)]
            }
            let finished = style.expected(forFinished: final)
            return taskCancelled ? [finished, style.expectedWhenTaskCancelled] : [finished]
        }
    }

    @Test("Finish racing cancel: every awaiter is answered exactly once, consistently")
    func finishRacingCancel() async throws {
        let seed = Stress.seed()
        print("AwaitingStressTests.finishRacingCancel: seed \(seed) (replay with OPERATIONBRIDGE_STRESS_SEED=\(seed))")
        var random = SeededGenerator(seed: seed)
        let iterations = Stress.iterations(2_000)
        let queue = OperationQueue()
        let answers = LockedBox(0)
        var awaiterCount = 0
        var inconsistencies: [String] = []

        for iteration in 0..<iterations {
            let operation = ManualResultOperation<Int, TransferError>()
            var kinds = (0..<Int.random(in: 1...4, using: &random)).map { _ in
                [Awaiter.value, .outcome, .waitForCompletion].randomElement(using: &random)!
            }
            if Bool.random(using: &random) {  // at most one owner
                kinds[0] = Bool.random(using: &random) ? .run : .runForOutcome
            }
            let cancelTask = kinds.map { _ in Bool.random(using: &random) }
            let cancelOperation = Bool.random(using: &random)
            let startByHand = Bool.random(using: &random)
            awaiterCount += kinds.count

            let go = Gate()
            let allAnswered = CountdownSignal(kinds.count)
            let awaiters = kinds.map { kind in
                Task {
                    await go.wait()
                    let answer = await kind.answer(from: operation, queue: queue)
                    answers.withLock { $0 += 1 }
                    allAnswered.arrive()
                    return answer
                }
            }
            var racers: [Task<Void, Never>] = []
            racers.append(
                Task {
                    await go.wait()
                    operation.finish(with: .success(iteration))
                })
            if cancelOperation {
                racers.append(
                    Task {
                        await go.wait()
                        operation.cancel()
                    })
            }
            if !kinds.contains(where: \.owns) {  // an owner enqueues the operation itself
                racers.append(
                    Task {
                        await go.wait()
                        if startByHand { operation.start() } else { queue.addOperation(operation) }
                    })
            }
            for (awaiter, cancel) in zip(awaiters, cancelTask) where cancel {
                racers.append(
                    Task {
                        await go.wait()
                        awaiter.cancel()
                    })
            }
            go.open()

            for racer in racers { await racer.value }
            // A wait that gives up when the time limit cancels the test: a lost continuation
            // fails the test instead of hanging it.
            guard await allAnswered.wait() else {
                Issue.record("seed \(seed), iteration \(iteration): \(allAnswered.remaining) awaiter(s) never answered")
                return
            }
            var answered: [AwaitAnswer] = []
            for awaiter in awaiters { answered.append(await awaiter.value) }
            try await operation.bridge.waitForCompletion()
            let final = try #require(operation.result)
            for (index, kind) in kinds.enumerated() {
                let allowed = kind.allowedAnswers(final: final, taskCancelled: cancelTask[index])
                if !allowed.contains(answered[index]) {
                    inconsistencies.append(
                        "iteration \(iteration): \(kind) (task cancelled: \(cancelTask[index])) answered "
                            + "\(answered[index]); final result \(final)"
                    )
                }
            }
        }

        #expect(answers.current == awaiterCount, "seed \(seed)")
        #expect(inconsistencies.isEmpty, "seed \(seed): \(inconsistencies.prefix(5))")
    }

    @Test("Foreign operations: finish racing the awaiting tasks' cancellation, through the sentinel")
    func foreignFinishRacingCancel() async {
        let seed = Stress.seed()
        print(
            "AwaitingStressTests.foreignFinishRacingCancel: seed \(seed) (replay with OPERATIONBRIDGE_STRESS_SEED=\(seed))"
        )
        var random = SeededGenerator(seed: seed)
        let iterations = Stress.iterations(1_000)
        let queue = OperationQueue()
        let answers = LockedBox(0)
        var awaiterCount = 0
        var inconsistencies: [String] = []

        for iteration in 0..<iterations {
            let runs = LockedBox(0)
            let block = BlockOperation { runs.withLock { $0 += 1 } }
            let owner = Bool.random(using: &random)  // one awaiter uses runUntilFinished
            let count = Int.random(in: 1...3, using: &random)
            let cancelTask = (0..<count).map { _ in Bool.random(using: &random) }
            let cancelOperation = Bool.random(using: &random)
            awaiterCount += count

            let go = Gate()
            let allAnswered = CountdownSignal(count)
            let awaiters = (0..<count).map { index in
                Task {
                    await go.wait()
                    defer {
                        answers.withLock { $0 += 1 }
                        allAnswered.arrive()
                    }
                    do {
                        if owner && index == 0 {
                            try await queue.runUntilFinished(block)
                        } else {
                            try await block.bridge.waitForCompletion()
                        }
                        return true
                    } catch {
                        return false
                    }
                }
            }
            var racers: [Task<Void, Never>] = []
            if !owner {
                racers.append(
                    Task {
                        await go.wait()
                        queue.addOperation(block)
                    })
            }
            if cancelOperation {
                racers.append(
                    Task {
                        await go.wait()
                        block.cancel()
                    })
            }
            for (awaiter, cancel) in zip(awaiters, cancelTask) where cancel {
                racers.append(
                    Task {
                        await go.wait()
                        awaiter.cancel()
                    })
            }
            go.open()

            for racer in racers { await racer.value }
            guard await allAnswered.wait() else {
                Issue.record("seed \(seed), iteration \(iteration): \(allAnswered.remaining) awaiter(s) never answered")
                return
            }
            for (index, awaiter) in awaiters.enumerated() {
                let finished = await awaiter.value
                if !finished && !cancelTask[index] {
                    inconsistencies.append(
                        "iteration \(iteration): awaiter \(index) stopped waiting without cancellation")
                }
                if finished && !block.isFinished {
                    inconsistencies.append("iteration \(iteration): awaiter \(index) answered before the finish")
                }
            }
            try? await block.bridge.waitForCompletion()
            if runs.current > 1 {
                inconsistencies.append("iteration \(iteration): the block ran \(runs.current) times")
            }
        }

        #expect(answers.current == awaiterCount, "seed \(seed)")
        #expect(inconsistencies.isEmpty, "seed \(seed): \(inconsistencies.prefix(5))")
    }
}
