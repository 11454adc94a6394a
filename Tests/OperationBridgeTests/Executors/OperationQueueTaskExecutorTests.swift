import Foundation
import OperationBridge
import Testing

/// An `OperationQueue` as a task executor: async code that prefers it runs its jobs as
/// operations of the queue, within the queue's width and under its suspension.
@Suite(.timeLimit(Stress.timeLimit(minutes: 2)))
struct OperationQueueTaskExecutorTests {
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test("Code under withTaskExecutorPreference runs in operations of the queue, before and after suspending")
    func preferredCodeRunsOnTheQueue() async {
        let queue = OperationQueue()
        queue.name = "preferred"
        let executor = OperationQueueTaskExecutor(queue)
        let queues = await withTaskExecutorPreference(executor) {
            let before = await currentQueueOfNonisolatedCode()
            await Task.yield()
            let after = await currentQueueOfNonisolatedCode()
            return [before, after]
        }
        #expect(queues.allSatisfy { $0 === queue })
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test("A task made with executorPreference runs on the queue, and so do its child tasks")
    func taskWithPreferenceRunsOnTheQueue() async {
        let queue = OperationQueue()
        let executor = OperationQueueTaskExecutor(queue)
        let task = Task(executorPreference: executor) { () async -> [Bool] in
            await withTaskGroup(of: Bool.self) { group in
                for _ in 0..<8 {
                    group.addTask { OperationQueue.current === queue }
                }
                return await group.reduce(into: [OperationQueue.current === queue]) { $0.append($1) }
            }
        }
        #expect(await task.value == Array(repeating: true, count: 9))
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test("maxConcurrentOperationCount bounds how many of the preferring jobs run at once", arguments: [1, 2, 3])
    func widthBoundsConcurrency(width: Int) async {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = width
        let executor = OperationQueueTaskExecutor(queue)
        let level = HighWaterMark()
        let rendezvous = Rendezvous(size: width)
        await withTaskExecutorPreference(executor) {
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<(width * 8) {
                    group.addTask {
                        level.enter()
                        // Blocks this job's queue thread until `width` jobs are in at once:
                        // with more than `width` slots, nothing would stop a ninth.
                        rendezvous.arriveAndWait()
                        level.leave()
                    }
                }
            }
        }
        #expect(level.maximum == width)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test("A job enqueued while the queue is suspended waits; cancelAllOperations does not drop it")
    func suspendedQueueHoldsJobs() async {
        let queue = OperationQueue()
        let executor = OperationQueueTaskExecutor(queue)
        queue.isSuspended = true
        let ran = Counter()
        // The task's first job is enqueued on the executor as the task is made.
        let task = Task(executorPreference: executor) {
            ran.increment()
            return OperationQueue.current === queue
        }
        for _ in 0..<10 { await Task.yield() }
        #expect(ran.value == 0)
        queue.cancelAllOperations()
        queue.isSuspended = false
        #expect(await task.value)
        #expect(ran.value == 1)
    }
}

/// The queue running the caller's job: for `nonisolated` async code, the task executor's.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
nonisolated func currentQueueOfNonisolatedCode() async -> OperationQueue? {
    OperationQueue.current
}

/// A reusable barrier for `size` threads: each arrival blocks its (non-cooperative) thread until
/// `size` have arrived, then all of them go on and the next group begins.
///
/// Safety: state is guarded by `condition`'s lock.
private final class Rendezvous: @unchecked Sendable {
    private let condition = NSCondition()
    private let size: Int
    private var arrived = 0
    private var generation = 0

    init(size: Int) { self.size = size }

    func arriveAndWait() {
        condition.lock()
        defer { condition.unlock() }
        let mine = generation
        arrived += 1
        if arrived == size {
            arrived = 0
            generation += 1
            condition.broadcast()
            return
        }
        while generation == mine { condition.wait() }
    }
}
