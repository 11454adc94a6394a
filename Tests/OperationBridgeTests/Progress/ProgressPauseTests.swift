import Foundation
import OperationBridge
import Testing

/// Foundation `Progress` pause and resume wired to the package's pause (corelibs'
/// `TestProgress.test_handlers`): pausing an operation's Foundation progress, or an ancestor of
/// it, holds the operation back; resuming it lets it run; the operation's own pause marks its
/// Foundation progress paused. On Linux the view acts before `pause()` returns.
@Suite(.timeLimit(Stress.timeLimit(minutes: 2)))
struct ProgressPauseTests {
    @Test(
        "A parent's pause and resume reach the operation through its view (corelibs test_handlers), and the parent's own handlers still run"
    )
    func parentPauseAndResume() async throws {
        let parent = Progress(totalUnitCount: 1)
        let parentPaused = Gate()
        let parentResumed = Gate()
        parent.pausingHandler = { parentPaused.open() }
        parent.resumingHandler = { parentResumed.open() }
        let operation = ProbeOperation()
        parent.addChild(operation.bridge.operationProgress.foundationProgress, withPendingUnitCount: 1)

        parent.pause()
        #expect(operation.bridge.isPaused && !operation.isReady)
        #expect(operation.bridge.operationProgress.foundationProgress.isPaused)
        await parentPaused.wait()  // Foundation's handlers are the parent's still

        // Held back: a queue with one slot runs later work first.
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        queue.addOperation(operation)
        try await queue.runUntilFinished(BlockOperation {})
        #expect(operation.mainCalls.value == 0 && !operation.isFinished)

        parent.resume()
        #expect(!operation.bridge.isPaused)
        await parentResumed.wait()
        try await operation.bridge.waitForCompletion()
        #expect(operation.mainCalls.value == 1)
        #expect(operation.bridge.operationProgress.fractionCompleted == 1)
    }

    @Test(
        "The operation's pause marks its Foundation progress paused, resume clears it; a view made while paused says so"
    )
    func operationPauseMarksTheView() async throws {
        let operation = ProbeOperation()
        let view = operation.bridge.operationProgress.foundationProgress
        operation.bridge.pause()
        #expect(view.isPaused)
        operation.bridge.resume()
        #expect(!view.isPaused)

        let pausedFirst = ProbeOperation()
        pausedFirst.bridge.pause()
        let late = pausedFirst.bridge.operationProgress.foundationProgress
        #expect(late.isPaused && pausedFirst.bridge.isPaused)
        late.resume()
        #expect(!pausedFirst.bridge.isPaused)
        try await OperationQueue().runUntilFinished(pausedFirst)
        #expect(pausedFirst.mainCalls.value == 1)
    }

    @Test("Pausing the progress of a running operation does not interrupt it: the view says paused, the work goes on")
    func pauseWhileRunning() async throws {
        let running = ProbeOperation(.byTest)
        let view = running.bridge.operationProgress.foundationProgress
        OperationQueue().addOperation(running)
        await running.started.wait()
        view.pause()
        #expect(view.isPaused && !running.bridge.isPaused && running.isExecuting)
        running.finish()
        try await running.bridge.waitForCompletion()
        #expect(running.bridge.operationProgress.fractionCompleted == 1)
        view.resume()  // after the finish: nothing to resume
        #expect(!view.isPaused && !running.bridge.isPaused)
    }

    @Test("Pause then resume at once, through the view or the operation: it ends resumed and runs")
    func pauseThenResume() async throws {
        let operation = ProbeOperation()
        let view = operation.bridge.operationProgress.foundationProgress
        view.pause()
        operation.bridge.resume()
        #expect(!view.isPaused && !operation.bridge.isPaused)
        operation.bridge.pause()
        view.resume()
        #expect(!view.isPaused && !operation.bridge.isPaused)
        view.pause()
        view.pause()  // twice: one resume ends it, as for the operation's own pause
        view.resume()
        #expect(!operation.bridge.isPaused)
        try await OperationQueue().runUntilFinished(operation)
        #expect(operation.mainCalls.value == 1)
    }

    @Test("Pausing an aggregate's Foundation progress pauses its pending operations; resuming lets them run")
    func aggregatePause() async throws {
        let first = ProbeOperation()
        let second = TaskOperation { () async -> Int in 2 }
        let foreign = BlockOperation {}
        let overall = OperationProgress(aggregating: [first, second, foreign] as [Operation])
        let view = overall.foundationProgress
        view.pause()
        #expect(first.bridge.isPaused && second.bridge.isPaused && !foreign.isCancelled)
        let queue = OperationQueue()
        queue.addOperation(first)
        queue.addOperation(second)
        try await queue.runUntilFinished(foreign)  // foreign operations have no pause: it runs
        #expect(first.mainCalls.value == 0 && !second.isFinished)
        view.resume()
        try await queue.runUntilFinished(first)
        #expect(await queue.run(second) == 2)
        #expect(overall.fractionCompleted == 1)
    }

    @Test(
        "Pausing a running group's Foundation progress holds back its children that have not started; resuming lets it end"
    )
    func runningGroupPause() async throws {
        let release = Gate()
        let first = TaskOperation { () async -> Int in
            await release.wait()
            return 1
        }
        let second = ProbeOperation()
        second.addDependency(first)
        let group = try GroupOperation([first, second]) {}
        let view = group.progress  // ProgressReporting: its Foundation progress, a parent of the children's
        let queue = OperationQueue()
        queue.addOperation(group)
        try await waitUntilExecuting(first)
        view.pause()
        #expect(second.bridge.isPaused && !first.bridge.isPaused && !group.bridge.isPaused)
        release.open()
        try await first.bridge.waitForCompletion()
        #expect(!second.isReady)  // its dependency has finished: only the pause holds it back
        #expect(second.mainCalls.value == 0 && !group.isFinished)
        view.resume()
        try await group.bridge.waitForCompletion()
        #expect(second.mainCalls.value == 1 && !second.bridge.isPaused)
    }

    @Test(
        "A TaskOperation's progress (ProgressReporting) pauses it; cancelling it while paused finishes it without running"
    )
    func taskOperationProgress() async throws {
        let ran = LockedBox(0)
        let task = TaskOperation { () async -> Int in
            ran.withLock { $0 += 1 }
            return 1
        }
        task.progress.pause()
        #expect(task.bridge.isPaused)
        task.bridge.resume()
        #expect(!task.progress.isPaused)
        task.bridge.pause()
        #expect(task.progress.isPaused)
        let queue = OperationQueue()
        queue.addOperation(task)
        task.progress.cancel()  // cancels the operation (through Foundation's handler, soon after)
        try await task.bridge.waitForCompletion()
        #expect(task.isCancelled && ran.current == 0 && task.bridge.operationProgress.isCancelled)
    }

    @Test(
        "Randomized: pauses and resumes through the view and the operation from two threads; they always agree at the end"
    )
    func randomizedPauses() async throws {
        var generator = Stress.generator(for: "ProgressPauseTests.randomizedPauses")
        let queue = OperationQueue()
        var endedPaused = 0
        let rounds = Stress.iterations(2_000)
        for _ in 0..<rounds {
            let operation = ProbeOperation()
            let view = operation.bridge.operationProgress.foundationProgress
            let scripts = (0..<2).map { _ in
                (0..<Int.random(in: 1...6, using: &generator)).map { _ in Int.random(in: 0..<4, using: &generator) }
            }
            let start = Gate()
            let actors = scripts.map { script in
                Task.detached {
                    await start.wait()
                    for action in script {
                        switch action {
                        case 0: view.pause()
                        case 1: view.resume()
                        case 2: operation.bridge.pause()
                        default: operation.bridge.resume()
                        }
                    }
                }
            }
            start.open()
            for actor in actors { await actor.value }
            #expect(view.isPaused == operation.bridge.isPaused)
            #expect(operation.isReady == !operation.bridge.isPaused)
            if operation.bridge.isPaused { endedPaused += 1 }
            // One thread alone: the last call decides.
            let last = Int.random(in: 0..<4, using: &generator)
            switch last {
            case 0: view.pause()
            case 1: view.resume()
            case 2: operation.bridge.pause()
            default: operation.bridge.resume()
            }
            #expect(operation.bridge.isPaused == (last % 2 == 0) && view.isPaused == (last % 2 == 0))
            operation.bridge.resume()
            try await queue.runUntilFinished(operation)
            #expect(operation.mainCalls.value == 1)
        }
        print("ProgressPauseTests.randomizedPauses: \(endedPaused) of \(rounds) rounds ended paused")
    }

    /// Returns once `operation` is executing, watching its lifecycle events (no timing window).
    private func waitUntilExecuting(_ operation: AsyncOperation) async throws {
        for await event in operation.bridge.lifecycleEvents where event == .started { return }
    }
}
