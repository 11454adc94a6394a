import Foundation
import OperationBridge
import Testing

/// Awaiting a result operation without owning it: `value` (typed throws), `outcome` (the
/// `Result` or `nil`) and `waitUntilFinished()`. Each scenario runs through all three APIs.
///
/// Where a test starts an awaiting task and then enqueues or finishes the operation, the task
/// may register before or after that: both orders must give the same answer.
@Suite(.timeLimit(Stress.timeLimit(minutes: 1)))
struct AwaitingResultOperationTests {
    enum LaterStart: String, CaseIterable, Sendable {
        case queued
        case startedByHand
    }

    @Test("Awaited before it is queued or started", arguments: AwaitStyle.allCases, LaterStart.allCases)
    func awaitedBeforeQueued(style: AwaitStyle, start: LaterStart) async {
        let operation = ControlledOperation<Int, TransferError>(.success(42))
        let queue = OperationQueue()
        let awaiter = Task { await style.answer(from: operation) }
        switch start {
        case .queued: queue.addOperation(operation)
        case .startedByHand: operation.start()
        }
        #expect(await awaiter.value == style.expected(forFinished: .success(42)))
        #expect(operation.isFinished)
    }

    @Test("Awaited while it runs in a queue", arguments: AwaitStyle.allCases)
    func awaitedWhileRunning(style: AwaitStyle) async {
        let gate = Gate()
        let operation = ControlledOperation<Int, TransferError>(.failure(.offline), gate: gate)
        let queue = OperationQueue()
        queue.addOperation(operation)
        await operation.started.wait()
        let awaiter = Task { await style.answer(from: operation) }
        gate.open()
        #expect(await awaiter.value == style.expected(forFinished: .failure(.offline)))
    }

    @Test("Awaited after it finished: the result at once, even to a cancelled task", arguments: AwaitStyle.allCases)
    func awaitedAfterFinished(style: AwaitStyle) async {
        let operation = ControlledOperation<Int, TransferError>(.failure(.offline))
        operation.start()
        #expect(operation.isFinished)
        let expected = style.expected(forFinished: .failure(.offline))

        #expect(await style.answer(from: operation) == expected)

        let cancelledAwaiter = Task {
            cancelCurrentTask()
            return await style.answer(from: operation)
        }
        #expect(await cancelledAwaiter.value == expected)
    }

    @Test(
        "Never queued: cancelling the awaiting task answers it; the operation goes on", arguments: AwaitStyle.allCases)
    func neverQueuedWhileTaskCancelled(style: AwaitStyle) async {
        let operation = ManualResultOperation<Int, TransferError>()
        let awaiter = Task { await style.answer(from: operation) }
        awaiter.cancel()

        #expect(await awaiter.value == style.expectedWhenTaskCancelled)
        #expect(!operation.isCancelled)
        #expect(!operation.isFinished)
        #expect(operation.mainRunCount == 0)
    }

    @Test("The task is already cancelled when the await begins", arguments: AwaitStyle.allCases)
    func taskCancelledBeforeAwaitBegins(style: AwaitStyle) async {
        let operation = ManualResultOperation<Int, TransferError>()
        let awaiter = Task {
            cancelCurrentTask()
            #expect(Task.isCancelled)
            return await style.answer(from: operation)
        }
        #expect(await awaiter.value == style.expectedWhenTaskCancelled)
        #expect(!operation.isCancelled)

        // The cancelled awaiter left nothing behind: the operation still serves a new awaiter.
        let laterAwaiter = Task { await style.answer(from: operation) }
        operation.start()
        await operation.started.wait()
        operation.finish(with: .success(7))
        #expect(await laterAwaiter.value == style.expected(forFinished: .success(7)))
    }

    @Test("100 tasks await one operation and all get its value")
    func hundredTasksAwaitOneOperation() async {
        let gate = Gate()
        let operation = ControlledOperation<Int, TransferError>(.success(42), gate: gate)
        let queue = OperationQueue()
        queue.addOperation(operation)
        let awaiterCount = 100
        let arrived = LockedBox(0)
        let allArrived = Gate()

        let answers = await withTaskGroup(of: (AwaitStyle, AwaitAnswer).self) { group in
            for index in 0..<awaiterCount {
                let style = AwaitStyle.allCases[index % AwaitStyle.allCases.count]
                group.addTask {
                    let position = arrived.withLock { count in
                        count += 1
                        return count
                    }
                    if position == awaiterCount { allArrived.open() }
                    return (style, await style.answer(from: operation))
                }
            }
            // Let the operation finish only once every awaiter is about to await it.
            await allArrived.wait()
            gate.open()
            var answers: [(AwaitStyle, AwaitAnswer)] = []
            for await answer in group { answers.append(answer) }
            return answers
        }

        #expect(answers.count == awaiterCount)
        for (style, answer) in answers {
            #expect(answer == style.expected(forFinished: .success(42)), "\(style)")
        }
    }

    @Test(
        "Cancelled before it starts: finishes without running, answers the cancellation", arguments: AwaitStyle.allCases
    )
    func cancelledBeforeStart(style: AwaitStyle) async {
        let operation = ManualResultOperation<Int, TransferError>()
        operation.cancel()
        let queue = OperationQueue()
        let awaiter = Task { await style.answer(from: operation) }
        queue.addOperation(operation)

        #expect(await awaiter.value == style.expected(forFinished: .failure(.cancelled)))
        // Value and outcome answer once the outcome is decided (the cancellation); the queue
        // finishes the operation a moment later.
        try? await operation.bridge.waitForCompletion()
        #expect(operation.isFinished)
        #expect(operation.mainRunCount == 0)
        #expect(operation.result == .failure(.cancelled))
    }

    @Test("Cancelled while running: answers the operation's own cancellation failure", arguments: AwaitStyle.allCases)
    func cancelledWhileRunning(style: AwaitStyle) async {
        let operation = UserCancellableOperation()
        let queue = OperationQueue()
        queue.addOperation(operation)
        await operation.started.wait()
        let awaiter = Task { await style.answer(from: operation) }
        operation.cancel()

        #expect(await awaiter.value == style.expected(forFinished: .failure(.cancelledByUser)))
        #expect(operation.isFinished)
    }

    @Test("Cancelled while running: awaiters wait until the work has really ended", arguments: AwaitStyle.allCases)
    func cancelledWhileRunningWaitsForTheWork(style: AwaitStyle) async {
        let events = Recorder<String>()
        let operation = ManualResultOperation<Int, TransferError>()
        let queue = OperationQueue()
        queue.addOperation(operation)
        await operation.started.wait()
        let awaiter = Task {
            let answer = await style.answer(from: operation)
            events.append("answered")
            return answer
        }
        operation.cancel()
        #expect(!operation.isFinished)
        events.append("work ended")
        operation.finish(with: .success(1))  // ignored: the cancellation failure came first

        #expect(await awaiter.value == style.expected(forFinished: .failure(.cancelled)))
        #expect(events.all == ["work ended", "answered"])
    }

    @Test("cancelAllOperations() answers the awaiters of running and pending operations")
    func cancelAllOperationsAnswersAwaiters() async {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let running = UserCancellableOperation()
        let pending = (0..<4).map { _ in ManualResultOperation<Int, TransferError>() }
        let blockRuns = LockedBox(0)
        let pendingBlock = BlockOperation { blockRuns.withLock { $0 += 1 } }
        queue.addOperation(running)
        for operation in pending { queue.addOperation(operation) }
        queue.addOperation(pendingBlock)
        await running.started.wait()

        let answers = await withTaskGroup(of: (String, AwaitAnswer, AwaitAnswer).self) { group in
            for style in AwaitStyle.allCases {
                group.addTask {
                    (
                        "running", await style.answer(from: running),
                        style.expected(forFinished: .failure(.cancelledByUser))
                    )
                }
                for operation in pending {
                    group.addTask {
                        (
                            "pending", await style.answer(from: operation),
                            style.expected(forFinished: .failure(.cancelled))
                        )
                    }
                }
            }
            group.addTask {
                do {
                    try await pendingBlock.bridge.waitForCompletion()
                    return ("block", .finished, .finished)
                } catch {
                    return ("block", .stoppedWaiting, .finished)
                }
            }
            // `cancelAllOperations()` cancels one operation after the other, and `running`
            // finishes inside its own `cancel()`: that frees the slot before the pending ones are
            // cancelled, and the queue could start one of them first (Foundation's behaviour, not
            // the package's). Suspended, the queue starts none until all are cancelled.
            queue.isSuspended = true
            queue.cancelAllOperations()
            queue.isSuspended = false
            var answers: [(String, AwaitAnswer, AwaitAnswer)] = []
            for await answer in group { answers.append(answer) }
            return answers
        }

        #expect(answers.count == AwaitStyle.allCases.count * (1 + pending.count) + 1)
        for (which, answer, expected) in answers {
            #expect(answer == expected, "\(which)")
        }
        #expect(pending.allSatisfy { $0.mainRunCount == 0 })
        #expect(blockRuns.current == 0)
    }

    @Test("A suspended queue: the awaiter is answered only after the queue is resumed", arguments: AwaitStyle.allCases)
    func suspendedQueueResumedLater(style: AwaitStyle) async {
        let events = Recorder<String>()
        let queue = OperationQueue()
        queue.isSuspended = true
        let operation = ManualResultOperation<Int, TransferError>(events: events)
        queue.addOperation(operation)
        let awaiter = Task {
            let answer = await style.answer(from: operation)
            events.append("answered")
            return answer
        }

        events.append("resumed")
        queue.isSuspended = false
        await operation.started.wait()
        operation.finish(with: .success(5))

        #expect(await awaiter.value == style.expected(forFinished: .success(5)))
        #expect(events.all == ["resumed", "main", "answered"])
    }

    @Test("value of an operation whose Failure is any Error")
    func valueWithAnyErrorFailure() async throws {
        let failing = ControlledOperation<Int, any Error>(.failure(TransferError.offline))
        failing.start()
        await #expect(throws: TransferError.offline) { try await failing.bridge.value }

        let cancelled = ManualResultOperation<Int, any Error>()
        cancelled.cancel()
        cancelled.start()
        await #expect(throws: CancellationError.self) { try await cancelled.bridge.value }

        let succeeding = ControlledOperation<Int, any Error>(.success(3))
        let awaiter = Task { try await succeeding.bridge.value }
        succeeding.start()
        #expect(try await awaiter.value == 3)
    }
}
