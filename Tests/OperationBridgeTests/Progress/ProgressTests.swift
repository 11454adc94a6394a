import Foundation
import Testing

@testable import OperationBridge

/// A classic subclass that reports its progress from its own work: `units` units, one per step;
/// each step after the first waits for the next gate, so a test sees every intermediate state.
private final class ImportOperation: AsyncOperation, @unchecked Sendable {
    let gates: [Gate]
    let reported: [Gate]

    init(steps: Int) {
        gates = (0..<steps).map { _ in Gate() }
        reported = (0..<steps).map { _ in Gate() }
    }

    override func main() {
        bridge.operationProgress.totalUnitCount = Int64(gates.count)
        Task {
            for (gate, reported) in zip(gates, self.reported) {
                await gate.wait()
                if isCancelled { break }
                bridge.operationProgress.advance()
                reported.open()
            }
            finish()
        }
    }
}

/// A classic subclass with a `progress` property of its own, as legacy code has: the package's
/// progress is named so as not to collide with it.
private final class LegacyDownload: AsyncOperation, @unchecked Sendable {
    var progress: Double = 0

    override func main() {
        progress = 1
        finish()
    }
}

@Suite("Progress")
struct ProgressTests {
    @Test("A TaskOperation closure reports units; snapshots show them; finishing completes the progress")
    func closureReportsUnits() async {
        let halfway = Gate()
        let reported = Gate()
        let operation = TaskOperation(totalUnitCount: 4) { progress in
            progress.advance(by: 2)
            reported.open()
            await halfway.wait()
            progress.advance()  // three of four: finishing completes the last one
            return "done"
        }
        #expect(operation.bridge.operationProgress.snapshot.fractionCompleted == 0)
        #expect(operation.bridge.operationProgress.snapshot.isIndeterminate == false)
        let queue = OperationQueue()
        queue.addOperation(operation)
        await reported.wait()
        let midway = operation.bridge.operationProgress.snapshot
        #expect(midway.completedUnitCount == 2)
        #expect(midway.totalUnitCount == 4)
        #expect(midway.fractionCompleted == 0.5)
        #expect(midway.localizedDescription == "50% completed")
        #expect(!midway.isFinished && !midway.isCancelled)
        halfway.open()
        #expect(await operation.bridge.value == "done")
        let end = operation.bridge.operationProgress.snapshot
        #expect(end.isFinished && !end.isCancelled)
        #expect(end.completedUnitCount == 4)
        #expect(end.fractionCompleted == 1)
        #expect(end.description == "100% completed (4 of 4), finished")
    }

    @Test("An AsyncOperation subclass reports from its work; a subclass's own `progress` property still compiles")
    func classicSubclassReports() async throws {
        let operation = ImportOperation(steps: 2)
        let queue = OperationQueue()
        queue.addOperation(operation)
        operation.gates[0].open()
        await operation.reported[0].wait()
        #expect(operation.bridge.operationProgress.snapshot.fractionCompleted == 0.5)
        operation.gates[1].open()
        try await queue.runUntilFinished(operation)
        #expect(operation.bridge.operationProgress.snapshot.fractionCompleted == 1)

        let legacy = LegacyDownload()
        try await queue.runUntilFinished(legacy)
        #expect(legacy.progress == 1)
        #expect(legacy.bridge.operationProgress.snapshot.completedUnitCount == 1)
    }

    /// Linux's Foundation traps when a `Progress` total goes from a positive value to 0 (a plain
    /// `Progress(totalUnitCount: 1)` set to 0 crashes the process); the package's view writes an
    /// unknown total as -1 once it had one. It used to write 0, and this test crashed.
    @Test("A total set back to zero after a Foundation view exists: the view shows it unknown")
    func totalBackToZeroWithAView() async {
        let operation = TaskOperation { 7 }
        let progress = operation.bridge.operationProgress
        progress.totalUnitCount = 10
        progress.completedUnitCount = 3
        let view = progress.foundationProgress
        #expect(view.totalUnitCount == 10 && view.completedUnitCount == 3)
        progress.totalUnitCount = 0
        #expect(view.isIndeterminate)
        #expect(view.completedUnitCount == 0)
        progress.totalUnitCount = 4
        progress.completedUnitCount = 2
        #expect(view.totalUnitCount == 4 && view.completedUnitCount == 2)
        #expect(await OperationQueue().run(operation) == 7)
        #expect(view.fractionCompleted == 1)
    }

    @Test("An operation that reports nothing is one unit, completed when it finishes")
    func silentOperationIsOneUnit() async {
        let operation = TaskOperation { 7 }
        #expect(operation.bridge.operationProgress.snapshot.totalUnitCount == 1)
        #expect(operation.bridge.operationProgress.snapshot.completedUnitCount == 0)
        #expect(await OperationQueue().run(operation) == 7)
        #expect(operation.bridge.operationProgress.snapshot.completedUnitCount == 1)
        // Asked for only after it finished: created finished.
        let late = TaskOperation { 8 }
        _ = await OperationQueue().run(late)
        #expect(late.bridge.operationProgress.snapshot.isFinished)
        #expect(late.bridge.operationProgress.fractionCompleted == 1)
    }

    @Test("Cancelling marks the progress cancelled and keeps its fraction; finishing then does not complete it")
    func cancellingMarksCancelled() async {
        let reported = Gate()
        let operation = TaskOperation(totalUnitCount: 4) { progress in
            progress.advance()
            reported.open()
            await suspendUntilCancelled()
            progress.advance()  // still counted: the operation has not finished
            return 0
        }
        OperationQueue().addOperation(operation)
        await reported.wait()
        operation.cancel()
        #expect(operation.bridge.operationProgress.isCancelled)
        _ = await operation.bridge.value
        let end = operation.bridge.operationProgress.snapshot
        #expect(end.isFinished && end.isCancelled)
        #expect(end.completedUnitCount == 2)
        #expect(end.fractionCompleted == 0.5)
        #expect(end.description == "50% completed (2 of 4), cancelled, finished")
    }

    @Test("A timed-out operation's progress is cancelled")
    func timeoutCancelsProgress() async throws {
        let clock = TestClock()
        let started = Gate()
        let operation = TaskOperation(totalUnitCount: 2) { (progress) async throws(OperationTimeoutError) -> Int in
            progress.advance()
            started.open()
            await suspendUntilCancelled()
            return 1
        }
        let queue = OperationQueue()
        await startWithTimeLimit(operation, .seconds(1), clock: clock, on: queue, started: started)
        clock.advance(by: .seconds(1))
        try await operation.bridge.waitForCompletion()
        #expect(operation.bridge.isTimedOut)
        #expect(operation.bridge.operationProgress.snapshot.isCancelled)
        #expect(operation.bridge.operationProgress.snapshot.fractionCompleted == 0.5)
    }

    @Test("Reports after the operation has finished are ignored")
    func reportsAfterFinishAreIgnored() async {
        let escaped = Recorder<OperationProgress>()
        let operation = TaskOperation(totalUnitCount: 10) { progress in
            escaped.append(progress)
            progress.completedUnitCount = 3
        }
        await OperationQueue().run(operation)
        let progress = escaped.all[0]
        progress.advance(by: 5)
        progress.totalUnitCount = 100
        #expect(progress.snapshot.completedUnitCount == 10)
        #expect(progress.snapshot.totalUnitCount == 10)
    }

    @Test("then and addTask closures receive the new operation's progress")
    func thenAndAddTaskReceiveHandles() async throws {
        let queue = OperationQueue()
        let upload = queue.addTask(totalUnitCount: 3) { (progress) async throws(RepresentableError) -> [Int] in
            for part in 0..<3 { progress.advance(); _ = part }
            return [1, 2, 3]
        }
        let sum = upload.bridge.then(totalUnitCount: 2) { (parts: [Int], progress) async -> Int in
            progress.advance()
            return parts.reduce(0, +)
        }
        let checked = upload.bridge.then(totalUnitCount: 5) {
            (parts: [Int], progress) async throws(RepresentableError) -> Int in
            progress.totalUnitCount = Int64(parts.count)
            progress.completedUnitCount = 1
            return parts.count
        }
        let untyped = queue.addTask(totalUnitCount: 1) { progress in progress.advance() }
        queue.addOperation(sum)
        queue.addOperation(checked)
        #expect(try await upload.bridge.value == [1, 2, 3])
        #expect(await sum.bridge.value == 6)
        #expect(try await checked.bridge.value == 3)
        await untyped.bridge.value
        #expect(upload.bridge.operationProgress.snapshot.completedUnitCount == 3)
        #expect(sum.bridge.operationProgress.snapshot.completedUnitCount == 2)
        #expect(checked.bridge.operationProgress.snapshot.totalUnitCount == 3)
        #expect(checked.bridge.operationProgress.snapshot.completedUnitCount == 3)
        #expect(untyped.bridge.operationProgress.snapshot.fractionCompleted == 1)
    }

    @Test("An aggregate weighs its operations; foreign operations count as one unit; duplicates count once")
    func aggregateWeighsOperations() async throws {
        let gate = Gate()
        let reported = Gate()
        let heavy = TaskOperation(totalUnitCount: 2) { progress in
            progress.advance()
            reported.open()
            await gate.wait()
        }
        let light = TaskOperation { () async -> Void in }
        let block = BlockOperation {}
        let overall = OperationProgress(aggregating: [heavy, light, block, heavy] as [Operation]) {
            $0 === heavy ? 6 : 1
        }
        #expect(overall.snapshot.totalUnitCount == 8)
        #expect(overall.snapshot.fractionCompleted == 0)
        let queue = OperationQueue()
        queue.addOperationsWithoutWaiting([heavy, light, block])
        await reported.wait()
        try await queue.runUntilFinished(light)
        try await queue.runUntilFinished(block)
        // heavy half done (6 × 0.5), light and block done (1 + 1): 5 of 8.
        let midway = overall.snapshot
        #expect(midway.fractionCompleted == 5.0 / 8.0)
        #expect(midway.completedUnitCount == 2)
        #expect(!midway.isFinished)
        gate.open()
        await heavy.bridge.value
        let end = overall.snapshot
        #expect(end.isFinished && end.fractionCompleted == 1 && end.completedUnitCount == 8)

        let empty = OperationProgress(aggregating: [Operation]())
        #expect(empty.snapshot.isFinished && empty.snapshot.fractionCompleted == 1)
        let ignored = OperationProgress(aggregating: [light]) { _ in 0 }
        #expect(ignored.snapshot.totalUnitCount == 0)
    }

    @Test("A group aggregates its children, a nested group included, and ends when the group does")
    func groupAggregatesChildren() async throws {
        let gate = Gate()
        let reported = Gate()
        let slow = TaskOperation(totalUnitCount: 4) { progress in
            progress.advance()
            reported.open()
            await gate.wait()
            return 1
        }
        let fast = TaskOperation { 2 }
        let inner = try GroupOperation(collecting: [fast])
        let outer = try GroupOperation([slow, inner]) {}
        let queue = OperationQueue()
        queue.addOperation(outer)
        await reported.wait()
        try await queue.runUntilFinished(fast)
        try await inner.bridge.waitForCompletion()
        // slow: 1 of 4; inner: complete. Each weighs one: (0.25 + 1) / 2.
        #expect(outer.bridge.operationProgress.snapshot.fractionCompleted == 0.625)
        #expect(outer.bridge.operationProgress.snapshot.completedUnitCount == 1)
        #expect(outer.bridge.operationProgress.snapshot.totalUnitCount == 2)
        #expect(!outer.bridge.operationProgress.isFinished)
        gate.open()
        _ = await outer.bridge.value
        #expect(outer.bridge.operationProgress.snapshot.isFinished)
        #expect(outer.bridge.operationProgress.fractionCompleted == 1)
        #expect(outer.progress.fractionCompleted == 1)
    }

    @Test("A child cancelled after its last report keeps its fraction of 1, and its group is complete")
    func cancelledAfterTheLastReport() async throws {
        let reported = Gate()
        let child = TaskOperation(totalUnitCount: 3) { progress in
            progress.advance(by: 3)
            reported.open()
            await suspendUntilCancelled()
        }
        let other = TaskOperation { 1 }
        let group = try GroupOperation([child, other]) {}
        OperationQueue().addOperation(group)
        await reported.wait()
        child.cancel()
        try await group.bridge.waitForCompletion()
        let end = child.bridge.operationProgress.snapshot
        #expect(end.isFinished && end.isCancelled)
        #expect(end.completedUnitCount == 3 && end.fractionCompleted == 1)
        // The group weighs what its children did, cancelled or not; it was not cancelled itself.
        let groupEnd = group.bridge.operationProgress.snapshot
        #expect(groupEnd.isFinished && !groupEnd.isCancelled)
        #expect(groupEnd.fractionCompleted == 1)
    }

    @Test("Cancelling a group marks its progress cancelled")
    func cancelledGroupProgress() async throws {
        let child = NeverEndingOperation()
        let group = try GroupOperation([child]) {}
        let queue = OperationQueue()
        queue.addOperation(group)
        await child.started.wait()
        group.cancel()
        try await group.bridge.waitForCompletion()
        let end = group.bridge.operationProgress.snapshot
        #expect(end.isFinished && end.isCancelled)
        #expect(end.fractionCompleted == 0)
    }

    @Test("A pipeline and a results sequence aggregate their operations")
    func pipelineAndResultsAggregate() async throws {
        let queue = OperationQueue()
        let first = TaskOperation(totalUnitCount: 2) { progress in progress.advance(by: 2) }
        let second = first.bridge.then { _ in 1 }
        let pipeline = try Pipeline([first, second], on: queue)
        #expect(pipeline.operationProgress === pipeline.operationProgress)
        #expect(pipeline.operationProgress.snapshot.totalUnitCount == 2)
        pipeline.start()
        try await pipeline.waitForCompletion()
        #expect(pipeline.operationProgress.snapshot.isFinished)
        #expect(pipeline.operationProgress.fractionCompleted == 1)

        let failing = TaskOperation { () async throws(PlainError) -> Int in throw .boom(1) }
        let fine = TaskOperation { () async throws(PlainError) -> Int in 1 }
        let results = try queue.results(of: [failing, fine])
        _ = await results.collect()
        let end = results.operationProgress.snapshot
        // A failure is a finish: both completed.
        #expect(end.isFinished && end.fractionCompleted == 1 && !end.isCancelled)

        let values = try queue.values(of: [TaskOperation { () async -> Int in 3 }])
        #expect(try await values.collect() == [3])
        #expect(values.operationProgress.snapshot.isFinished)
    }

    @Test("A step that did not run because its upstream failed stays at 0; the pipeline stays below 1")
    func skippedStepsAreNotCompleted() async throws {
        let queue = OperationQueue()
        let bad = TaskOperation { () async throws(RepresentableError) -> Int in throw .boom(1) }
        let after = bad.bridge.then(totalUnitCount: 2) { (value: Int, progress) async -> Int in
            progress.advance(by: 2)
            return value
        }
        let pipeline = try Pipeline([bad, after], on: queue)
        pipeline.start()
        try await pipeline.waitForCompletion()
        #expect(after.bridge.upstreamFailure != nil)
        let skipped = after.bridge.operationProgress.snapshot
        #expect(skipped.isFinished && !skipped.isCancelled && skipped.fractionCompleted == 0)
        // `bad` ran and failed: complete. `after` never ran: 0.
        let overall = pipeline.operationProgress.snapshot
        #expect(overall.isFinished && overall.fractionCompleted == 0.5 && overall.completedUnitCount == 1)
        // Asked for only now, after the finish: the same answers.
        let never = TaskOperation { 1 }
        never.cancel()
        _ = await queue.run(never)
        #expect(never.bridge.operationProgress.snapshot.fractionCompleted == 0)
        #expect(never.bridge.operationProgress.snapshot.isCancelled)
    }

    @Test("An aggregate's unit-count properties read its operations; weight zero is left out, also of its finish")
    func aggregateProperties() async throws {
        let queue = OperationQueue()
        let done = TaskOperation { 1 }
        let ignored = NeverEndingOperation()
        _ = await queue.run(done)
        let overall = OperationProgress(aggregating: [done, ignored] as [Operation]) { $0 === done ? 3 : 0 }
        #expect(overall.completedUnitCount == 3)
        #expect(overall.totalUnitCount == 3)
        #expect(overall.isFinished && overall.fractionCompleted == 1)
        let group = try GroupOperation([TaskOperation { 2 }]) {}
        _ = await queue.run(group)
        #expect(group.bridge.operationProgress.completedUnitCount == 1)
        #expect(OperationProgress(aggregating: [ignored]) { _ in 0 }.isFinished)
    }

    @Test("A cancelled results sequence leaves its progress cancelled, below 1")
    func cancelledResultsProgress() async throws {
        let never = NeverEndingOperation()
        let results = try OperationQueue().results(of: [never])
        var iterator = results.makeAsyncIterator()
        await never.started.wait()
        results.cancel()
        _ = await iterator.next()
        try await never.bridge.waitForCompletion()
        let end = results.operationProgress.snapshot
        #expect(end.isFinished && end.isCancelled && end.fractionCompleted == 0)
    }
}

@Suite("Progress: Foundation", .timeLimit(Stress.timeLimit(minutes: 1)))
struct FoundationProgressTests {
    @Test("foundationProgress follows the reports, completes on finish, and is the same object every time")
    func foundationProgressFollows() async {
        let gate = Gate()
        let reported = Gate()
        let operation = TaskOperation(totalUnitCount: 4) { progress in
            progress.advance()
            reported.open()
            await gate.wait()
        }
        let progress = operation.progress
        #expect(progress === operation.bridge.operationProgress.foundationProgress)
        #expect(progress.totalUnitCount == 4)
        OperationQueue().addOperation(operation)
        await reported.wait()
        #expect(progress.completedUnitCount == 1)  // written before `reported` opened
        gate.open()
        await operation.bridge.value
        #expect(progress.completedUnitCount == 4)
        #expect(progress.fractionCompleted == 1)
        #expect(!progress.isCancelled)
    }

    @Test("Cancelling the Foundation progress cancels the operation; cancelling the operation cancels it")
    func foundationCancellation() async throws {
        let viaProgress = NeverEndingOperation()
        let queue = OperationQueue()
        let view = viaProgress.bridge.operationProgress.foundationProgress
        queue.addOperation(viaProgress)
        await viaProgress.started.wait()
        view.cancel()
        try await viaProgress.bridge.waitForCompletion()
        #expect(viaProgress.isCancelled)
        #expect(viaProgress.bridge.operationProgress.isCancelled)

        let viaOperation = NeverEndingOperation()
        let other = viaOperation.bridge.operationProgress.foundationProgress
        queue.addOperation(viaOperation)
        await viaOperation.started.wait()
        viaOperation.cancel()
        try await viaOperation.bridge.waitForCompletion()
        #expect(other.isCancelled)
    }

    @Test("A Foundation progress made from the handle the closure receives cancels the running operation")
    func viewFromTheClosureHandleCancels() async {
        let operation = TaskOperation(totalUnitCount: 2) { (progress) async -> Bool in
            progress.advance()
            // Made from the handle alone: the closure has no reference to its operation.
            progress.foundationProgress.cancel()
            await suspendUntilCancelled()
            return Task.isCancelled
        }
        let taskSawCancellation = await OperationQueue().run(operation)
        #expect(operation.isCancelled)
        #expect(taskSawCancellation == nil)  // a cancelled operation answers no value
        let end = operation.bridge.operationProgress.snapshot
        #expect(end.isCancelled && end.completedUnitCount == 1)
    }

    @Test("A progress handle keeps no operation alive: never started, or cancelled before it started")
    func handlesHoldNoOperation() throws {
        // Never started: a handle read from the operation, and a Foundation view of it.
        var handle: OperationProgress?
        var view: Progress?
        var released: WeakBox<TaskOperation<Int, Never>>
        do {
            let operation = TaskOperation(totalUnitCount: 3) { _ in 1 }
            handle = operation.bridge.operationProgress
            view = handle?.foundationProgress
            released = WeakBox(operation)
        }
        #expect(released.object == nil)
        // The operation is gone: cancelling the view, or a view made now, cancels nothing.
        view?.cancel()
        #expect(handle?.foundationProgress === view)
        let untouched = try #require(handle?.snapshot)
        #expect(!untouched.isCancelled && !untouched.isFinished && untouched.totalUnitCount == 3)

        // Cancelled, then started by hand: it finishes without running its closure.
        do {
            let operation = TaskOperation(totalUnitCount: 3) { _ in 1 }
            handle = operation.bridge.operationProgress
            operation.cancel()
            operation.start()
            #expect(operation.isFinished)
            released = WeakBox(operation)
        }
        #expect(released.object == nil)
        #expect(handle?.snapshot.isFinished == true && handle?.snapshot.isCancelled == true)
    }

    @Test(
        "A handle kept after the finish keeps no operation alive: it ran, was cancelled while running, lost its input")
    func handlesKeptAfterTheFinishHoldNoOperation() async throws {
        let queue = OperationQueue()
        // Each closure owns a probe, released with the operation: a leak leaves a wait hanging
        // until the suite's time limit fails it.
        let ranReleased = Trigger()
        let handles = LockedBox<[OperationProgress]>([])
        do {
            let operation = TaskOperation(totalUnitCount: 2) {
                [probe = DeinitProbe(ranReleased)] (progress) async -> Int in
                handles.withLock { $0.append(progress) }
                progress.advance(by: 2)
                return withExtendedLifetime(probe) { 1 }
            }
            #expect(await queue.run(operation) == 1)
        }
        #expect(await ranReleased.wait())

        // Cancelled while running, after making a view from the handle (which ties them until the finish).
        let cancelledReleased = Trigger()
        let started = Gate()
        do {
            let operation = TaskOperation(totalUnitCount: 2) {
                [probe = DeinitProbe(cancelledReleased)] (progress) async -> Int in
                handles.withLock { $0.append(progress) }
                _ = progress.foundationProgress
                started.open()
                await suspendUntilCancelled()
                return withExtendedLifetime(probe) { 0 }
            }
            queue.addOperation(operation)
            await started.wait()
            operation.cancel()
            try await operation.bridge.waitForCompletion()
        }
        #expect(await cancelledReleased.wait())

        // A step whose upstream failed finishes without running its closure.
        let stepReleased = Trigger()
        do {
            let upstream = TaskOperation { () async throws(StepError) -> Int in throw .planned(1) }
            let step = upstream.bridge.then(totalUnitCount: 1) {
                [probe = DeinitProbe(stepReleased)] (value: Int, _) async -> Int in
                withExtendedLifetime(probe) { value }
            }
            handles.withLock { $0.append(step.bridge.operationProgress) }
            queue.addOperation(upstream)
            queue.addOperation(step)
            try await step.bridge.waitForCompletion()
        }
        #expect(await stepReleased.wait())

        let ends = handles.current.map(\.snapshot)
        #expect(ends.map(\.isFinished) == [true, true, true])
        #expect(ends.map(\.isCancelled) == [false, true, false])
        #expect(ends.map(\.fractionCompleted) == [1, 0, 0])
    }

    @Test("An aggregate's Foundation progress is a parent of its operations', weighted")
    func aggregateFoundationProgress() async throws {
        let gate = Gate()
        let reported = Gate()
        let download = TaskOperation(totalUnitCount: 10) { progress in
            progress.advance(by: 5)
            reported.open()
            await gate.wait()
        }
        let block = BlockOperation {}
        let overall = OperationProgress(aggregating: [download, block] as [Operation]) { $0 === download ? 3 : 1 }
        let parent = overall.foundationProgress
        #expect(parent.totalUnitCount == 4)
        let queue = OperationQueue()
        queue.addOperation(download)
        await reported.wait()
        // The block's unit is written as Foundation tells the block's observers it finished, in no
        // set order among them: a task awaiting the block (`queue.runUntilFinished(block)`) may
        // resume just before that write (ReportingProgress.md). Finished here, on this thread,
        // the observers have been told when `start()` returns on Linux; on Apple platforms a
        // private queue writes it moments later. The snapshot reads the block itself.
        block.start()
        #expect(overall.snapshot.completedUnitCount == 1)
        gate.open()
        await download.bridge.value
        // Foundation updates the parent as its children complete.
        #if canImport(Darwin)
            #expect(parent.completedUnitCount >= 3)
        #else
            #expect(parent.completedUnitCount == 4)
            #expect(parent.fractionCompleted == 1)
        #endif
        #expect(overall.snapshot.completedUnitCount == 4)
    }

    @Test("The package's operations count toward their queue's progress once it reports")
    func queueProgress() async throws {
        let queue = OperationQueue()
        queue.progress.totalUnitCount = 4
        let operations: [Operation] = [
            TaskOperation { 1 }, ProbeOperation(.inMain), TaskOperation(totalUnitCount: 5) { $0.advance(by: 5) },
            // Reports past its total, then changes the total: still one unit of the queue's.
            TaskOperation(totalUnitCount: 2) { progress in
                progress.advance(by: 2)
                progress.advance(by: 3)
                progress.totalUnitCount = 0
                progress.totalUnitCount = 4
            },
        ]
        for operation in operations { queue.addOperation(operation) }
        for operation in operations { try await queue.runUntilFinished(operation) }
        try await queue.waitForAllOperations()
        #expect(queue.progress.completedUnitCount == 4)
        #expect(queue.progress.fractionCompleted == 1)

        // Without the opt-in, nothing is counted.
        let quiet = OperationQueue()
        _ = await quiet.run(TaskOperation { 1 })
        #expect(quiet.progress.completedUnitCount == 0)
    }
}

extension FoundationProgressTests {
    @Test("Queue progress: a queue that opts in late counts from then on; many short-lived queues, each counted alone")
    func queueProgressAcrossQueues() async throws {
        let late = OperationQueue()
        _ = await late.run(TaskOperation { 1 })
        late.progress.totalUnitCount = 1
        _ = await late.run(TaskOperation { 2 })
        try await late.waitForAllOperations()
        #expect(late.progress.completedUnitCount == 1)

        // Queues come and go, often at the addresses of released ones: each counts its own.
        for round in 0..<200 {
            try await runOnAShortLivedQueue(round: round)
        }
    }

    @Test(
        "Queue progress: more queues than the lookup keeps (it is emptied), short-lived ones at reused addresses, one queue throughout"
    )
    func queueProgressPastTheLookupsCapacity() async throws {
        let lasting = OperationQueue()
        lasting.progress.totalUnitCount = 1
        var lastingRuns = 0
        let rounds = QueueProgressLookup.shared.capacity * 2 + 50
        for round in 0..<rounds {
            try await runOnAShortLivedQueue(round: round)
            if round % 50 == 0 {
                _ = await lasting.run(TaskOperation { round })
                lastingRuns += 1
            }
        }
        try await lasting.waitForAllOperations()
        #expect(lasting.progress.completedUnitCount == Int64(lastingRuns))
    }

    /// Runs one operation on a new queue that reports progress when `round` is a multiple of 3,
    /// and expects the queue to count it exactly then.
    private func runOnAShortLivedQueue(round: Int) async throws {
        let queue = OperationQueue()
        let reports = round % 3 == 0
        if reports { queue.progress.totalUnitCount = 1 }
        _ = await queue.run(TaskOperation { round })
        try await queue.waitForAllOperations()
        #expect(queue.progress.completedUnitCount == (reports ? 1 : 0))
    }

    @Test("Queue progress: the lookup does not keep a queue alive")
    func queueProgressLookupLetsQueuesGo() async throws {
        weak var released: OperationQueue?
        do {
            let queue = OperationQueue()
            queue.progress.totalUnitCount = 1
            released = queue
            _ = await queue.run(TaskOperation { 1 })
            try await queue.waitForAllOperations()
            #expect(queue.progress.completedUnitCount == 1)
        }
        #expect(released == nil)
    }
}

@Suite("Progress: updates")
struct ProgressUpdatesTests {
    @Test("Updates start with the current snapshot, skip unchanged ticks, throttle a flood, and end after the finish")
    func updatesThrottle() async {
        let clock = TestClock()
        let progress = Recorder<OperationProgress>()
        let ready = Gate()
        let release = Gate()
        let operation = TaskOperation(totalUnitCount: 1_000_000) { handle in
            progress.append(handle)
            ready.open()
            await release.wait()
        }
        OperationQueue().addOperation(operation)
        await ready.wait()
        let handle = progress.all[0]
        var updates = handle.updates(every: .seconds(1), clock: clock).makeAsyncIterator()

        let first = await updates.next()
        #expect(first?.completedUnitCount == 0)

        // A flood of reports between two ticks: one snapshot, the newest.
        async let second = updates.next()
        await clock.sleepers(atLeast: 1)
        for _ in 0..<500_000 { handle.advance() }
        clock.advance(by: .seconds(1))
        #expect(await second?.completedUnitCount == 500_000)

        // Nothing changes for two ticks: no snapshot, the iterator keeps sleeping.
        async let third = updates.next()
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(1))
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(1))
        await clock.sleepers(atLeast: 1)
        release.open()
        await operation.bridge.value
        clock.advance(by: .seconds(1))
        let last = await third
        #expect(last?.isFinished == true)
        #expect(last?.fractionCompleted == 1)
        #expect(await updates.next() == nil)
    }

    @Test("Cancelling the iterating task ends the updates at once; the operation goes on")
    func cancellingTheWatcherEndsUpdates() async {
        let clock = TestClock()
        let operation = NeverEndingOperation()
        let watcher = Task {
            var count = 0
            for await _ in operation.bridge.operationProgress.updates(every: .seconds(1), clock: clock) { count += 1 }
            return count
        }
        await clock.sleepers(atLeast: 1)
        watcher.cancel()
        #expect(await watcher.value == 1)
        #expect(!operation.isCancelled)
        #expect(clock.pendingSleepers == 0)
    }

    @Test("Updates can be watched from the main actor, with the real clock")
    @MainActor
    func updatesOnMainActor() async {
        let operation = TaskOperation(totalUnitCount: 3) { progress in
            for _ in 0..<3 { progress.advance() }
        }
        OperationQueue().addOperation(operation)
        var fractions: [Double] = []
        for await snapshot in operation.bridge.operationProgress.updates(every: .milliseconds(1)) {
            MainActor.assertIsolated()
            fractions.append(snapshot.fractionCompleted)
        }
        #expect(fractions.last == 1)
        #expect(fractions == fractions.sorted())
    }

    @Test("An aggregate's updates end once its operations have all finished")
    func aggregateUpdatesEnd() async throws {
        let queue = OperationQueue()
        let operations = (0..<20).map { n in
            TaskOperation(totalUnitCount: 2) {
                $0.advance(by: 2); return n
            }
        }
        let results = try queue.results(of: operations)
        async let all = results.collect()
        var last: ProgressSnapshot?
        for await snapshot in results.operationProgress.updates(every: .milliseconds(1)) { last = snapshot }
        #expect(last?.isFinished == true)
        #expect(last?.completedUnitCount == 20)
        #expect(await all.count == 20)
    }

    @Test("Randomized: reporters on many threads, cancellations, finishes and watchers")
    func randomizedReporting() async throws {
        var generator = Stress.generator(for: "progress reporting")
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 4
        for _ in 0..<Stress.iterations(40) {
            let count = Int.random(in: 1...12, using: &generator)
            let units = (0..<count).map { _ in Int64.random(in: 1...50, using: &generator) }
            let cancelled = (0..<count).map { _ in Bool.random(using: &generator) && Bool.random(using: &generator) }
            let withView = Bool.random(using: &generator)
            let operations = units.map { total in
                TaskOperation(totalUnitCount: total) { progress in
                    for _ in 0..<total {
                        if Task.isCancelled { break }
                        progress.advance()
                        await Task.yield()
                    }
                }
            }
            let group = try GroupOperation(operations) {}
            if withView { _ = group.progress }
            let watcher = Task {
                var last: ProgressSnapshot?
                for await snapshot in group.bridge.operationProgress.updates(every: .microseconds(100)) {
                    if let last { #expect(snapshot != last) }
                    last = snapshot
                }
                return last
            }
            queue.addOperation(group)
            for (operation, cancel) in zip(operations, cancelled) where cancel { operation.cancel() }
            try await group.bridge.waitForCompletion()
            let last = await watcher.value
            #expect(last?.isFinished == true)
            for (operation, wasCancelled) in zip(operations, cancelled) {
                let snapshot = operation.bridge.operationProgress.snapshot
                #expect(snapshot.isFinished)
                if !snapshot.isCancelled { #expect(snapshot.fractionCompleted == 1) }
                if wasCancelled { #expect(snapshot.isCancelled || operation.result != nil) }
            }
            // A child cancelled after its last report keeps its fraction of 1 (see the test
            // `cancelledAfterTheLastReport`): the group is complete when every child's fraction is.
            let allCompleted = operations.allSatisfy { $0.bridge.operationProgress.fractionCompleted == 1 }
            #expect((group.bridge.operationProgress.fractionCompleted == 1) == allCompleted)
        }
    }

    @Test(
        "Randomized: reports from many tasks race a Foundation view being made; none is lost, the view ends on the last"
    )
    func randomizedReportsAndView() async throws {
        var generator = Stress.generator(for: "progress reports and a view")
        for _ in 0..<Stress.iterations(200) {
            let reporters = Int.random(in: 2...4, using: &generator)
            let reports = Int.random(in: 1...300, using: &generator)
            // The report of the first reporter before which the view is made (`reports`: after all).
            let viewAt = Int.random(in: 0...reports, using: &generator)
            let expected = Int64(reporters * reports)
            // One unit more than reported: the counts stay below the total, which views clamp to.
            let operation = TaskOperation(totalUnitCount: expected + 1) { (progress) async -> [Int64] in
                await withTaskGroup(of: Void.self) { group in
                    for reporter in 0..<reporters {
                        group.addTask {
                            for report in 0..<reports {
                                if reporter == 0 && report == viewAt { _ = progress.foundationProgress }
                                progress.advance()
                            }
                            if reporter == 0 && viewAt == reports { _ = progress.foundationProgress }
                        }
                    }
                }
                // Every report has returned, and with it every view refresh it made.
                return [progress.completedUnitCount, progress.foundationProgress.completedUnitCount]
            }
            let counts = try #require(await OperationQueue().run(operation))
            #expect(counts == [expected, expected])
            // Completed by the finish; a report after it changes nothing.
            let progress = operation.bridge.operationProgress
            progress.advance(by: 7)
            #expect(progress.completedUnitCount == expected + 1)
            #expect(progress.foundationProgress.completedUnitCount == expected + 1)
        }
    }

    #if EXIT_TESTS
        @Test("Programmer errors trap: a negative weight, reporting on an aggregate, a non-positive interval")
        func programmerErrorsTrap() async {
            await #expect(processExitsWith: .failure) {
                _ = OperationProgress(aggregating: [BlockOperation()]) { _ in -1 }
            }
            await #expect(processExitsWith: .failure) {
                OperationProgress(aggregating: [BlockOperation()]).advance()
            }
            await #expect(processExitsWith: .failure) {
                _ = TaskOperation { 1 }.bridge.operationProgress.updates(every: .zero)
            }
        }

        /// A negative count traps (it reported `-5 of 10` before); zero is an ordinary report.
        @Test("Programmer errors trap: a negative report, a negative count")
        func negativeCountsTrap() async {
            await #expect(processExitsWith: .failure) {
                let progress = TaskOperation { 1 }.bridge.operationProgress
                progress.totalUnitCount = 10
                progress.advance(by: -5)
            }
            await #expect(processExitsWith: .failure) {
                TaskOperation { 1 }.bridge.operationProgress.completedUnitCount = -1
            }
            let progress = TaskOperation { 1 }.bridge.operationProgress
            progress.totalUnitCount = 10
            progress.advance(by: 0)
            progress.advance(by: 3)
            #expect(progress.completedUnitCount == 3)
        }
    #endif
}

/// The finish completes the progress before anyone is told of it: an awaiter, a `whenFinished`
/// handler reads the final progress. The race it guards against showed only in a fresh process,
/// on its first operation (the first calls of a process are slow: lazy symbol binding, metadata),
/// so each check runs as the first operation of a child process, many times.
@Suite("Progress: finished before the finish is told", .serialized)
struct ProgressFinishOrderTests {
    /// Differential: Foundation's `Progress` first, then the snapshot of the same counts (counts
    /// above the total are left out: the snapshot keeps its fraction within 0 and 1).
    @Test(
        "A total of zero with units completed: the snapshot says what Foundation's Progress says",
        arguments: [(total: Int64(0), completed: Int64(1)), (0, 5), (0, 0), (-1, 1), (-1, 0), (10, 4), (10, 10)]
    )
    func zeroTotalAgreesWithFoundation(total: Int64, completed: Int64) {
        let foundation = Progress(totalUnitCount: total)
        foundation.completedUnitCount = completed
        let progress = TaskOperation { 1 }.bridge.operationProgress
        progress.totalUnitCount = total
        progress.completedUnitCount = completed
        let snapshot = progress.snapshot
        #expect(snapshot.fractionCompleted == foundation.fractionCompleted)
        #expect(snapshot.isIndeterminate == foundation.isIndeterminate)
        #expect(!snapshot.isFinished)
    }

    @Test("Zero of zero, then one unit completed: 1, and not indeterminate, as Foundation says")
    func zeroTotalOneCompleted() {
        let foundation = Progress(totalUnitCount: 0)
        foundation.completedUnitCount = 1
        #expect(foundation.fractionCompleted == 1)
        #expect(!foundation.isIndeterminate)
        let progress = TaskOperation { 1 }.bridge.operationProgress
        progress.totalUnitCount = 0
        progress.completedUnitCount = 1
        #expect(progress.snapshot.fractionCompleted == 1)
        #expect(!progress.snapshot.isIndeterminate)
        #expect(progress.fractionCompleted == 1)
    }

    #if EXIT_TESTS
        /// `run`, `value`, `outcome` and `whenFinished`, each as the first operation of a fresh
        /// process. Before the fix, of 1,000 processes each, `whenFinished` read an unfinished
        /// progress in about 650, `run` and `outcome` in about 1 (more under load).
        @Test("run, value, outcome and whenFinished see the progress finished and complete, in fresh processes")
        func finishedProgressInFreshProcesses() async {
            for _ in 0..<Stress.iterations(50) {
                await #expect(processExitsWith: .success) {
                    let operation = ProgressFinishOrderTests.reportingFour()
                    _ = try? await OperationQueue().run(operation)
                    ProgressFinishOrderTests.checkComplete(operation.bridge.operationProgress.snapshot, after: "run")
                }
                await #expect(processExitsWith: .success) {
                    let operation = ProgressFinishOrderTests.reportingFour()
                    OperationQueue().addOperation(operation)
                    _ = try? await operation.bridge.value
                    ProgressFinishOrderTests.checkComplete(operation.bridge.operationProgress.snapshot, after: "value")
                }
                await #expect(processExitsWith: .success) {
                    let operation = ProgressFinishOrderTests.reportingFour()
                    OperationQueue().addOperation(operation)
                    _ = await operation.bridge.outcome
                    ProgressFinishOrderTests.checkComplete(
                        operation.bridge.operationProgress.snapshot, after: "outcome")
                }
                await #expect(processExitsWith: .success) {
                    let operation = ProgressFinishOrderTests.reportingFour()
                    let snapshot = await resumeOrdered { continuation in
                        operation.bridge.whenFinished(on: .dispatchQueue(DispatchQueue(label: "whenFinished"))) {
                            continuation.resume(returning: operation.bridge.operationProgress.snapshot)
                        }
                        OperationQueue().addOperation(operation)
                    }
                    ProgressFinishOrderTests.checkComplete(snapshot, after: "whenFinished")
                }
            }
        }

        /// An operation of 10 units whose closure reports 4 and returns 1: complete only if the
        /// finish completes its progress.
        static func reportingFour() -> TaskOperation<Int, any Error> {
            TaskOperation(totalUnitCount: 10) { progress async throws -> Int in
                progress.advance(by: 4)
                return 1
            }
        }

        /// Exits the child process with a failure unless `snapshot` is finished and complete.
        static func checkComplete(_ snapshot: ProgressSnapshot, after call: String) {
            guard snapshot.isFinished, snapshot.fractionCompleted == 1, snapshot.completedUnitCount == 10 else {
                fatalError("after \(call): \(snapshot)")
            }
        }
    #endif
}
