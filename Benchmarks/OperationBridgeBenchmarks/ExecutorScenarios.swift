import Dispatch
import Foundation
import OperationBridge

// The rows of issue 38: actors on an `OperationQueueExecutor` and async code on an
// `OperationQueueTaskExecutor`, next to the same work on the executors Swift and Dispatch offer.

extension Scenarios {
    /// Actor calls through the queue executor against the default actor executor and a Dispatch
    /// serial queue executor, and a task executor's throughput against the global executor.
    func executorRows() async -> [Measurement] {
        guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) else {
            FileHandle.standardError.write(Data("executor rows: need macOS 15 / iOS 18\n".utf8))
            return []
        }
        let rounds = options.rounds
        let calls = options.size(100_000)
        var rows: [Measurement] = []
        let queueCounter = QueueExecutorCounter()
        let defaultCounter = DefaultExecutorCounter()
        let dispatchCounter = DispatchExecutorCounter()
        rows.append(
            await compare(
                "\(calls) actor calls one after another: OperationQueueExecutor vs the default actor executor",
                rounds: rounds, target: nil,
                note: "for information: a default actor runs an uncontended call on the caller's thread, without a hop"
            ) {
                await callOneAfterAnother(calls) { await queueCounter.add($0) }
            } baseline: {
                await callOneAfterAnother(calls) { await defaultCounter.add($0) }
            })
        rows.append(
            await compare(
                "\(calls) actor calls one after another: OperationQueueExecutor vs \(DispatchExecutorCounter.kind)",
                rounds: rounds, target: 1.5,
                note: "baseline: the same actor on \(DispatchExecutorCounter.kind)"
            ) {
                await callOneAfterAnother(calls) { await queueCounter.add($0) }
            } baseline: {
                await callOneAfterAnother(calls) { await dispatchCounter.add($0) }
            })
        rows.append(
            await compare(
                "\(calls) actor calls from concurrent tasks: OperationQueueExecutor vs \(DispatchExecutorCounter.kind)",
                rounds: rounds, target: 1.5,
                note: "baseline: the same actor on \(DispatchExecutorCounter.kind)"
            ) {
                await forEachConcurrently(calls) { _ = await queueCounter.add($0) }
            } baseline: {
                await forEachConcurrently(calls) { _ = await dispatchCounter.add($0) }
            })
        // The floor of the row above: what one operation per job costs on a serial queue, next
        // to one block per job on a serial DispatchQueue, with nothing else around them.
        rows.append(
            await compare(
                "\(calls) empty BlockOperations on a serial OperationQueue vs \(calls) blocks on a serial DispatchQueue",
                rounds: rounds, target: nil,
                note: "for information: the floor of the row above, an operation per job against a block per job"
            ) {
                let queue = OperationQueue()
                queue.maxConcurrentOperationCount = 1
                for _ in 0..<calls { queue.addOperation(BlockOperation {}) }
                try? await queue.waitForAllOperations()
            } baseline: {
                let queue = DispatchQueue(label: "floor")
                for _ in 0..<calls { queue.async {} }
                await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
            })

        let tasks = options.size(20_000)
        let width = ProcessInfo.processInfo.activeProcessorCount
        let onQueue = ConcurrencyLevel()
        let onGlobal = ConcurrencyLevel()
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = width
        let executor = OperationQueueTaskExecutor(queue)
        let row = await compare(
            "\(tasks) tasks of 4 jobs each under an OperationQueueTaskExecutor (width \(width)) vs the global executor",
            rounds: rounds, target: nil,
            note: "for information: the same task group with no preference"
        ) {
            await withTaskExecutorPreference(executor) { await runJobs(tasks, level: onQueue) }
        } baseline: {
            await runJobs(tasks, level: onGlobal)
        }
        rows.append(
            Measurement(
                scenario: row.scenario, library_seconds: row.library_seconds, baseline_seconds: row.baseline_seconds,
                ratio: row.ratio, target: row.target, within_target: row.within_target, unit: row.unit,
                note: "\(row.note ?? ""); jobs running at once at most: \(onQueue.maximum) on the queue "
                    + "(maxConcurrentOperationCount \(width)), \(onGlobal.maximum) on the global executor"))
        return rows
    }
}

/// Calls `body` `count` times, each call after the previous one returned.
private func callOneAfterAnother(_ count: Int, _ body: (Int) async -> Int) async {
    var last = 0
    for index in 0..<count {
        last = await body(index)
    }
    blackHole(last)
}

/// `count` child tasks, each running four jobs (three yields) of a little arithmetic, counting
/// how many jobs run at once.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
private func runJobs(_ count: Int, level: ConcurrencyLevel) async {
    await forEachConcurrently(count) { index in
        var value = index
        for _ in 0..<4 {
            level.enter()
            for step in 0..<200 { value = value &* 31 &+ step }
            level.leave()
            await Task.yield()
        }
        blackHole(value)
    }
}

/// The highest number of jobs seen running at once.
///
/// Safety: state is guarded by `lock`.
final class ConcurrencyLevel: @unchecked Sendable {
    private let lock = NSLock()
    private var current = 0
    private var highest = 0

    func enter() {
        lock.withLock {
            current += 1
            highest = max(highest, current)
        }
    }

    func leave() {
        lock.withLock { current -= 1 }
    }

    var maximum: Int { lock.withLock { highest } }
}

/// A counter actor on the default actor executor.
actor DefaultExecutorCounter {
    private var total = 0

    func add(_ value: Int) -> Int {
        total &+= value
        return total
    }
}

/// The same counter on a serial `OperationQueue`.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
actor QueueExecutorCounter {
    nonisolated let executor: OperationQueueExecutor = {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        return OperationQueueExecutor(queue)
    }()
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    private var total = 0

    func add(_ value: Int) -> Int {
        total &+= value
        return total
    }
}

/// The same counter on a Dispatch serial queue: `DispatchSerialQueue` where Dispatch makes it an
/// executor (Apple platforms), a hand-written `DispatchQueue` executor elsewhere (Linux's
/// Dispatch has no `DispatchSerialQueue`).
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
actor DispatchExecutorCounter {
    #if canImport(Darwin)
        static let kind = "a DispatchSerialQueue executor"
        // The attributes, spelled out, pick DispatchSerialQueue's own initializer over the one it
        // inherits from DispatchQueue (the same labels, `DispatchQueue.Attributes`).
        nonisolated let executor = DispatchSerialQueue(label: "counter", attributes: DispatchSerialQueue.Attributes())
    #else
        static let kind = "a hand-written DispatchQueue executor (no DispatchSerialQueue on Linux)"
        nonisolated let executor = DispatchQueueExecutor()
    #endif
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    private var total = 0

    func add(_ value: Int) -> Int {
        total &+= value
        return total
    }
}

#if !canImport(Darwin)
    /// What `DispatchSerialQueue`'s executor does, written by hand: each job an `async` block on
    /// a serial `DispatchQueue`.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    final class DispatchQueueExecutor: SerialExecutor {
        let queue = DispatchQueue(label: "counter")

        func enqueue(_ job: consuming ExecutorJob) {
            let job = UnownedJob(job)
            queue.async { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
        }

        func asUnownedSerialExecutor() -> UnownedSerialExecutor {
            UnownedSerialExecutor(ordinary: self)
        }
    }
#endif
