import Foundation
import OperationBridge
import Testing

/// A step of the documented migration: it runs until `done` opens, or it is cancelled.
final class MigrationStep: AsyncOperation, @unchecked Sendable {
    let started = Gate()
    let done = Gate()

    init(_ name: String) {
        super.init()
        self.name = name
    }

    override func main() {
        started.open()
        Task {
            await done.wait()
            finish()
        }
    }

    override func cancel() {
        super.cancel()
        done.open()
    }
}

/// An operation that is not the package's and that is not ready until `release()`: its own
/// `isReady` says so.
///
/// Safety: `released` is only touched while holding `lock`.
final class HeldBackOperation: Operation, @unchecked Sendable {
    private let lock = NSLock()
    private var released = false

    override var isReady: Bool { lock.withLock { released } && super.isReady }

    func release() {
        willChangeValue(forKey: "isReady")
        lock.withLock { released = true }
        didChangeValue(forKey: "isReady")
    }

    override func main() {}
}

/// Suspends until `condition` holds, yielding in between: for states that the package reaches on
/// another thread with no event to wait for (a queue asking for an operation's readiness). The
/// outcome never depends on timing; only how long the loop turns does.
func until(_ condition: () -> Bool) async {
    while !condition() { await Task.yield() }
}

/// `queue.waitGraph` and `pipeline.waitGraph`: every kind of wait, as text and as DOT, and the
/// stability of both.
@Suite(.timeLimit(Stress.timeLimit(minutes: 1)))
struct WaitGraphTests {
    @Test("A dependency that was never queued: the chain ends at it, outside the queue")
    func dependency() async {
        let queue = OperationQueue()
        queue.name = "sync"
        let login = BlockOperation {}
        login.name = "login"
        let fetch = MigrationStep("fetch")
        fetch.addDependency(login)
        queue.addOperation(fetch)
        let graph = queue.waitGraph
        #expect(
            graph.text.contains(
                "- 'fetch' (MigrationStep): pending (not started), not cancelled\n    waits for 'login'"))
        #expect(
            graph.text.contains("- 'login' (BlockOperation) [outside the queue]: pending (not started), not cancelled"))
        #expect(
            graph.text.contains(
                "- 'fetch' waits for 'login', which is in no queue the package knows of: if it was never added to one, nothing starts it"
            ))
        #expect(
            graph.dot.contains(
                "n1 -> n2 [label=\"dependency\", color=\"#d62728\", fontcolor=\"#d62728\", penwidth=2.5];"))
        #expect(
            graph.dot.contains(
                "n2 [label=\"'login'\\nBlockOperation\\npending (outside the queue)\\nin no queue known to the package\""
            ))
        queue.addOperation(login)
        await fetch.started.wait()
        fetch.done.open()
        try? await fetch.bridge.waitForCompletion()
        #expect(queue.waitGraph.text.hasSuffix("Nothing is pending or running."))
    }

    @Test("The graph of one operation: it, then what it waits for, transitively")
    func oneOperation() async {
        let queue = OperationQueue()
        queue.name = "one"
        let reindex = MigrationStep("reindex")
        reindex.bridge.pause()
        let verify = MigrationStep("verify")
        let report = MigrationStep("report")
        report.addDependency(verify)
        report.addDependency(reindex)
        let unrelated = MigrationStep("unrelated")
        unrelated.bridge.pause()
        queue.addOperation(reindex)
        queue.addOperation(unrelated)
        let graph = report.bridge.waitGraph
        #expect(graph.text.hasPrefix("Wait graph of MigrationStep 'report':\nOperations:\n- 'report' (MigrationStep)"))
        #expect(graph.text.contains("- 'report' waits for 'verify', which is in no queue: it starts only once"))
        #expect(graph.text.contains("- 'report' waits for 'reindex', which is paused"))
        #expect(!graph.text.contains("unrelated"))
        #expect(!graph.text.contains("[outside"))
        #expect(graph.dot.contains("graph [label=\"MigrationStep 'report'\""))
        queue.addOperation(verify)
        queue.addOperation(report)
        for step in [reindex, unrelated] { step.bridge.resume() }
        for step in [reindex, unrelated, verify, report] {
            await step.started.wait()
            step.done.open()
        }
        try? await queue.waitForAllOperations()
    }

    @Test("A running group waits for its children")
    func group() async throws {
        let queue = OperationQueue()
        queue.name = "groups"
        let fetch = MigrationStep("fetch")
        let parse = MigrationStep("parse")
        parse.addDependency(fetch)
        let group = try GroupOperation<Void, any Error>([fetch, parse])
        group.name = "import"
        queue.addOperation(group)
        await fetch.started.wait()
        let graph = queue.waitGraph
        // (The type's name is the runtime's: `GroupOperation<(), Error>` on Linux.)
        #expect(
            graph.text.contains(
                "): executing, not cancelled\n    waits for its child 'fetch'\n    waits for its child 'parse'"))
        #expect(graph.text.contains("- 'import' waits for its child 'fetch', which is running"))
        #expect(
            graph.text.contains("- 'import' waits for its child 'parse', which waits for 'fetch', which is running"))
        #expect(graph.dot.contains("n1 -> n2 [label=\"child\""))
        fetch.done.open()
        await parse.started.wait()
        parse.done.open()
        try await group.bridge.waitForCompletion()
    }

    @Test("A condition being checked")
    func conditionBeingChecked() async {
        let queue = OperationQueue()
        queue.name = "uploads"
        let signedIn = Gate()
        let checking = Gate()
        let upload = MigrationStep("upload")
        upload.bridge.addCondition(
            OperationCondition("signed in") { _ in
                checking.open()
                await signedIn.wait()
                return true
            })
        queue.addOperation(upload)
        await checking.wait()
        let graph = queue.waitGraph
        #expect(graph.text.contains("    waits for its conditions to be checked: 'signed in'"))
        #expect(graph.text.contains("- 'upload' waits for its conditions to be checked: 'signed in'"))
        #expect(
            graph.dot.contains("checking conditions: 'signed in'\", style=\"rounded,filled\", fillcolor=\"#f8d0cc\"];"))
        #expect(upload.bridge.pendingDiagnostics.contains("its conditions are being checked: 'signed in'"))
        signedIn.open()
        await upload.started.wait()
        upload.done.open()
        try? await upload.bridge.waitForCompletion()
    }

    @Test("An exclusivity key held by a running operation, and a task")
    func exclusivityKey() async {
        let queue = OperationQueue()
        queue.name = "db"
        let holder = MigrationStep("holder")
        holder.bridge.addCondition(.mutuallyExclusive("database"))
        queue.addOperation(holder)
        await holder.started.wait()
        let waiter = MigrationStep("waiter")
        waiter.bridge.addCondition(.mutuallyExclusive("database"))
        queue.addOperation(waiter)
        await until { waiter.bridge.pendingDiagnostics.contains("for exclusivity key 'database'") }
        let graph = queue.waitGraph
        #expect(
            graph.text.contains(
                "- 'holder' (MigrationStep): executing, not cancelled\n    holds exclusivity key 'database'\n    is running"
            ))
        #expect(graph.text.contains("    waits for exclusivity key 'database', held by 'holder'; first in line"))
        #expect(
            graph.text.contains("- 'waiter' waits for exclusivity key 'database', held by 'holder', which is running"))
        #expect(graph.dot.contains("n2 -> n1 [label=\"key 'database'\""))
        #expect(
            graph.dot.contains(
                "n1 [label=\"'holder'\\nMigrationStep\\nrunning\\nholds key 'database'\", style=\"rounded,filled\", fillcolor=\"#d9f0d3\"];"
            ))
        holder.done.open()
        await waiter.started.wait()

        // A task in withExclusiveAccess holds the key now that the waiter has finished.
        waiter.done.open()
        try? await waiter.bridge.waitForCompletion()
        let inside = Gate()
        let release = Gate()
        let task = Task {
            try await withExclusiveAccess(to: "database") {
                inside.open()
                await release.wait()
            }
        }
        await inside.wait()
        let late = MigrationStep("late")
        late.bridge.addCondition(.mutuallyExclusive("database"))
        queue.addOperation(late)
        await until { late.bridge.pendingDiagnostics.contains("for exclusivity key 'database'") }
        let taskGraph = queue.waitGraph
        #expect(
            taskGraph.text.contains(
                "- 'late' waits for exclusivity key 'database', held by a task in withExclusiveAccess at OperationBridgeTests/WaitGraphTests.swift:"
            ))
        #expect(taskGraph.dot.contains("n1 -> t1 [label=\"key 'database'\""))
        #expect(
            taskGraph.dot.contains(
                "t1 [shape=ellipse, label=\"a task in withExclusiveAccess\\nOperationBridgeTests/WaitGraphTests.swift:")
        )
        release.open()
        try? await task.value
        late.done.open()
        try? await late.bridge.waitForCompletion()
    }

    @Test("A delayed start")
    func delay() async {
        let clock = TestClock()
        let queue = OperationQueue()
        queue.name = "reminders"
        let reminder = MigrationStep("reminder")
        queue.addOperation(reminder, after: .seconds(30), clock: clock)
        let graph = queue.waitGraph
        #expect(graph.text.contains("- 'reminder' waits for its delayed start"))
        #expect(graph.dot.contains("\\ndelayed start\", style=\"rounded,filled\""))
        #expect(
            reminder.bridge.pendingDiagnostics.contains("delayed: it becomes ready once its delayed start has passed"))
        clock.advance(by: .seconds(30))
        await reminder.started.wait()
        #expect(queue.waitGraph.text.contains("- 'reminder' is running"))
        reminder.done.open()
        try? await reminder.bridge.waitForCompletion()
    }

    @Test("A pause, and a dependent that waits for the paused operation")
    func pause() async {
        let queue = OperationQueue()
        queue.name = "sync"
        let upload = MigrationStep("upload")
        upload.bridge.pause()
        let notify = MigrationStep("notify")
        notify.addDependency(upload)
        queue.addOperationsWithoutWaiting([upload, notify])
        let graph = queue.waitGraph
        #expect(
            graph.text.contains(
                "- 'notify' waits for 'upload', which is paused: it becomes ready only after bridge.resume()"))
        #expect(!graph.text.contains("- 'upload' is paused"))  // not a chain of its own: 'notify' waits for it
        #expect(graph.dot.contains("n2 -> n1 [label=\"dependency\""))
        #expect(
            graph.dot.contains(
                "n1 [label=\"'upload'\\nMigrationStep\\npending\\npaused\", style=\"rounded,filled\", fillcolor=\"#f8d0cc\"];"
            ))
        #expect(upload.bridge.pendingDiagnostics.contains("paused: it becomes ready only after bridge.resume()"))
        upload.bridge.resume()
        await upload.started.wait()
        upload.done.open()
        await notify.started.wait()
        notify.done.open()
        try? await notify.bridge.waitForCompletion()
    }

    @Test("A free slot of a saturated queue: the chain goes on to the operation holding it")
    func queueSlot() async {
        let queue = OperationQueue()
        queue.name = "serial"
        queue.maxConcurrentOperationCount = 1
        let busy = MigrationStep("busy")
        queue.addOperation(busy)
        await busy.started.wait()
        let next = BlockOperation {}
        next.name = "next"
        queue.addOperation(next)
        let graph = queue.waitGraph
        #expect(graph.text.hasPrefix("Wait graph of queue 'serial', 1 of 1 slots in use — SATURATED, 1 pending:"))
        #expect(
            graph.text.contains(
                "- 'next' waits for a free slot of queue 'serial' (1 of 1 in use), held by 'busy', which is running"))
        #expect(graph.dot.contains("n2 -> q1 [label=\"free slot\""))
        #expect(graph.dot.contains("q1 -> n1 [label=\"slot held by\", color=\"#777777\", style=dashed];"))
        busy.done.open()
        try? await next.bridge.waitForCompletion()
    }

    @Test("A suspended queue")
    func suspendedQueue() async {
        let queue = OperationQueue()
        queue.name = "paused"
        queue.isSuspended = true
        let step = MigrationStep("step")
        queue.addOperation(step)
        let graph = queue.waitGraph
        #expect(graph.text.contains("- 'step' waits for queue 'paused', which is suspended"))
        #expect(graph.dot.contains("n1 -> q1 [label=\"suspended\""))
        #expect(
            graph.dot.contains(
                "q1 [shape=folder, label=\"queue 'paused'\\nSUSPENDED (nothing starts until isSuspended = false)\\n0 executing, no slot limit\\n1 pending\", style=filled, fillcolor=\"#f8d0cc\"];"
            ))
        queue.isSuspended = false
        await step.started.wait()
        step.done.open()
        try? await step.bridge.waitForCompletion()
    }

    @Test("An operation that is not the package's, with an isReady of its own that says no")
    func notReady() async {
        let queue = OperationQueue()
        queue.name = "own readiness"
        let held = HeldBackOperation()
        held.name = "held"
        queue.addOperation(held)
        let graph = queue.waitGraph
        #expect(graph.text.contains("- 'held' is not ready: its own isReady is false"))
        #expect(graph.dot.contains("not ready (its isReady is false)\", style=\"rounded,filled\""))
        held.release()
        try? await held.bridge.waitForCompletion()
    }

    @Test("A pipeline step's dependency outside the pipeline, listed in its queue, is shown in that queue")
    func readyAndListed() async throws {
        let queue = OperationQueue()
        queue.name = "listed"
        queue.isSuspended = true
        let outside = BlockOperation {}
        outside.name = "outside"
        queue.addOperation(outside)  // in the queue, not in the pipeline
        let step = MigrationStep("step")
        step.addDependency(outside)
        let pipeline = try Pipeline([step], on: queue)
        pipeline.start()
        let text = pipeline.waitGraph.text
        #expect(
            text.contains(
                "- 'step' waits for 'outside', which waits for queue 'listed', which is suspended"))
        #expect(text.contains("- 'outside' (BlockOperation) [outside the pipeline]: pending (not started)"))
        queue.isSuspended = false
        await step.started.wait()
        // Once the queue runs: an operation added by hand that depends on the running step.
        let ready = BlockOperation {}
        ready.name = "ready"
        ready.addDependency(step)
        queue.addOperation(ready)
        #expect(queue.waitGraph.text.contains("- 'ready' waits for 'step', which is running"))
        step.done.open()
        try? await ready.bridge.waitForCompletion()
    }

    @Test("A cancelled operation waits for its queue only, not for its dependencies")
    func cancelledOperation() async {
        let queue = OperationQueue()
        queue.name = "cancelled"
        queue.isSuspended = true
        let never = BlockOperation {}
        let step = MigrationStep("step")
        step.addDependency(never)
        step.cancel()
        queue.addOperation(step)
        let text = queue.waitGraph.text
        #expect(
            text.contains(
                "- 'step' (MigrationStep): pending (not started), cancelled\n    waits for queue 'cancelled', which is suspended"
            ))
        #expect(!text.contains("BlockOperation"))
        queue.isSuspended = false
        try? await step.bridge.waitForCompletion()
        withExtendedLifetime(never) {}
    }

    @Test("A dependency cycle: the chain says so")
    func cycle() async {
        let queue = OperationQueue()
        queue.name = "cycle"
        let first = MigrationStep("first")
        let second = MigrationStep("second")
        first.addDependency(second)
        second.addDependency(first)
        queue.addOperationsWithoutWaiting([first, second])
        let text = queue.waitGraph.text
        #expect(
            text.contains("- 'first' waits for 'second', which waits for 'first', which waits for it again: a cycle"))
        first.cancel()
        second.cancel()
        try? await [first, second].waitForCompletion()
    }

    @Test("Unnamed operations get their type and position; a name given twice gets the position too")
    func labels() async {
        let queue = OperationQueue()
        queue.name = "labels"
        queue.isSuspended = true
        let unnamed = ManualResultOperation<Int, TransferError>()
        let twin1 = MigrationStep("twin")
        let twin2 = MigrationStep("twin")
        let plain = BlockOperation {}
        queue.addOperationsWithoutWaiting([unnamed, twin1, twin2, plain])
        let graph = queue.waitGraph
        #expect(
            graph.text.contains("- ManualResultOperation<Int, TransferError> #1: pending (not started), not cancelled"))
        #expect(graph.text.contains("- 'twin' #2 (MigrationStep): pending"))
        #expect(graph.text.contains("- 'twin' #3 (MigrationStep): pending"))
        #expect(graph.text.contains("- BlockOperation #4: pending"))
        #expect(graph.dot.contains("n1 [label=\"ManualResultOperation<Int, TransferError> #1\\npending\"];"))
        for operation in [unnamed, twin1, twin2, plain] { operation.cancel() }
        queue.isSuspended = false
        try? await queue.waitForAllOperations()
    }

    @Test("The same state gives the same text and DOT; a label with quotes is escaped")
    func stability() async {
        let queue = OperationQueue()
        queue.name = "say \"hi\""
        queue.isSuspended = true
        let steps = (1...5).map { MigrationStep("step \($0)") }
        for (step, next) in zip(steps, steps.dropFirst()) { next.addDependency(step) }
        queue.addOperationsWithoutWaiting(steps.reversed())
        let first = queue.waitGraph
        let second = queue.waitGraph
        #expect(first.text == second.text)
        #expect(first.dot == second.dot)
        #expect(first.description == first.text)
        #expect(first.dot.hasPrefix("digraph WaitGraph {\n  graph [label=\"queue 'say \\\"hi\\\"'\""))
        #expect(first.dot.hasSuffix("}\n"))
        // The queue's order: the last step was added first.
        #expect(first.text.contains("Operations:\n- 'step 5' (MigrationStep)"))
        #expect(
            first.text.contains(
                "- 'step 5' waits for 'step 4', which waits for 'step 3', which waits for 'step 2', which waits for 'step 1', which waits for queue 'say \"hi\"', which is suspended"
            ))
        queue.isSuspended = false
        for step in steps {
            await step.started.wait()
            step.done.open()
        }
        try? await queue.waitForAllOperations()
    }

    @Test("A pipeline shows the steps it holds back, before and after it starts")
    func pipeline() async throws {
        let queue = OperationQueue()
        queue.name = "pipeline"
        let fetch = MigrationStep("fetch")
        let parse = MigrationStep("parse")
        parse.addDependency(fetch)
        let store = MigrationStep("store")
        store.addDependency(parse)
        let pipeline = try Pipeline([fetch, parse, store], on: queue)
        let before = pipeline.waitGraph
        #expect(
            before.text.hasPrefix("Wait graph of a pipeline of 3 steps, 0 finished, not started, on queue 'pipeline'"))
        #expect(
            before.text.contains(
                "- 'store' waits for 'parse', which waits for 'fetch', which waits for its pipeline to start"))
        #expect(before.dot.contains("pipeline not started"))
        #expect(queue.waitGraph.text.hasSuffix("Nothing is pending or running."))

        pipeline.start()
        await fetch.started.wait()
        let running = pipeline.waitGraph
        #expect(running.text.hasPrefix("Wait graph of a pipeline of 3 steps, 0 finished, on queue 'pipeline'"))
        #expect(running.text.contains("- 'store' waits for 'parse', which waits for 'fetch', which is running"))
        // The queue lists only what the pipeline has handed to it.
        #expect(!queue.waitGraph.text.contains("'parse'"))
        fetch.done.open()
        await parse.started.wait()
        #expect(pipeline.waitGraph.text.contains("3 steps, 1 finished"))
        parse.done.open()
        await store.started.wait()
        store.done.open()
        try await pipeline.waitForCompletion()
        #expect(pipeline.waitGraph.text.hasSuffix("Nothing is pending or running."))
    }

    @Test("A pipeline step waiting for a slot names the queue's other work holding it")
    func pipelineOnSaturatedQueue() async throws {
        let queue = OperationQueue()
        queue.name = "shared"
        queue.maxConcurrentOperationCount = 1
        let other = MigrationStep("other work")
        queue.addOperation(other)
        await other.started.wait()
        let step = MigrationStep("step")
        let pipeline = try Pipeline([step], on: queue)
        pipeline.start()
        let text = pipeline.waitGraph.text
        #expect(text.contains("- 'other work' (MigrationStep) [outside the pipeline]: executing, not cancelled"))
        #expect(
            text.contains(
                "- 'step' waits for a free slot of queue 'shared' (1 of 1 in use), held by 'other work', which is running"
            ))
        other.done.open()
        await step.started.wait()
        step.done.open()
        try await pipeline.waitForCompletion()
    }

    @Test("The picture in the hangs article is what the package draws: Resources/stuck-migration.dot")
    func documentedPicture() async throws {
        let (queue, steps) = await stuckMigration()
        let graph = queue.waitGraph
        let url = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
            .appendingPathComponent("Sources/OperationBridge/OperationBridge.docc/Resources/stuck-migration.dot")
        if ProcessInfo.processInfo.environment["OPERATIONBRIDGE_UPDATE_WAIT_GRAPH"] != nil {
            try graph.dot.write(to: url, atomically: true, encoding: .utf8)
            try graph.text.write(
                to: url.deletingPathExtension().appendingPathExtension("txt"), atomically: true, encoding: .utf8)
        }
        let checkedIn = try String(contentsOf: url, encoding: .utf8)
        #expect(
            graph.dot == checkedIn,
            "The DOT of the documented scenario changed: run OPERATIONBRIDGE_UPDATE_WAIT_GRAPH=1 swift test --filter WaitGraphTests, then scripts/render-wait-graph.sh"
        )
        let text = try String(contentsOf: url.deletingPathExtension().appendingPathExtension("txt"), encoding: .utf8)
        #expect(graph.text == text)
        for step in steps { step.cancel() }
        try? await queue.waitForAllOperations()
    }

    @Test("A chain of 5,000 steps: one line, shortened in the middle, without recursion")
    func longChain() async throws {
        let steps = (0..<5_000).map { MigrationStep("step \($0)") }
        for (step, next) in zip(steps, steps.dropFirst()) { next.addDependency(step) }
        let pipeline = try Pipeline(steps, on: OperationQueue())
        let text = pipeline.waitGraph.text
        let chains = text.components(separatedBy: "Waiting chains:\n")[1].split(separator: "\n")
        #expect(chains.count == 1)
        #expect(
            chains.first
                == "- 'step 4999' waits for 'step 4998', which waits for 'step 4997', which waits for 'step 4996', which waits for 'step 4995', which waits for 'step 4994', which waits for 'step 4993', which … 4989 more waits …, which waits for 'step 3', which waits for 'step 2', which waits for 'step 1', which waits for 'step 0', which waits for its pipeline to start"
        )
        pipeline.cancel()
        try await pipeline.waitForCompletion()
    }

    @Test("The migration guide's before and after: a dump of the queue, then its wait graph")
    func migrationGuide() async {
        let queue = OperationQueue()
        queue.name = "guide"
        queue.isSuspended = true
        let step = MigrationStep("step")
        queue.addOperation(step)
        // Before
        for operation in queue.operations {
            print(operation.name ?? "?", operation.isReady, operation.isExecuting)
        }
        // After
        print(queue.waitGraph)
        #expect(queue.waitGraph.text.contains("- 'step' waits for queue 'guide', which is suspended"))
        queue.isSuspended = false
        await step.started.wait()
        step.done.open()
        try? await step.bridge.waitForCompletion()
    }

    #if EXIT_TESTS
        @Test("OPERATIONBRIDGE_STUCK_AWAIT_SECONDS prints the wait graph of the queue involved")
        func stuckAwaitPrintsTheQueue() async throws {
            let exit = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                setenv("OPERATIONBRIDGE_STUCK_AWAIT_SECONDS", "0.05", 1)
                // Read this process's own standard error through a pipe, so the test waits for the
                // log itself (a blocking read), not for a length of time.
                let pipe = Pipe()
                let originalError = dup(STDERR_FILENO)
                dup2(pipe.fileHandleForWriting.fileDescriptor, STDERR_FILENO)
                let queue = OperationQueue()
                queue.name = "stuck"
                queue.isSuspended = true
                let step = queue.addTask { () async -> Int in 1 }
                step.name = "step"
                let awaiting = Task { await step.bridge.value }
                var logged = ""
                while !logged.contains("- 'step' waits for queue 'stuck', which is suspended") {
                    logged += String(decoding: pipe.fileHandleForReading.availableData, as: UTF8.self)
                }
                queue.isSuspended = false
                _ = await awaiting.value
                dup2(originalError, STDERR_FILENO)
                FileHandle.standardError.write(Data(logged.utf8))
            }
            let message = String(decoding: try #require(exit).standardErrorContent, as: UTF8.self)
            #expect(message.contains("OperationBridge: an await has been waiting for more than 0.05 s"))
            #expect(message.contains("TaskOperation<Int, Never> 'step': pending (not started)"))
            #expect(message.contains("Wait graph of queue 'stuck', SUSPENDED"))
        }
    #endif

    #if EXIT_TESTS
        @Test("OPERATIONBRIDGE_STUCK_AWAIT_SECONDS prints the wait graph of an awaited pipeline and of a drained queue")
        func stuckPipelineAndDrainPrintTheirGraphs() async throws {
            let exit = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                setenv("OPERATIONBRIDGE_STUCK_AWAIT_SECONDS", "0.05", 1)
                let pipe = Pipe()
                let originalError = dup(STDERR_FILENO)
                dup2(pipe.fileHandleForWriting.fileDescriptor, STDERR_FILENO)
                let queue = OperationQueue()
                queue.name = "stuck"
                queue.isSuspended = true
                let step = BlockOperation {}
                step.name = "step"
                let pipeline = try! Pipeline([step], on: queue)
                let awaitingPipeline = Task { try await pipeline.waitForCompletion() }
                let draining = Task { try await queue.waitForAllOperations() }
                var logged = ""
                while !(logged.contains("Wait graph of a pipeline of 1 step")
                    && logged.contains("a wait for all operations of a queue has been waiting"))
                {
                    logged += String(decoding: pipe.fileHandleForReading.availableData, as: UTF8.self)
                }
                queue.isSuspended = false
                try? await awaitingPipeline.value
                try? await draining.value
                dup2(originalError, STDERR_FILENO)
                FileHandle.standardError.write(Data(logged.utf8))
            }
            let message = String(decoding: try #require(exit).standardErrorContent, as: UTF8.self)
            #expect(message.contains("OperationBridge: an await of a pipeline has been waiting for more than 0.05 s"))
            #expect(message.contains("- 'step' waits for queue 'stuck', which is suspended"))
            #expect(message.contains("Wait graph of queue 'stuck', SUSPENDED"))
        }
    #endif

    /// The migration of the hangs article, stuck: its steps, in a queue of two slots.
    func stuckMigration() async -> (OperationQueue, [Operation]) {
        let queue = OperationQueue()
        queue.name = "migration"
        queue.maxConcurrentOperationCount = 2

        let export = MigrationStep("export")  // runs, holding the key "db"
        export.bridge.addCondition(.mutuallyExclusive("db"))
        let thumbnails = MigrationStep("thumbnails")  // runs
        let migrate = MigrationStep("migrate schema")  // needs "db" too
        migrate.bridge.addCondition(.mutuallyExclusive("db"))
        let verify = MigrationStep("verify")
        verify.addDependency(migrate)
        let reindex = MigrationStep("reindex")
        reindex.bridge.pause()
        let report = MigrationStep("report")
        report.addDependency(verify)
        report.addDependency(reindex)
        let login = BlockOperation {}
        login.name = "login"  // never queued
        let upload = MigrationStep("upload")
        upload.addDependency(login)
        let cleanup = MigrationStep("cleanup")

        queue.addOperationsWithoutWaiting([export, thumbnails])
        // ...
        await export.started.wait()
        await thumbnails.started.wait()
        queue.addOperationsWithoutWaiting([migrate, verify, reindex, report, upload, cleanup])
        await until { migrate.bridge.pendingDiagnostics.contains("for exclusivity key 'db'") }
        return (queue, [export, thumbnails, migrate, verify, reindex, report, upload, cleanup, login])
    }
}
