import Foundation
import OperationBridge
import Testing

/// An operation that is already pending in a queue is awaited, never added again: Foundation
/// traps on a second `addOperation(_:)` ("operations finished, executing or already in a queue
/// cannot be enqueued"), which `run`, the results sequences and pipelines used to reach.
@Suite(.timeLimit(Stress.timeLimit(minutes: 2)))
struct AdmissionTests {
    /// Counts how often its work runs; its value is its number.
    final class Numbered: AsyncResultOperation<Int, TransferError>, @unchecked Sendable {
        let number: Int
        let runs = LockedBox(0)
        init(_ number: Int) {
            self.number = number
            super.init()
        }
        override func main() {
            runs.withLock { $0 += 1 }
            finish(with: .success(number))
        }
    }

    @Test("run on an operation that addTask already queued awaits it")
    func runAfterAddTask() async throws {
        let queue = OperationQueue()
        queue.isSuspended = true
        let runs = LockedBox(0)
        let operation = queue.addTask { () async throws(TransferError) -> Int in
            runs.withLock { $0 += 1 }
            return 42
        }
        let answer = Task { try await queue.run(operation) }
        queue.isSuspended = false
        #expect(try await answer.value == 42)
        #expect(runs.current == 1)
    }

    @Test("runForOutcome and runUntilFinished on operations added with your own addOperation")
    func runVariantsAfterYourOwnAddOperation() async throws {
        let queue = OperationQueue()
        queue.isSuspended = true
        let result = Numbered(1)
        let plain = Numbered(2)
        let block = BlockOperation {}
        queue.addOperation(result)
        queue.addOperation(plain)
        queue.addOperation(block)  // not the package's: found in the queue's list
        let outcome = Task { await queue.runForOutcome(result) }
        let finished = Task { try await queue.runUntilFinished(plain) }
        let blockFinished = Task { try await queue.runUntilFinished(block) }
        queue.isSuspended = false
        #expect(await outcome.value == .success(1))
        try await finished.value
        try await blockFinished.value
        #expect(result.runs.current == 1)
        #expect(plain.runs.current == 1)
        #expect(block.isFinished)
    }

    @Test("Two results sequences over the same operations: each runs once, both deliver it")
    func twoSequencesOverTheSameOperations() async throws {
        let queue = OperationQueue()
        let operations = (0..<20).map(Numbered.init)
        let first = try queue.results(of: operations)
        let second = try queue.results(of: operations.reversed())
        async let firstResults = first.collect()
        async let secondResults = second.collect()
        let (a, b) = await (firstResults, secondResults)
        #expect(a.map { try? $0?.get() } == Array(0..<20))
        #expect(b.map { try? $0?.get() } == Array((0..<20).reversed()))
        #expect(operations.allSatisfy { $0.runs.current == 1 })
    }

    @Test("A pipeline over operations you already queued awaits them, in dependency order")
    func pipelineOverQueuedOperations() async throws {
        let queue = OperationQueue()
        queue.isSuspended = true
        let head = Numbered(1)
        let glue = BlockOperation {}
        glue.addDependency(head)
        let tail = head.bridge.then { (value: Int) async -> Int in value + 1 }
        tail.addDependency(glue)
        queue.addOperation(head)
        queue.addOperation(glue)
        let pipeline = try Pipeline([head, glue, tail], on: queue)
        let value = Task { await pipeline.value(of: tail) }
        queue.isSuspended = false
        #expect(await value.value == 2)
        #expect(head.runs.current == 1)
    }

    @Test("Two pipelines sharing a glue BlockOperation add it once")
    func twoPipelinesShareAGlueOperation() async throws {
        let queue = OperationQueue()
        let trigger = Trigger()
        let head = GatedResultOperation<Int, StepError>(.success(1), trigger: trigger)
        let runs = LockedBox(0)
        let glue = BlockOperation { runs.withLock { $0 += 1 } }
        glue.addDependency(head)
        let first = try Pipeline([head, glue], on: queue)
        let second = try Pipeline([glue], on: queue)
        first.start()
        second.start()
        trigger.fire()
        try await first.waitForCompletion()
        try await second.waitForCompletion()
        #expect(runs.current == 1)
    }

    /// Thousands of random interleavings of the ways an operation reaches a queue (`addTask`,
    /// your own `addOperation`, none) and the ways the package awaits it (`run`,
    /// `runForOutcome`, `runUntilFinished`, a results sequence, `value`), several at once: no
    /// crash, every answer right, every operation run exactly once.
    @Test func randomizedAddAndRunInterleavings() async throws {
        let seed = Stress.seed()
        let iterations = Stress.iterations(2_000)
        print(
            "AdmissionTests: \(iterations) iterations, seed \(seed) (replay with OPERATIONBRIDGE_STRESS_SEED=\(seed))")
        var generator = SeededGenerator(seed: seed)
        var problems: [String] = []
        for iteration in 0..<iterations {
            // Cut off by the suite's time limit: its issue says so; the cancelled `run` below
            // would only add one made-up problem per iteration.
            if Task.isCancelled { break }
            let queue = OperationQueue()
            queue.maxConcurrentOperationCount = [1, 2, OperationQueue.defaultMaxConcurrentOperationCount]
                .randomElement(using: &generator)!
            let suspended = Bool.random(using: &generator)
            queue.isSuspended = suspended
            let runs = LockedBox(0)
            let number = iteration
            let operation: AsyncResultOperation<Int, TransferError>
            switch Int.random(in: 0..<3, using: &generator) {
            case 0:
                operation = queue.addTask { () async throws(TransferError) -> Int in
                    runs.withLock { $0 += 1 }
                    return number
                }
            case 1:
                operation = TaskOperation { () async throws(TransferError) -> Int in
                    runs.withLock { $0 += 1 }
                    return number
                }
                queue.addOperation(operation)
            default:
                operation = TaskOperation { () async throws(TransferError) -> Int in
                    runs.withLock { $0 += 1 }
                    return number
                }
            }
            let awaiters = (0..<Int.random(in: 1...4, using: &generator)).map { _ -> Task<Int?, Never> in
                switch Int.random(in: 0..<5, using: &generator) {
                case 0: return Task { try? await queue.run(operation) }
                case 1: return Task { try? await queue.runForOutcome(operation)?.get() }
                case 2:
                    return Task {
                        try? await queue.runUntilFinished(operation)
                        return try? operation.result?.get()
                    }
                case 3:
                    return Task {
                        guard let results = try? queue.results(of: [operation]) else { return nil }
                        return try? await results.collect().first??.get()
                    }
                default:
                    // `value` never queues the operation; the `run` below makes sure it is.
                    return Task { try? await operation.bridge.value }
                }
            }
            if suspended { queue.isSuspended = false }
            // An operation nobody queued yet gets queued by a `run`, `runForOutcome`,
            // `runUntilFinished` or results awaiter, or by this line.
            _ = try? await queue.run(operation)
            for awaiter in awaiters {
                let answer = await awaiter.value
                if answer != number {
                    problems.append("iteration \(iteration): an awaiter got \(String(describing: answer))")
                }
            }
            if runs.current != 1 { problems.append("iteration \(iteration): the work ran \(runs.current) times") }
        }
        #expect(problems.isEmpty, "seed \(seed): \(problems.prefix(10))")
    }
}
