import Foundation
import OperationBridge
import Testing

/// Run-and-await: `queue.run(_:)`, `runForOutcome(_:)` and `runUntilFinished(_:)` enqueue an
/// operation and await it. The awaiting task owns the operation: cancelling the task cancels
/// the operation, and the task gets the operation's own cancellation failure.
@Suite(.timeLimit(Stress.timeLimit(minutes: 1)))
struct RunAndAwaitTests {
    /// Runs `operation` in a task and hands back what `run` returned or threw (typed).
    private func runInTask(
        _ operation: AsyncResultOperation<Int, TransferError>,
        on queue: OperationQueue,
        cancelledBeforeRunning: Bool = false
    ) -> Task<Result<Int, TransferError>, Never> {
        Task {
            if cancelledBeforeRunning { cancelCurrentTask() }
            do throws(TransferError) {
                return .success(try await queue.run(operation))
            } catch {
                return .failure(error)
            }
        }
    }

    @Test("run returns the value")
    func runReturnsValue() async throws {
        let queue = OperationQueue()
        #expect(try await queue.run(ControlledOperation<Int, TransferError>(.success(42))) == 42)
    }

    @Test("run throws the operation's typed failure")
    func runThrowsTypedFailure() async {
        let queue = OperationQueue()
        let result = await runInTask(ControlledOperation(.failure(.offline)), on: queue).value
        #expect(result == .failure(.offline))
    }

    @Test("run of an operation whose Failure is any Error")
    func runWithAnyErrorFailure() async throws {
        let queue = OperationQueue()
        #expect(try await queue.run(ControlledOperation<Int, any Error>(.success(1))) == 1)
        await #expect(throws: TransferError.offline) {
            try await queue.run(ControlledOperation<Int, any Error>(.failure(TransferError.offline)))
        }

        queue.isSuspended = true
        let operation = ManualResultOperation<Int, any Error>()
        let runner = Task { try await queue.run(operation) }
        runner.cancel()
        await #expect(throws: CancellationError.self) { try await runner.value }
        #expect(operation.isCancelled)
        queue.isSuspended = false
    }

    @Test("run does not enqueue an operation that was started by hand or has finished")
    func runDoesNotEnqueueStartedOperations() async throws {
        let queue = OperationQueue()
        let finished = ControlledOperation<Int, TransferError>(.success(1))
        finished.start()
        #expect(try await queue.run(finished) == 1)

        let running = ManualResultOperation<Int, TransferError>()
        running.start()
        let runner = runInTask(running, on: queue)
        running.finish(with: .success(2))
        #expect(await runner.value == .success(2))
        #expect(queue.operationCount == 0)
    }

    @Test("Cancelling the task cancels the running operation; the task gets its own cancellation failure")
    func cancellingTaskCancelsRunningOperation() async {
        let queue = OperationQueue()
        let operation = UserCancellableOperation()
        let runner = runInTask(operation, on: queue)
        await operation.started.wait()
        runner.cancel()

        #expect(await runner.value == .failure(.cancelledByUser))
        #expect(operation.isCancelled)
        #expect(operation.isFinished)
    }

    @Test("Cancelling the task while the operation runs: run returns only when the work has ended")
    func cancellingTaskWaitsForRunningWork() async {
        let events = Recorder<String>()
        let queue = OperationQueue()
        let operation = ManualResultOperation<Int, TransferError>()  // does not stop on cancel()
        let runner = Task {
            defer { events.append("returned") }
            do throws(TransferError) {
                return Result<Int, TransferError>.success(try await queue.run(operation))
            } catch {
                return .failure(error)
            }
        }
        await operation.started.wait()
        runner.cancel()
        await operation.cancelRequested.wait()
        #expect(!operation.isFinished)
        events.append("work ended")
        operation.finish(with: .success(1))  // ignored: the cancellation failure came first

        #expect(await runner.value == .failure(.cancelled))
        #expect(events.all == ["work ended", "returned"])
    }

    @Test("Cancelling the task before the operation starts answers at once, even on a suspended queue")
    func cancellingTaskOnSuspendedQueue() async {
        let queue = OperationQueue()
        queue.isSuspended = true
        let operation = UserCancellableOperation()
        let runner = runInTask(operation, on: queue)
        runner.cancel()

        // Answered while the queue is still suspended: the operation has not run.
        #expect(await runner.value == .failure(.cancelledByUser))
        #expect(queue.isSuspended)
        #expect(operation.isCancelled)
        #expect(operation.mainRunCount == 0)

        queue.isSuspended = false
        try? await operation.bridge.waitForCompletion()
        #expect(operation.isFinished)
        #expect(operation.mainRunCount == 0)
        #expect(operation.result == .failure(.cancelledByUser))
    }

    @Test("runForOutcome: cancelling the task before the operation starts answers its own cancellation failure")
    func runForOutcomeCancelledOnSuspendedQueue() async {
        let queue = OperationQueue()
        queue.isSuspended = true
        let operation = UserCancellableOperation()
        let runner = Task { await queue.runForOutcome(operation) }
        runner.cancel()

        #expect(await runner.value == .failure(.cancelledByUser))
        #expect(queue.isSuspended)
        queue.isSuspended = false
        try? await operation.bridge.waitForCompletion()
        #expect(operation.mainRunCount == 0)
    }

    enum RunAPI: String, CaseIterable, Sendable {
        case run
        case runForOutcome
        case runUntilFinished
    }

    @Test(
        "The task is already cancelled when run begins: the operation is cancelled before it is queued",
        arguments: RunAPI.allCases)
    func taskCancelledBeforeRunBegins(api: RunAPI) async {
        let queue = EnqueueRecordingQueue()
        // The race this guards against (a worker thread starting the operation before the
        // cancellation reaches it) is rare, so repeat; the enqueue record is deterministic.
        for _ in 0..<200 {
            let operation = UserCancellableOperation()
            let runner = Task {
                cancelCurrentTask()
                switch api {
                case .run:
                    do throws(TransferError) {
                        _ = try await queue.run(operation)
                        return false
                    } catch {
                        return error == .cancelledByUser
                    }
                case .runForOutcome:
                    return await queue.runForOutcome(operation) == .failure(.cancelledByUser)
                case .runUntilFinished:
                    do {
                        try await queue.runUntilFinished(operation)
                        return operation.isFinished  // it may have finished (without running) first
                    } catch {
                        return true
                    }
                }
            }
            #expect(await runner.value, "answered with the operation's own cancellation")
            try? await operation.bridge.waitForCompletion()
            #expect(operation.mainRunCount == 0)
        }
        let enqueued = queue.cancelledWhenEnqueued.all
        #expect(enqueued.count == 200)
        #expect(enqueued.filter { !$0 }.count == 0, "operations enqueued before they were cancelled")
    }

    @Test("runUntilFinished: a BlockOperation pending in a suspended queue; cancelling the task answers at once")
    func runUntilFinishedCancelledBeforeStart() async {
        let queue = OperationQueue()
        queue.isSuspended = true
        let blockRuns = LockedBox(0)
        let block = BlockOperation { blockRuns.withLock { $0 += 1 } }
        let runner = Task { try await queue.runUntilFinished(block) }
        runner.cancel()

        await #expect(throws: CancellationError.self) { try await runner.value }
        #expect(block.isCancelled)
        queue.isSuspended = false
        try? await block.bridge.waitForCompletion()
        #expect(block.isFinished)
        #expect(blockRuns.current == 0)
    }

    @Test("runUntilFinished: cancelling the task while the operation runs waits for it, then returns normally")
    func runUntilFinishedCancelledWhileRunning() async throws {
        let events = Recorder<String>()
        let queue = OperationQueue()
        let release = Gate()
        let operation = LegacyAsyncOperation(gate: release, events: events)  // ignores cancel()
        let runner = Task {
            try await queue.runUntilFinished(operation)
            events.append("returned")
        }
        await operation.started.wait()
        runner.cancel()
        await operation.cancelRequested.wait()
        release.open()

        try await runner.value
        #expect(events.all == ["legacy started", "legacy finished", "returned"])
    }
}

/// A thousand awaits on a width-1 queue, each needing a few hops through the cooperative pool
/// one after another. Alone the four cases take 0.08 s; in the plain run, beside every stress
/// suite on two cores, the pool's queue is long and they took 51 s (CI60) and over 60 s when
/// the machine was busier still (CI62): the time limit only guards against a hang, so it is
/// three minutes here.
@Suite(.timeLimit(Stress.timeLimit(minutes: 3)))
struct SerialQueueAwaitTests {
    enum Arrival: String, CaseIterable, Sendable {
        case concurrently
        case oneAfterAnother
    }

    enum Completion: String, CaseIterable, Sendable {
        /// The operation finishes inside `main()`, on the queue's thread.
        case inMain
        /// The operation finishes later, from a task: the queue's only slot stays taken while
        /// the awaiting tasks are suspended.
        case fromTask
    }

    @Test(
        "maxConcurrentOperationCount = 1 with 1,000 awaited operations",
        arguments: Arrival.allCases, Completion.allCases
    )
    func serialQueueThousandOperations(arrival: Arrival, completion: Completion) async throws {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let count = 1_000
        let open = Gate()
        open.open()
        let gate = completion == .fromTask ? open : nil
        var values: [Int: Int] = [:]
        switch arrival {
        case .concurrently:
            values = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
                for index in 0..<count {
                    group.addTask {
                        let operation = ControlledOperation<Int, TransferError>(.success(index * 2), gate: gate)
                        return (index, try await queue.run(operation))
                    }
                }
                var values: [Int: Int] = [:]
                for try await (index, value) in group { values[index] = value }
                return values
            }
        case .oneAfterAnother:
            for index in 0..<count {
                let operation = ControlledOperation<Int, TransferError>(.success(index * 2), gate: gate)
                values[index] = try await queue.run(operation)
            }
        }
        #expect(values.count == count)
        #expect(values.allSatisfy { index, value in value == index * 2 })
    }
}
