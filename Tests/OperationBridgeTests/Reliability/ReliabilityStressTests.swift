import Foundation
import OperationBridge
import Testing

/// Tries to break every public API at once: operations of every kind in random dependency
/// graphs, scheduled directly, through pipelines and through results sequences, on queues with
/// random limits and suspension, with random awaiters, random failures and random cancellation
/// of operations, awaiting tasks, pipelines and whole queues.
///
/// Invariants checked on every run: no operation's work starts before its dependencies have
/// finished; every awaiter is answered exactly once; every operation ends; every result
/// operation ends with a result; nothing stays alive afterwards.
///
/// `OPERATIONBRIDGE_STRESS_SCALE` multiplies the number of runs; `OPERATIONBRIDGE_STRESS_SEED`
/// replays one (the seed is printed).
@Suite struct ReliabilityStressTests {
    @Test(.timeLimit(Stress.timeLimit(minutes: 10)))
    func randomizedGraphsAwaitersAndCancellation() async throws {
        let seed = Stress.seed()
        print("ReliabilityStressTests seed: \(seed) (replay with OPERATIONBRIDGE_STRESS_SEED=\(seed))")
        var generator = SeededGenerator(seed: seed)
        var totals = RunTotals()
        for run in 0..<Stress.iterations(80) {
            let size = Int.random(in: 10...120, using: &generator)
            var (totalsOfRun, weakOperations, ledger) = try await oneRun(size: size, generator: &generator)
            let alive = await aliveAfterwards(weakOperations, ledger: ledger)
            if alive > 0 {
                let kinds = weakOperations.compactMap { $0.object }.map {
                    "\(type(of: $0))(finished: \($0.isFinished))"
                }
                totalsOfRun.violations.append("\(alive) operations still alive after the run: \(kinds.prefix(6))")
            }
            weakOperations.removeAll()
            #expect(totalsOfRun.violations.isEmpty, "seed \(seed), run \(run): \(totalsOfRun.violations.prefix(5))")
            totals.add(totalsOfRun)
        }
        print(
            "ReliabilityStressTests: \(totals.operations) operations, \(totals.awaiters) awaiters, "
                + "\(totals.bodiesRun) bodies run, \(totals.cancelledOperations) cancelled")
        #expect(totals.operations > 0)
        #expect(totals.awaiters > 0)
    }

    struct RunTotals {
        var operations = 0
        var awaiters = 0
        var bodiesRun = 0
        var cancelledOperations = 0
        var violations: [String] = []

        mutating func add(_ other: RunTotals) {
            operations += other.operations
            awaiters += other.awaiters
            bodiesRun += other.bodiesRun
            cancelledOperations += other.cancelledOperations
        }
    }

    /// Weakly holds an operation so a closure can refer to the operation that runs it, and
    /// carries the release token of that operation's closure.
    final class OperationHolder: @unchecked Sendable {
        weak var operation: Operation?
        let token: ReleaseProbe
        init(_ ledger: StressLedger) { token = ledger.makeProbe() }
    }

    private enum Route {
        case direct(queue: Int)
        case pipeline
        case sequence
    }

    private func oneRun(
        size: Int,
        generator: inout SeededGenerator
    ) async throws -> (RunTotals, [WeakBox<Operation>], StressLedger) {
        let ledger = StressLedger(operations: size)
        var operations: [Operation] = []
        var resultOperations: [AsyncResultOperation<Int, StressError>] = []

        // 1. Operations of every kind, with random extra dependencies on earlier ones.
        for index in 0..<size {
            let operation: Operation
            let kind = Int.random(in: 0..<7, using: &generator)
            let upstream = resultOperations.randomElement(using: &generator)
            switch kind {
            case 0:
                let fails = Int.random(in: 0..<6, using: &generator) == 0
                operation = StressResultOperation(fails ? .failure(.planned(index)) : .success(index), ledger: ledger)
            case 1 where upstream != nil:
                let chained = StressChainedOperation(ledger: ledger)
                if Bool.random(using: &generator) {
                    chained.takeInput(from: upstream!)
                } else {
                    chained.addDependency(upstream!)
                }
                operation = chained
            case 2:
                let holder = OperationHolder(ledger)
                let fails = Int.random(in: 0..<8, using: &generator) == 0
                let yields = Int.random(in: 0..<3, using: &generator)
                let task = TaskOperation { () async throws(StressError) -> Int in
                    if let operation = holder.operation { ledger.workStarted(operation, name: "task operation") }
                    for _ in 0..<yields { await Task.yield() }
                    if Task.isCancelled { throw .cancelled }
                    if fails { throw .planned(index) }
                    return index
                }
                holder.operation = task
                operation = task
            case 3 where upstream != nil:
                let holder = OperationHolder(ledger)
                let step = upstream!.bridge.then { (value: Int) async throws(StressError) -> Int in
                    if let operation = holder.operation { ledger.workStarted(operation, name: "then step") }
                    await Task.yield()
                    return value &+ 1
                }
                holder.operation = step
                operation = step
            case 4:
                operation = StressPlainOperation(ledger: ledger)
            case 5:
                operation = StressForeignOperation(ledger: ledger)
            default:
                let holder = OperationHolder(ledger)
                let block = BlockOperation {
                    if let operation = holder.operation { ledger.workStarted(operation, name: "block operation") }
                }
                holder.operation = block
                operation = block
            }
            for _ in 0..<Int.random(in: 0...2, using: &generator) where !operations.isEmpty {
                operation.addDependency(operations.randomElement(using: &generator)!)
            }
            operations.append(operation)
            if let result = operation as? AsyncResultOperation<Int, StressError> {
                resultOperations.append(result)
            }
        }

        // 2. Queues with random limits, some suspended.
        let queues = (0..<Int.random(in: 1...3, using: &generator)).map { _ in
            let queue = OperationQueue()
            queue.maxConcurrentOperationCount = [1, 2, 3, OperationQueue.defaultMaxConcurrentOperationCount]
                .randomElement(using: &generator)!
            queue.isSuspended = Int.random(in: 0..<4, using: &generator) == 0
            return queue
        }

        // 3. Routes: directly to a queue, through one pipeline, or through one results sequence.
        var routes: [Route] = []
        for operation in operations {
            let choice = Int.random(in: 0..<3, using: &generator)
            if choice == 2, operation is AsyncResultOperation<Int, StressError> {
                routes.append(.sequence)
            } else if choice == 1 {
                routes.append(.pipeline)
            } else {
                routes.append(.direct(queue: Int.random(in: 0..<queues.count, using: &generator)))
            }
        }

        // 4. Some operations are cancelled before anything starts.
        var cancelledOperations = 0
        for operation in operations where Int.random(in: 0..<10, using: &generator) == 0 {
            operation.cancel()
            cancelledOperations += 1
        }

        // 5. Awaiters: 0–5 per operation, of random kinds; some of their tasks get cancelled.
        var awaiterTasks: [Task<Void, Never>] = []
        var awaiterID = 0
        for operation in operations {
            for _ in 0..<Int.random(in: 0...5, using: &generator) {
                let id = awaiterID
                awaiterID += 1
                let style = Int.random(in: 0..<3, using: &generator)
                let task: Task<Void, Never>
                if let result = operation as? AsyncResultOperation<Int, StressError>, style == 0 {
                    task = Task {
                        _ = try? await result.bridge.value
                        ledger.answered(id)
                    }
                } else if let result = operation as? AsyncResultOperation<Int, StressError>, style == 1 {
                    task = Task {
                        _ = await result.bridge.outcome
                        ledger.answered(id)
                    }
                } else {
                    task = Task {
                        try? await operation.bridge.waitForCompletion()
                        ledger.answered(id)
                    }
                }
                if Int.random(in: 0..<5, using: &generator) == 0 { task.cancel() }
                awaiterTasks.append(task)
            }
        }

        // 6. Start everything.
        for (operation, route) in zip(operations, routes) {
            if case .direct(let queue) = route { queues[queue].addOperation(operation) }
        }
        let pipelineOperations = zip(operations, routes).compactMap { operation, route -> Operation? in
            if case .pipeline = route { return operation }
            return nil
        }
        let pipeline = try Pipeline(
            pipelineOperations,
            on: queues.randomElement(using: &generator)!,
            failurePolicy: Bool.random(using: &generator) ? .cancelDependents : .cancelAll
        )
        pipeline.start()

        let sequenceOperations = zip(operations, routes).compactMap {
            operation, route -> AsyncResultOperation<Int, StressError>? in
            if case .sequence = route { return operation as? AsyncResultOperation<Int, StressError> }
            return nil
        }
        let breakAfter = Int.random(in: 0...(sequenceOperations.count + 2), using: &generator)
        let results = try queues.randomElement(using: &generator)!.results(
            of: sequenceOperations, order: Bool.random(using: &generator) ? .completion : .submission)
        let consumer = Task {
            var seen = 0
            for await element in results {
                if element.result == nil { ledger.violation("a result operation ended without a result") }
                seen += 1
                if seen == breakAfter { break }
            }
        }

        // 7. Chaos: cancel running operations, a pipeline, a whole queue; resume suspended queues.
        let victims = operations.filter { _ in Int.random(in: 0..<12, using: &generator) == 0 }
        let cancelPipeline = Int.random(in: 0..<8, using: &generator) == 0
        let cancelQueue = Int.random(in: 0..<8, using: &generator) == 0 ? queues.randomElement(using: &generator) : nil
        let chaos = Task {
            await Task.yield()
            for victim in victims { victim.cancel() }
            if cancelPipeline { pipeline.cancel() }
            cancelQueue?.cancelAllOperations()
            for queue in queues { queue.isSuspended = false }
        }
        cancelledOperations += victims.count

        // 8. Everything must end.
        await chaos.value
        try await operations.waitForCompletion()
        for task in awaiterTasks { await task.value }
        await consumer.value
        for queue in queues { try await queue.waitForAllOperations() }

        // 9. Invariants.
        var totals = RunTotals()
        let snapshot = ledger.snapshot
        totals.violations = snapshot.violations
        for operation in operations where !operation.isFinished {
            totals.violations.append("an operation of type \(type(of: operation)) did not finish")
        }
        for result in resultOperations where result.result == nil {
            totals.violations.append("\(type(of: result)) finished without a result")
        }
        for id in 0..<awaiterID where snapshot.answers[id] != 1 {
            totals.violations.append("awaiter \(id) answered \(snapshot.answers[id] ?? 0) times")
        }
        totals.operations = operations.count
        totals.awaiters = awaiterID
        totals.bodiesRun = snapshot.bodiesRun
        totals.cancelledOperations = cancelledOperations

        return (totals, operations.map(WeakBox.init), ledger)
    }

    /// Nothing stays alive once the work is done and the run's references are gone: every
    /// operation carries a release probe (in itself, or in the closure it runs, which a task may
    /// hold a moment longer), and the run waits for all of them. A leak never releases its probe;
    /// the test's time limit then cancels the wait and the run fails instead of hanging.
    private func aliveAfterwards(_ operations: [WeakBox<Operation>], ledger: StressLedger) async -> Int {
        guard await ledger.releases.wait() else { return ledger.releases.remaining }
        return operations.filter { $0.object != nil }.count
    }
}
