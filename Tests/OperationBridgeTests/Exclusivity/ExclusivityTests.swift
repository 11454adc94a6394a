import Foundation
import OperationBridge
import Testing

@Suite("Mutual exclusivity")
struct ExclusivityTests {
    @Test("Two operations with one key never run at once, on a queue wide enough for both")
    func operationsExcludeEachOther() async throws {
        let dbKey = ExclusivityKey.unique("db")
        let holders = KeyHolders()
        let gate = Gate()
        let first = KeyHolderOperation("first", keys: [dbKey], holders: holders, gate: gate)
        let second = KeyHolderOperation("second", keys: [dbKey], holders: holders)
        let queue = OperationQueue()
        _ = first.isReady  // first in line for the key
        queue.addOperationsWithoutWaiting([first, second])
        await first.started.wait()
        #expect(!second.isExecuting && !second.isFinished)
        gate.open()
        try await queue.runUntilFinished(second)
        #expect(holders.order == ["first", "second"])
        #expect(holders.overlapCount == 0)
    }

    @Test("A task and an operation exclude each other through one key")
    func taskAndOperationExcludeEachOther() async throws {
        let fileKey = ExclusivityKey.unique("file")
        let holders = KeyHolders()
        let inside = Gate()
        let release = Gate()
        let task = Task {
            try await withExclusiveAccess(to: fileKey) {
                holders.enter("task", [fileKey])
                inside.open()
                await release.wait()
                holders.leave([fileKey])
            }
        }
        await inside.wait()
        let operation = KeyHolderOperation("operation", keys: [fileKey], holders: holders)
        let queue = OperationQueue()
        queue.addOperation(operation)
        let other = ManualOperation()
        queue.addOperation(other)  // runs meanwhile: the waiting operation holds nothing
        await other.started.wait()
        other.finish()
        #expect(!operation.isExecuting && !operation.isFinished)
        release.open()
        try await task.value
        try await queue.runUntilFinished(operation)
        #expect(holders.order == ["task", "operation"])
        #expect(holders.overlapCount == 0)
    }

    @Test("Waiting for a key takes no queue slot: a queue with one slot runs other work meanwhile")
    func waitingTakesNoSlot() async throws {
        let kKey = ExclusivityKey.unique("k")
        let holders = KeyHolders()
        let holderGate = await holders.startHolder(of: kKey, on: OperationQueue())
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let waiter = KeyHolderOperation("waiter", keys: [kKey], holders: holders)
        queue.addOperation(waiter)
        let unrelated = BlockOperation {}
        try await queue.runUntilFinished(unrelated)  // the only slot was free
        #expect(!waiter.isFinished)
        holderGate.open()
        try await queue.runUntilFinished(waiter)
        #expect(holders.overlapCount == 0)
    }

    @Test("Holders take turns in the order they asked, not the order they were queued")
    func firstComeFirstServed() async throws {
        let kKey = ExclusivityKey.unique("k")
        let holders = KeyHolders()
        let queue = OperationQueue()
        let gate = await holders.startHolder(of: kKey, on: queue)
        let waiters = (1...5).map { KeyHolderOperation("w\($0)", keys: [kKey], holders: holders) }
        // Asking whether an operation is ready puts it in line for its keys (its dependencies have
        // finished): a queue does the same when it looks at it.
        for waiter in waiters { #expect(!waiter.isReady) }
        queue.addOperationsWithoutWaiting(waiters.reversed())
        gate.open()
        for waiter in waiters { try await queue.runUntilFinished(waiter) }
        #expect(holders.order == ["holder", "w1", "w2", "w3", "w4", "w5"])
    }

    @Test("A holder of two keys is not overtaken by a stream of holders of one of them")
    func noStarvation() async throws {
        let aKey = ExclusivityKey.unique("a")
        let bKey = ExclusivityKey.unique("b")
        let holders = KeyHolders()
        let queue = OperationQueue()
        let gate = await holders.startHolder(of: bKey, on: queue)
        let both = KeyHolderOperation("both", keys: [aKey, bKey], holders: holders)
        #expect(!both.isReady)  // in line for a (free) and b (held)
        queue.addOperation(both)
        let stream = (0..<50).map { KeyHolderOperation("a\($0)", keys: [aKey], holders: holders) }
        queue.addOperationsWithoutWaiting(stream)
        gate.open()
        try await queue.runUntilFinished(both)
        for operation in stream { try await queue.runUntilFinished(operation) }
        #expect(holders.order.firstIndex(of: "both") == 1)
        #expect(holders.overlapCount == 0)
    }

    @Test("Operations naming the same keys in opposite orders never deadlock")
    func oppositeOrders() async throws {
        let xKey = ExclusivityKey.unique("x")
        let yKey = ExclusivityKey.unique("y")
        let holders = KeyHolders()
        let queue = OperationQueue()
        let operations = (0..<200).map { index in
            KeyHolderOperation(
                "\(index)", keys: index.isMultiple(of: 2) ? [xKey, yKey] : [yKey, xKey], holders: holders)
        }
        queue.addOperationsWithoutWaiting(operations)
        for operation in operations { try await queue.runUntilFinished(operation) }
        #expect(holders.order.count == 200)
        #expect(holders.overlapCount == 0)
    }

    @Test("Cancelling a task waiting for a key throws CancellationError and leaves the line")
    func cancelledWait() async throws {
        let kKey = ExclusivityKey.unique("k")
        let inside = Gate()
        let release = Gate()
        let holder = Task {
            try await withExclusiveAccess(to: kKey) {
                inside.open()
                await release.wait()
            }
        }
        await inside.wait()
        let ran = LockedBox(false)
        let waiter = Task {
            try await withExclusiveAccess(to: kKey) { ran.withLock { $0 = true } }
        }
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        #expect(!ran.current)
        release.open()
        try await holder.value
        // Not leaked: the key is free.
        let value = try await withExclusiveAccess(to: kKey) { 42 }
        #expect(value == 42)
    }

    @Test("A cancelled operation waiting for a key finishes without running, and the key is not leaked")
    func cancelledOperationWaiting() async throws {
        let kKey = ExclusivityKey.unique("k")
        let holders = KeyHolders()
        let queue = OperationQueue()
        let gate = await holders.startHolder(of: kKey, on: queue)
        let waiter = KeyHolderOperation("waiter", keys: [kKey], holders: holders)
        queue.addOperation(waiter)
        waiter.cancel()
        try await waiter.bridge.waitForCompletion()
        #expect(waiter.isCancelled && waiter.isFinished)
        gate.open()
        let value = try await withExclusiveAccess(to: kKey) { 7 }
        #expect(value == 7)
        #expect(holders.order == ["holder"])
    }

    @Test("No keys: the body runs at once; a key named twice counts once")
    func noKeysAndDuplicates() async throws {
        let kKey = ExclusivityKey.unique("k")
        let none = try await withExclusiveAccess { 1 }
        let twice = try await withExclusiveAccess(to: kKey, kKey) { 2 }
        #expect(none + twice == 3)
    }

    @Test("Randomized: operations and tasks on random keys and queue widths, with cancellations")
    func randomizedHolders() async throws {
        let pKey = ExclusivityKey.unique("p")
        let qKey = ExclusivityKey.unique("q")
        let rKey = ExclusivityKey.unique("r")
        var generator = Stress.generator(for: "ExclusivityTests.randomizedHolders")
        let keys: [ExclusivityKey] = [pKey, qKey, rKey]
        for _ in 0..<Stress.iterations(500) {
            let holders = KeyHolders()
            let queue = OperationQueue()
            queue.maxConcurrentOperationCount = Int.random(in: 1...4, using: &generator)
            var operations: [KeyHolderOperation] = []
            var tasks: [Task<Void, any Error>] = []
            for index in 0..<Int.random(in: 4...16, using: &generator) {
                let chosen = keys.filter { _ in Bool.random(using: &generator) }
                if Bool.random(using: &generator) {
                    let operation = KeyHolderOperation("o\(index)", keys: chosen, holders: holders)
                    operations.append(operation)
                    queue.addOperation(operation)
                    if Int.random(in: 0..<5, using: &generator) == 0 { operation.cancel() }
                } else {
                    let task = Task {
                        try await withExclusiveAccess(to: chosen) {
                            holders.enter("t\(index)", chosen)
                            await Task.yield()
                            holders.leave(chosen)
                        }
                    }
                    tasks.append(task)
                    if Int.random(in: 0..<5, using: &generator) == 0 { task.cancel() }
                }
            }
            for operation in operations { try await operation.bridge.waitForCompletion() }
            for task in tasks { _ = try? await task.value }
            #expect(holders.overlapCount == 0)
        }
    }
}
