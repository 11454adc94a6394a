import Foundation
import OperationBridge
import Testing

/// Work running in a queue slot that awaits another operation waiting for a slot of the same,
/// saturated queue would wait forever: the package detects it and traps with a message that says
/// what happened and what to do. The task's priority follows the queue's quality of service.
@Suite(.timeLimit(Stress.timeLimit(minutes: 1)))
struct QueueSlotsTests {
    #if EXIT_TESTS
        @Test("An addTask closure awaiting another addTask of its width-1 queue traps, saying why")
        func nestedAddTaskOnASerialQueueTraps() async throws {
            let exit = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                let queue = OperationQueue()
                queue.name = "serial"
                queue.maxConcurrentOperationCount = 1
                let outer = queue.addTask { () async -> Int in
                    let inner = queue.addTask { () async -> Int in 1 }
                    return await inner.bridge.value ?? 0
                }
                _ = await outer.bridge.value
            }
            let message = String(decoding: try #require(exit).standardErrorContent, as: UTF8.self)
            #expect(message.contains("deadlock"))
            #expect(message.contains("'serial'"))
            #expect(message.contains("maxConcurrentOperationCount"))
        }

        @Test("run of an inner operation from work in a slot of the same saturated queue traps")
        func nestedRunTraps() async throws {
            await #expect(processExitsWith: .failure) {
                let queue = OperationQueue()
                queue.maxConcurrentOperationCount = 1
                let outer = queue.addTask { () async -> Int in
                    await queue.run(TaskOperation { 1 }) ?? 0
                }
                _ = await outer.bridge.value
            }
        }

        /// The outer work's await counts before its operation is added, so the deadlock is found
        /// whether or not the middle operation has started by then (it usually has: a free slot).
        @Test("Work awaiting an operation that runs in the other slot and awaits a third of the queue traps")
        func chainOfNestedRunsFillingEverySlotTraps() async throws {
            await #expect(processExitsWith: .failure) {
                let queue = OperationQueue()
                queue.maxConcurrentOperationCount = 2
                let outer = queue.addTask { () async -> Int in
                    let middle = TaskOperation { () async -> Int in
                        await queue.run(TaskOperation { 1 }) ?? 0
                    }
                    return await queue.run(middle) ?? 0
                }
                _ = await outer.bridge.value
            }
        }

        /// An exit test, so that a false trap fails instead of ending the whole test process.
        @Test("Work in one slot awaiting two operations of its width-2 queue at once (async let) is fine")
        func childTasksOfOneHolderAreOneHolder() async throws {
            await #expect(processExitsWith: .success) {
                let queue = OperationQueue()
                queue.maxConcurrentOperationCount = 2
                let outer = queue.addTask { () async -> Int in
                    async let first = queue.run(TaskOperation { 1 })
                    async let second = queue.run(TaskOperation { 2 })
                    return (await first ?? 0) + (await second ?? 0)
                }
                let sum = await outer.bridge.value
                precondition(sum == 3, "got \(String(describing: sum))")
            }
        }

        /// The unstructured task inherits the slot's task-local value; its await is no deadlock:
        /// the work does not wait for it, and the operation runs once the work has ended.
        @Test("An unstructured Task made in a slot's work may await an operation of its width-1 queue")
        func unstructuredTaskInTheWorkIsNotTheHolder() async throws {
            await #expect(processExitsWith: .success) {
                let queue = OperationQueue()
                queue.maxConcurrentOperationCount = 1
                let inner = TaskOperation { 7 }
                let spawned = LockedBox<Task<Int?, Never>?>(nil)
                let outer = queue.addTask { () async -> Void in
                    spawned.withLock { $0 = Task { await queue.run(inner) } }
                    // The spawned task's await has begun (the run adds `inner` inside it) while
                    // this work still holds the only slot.
                    while !queue.operations.contains(where: { $0 === inner }) { await Task.yield() }
                }
                _ = await outer.bridge.outcome
                let value = await spawned.withLock { $0 }!.value
                precondition(value == 7, "got \(String(describing: value))")
            }
        }

        @Test("An unstructured Task made in a slot's work may drain the queue; it waits for the work")
        func unstructuredTaskMayDrainTheQueue() async throws {
            await #expect(processExitsWith: .success) {
                let queue = OperationQueue()
                queue.maxConcurrentOperationCount = 1
                let spawned = LockedBox<Task<Void, Never>?>(nil)
                let outer = queue.addTask { () async -> Void in
                    spawned.withLock { $0 = Task { try? await queue.waitForAllOperations() } }
                }
                _ = await outer.bridge.outcome
                await spawned.withLock { $0 }!.value
                precondition(outer.isFinished)
            }
        }

        @Test("Draining one's own queue from work in one of its slots traps at any width")
        func drainingOwnQueueTraps() async throws {
            await #expect(processExitsWith: .failure) {
                let queue = OperationQueue()
                let outer = queue.addTask { () async throws(CancellationError) -> Int in
                    try await queue.waitForAllOperations()
                    return 0
                }
                _ = try? await outer.bridge.value
            }
        }
    #endif

    @Test("With a free slot, nested work on the same queue is fine")
    func nestedWorkWithAFreeSlot() async throws {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 2
        let outer = queue.addTask { () async -> Int in
            let inner = queue.addTask { () async -> Int in 20 }
            return (await inner.bridge.value ?? 0) + 1
        }
        #expect(await outer.bridge.value == 21)
        let unlimited = OperationQueue()
        let nested = unlimited.addTask { () async -> Int in
            await unlimited.run(TaskOperation { 5 }) ?? 0
        }
        #expect(await nested.bridge.value == 5)
    }

    /// A closure runs on its queue's thread until its first suspension, where
    /// `OperationQueue.current` names that queue; an operation it starts by hand there holds no
    /// slot of the queue and must not be taken for work blocked in it (nor for the queue's
    /// progress, nor its quality of service).
    @Test("An operation started by hand inside a closure before its first await holds no slot of the closure's queue")
    func anOperationStartedByHandInsideAClosureHoldsNoSlot() async throws {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let later = Guarded<TaskOperation<Int, Never>?>(nil)
        let laterQueued = Gate()
        let startedByHand = Guarded<TaskOperation<Int, Never>?>(nil)
        let outer = queue.addTask { () async -> Int in
            // Before any suspension: still on the queue's thread, in its only slot.
            laterQueued.blockingWait()
            let inner = TaskOperation { () async -> Int in await later.current?.bridge.value ?? 0 }
            startedByHand.set(inner)
            inner.start()
            return 1
        }
        // Pending behind `outer` in the width-1 queue, added by the package.
        later.set(queue.addTask { () async -> Int in 3 })
        laterQueued.open()
        #expect(await outer.bridge.value == 1)
        let inner = try #require(startedByHand.current)
        #expect(await inner.bridge.value == 3)
    }

    @Test("Awaiting work on another queue from a serial queue's slot is fine")
    func nestedWorkOnAnotherQueue() async throws {
        let serial = OperationQueue()
        serial.maxConcurrentOperationCount = 1
        let other = OperationQueue()
        other.maxConcurrentOperationCount = 1
        let outer = serial.addTask { () async -> Int in
            await other.run(TaskOperation { 3 }) ?? 0
        }
        #expect(await outer.bridge.value == 3)
    }

    // MARK: - Quality of service from the queue

    @Test(
        "The task's priority follows the queue's quality of service when the operation has none of its own",
        arguments: [
            (QualityOfService.userInitiated, QualityOfService.default, TaskPriority.high),
            (.utility, .default, .utility),
            (.default, .default, .medium),
            (.userInitiated, .utility, .utility),
        ])
    func priorityFollowsTheQueue(queueQuality: QualityOfService, ownQuality: QualityOfService, expected: TaskPriority)
        async
    {
        let queue = OperationQueue()
        queue.qualityOfService = queueQuality
        let observed = LockedBox<TaskPriority?>(nil)
        let ran = OneShotSignal()
        let operation = TaskOperation { () async -> Void in
            observed.withLock { $0 = Task.currentPriority }
            ran.fire()
        }
        operation.qualityOfService = ownQuality
        queue.addOperation(operation)
        // Nothing awaits the operation (awaiting raises its quality of service to the awaiting
        // task's priority); a signal escalates nobody.
        #expect(await ran.wait())
        #expect(observed.current == expected)
    }
}
