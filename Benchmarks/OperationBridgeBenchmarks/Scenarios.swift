import Foundation
import OperationBridge

/// Every scenario of the design's performance table (OperationBridge.docc/Design.md), each next to its hand-written baseline.
struct Scenarios {
    let options: Options

    /// The groups of scenarios, as `--only` names them: `--isolated` runs each in a process of its
    /// own. Every group that `run()` asks about must be listed (it traps otherwise).
    static let groups = [
        "await", "foreign", "serial", "timeout", "AsyncSequence", "async-closure", "chain", "fan-out", "growth",
        "group",
        "exclusivity", "streaming", "progress", "executors", "memory",
    ]

    func run() async throws -> [Measurement] {
        var rows: [Measurement] = []
        func wanted(_ name: String) -> Bool {
            precondition(Self.groups.contains(name), "benchmark group \(name) missing from Scenarios.groups")
            return options.only.map { name.contains($0) } ?? true
        }
        let rounds = options.rounds

        let awaitCount = options.size(50_000)
        if wanted("await") {
            rows.append(
                await compare(
                    "await \(awaitCount) operations concurrently", rounds: rounds, target: 1.10,
                    note: "baseline: the classic hand-copied AsyncResultOperation + onResult callback + continuation"
                ) {
                    let queue = OperationQueue()
                    let sum = Sum()
                    await forEachConcurrently(awaitCount) { index in
                        sum.add((try? await queue.run(ValueOperation(index))) ?? 0)
                    }
                    precondition(sum.value == awaitCount * (awaitCount - 1) / 2)
                } baseline: {
                    let queue = OperationQueue()
                    let sum = Sum()
                    await forEachConcurrently(awaitCount) { index in
                        sum.add(await handWrittenRun(ClassicResultOperation(index), on: queue))
                    }
                    precondition(sum.value == awaitCount * (awaitCount - 1) / 2)
                })
            rows.append(
                await compare(
                    "await \(awaitCount) operations one after another", rounds: rounds, target: 1.10,
                    note: "baseline: the classic hand-copied AsyncResultOperation + onResult callback + continuation"
                ) {
                    let queue = OperationQueue()
                    var sum = 0
                    for index in 0..<awaitCount {
                        sum &+= (try? await queue.run(ValueOperation(index))) ?? 0
                    }
                    precondition(sum == awaitCount * (awaitCount - 1) / 2)
                } baseline: {
                    let queue = OperationQueue()
                    var sum = 0
                    for index in 0..<awaitCount {
                        sum &+= await handWrittenRun(ClassicResultOperation(index), on: queue)
                    }
                    precondition(sum == awaitCount * (awaitCount - 1) / 2)
                })
        }

        if wanted("await") {
            rows.append(
                await compare(
                    "await \(awaitCount) concurrently vs a plain sync Operation", rounds: rounds, target: 1.25,
                    note: "baseline: a synchronous Operation subclass with a callback (the floor)"
                ) {
                    let queue = OperationQueue()
                    await forEachConcurrently(awaitCount) { index in
                        _ = try? await queue.run(ValueOperation(index))
                    }
                } baseline: {
                    let queue = OperationQueue()
                    await forEachConcurrently(awaitCount) { index in
                        _ = await handWrittenRun(CallbackOperation(index), on: queue)
                    }
                })
            // Against the floor: a plain synchronous Operation subclass with a callback, awaited
            // by hand. One after another it is mostly a matter of thread wake-ups, and of what
            // the awaiting task does between the add and its suspension (Design.md, "Performance").
            rows.append(
                await compare(
                    "await \(awaitCount) one after another vs a plain sync Operation", rounds: rounds, target: 1.5,
                    note: "baseline: a synchronous Operation subclass with a callback (the floor)"
                ) {
                    let queue = OperationQueue()
                    for index in 0..<awaitCount {
                        _ = try? await queue.run(ValueOperation(index))
                    }
                } baseline: {
                    let queue = OperationQueue()
                    for index in 0..<awaitCount {
                        _ = await handWrittenRun(CallbackOperation(index), on: queue)
                    }
                })
        }

        if wanted("foreign") {
            // Operations that are not the package's, against the peers' mechanism written by hand:
            // a completion operation added to the operation's own queue, depending on it, resumes
            // a continuation.
            let note = "baseline: a completion BlockOperation on the same queue, depending on the operation"
            rows.append(
                await compare(
                    "await \(awaitCount) BlockOperations concurrently (runUntilFinished)", rounds: rounds, target: 1.0,
                    note: note
                ) {
                    let queue = OperationQueue()
                    await forEachConcurrently(awaitCount) { index in
                        try? await queue.runUntilFinished(BlockOperation { blackHole(index) })
                    }
                } baseline: {
                    let queue = OperationQueue()
                    await forEachConcurrently(awaitCount) { index in
                        await handWrittenAwait(BlockOperation { blackHole(index) }, on: queue, enqueue: true)
                    }
                })
            rows.append(
                await compare(
                    "await \(awaitCount) BlockOperations one after another (runUntilFinished)", rounds: rounds,
                    target: 1.0, note: note
                ) {
                    let queue = OperationQueue()
                    for index in 0..<awaitCount {
                        try? await queue.runUntilFinished(BlockOperation { blackHole(index) })
                    }
                } baseline: {
                    let queue = OperationQueue()
                    for index in 0..<awaitCount {
                        await handWrittenAwait(BlockOperation { blackHole(index) }, on: queue, enqueue: true)
                    }
                })
            rows.append(
                await compare(
                    "await \(awaitCount) queued BlockOperations concurrently (bridge.waitForCompletion)",
                    rounds: rounds,
                    target: 1.0, note: note + "; each operation added with addOperation first"
                ) {
                    let queue = OperationQueue()
                    await forEachConcurrently(awaitCount) { index in
                        let operation = BlockOperation { blackHole(index) }
                        queue.addOperation(operation)
                        try? await operation.bridge.waitForCompletion()
                    }
                } baseline: {
                    let queue = OperationQueue()
                    await forEachConcurrently(awaitCount) { index in
                        let operation = BlockOperation { blackHole(index) }
                        queue.addOperation(operation)
                        await handWrittenAwait(operation, on: queue, enqueue: false)
                    }
                })
            rows.append(
                await compare(
                    "await \(awaitCount) queued BlockOperations one after another (bridge.waitForCompletion)",
                    rounds: rounds, target: 1.0, note: note + "; each operation added with addOperation first"
                ) {
                    let queue = OperationQueue()
                    for index in 0..<awaitCount {
                        let operation = BlockOperation { blackHole(index) }
                        queue.addOperation(operation)
                        try? await operation.bridge.waitForCompletion()
                    }
                } baseline: {
                    let queue = OperationQueue()
                    for index in 0..<awaitCount {
                        let operation = BlockOperation { blackHole(index) }
                        queue.addOperation(operation)
                        await handWrittenAwait(operation, on: queue, enqueue: false)
                    }
                })
        }

        if wanted("serial") {
            // Against the async task-queue libraries: a serial queue written by hand, each closure
            // a Task that awaits the one before it.
            let serialAsyncQueue: () async -> Void = {
                let queue = HandWrittenSerialQueue()
                var sum = 0
                for index in 0..<awaitCount {
                    sum &+= await queue.enqueue { index }.value
                }
                precondition(sum == awaitCount * (awaitCount - 1) / 2)
            }
            rows.append(
                await compare(
                    "await \(awaitCount) TaskOperations one after another (queue.run) vs a serial async queue",
                    rounds: rounds, target: nil,
                    note:
                        "for information: baseline: a hand-written serial async queue, each closure a Task awaiting the previous one"
                ) {
                    let queue = OperationQueue()
                    queue.maxConcurrentOperationCount = 1
                    var sum = 0
                    for index in 0..<awaitCount {
                        sum &+= await queue.run(TaskOperation { () async -> Int in index }) ?? 0
                    }
                    precondition(sum == awaitCount * (awaitCount - 1) / 2)
                } baseline: {
                    await serialAsyncQueue()
                })
            // The floor of the row above: the cheapest operation Foundation runs, awaited one
            // after another on a serial queue. Anything that goes through an OperationQueue pays
            // this much per operation.
            rows.append(
                await compare(
                    "await \(awaitCount) plain sync Operations one after another on a serial queue vs a serial async queue",
                    rounds: rounds, target: nil,
                    note:
                        "for information: the floor (a synchronous Operation with a callback) against the serial async queue"
                ) {
                    let queue = OperationQueue()
                    queue.maxConcurrentOperationCount = 1
                    var sum = 0
                    for index in 0..<awaitCount {
                        sum &+= await handWrittenRun(CallbackOperation(index), on: queue)
                    }
                    precondition(sum == awaitCount * (awaitCount - 1) / 2)
                } baseline: {
                    await serialAsyncQueue()
                })
            let chainSize = options.size(4_000)
            rows.append(
                try await compare(
                    "\(chainSize)-step chain through Pipeline vs a serial async queue", rounds: rounds, target: nil,
                    note:
                        "for information: baseline: the same chain as \(chainSize) closures on a hand-written serial async queue"
                ) {
                    try await runPipeline(chain(chainSize))
                } baseline: {
                    let queue = HandWrittenSerialQueue()
                    var last: Task<Void, Never>?
                    for _ in 0..<chainSize { last = queue.enqueue {} }
                    await last?.value
                })
            // Against the floor: the same async closures as synchronous BlockOperations.
            let closureCount = options.size(20_000)
            rows.append(
                await compare(
                    "\(closureCount) async closures on a width-1 queue, the last awaited", rounds: rounds, target: 2.0,
                    note: "baseline: the same closures as synchronous BlockOperations, the last awaited (the floor)"
                ) {
                    let queue = OperationQueue()
                    queue.maxConcurrentOperationCount = 1
                    var last: TaskOperation<Int, Never>?
                    for index in 0..<closureCount {
                        last = queue.addTask { () async -> Int in index }
                    }
                    let value = await last!.bridge.value
                    precondition(value == closureCount - 1)
                } baseline: {
                    let queue = OperationQueue()
                    queue.maxConcurrentOperationCount = 1
                    for index in 0..<closureCount - 1 {
                        queue.addOperation(BlockOperation { blackHole(index) })
                    }
                    let value = await handWrittenRun(CallbackOperation(closureCount - 1), on: queue)
                    precondition(value == closureCount - 1)
                })
        }

        if wanted("timeout") {
            // The price of a time limit: the same awaits with a generous timeout (never reached)
            // against none. Each arms and cancels a deadline of the ContinuousClock timer heap.
            rows.append(
                await compare(
                    "await \(awaitCount) concurrently with a 60 s timeout vs without", rounds: rounds, target: 1.30,
                    note: "baseline: the same runForOutcomeValue awaits without a time limit"
                ) {
                    let queue = OperationQueue()
                    await forEachConcurrently(awaitCount) { index in
                        _ = try? await queue.runForOutcomeValue(ValueOperation(index), within: .timeout(.seconds(60)))
                    }
                } baseline: {
                    let queue = OperationQueue()
                    await forEachConcurrently(awaitCount) { index in
                        _ = try? await queue.runForOutcomeValue(ValueOperation(index))
                    }
                })
            rows.append(
                await compare(
                    "await \(awaitCount) one after another with a 60 s timeout vs without", rounds: rounds,
                    target: 1.30, note: "baseline: the same runForOutcomeValue awaits without a time limit"
                ) {
                    let queue = OperationQueue()
                    for index in 0..<awaitCount {
                        _ = try? await queue.runForOutcomeValue(ValueOperation(index), within: .timeout(.seconds(60)))
                    }
                } baseline: {
                    let queue = OperationQueue()
                    for index in 0..<awaitCount {
                        _ = try? await queue.runForOutcomeValue(ValueOperation(index))
                    }
                })
            // An operation's own limit: armed when it starts, stopped when it finishes.
            rows.append(
                await compare(
                    "await \(awaitCount) concurrently, each with a 60 s running-time limit of its own, vs without",
                    rounds: rounds, target: 1.30,
                    note: "baseline: the same runForOutcomeValue awaits of operations without a limit"
                ) {
                    let queue = OperationQueue()
                    await forEachConcurrently(awaitCount) { index in
                        let operation = ValueOperation(index)
                        operation.bridge.limitRunningTime(to: .seconds(60))
                        _ = try? await queue.runForOutcomeValue(operation)
                    }
                } baseline: {
                    let queue = OperationQueue()
                    await forEachConcurrently(awaitCount) { index in
                        _ = try? await queue.runForOutcomeValue(ValueOperation(index))
                    }
                })
        }

        let sequenceCount = options.size(100_000)
        if wanted("AsyncSequence") {
            rows.append(
                try await compare(
                    "\(sequenceCount) results through the AsyncSequence", rounds: rounds, target: 1.20,
                    note: "baseline: classic hand-copied result operations with an onResult callback counting down"
                ) {
                    let queue = OperationQueue()
                    let operations = (0..<sequenceCount).map(ValueOperation.init)
                    var count = 0
                    for await element in try queue.results(of: operations) {
                        if case .success = element.result { count += 1 }
                    }
                    precondition(count == sequenceCount)
                } baseline: {
                    let queue = OperationQueue()
                    let countdown = Countdown(sequenceCount)
                    for index in 0..<sequenceCount {
                        let operation = ClassicResultOperation(index)
                        operation.onResult = { _ in countdown.tick() }
                        queue.addOperation(operation)
                    }
                    await countdown.wait()
                })
        }

        let taskCount = options.size(100_000)
        if wanted("async-closure") {
            rows.append(
                await compare(
                    "\(taskCount) async-closure operations through a queue", rounds: rounds, target: 1.20,
                    note: "baseline: a hand-written Task-in-Operation subclass"
                ) {
                    let queue = OperationQueue()
                    for index in 0..<taskCount {
                        queue.addTask { () async -> Int in index }
                    }
                    await queue.drain()
                } baseline: {
                    let queue = OperationQueue()
                    for index in 0..<taskCount {
                        queue.addOperation(HandWrittenTaskOperation { _ = index })
                    }
                    await queue.drain()
                })
            rows.append(
                await compare(
                    "\(taskCount) async-closure operations vs a task group", rounds: rounds, target: nil,
                    note: "for information: the price of going through OperationQueue at all"
                ) {
                    let queue = OperationQueue()
                    for index in 0..<taskCount {
                        queue.addTask { () async -> Int in index }
                    }
                    await queue.drain()
                } baseline: {
                    let sum = Sum()
                    await forEachConcurrently(taskCount) { index in
                        sum.add(index)
                    }
                })
        }

        let graphSize = options.size(16_000)
        if wanted("chain") || wanted("fan-out") || wanted("growth") {
            let independent: () async -> Void = {
                let queue = OperationQueue()
                for _ in 0..<graphSize { queue.addOperation(Step()) }
                await queue.drain()
            }
            if wanted("chain") {
                rows.append(
                    try await compare(
                        "\(graphSize)-step chain through Pipeline", rounds: rounds, target: 1.3,
                        note: "baseline: \(graphSize) independent operations added to a queue"
                    ) {
                        try await runPipeline(chain(graphSize))
                    } baseline: {
                        await independent()
                    })
            }
            if wanted("chain") {
                // Against the floor chain: synchronous operations run one after another on a
                // serial queue, the last awaited.
                for size in [graphSize / 4, graphSize] {
                    rows.append(
                        try await compare(
                            "\(size)-step chain through Pipeline vs the floor chain", rounds: rounds, target: 2.0,
                            note: "baseline: \(size) synchronous operations on a serial queue, the last awaited"
                        ) {
                            try await runPipeline(chain(size))
                        } baseline: {
                            await runFloorChain(size)
                        })
                }
            }
            if wanted("chain") {
                // What the row above is made of: the package's share (Pipeline against the same
                // number of operations chained by hand, without Foundation dependencies), and
                // the share of any chain on an OperationQueue (the hand-made chain against the
                // independent operations), which depends on the size of Dispatch's thread pool
                // (README, footnote 5).
                rows.append(
                    try await compare(
                        "\(graphSize)-step chain through Pipeline vs a chain of BlockOperations by hand",
                        rounds: rounds, target: nil,
                        note:
                            "for information: baseline: each BlockOperation adds the next as it runs, no dependencies"
                    ) {
                        try await runPipeline(chain(graphSize))
                    } baseline: {
                        await runHandWrittenChain(graphSize, on: OperationQueue())
                    })
                rows += try await foundationFloorRows(
                    of: "chain", job: "a chain of dependent operations",
                    byHand: "\(graphSize) BlockOperations with Foundation dependencies chained by hand",
                    pipeline: "\(graphSize)-step chain through Pipeline",
                    versus: "BlockOperations with Foundation dependencies by hand",
                    baseline: "\(graphSize) independent operations", rounds: rounds,
                    handWritten: { await runHandWrittenDependencyChain(graphSize, on: OperationQueue()) },
                    throughPipeline: { try await runPipeline(chain(graphSize)) },
                    baseline: independent)
                rows.append(
                    await compare(
                        "\(graphSize) BlockOperations chained by hand vs \(graphSize) independent operations",
                        rounds: rounds, target: nil,
                        note: "for information: the floor of any chain on a queue against the chain row's baseline"
                    ) {
                        await runHandWrittenChain(graphSize, on: OperationQueue())
                    } baseline: {
                        await independent()
                    })
            }
            if wanted("fan-out") {
                rows.append(
                    try await compare(
                        "\(graphSize) fan-out through Pipeline", rounds: rounds, target: 1.3,
                        note: "one source, \(graphSize) dependents; baseline: independent operations"
                    ) {
                        try await runPipeline(fanOut(graphSize))
                    } baseline: {
                        await independent()
                    })
                rows += try await foundationFloorRows(
                    of: "fan-out", job: "a fan-out of dependent operations",
                    byHand: "\(graphSize) BlockOperations depending on one, by hand",
                    pipeline: "\(graphSize) fan-out through Pipeline",
                    versus: "BlockOperations depending on one by hand",
                    baseline: "\(graphSize) independent operations", rounds: rounds,
                    handWritten: { await runHandWrittenDependencyFanOut(graphSize, on: OperationQueue()) },
                    throughPipeline: { try await runPipeline(fanOut(graphSize)) },
                    baseline: independent)
            }
            if wanted("growth") {
                let small = graphSize / 4
                rows.append(
                    try await compare(
                        "growth of the chain from \(small) to \(graphSize) steps", rounds: rounds, target: 4.5,
                        note: "library: \(graphSize) steps, baseline column: \(small) steps; linear is 4×"
                    ) {
                        try await runPipeline(chain(graphSize))
                    } baseline: {
                        try await runPipeline(chain(small))
                    })
            }
            let directSize = options.size(2_000, minimum: 500)
            if wanted("chain") {
                rows.append(
                    await compare(
                        "\(directSize)-step chain handed to OperationQueue directly", rounds: 1, target: nil,
                        note: "for information: what Pipeline avoids (quadratic on Linux)"
                    ) {
                        await runDirectly(chain(directSize))
                    } baseline: {
                        let queue = OperationQueue()
                        for _ in 0..<directSize { queue.addOperation(Step()) }
                        await queue.drain()
                    })
            }
            if wanted("fan-out") {
                rows.append(
                    await compare(
                        "\(directSize) fan-out handed to OperationQueue directly", rounds: 1, target: nil,
                        note: "for information: what Pipeline avoids (quadratic on Linux)"
                    ) {
                        await runDirectly(fanOut(directSize))
                    } baseline: {
                        let queue = OperationQueue()
                        for _ in 0..<directSize { queue.addOperation(Step()) }
                        await queue.drain()
                    })
            }
        }

        if wanted("group") {
            rows.append(
                try await compare(
                    "\(graphSize)-step chain as a GroupOperation", rounds: rounds, target: 1.2,
                    note: "baseline: the same chain through Pipeline"
                ) {
                    let group = try GroupOperation<Void, Never>(chain(graphSize))
                    let finished = await OperationQueue().run(group) != nil
                    precondition(finished)
                } baseline: {
                    try await runPipeline(chain(graphSize))
                })
        }

        if wanted("exclusivity") {
            let holders = 8
            let turns = options.size(5_000)
            let handOffs = holders * turns
            let key: ExclusivityKey = "benchmark"
            rows.append(
                try await compare(
                    "\(handOffs) exclusivity hand-offs between \(holders) tasks", rounds: rounds, target: nil,
                    note:
                        "for information: withExclusiveAccess (keys shared with operations, cancellable, multi-key); "
                        + "baseline: a hand-written async lock for one key (NSLock + FIFO of continuations)"
                ) {
                    let sum = Sum()
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        for _ in 0..<holders {
                            group.addTask {
                                for _ in 0..<turns { try await withExclusiveAccess(to: key) { sum.add(1) } }
                            }
                        }
                        try await group.waitForAll()
                    }
                    precondition(sum.value == handOffs)
                } baseline: {
                    let sum = Sum()
                    let lock = HandWrittenAsyncLock()
                    await withTaskGroup(of: Void.self) { group in
                        for _ in 0..<holders {
                            group.addTask {
                                for _ in 0..<turns { await lock.withLock { sum.add(1) } }
                            }
                        }
                    }
                    precondition(sum.value == handOffs)
                })
        }

        if wanted("streaming") {
            let streamCount = options.size(100_000)
            // The streaming rows' baseline: the same operations made up front and handed to
            // `results(of:)`, on a queue of width 8.
            @Sendable func streamingBaseline() async {
                let queue = OperationQueue()
                queue.maxConcurrentOperationCount = 8
                var count = 0
                for await element in try! queue.results(of: (0..<streamCount).map(ValueOperation.init)) {
                    if case .success = element.result { count += 1 }
                }
                precondition(count == streamCount)
            }
            rows.append(
                await compare(
                    "\(streamCount) inputs streamed through width 8", rounds: rounds, target: 1.20,
                    note: "baseline: the same operations made up front and handed to results(of:), queue width 8"
                ) {
                    let queue = OperationQueue()
                    queue.maxConcurrentOperationCount = 8
                    var count = 0
                    for await element in queue.results(
                        streaming: 0..<streamCount, maxInFlight: 8, { ValueOperation($0) })
                    {
                        if case .success = element.result { count += 1 }
                    }
                    precondition(count == streamCount)
                } baseline: {
                    await streamingBaseline()
                })
            rows.append(
                await compare(
                    "\(streamCount) inputs streamed by hand through width 8, without the package", rounds: rounds,
                    target: nil,
                    note:
                        "for information: the floor of a bounded stream (a task adding a BlockOperation per free place), against the row above's baseline"
                ) {
                    let queue = OperationQueue()
                    queue.maxConcurrentOperationCount = 8
                    let count = await runHandWrittenStream(streamCount, maxInFlight: 8, on: queue)
                    precondition(count == streamCount)
                } baseline: {
                    await streamingBaseline()
                })
            #if os(macOS) || os(Linux)
                rows.append(streamingPeakMemory(short: options.size(100_000), long: options.size(1_000_000)))
            #endif
        }

        if wanted("progress") {
            let progressCount = options.size(20_000)
            // Three times the rounds: the rounds of this row spread 0.7–1.7× around a true
            // overhead of a few percent (the baseline's time moves by a third from one round to
            // the next), and the median of seven moved by ±0.1 from run to run. Each round of
            // both sides takes about 0.3 s.
            rows.append(
                await compare(
                    "\(progressCount) TaskOperations reporting 100 units each vs reporting none", rounds: rounds * 3,
                    target: 1.20,
                    note: "baseline: the same addTask operations, whose closures report nothing; \(rounds * 3) rounds"
                ) {
                    let queue = OperationQueue()
                    for index in 0..<progressCount {
                        queue.addTask(totalUnitCount: 100) { (progress) async -> Int in
                            for _ in 0..<100 { progress.advance() }
                            return index
                        }
                    }
                    await queue.drain()
                } baseline: {
                    let queue = OperationQueue()
                    for index in 0..<progressCount {
                        queue.addTask { () async -> Int in index }
                    }
                    await queue.drain()
                })
            rows.append(
                await compare(
                    "\(progressCount) TaskOperations reporting 100 units, watched through their group's updates",
                    rounds: rounds, target: nil,
                    note: "for information: baseline is the same group, unwatched, its closures reporting nothing"
                ) {
                    let operations = (0..<progressCount).map { index in
                        TaskOperation(totalUnitCount: 100) { (progress) async -> Int in
                            for _ in 0..<100 { progress.advance() }
                            return index
                        }
                    }
                    let group = try! GroupOperation(operations) {}
                    let watcher = Task {
                        for await _ in group.bridge.operationProgress.updates(every: .milliseconds(50)) {}
                    }
                    _ = await OperationQueue().run(group)
                    await watcher.value
                } baseline: {
                    let operations = (0..<progressCount).map { index in TaskOperation { () async -> Int in index } }
                    _ = await OperationQueue().run(try! GroupOperation(operations) {})
                })
        }

        if wanted("executors") {
            rows += await executorRows()
        }

        if wanted("memory") {
            // Each probe is a subprocess: there are none on iOS-family platforms.
            #if os(macOS) || os(Linux)
                rows += memoryPerPendingOperation(count: options.size(100_000))
            #else
                FileHandle.standardError.write(
                    Data("memory rows: unavailable on this platform (no subprocesses)\n".utf8))
            #endif
        }
        return rows
    }

    /// Two rows for information that place a `Pipeline` row against Foundation alone: the same
    /// job written by hand with Foundation dependencies (`handWritten`, named `byHand`) against
    /// the row's own baseline, and the job through `Pipeline` against that hand-written one.
    private func foundationFloorRows(
        of row: String, job: String, byHand: String, pipeline: String, versus: String,
        baseline baselineName: String, rounds: Int,
        handWritten: () async -> Void, throughPipeline: () async throws -> Void, baseline: () async -> Void
    ) async throws -> [Measurement] {
        [
            await compare(
                "\(byHand) vs \(baselineName)", rounds: rounds, target: nil,
                note: "for information: the floor of \(job), without the package, against the \(row) row's baseline",
                library: handWritten, baseline: baseline),
            try await compare(
                "\(pipeline) vs \(versus)", rounds: rounds, target: nil,
                note: "for information: what the package adds to \(job)",
                library: throughPipeline, baseline: handWritten),
        ]
    }

    private func chain(_ count: Int) -> [Operation] {
        dependencyChain(count) { Step() as Operation }
    }

    private func fanOut(_ count: Int) -> [Operation] {
        let source = Step()
        var operations: [Operation] = [source]
        operations.reserveCapacity(count + 1)
        for _ in 0..<count {
            let step = Step()
            step.addDependency(source)
            operations.append(step)
        }
        return operations
    }

    private func runPipeline(_ operations: [Operation]) async throws {
        let queue = OperationQueue()
        try await Pipeline(operations, on: queue).waitForCompletion()
    }

    /// The floor of a chain: `count` synchronous operations one after another on a serial queue
    /// (no dependencies needed), the last awaited.
    private func runFloorChain(_ count: Int) async {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        for index in 0..<count - 1 {
            queue.addOperation(BlockOperation { blackHole(index) })
        }
        _ = await handWrittenRun(CallbackOperation(count - 1), on: queue)
    }

    private func runDirectly(_ operations: [Operation]) async {
        let queue = OperationQueue()
        for operation in operations { queue.addOperation(operation) }
        await queue.drain()
    }

    #if os(macOS) || os(Linux)
        /// Resident bytes per operation waiting in a suspended queue: every public kind a user
        /// creates per item — a subclass of each class users subclass, `TaskOperation`,
        /// `ChainedTaskOperation` — against `BlockOperation` (`makeProbeOperation(_:_:)`). Each
        /// probe runs in a fresh process, so that memory freed by an earlier probe cannot be
        /// reused and hide the cost.
        private func memoryPerPendingOperation(count: Int) -> [Measurement] {
            let note = "resident bytes per queued operation, each probe in a fresh process"
            let pending = "(\(count) in a suspended queue)"
            func row(_ scenario: String, _ kind: String, _ what: String) -> Measurement {
                probeRow(
                    scenario, rounds: options.rounds, library: (kind, count), baseline: ("BlockOperation", count),
                    target: 1.04, unit: "B/op", note: "\(what) vs BlockOperation: \(note)")
            }
            return [
                // Like with like: the closures of both capture nothing, or both capture the index.
                row(
                    "memory per pending TaskOperation \(pending)", "TaskOperationCapturingNothing",
                    "TaskOperation<Int, Never> whose closure captures nothing"),
                probeRow(
                    "memory per pending TaskOperation, both closures capturing the index",
                    rounds: options.rounds, library: ("TaskOperation", count),
                    baseline: ("BlockOperationUsingIndex", count), target: 1.04, unit: "B/op",
                    note: "TaskOperation<Int, Never> vs BlockOperation, each closure capturing its index: \(note)"),
                row(
                    "memory per pending AsyncResultOperation subclass \(pending)", "ValueOperation",
                    "an AsyncResultOperation<Int, CancellationError> subclass with an Int of its own"),
                row(
                    "memory per pending AsyncOperation subclass \(pending)", "AsyncOperation",
                    "an AsyncOperation subclass without fields of its own"),
                row(
                    "memory per pending ChainedAsyncResultOperation subclass \(pending)",
                    "ChainedAsyncResultOperation",
                    "a ChainedAsyncResultOperation<Int, Int, CancellationError> subclass given its input"),
                row(
                    "memory per pending ChainedTaskOperation \(pending)", "ChainedTaskOperation",
                    "ChainedTaskOperation<Int, Int, Never> given its input, its closure capturing nothing"),
                // The BlockOperation of `row` captures nothing: the optimizer drops its `_ = index`.
                probeRow(
                    "memory per pending TaskOperation capturing its index vs a BlockOperation capturing nothing",
                    rounds: options.rounds, library: ("TaskOperation", count),
                    baseline: ("BlockOperation", count), target: nil, unit: "B/op",
                    note: "for information: the index's closure context, which only one side has; \(note)"),
                probeRow(
                    "memory per pending TaskOperation reporting progress, both closures capturing the index",
                    rounds: options.rounds, library: ("TaskOperationReporting", count),
                    baseline: ("BlockOperationUsingIndex", count), target: nil, unit: "B/op",
                    note: "for information: the progress handle and the box that keeps it with the closure; \(note)"),
            ]
        }

        /// The peak resident memory of a process streaming `long` inputs through width 8, against
        /// one streaming `short`: bounded memory means the same peak. Three rounds of fresh
        /// processes each (a million inputs take seconds).
        private func streamingPeakMemory(short: Int, long: Int) -> Measurement {
            probeRow(
                "peak memory streaming \(long) inputs (vs \(short)) through width 8", rounds: min(3, options.rounds),
                library: ("stream", long), baseline: ("stream", short), target: 1.2, unit: "B",
                note: "peak resident bytes of a fresh process streaming the inputs: independent of the input count")
        }

        /// A row comparing the medians of memory probes, alternating library and baseline.
        private func probeRow(
            _ scenario: String, rounds: Int, library: (kind: String, count: Int), baseline: (kind: String, count: Int),
            target: Double?, unit: String, note: String
        ) -> Measurement {
            var libraryValues: [Double] = []
            var baselineValues: [Double] = []
            for _ in 0..<rounds {
                libraryValues.append(probe(library.kind, count: library.count))
                baselineValues.append(probe(baseline.kind, count: baseline.count))
            }
            let libraryMedian = median(libraryValues)
            let baselineMedian = median(baselineValues)
            return Measurement(
                scenario: scenario,
                library_seconds: libraryMedian,
                baseline_seconds: baselineMedian,
                ratio: libraryMedian / baselineMedian,
                target: target.map { String(format: "≤ %.2f×", $0) } ?? "info",
                within_target: target.map { libraryMedian / baselineMedian <= $0 },
                unit: unit,
                note: note
            )
        }

        /// Runs this executable with `--memory-probe KIND COUNT` and reads the bytes per operation.
        private func probe(_ kind: String, count: Int) -> Double {
            let output = runThisExecutable(["--memory-probe", kind, String(count)], for: "the memory probe")
            guard
                let value = Double(
                    String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
            else { fatalError("the memory probe printed no number") }
            return value
        }
    #endif
}

/// The body of a memory probe process: queue `count` operations of `kind` in a suspended queue
/// and print the growth of the resident set per operation.
func runMemoryProbe(kind: String, count: Int) {
    if kind == "stream" { return runStreamingProbe(count: count) }
    let queue = OperationQueue()
    queue.isSuspended = true
    var operations: [Operation] = []
    operations.reserveCapacity(count)
    guard let before = residentBytes() else { fatalError("the resident memory is unavailable on this platform") }
    for index in 0..<count {
        let operation = makeProbeOperation(kind, index)
        operations.append(operation)
        queue.addOperation(operation)
    }
    let after = residentBytes() ?? before
    print(Double(after - before) / Double(count))
    withExtendedLifetime(operations) {}
}

/// One operation of a memory probe's `kind`: every public kind a user creates per item, and
/// the `BlockOperation`s they are measured against.
func makeProbeOperation(_ kind: String, _ index: Int) -> Operation {
    switch kind {
    case "BlockOperation": BlockOperation { _ = index }
    case "BlockOperationUsingIndex": BlockOperation { blackHole(index) }
    // A subclass of each class users subclass, with what most such subclasses keep.
    case "AsyncOperation": Step()
    case "ValueOperation": ValueOperation(index)
    case "ChainedAsyncResultOperation": DoublingOperation(input: index)
    // The closure captures `index`: a closure context, allocated apart from the operation.
    case "TaskOperation": TaskOperation { () async -> Int in index }
    case "TaskOperationCapturingNothing": TaskOperation { () async -> Int in 42 }
    // Reporting progress: its progress handle, and the box keeping it with the closure.
    case "TaskOperationReporting": TaskOperation(totalUnitCount: 1) { (_: OperationProgress) async -> Int in index }
    // The closure gets the index as its input, and captures nothing.
    case "ChainedTaskOperation": ChainedTaskOperation(input: index) { (input: Int) async -> Int in input * 2 }
    default: fatalError("unknown probe kind \(kind)")
    }
}

/// Prints, for each kind the memory rows measure, the object's instance size and the usable size
/// of the chunk glibc gives it (16-byte steps: a chunk of n usable bytes takes n + 8). The
/// instance size is the `InstanceSize` field of the runtime's class metadata (at byte 24 without
/// Objective-C interoperability: Linux only). A closure's captures are a second allocation, not
/// counted here.
func printObjectSizes() {
    #if os(Linux)
        typealias UsableSize = @convention(c) (UnsafeMutableRawPointer?) -> Int
        guard let symbol = dlsym(nil, "malloc_usable_size") else { fatalError("glibc's malloc_usable_size is missing") }
        let usableSize = unsafeBitCast(symbol, to: UsableSize.self)
        let kinds = [
            "BlockOperation", "AsyncOperation", "ValueOperation", "ChainedAsyncResultOperation", "TaskOperation",
            "ChainedTaskOperation",
        ]
        for kind in kinds {
            // The smallest of 64 alive at once: one object alone may get a larger free chunk.
            let operations = (0..<64).map { makeProbeOperation(kind, $0) }
            let metadata = unsafeBitCast(type(of: operations[0]), to: UnsafeRawPointer.self)
            let instanceSize = metadata.load(fromByteOffset: 24, as: UInt32.self)
            let usable = operations.map { usableSize(Unmanaged.passUnretained($0).toOpaque()) }.min() ?? 0
            print("\(kind): \(instanceSize) bytes, chunk of \(usable) usable bytes")
        }
    #else
        FileHandle.standardError.write(Data("--object-sizes: Linux only\n".utf8))
        exit(2)
    #endif
}

/// The body of a streaming probe process: stream `count` inputs through width 8 and print the
/// peak resident bytes seen, sampled every 10,000 results.
func runStreamingProbe(count: Int) {
    let done = DispatchSemaphore(value: 0)
    let peak = Sum()
    Task {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 8
        var highest = residentBytes() ?? 0
        for await element in queue.results(streaming: 0..<count, maxInFlight: 8, { ValueOperation($0) })
        where element.index % 10_000 == 0 {
            highest = max(highest, residentBytes() ?? 0)
        }
        peak.add(max(highest, residentBytes() ?? 0))
        done.signal()
    }
    done.wait()
    print(Double(peak.value))
}

/// Uses `value` where the optimizer cannot see it, so that a closure passing it keeps its capture.
@inline(never)
func blackHole(_ value: Int) {
    if value == -1 { print(value) }
}

extension Scenarios {
    /// Runs each group of scenarios (those `--only` selects, or all) in a fresh process of its
    /// own, and returns their rows in group order.
    ///
    /// A process keeps the Dispatch threads its earlier rows started, and a larger pool changes
    /// how later rows measure (Benchmarks/Performance.md, footnote 5): isolated, no row depends on
    /// which rows ran before it.
    static func runIsolated(options: Options) -> [Measurement] {
        #if os(macOS) || os(Linux)
            var rows: [Measurement] = []
            for group in groups where options.only.map({ group.contains($0) }) ?? true {
                let output = runThisExecutable(
                    ["--only", group, "--json"] + (options.quick ? ["--quick"] : [])
                        + (options.growPool > 0 ? ["--grow-pool", String(options.growPool)] : []),
                    for: "the group \(group)")
                guard let groupRows = try? JSONDecoder().decode([Measurement].self, from: output),
                    !groupRows.isEmpty
                else { fatalError("the group \(group) printed no rows") }
                rows += groupRows
            }
            return rows
        #else
            FileHandle.standardError.write(Data("--isolated starts processes: macOS and Linux only\n".utf8))
            exit(2)
        #endif
    }
}
