import Foundation
import OperationBridge
import Testing

/// Re-entry: a holder's own code enters a key it holds instead of waiting for itself (issue 36,
/// item 3) — and everyone else still waits, in order; a wait for a key explains itself.
@Suite(.timeLimit(Stress.timeLimit(minutes: 1)))
struct ExclusivityHoldsTests {
    @Test("withExclusiveAccess inside withExclusiveAccess for the same key runs at once")
    func nestedTaskReentry() async throws {
        let key = ExclusivityKey.unique("nested")
        let steps = Recorder<String>()
        let value = try await withExclusiveAccess(to: key) {
            steps.append("outer")
            let inner = try await withExclusiveAccess(to: key, key) {
                steps.append("inner")
                return try await withExclusiveAccess(to: [key]) { 3 }
            }
            steps.append("outer again")
            return inner
        }
        #expect(value == 3)
        #expect(steps.all == ["outer", "inner", "outer again"])
        // Released: someone else gets the key at once.
        try await withExclusiveAccess(to: key) {}
    }

    @Test("A TaskOperation declaring a key enters it from its body")
    func taskOperationBodyReentry() async throws {
        let key = ExclusivityKey.unique("operation")
        let operation = TaskOperation { () async throws -> Int in
            try await withExclusiveAccess(to: key) { 7 }
        }
        operation.bridge.addCondition(.mutuallyExclusive(key))
        #expect(try await OperationQueue().run(operation) == 7)
        try await withExclusiveAccess(to: key) {}  // released
    }

    @Test("A classic operation declaring a key enters it from a Task made in main()")
    func classicMainReentry() async throws {
        let key = ExclusivityKey.unique("classic")
        let entered = Gate()
        let operation = ReentrantClassicOperation(key: key, entered: entered)
        operation.bridge.addCondition(.mutuallyExclusive(key))
        try await OperationQueue().runUntilFinished(operation)
        #expect(entered.hasOpened)
    }

    @Test("Child tasks of the holder enter its key; another task still waits, first come first served")
    func childTasksReenterOthersWaitInOrder() async throws {
        let key = ExclusivityKey.unique("children")
        let steps = Recorder<String>()
        let queue = OperationQueue()
        let inside = Gate()
        let release = Gate()
        let holder = Task {
            try await withExclusiveAccess(to: key) {
                steps.append("holder")
                inside.open()
                await release.wait()
                async let child: Void = withExclusiveAccess(to: key) { steps.append("child") }
                try await child
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await withExclusiveAccess(to: key) { steps.append("group child") } }
                    try await group.waitForAll()
                }
                steps.append("holder leaves")
            }
        }
        await inside.wait()
        // Two outsiders in line, in this order, before the holder's children ask.
        let holders = KeyHolders()
        let first = KeyHolderOperation("first outsider", keys: [key], holders: holders)
        let second = KeyHolderOperation("second outsider", keys: [key], holders: holders)
        _ = first.isReady
        _ = second.isReady
        #expect(first.bridge.pendingDiagnostics.contains("first in line"))
        #expect(second.bridge.pendingDiagnostics.contains("1 waiting ahead"))
        queue.addOperationsWithoutWaiting([second, first])
        release.open()
        try await holder.value
        try await queue.runUntilFinished(second)
        #expect(steps.all == ["holder", "child", "group child", "holder leaves"])
        #expect(holders.order == ["first outsider", "second outsider"])
        #expect(holders.overlapCount == 0)
    }

    @Test("A Task of the holder that outlives its scope keeps the key until it ends")
    func escapedTaskKeepsKey() async throws {
        let key = ExclusivityKey.unique("escaped")
        let insideEscaped = Gate()
        let releaseEscaped = Gate()
        let escaped = try await withExclusiveAccess(to: key) {
            let escaped = Task {
                try await withExclusiveAccess(to: key) {
                    insideEscaped.open()
                    await releaseEscaped.wait()
                }
            }
            await insideEscaped.wait()
            return escaped
        }
        // The scope has ended, the escaped task still runs under the key: an outsider waits.
        let holders = KeyHolders()
        let outsider = KeyHolderOperation("outsider", keys: [key], holders: holders)
        _ = outsider.isReady
        #expect(outsider.bridge.pendingDiagnostics.contains("held by a task in withExclusiveAccess at"))
        let queue = OperationQueue()
        queue.addOperation(outsider)
        releaseEscaped.open()
        try await escaped.value
        try await queue.runUntilFinished(outsider)
        #expect(holders.order == ["outsider"])
        // A task the holder made after its scope ended asks like anyone else: the key is free now.
        try await withExclusiveAccess(to: key) {}
    }

    @Test("A waiting operation names the key, its holder and since when; the holder says what it holds")
    func diagnosticsNameKeyAndHolder() async throws {
        let key = ExclusivityKey.unique("report")
        let holders = KeyHolders()
        let holderGate = Gate()
        let holder = KeyHolderOperation("holder", keys: [key], holders: holders, gate: holderGate)
        holder.name = "migration"
        let queue = OperationQueue()
        queue.addOperation(holder)
        await holder.started.wait()
        let waiter = KeyHolderOperation("waiter", keys: [key], holders: holders)
        waiter.name = "vacuum"
        queue.addOperation(waiter)
        _ = waiter.isReady
        let text = waiter.bridge.pendingDiagnostics
        #expect(text.contains("KeyHolderOperation 'vacuum': pending (not started)"))
        #expect(text.contains("for exclusivity key '\(key)': held by KeyHolderOperation 'migration' for "))
        #expect(text.contains("first in line"))
        #expect(holder.bridge.pendingDiagnostics.contains("holds exclusivity key '\(key)' for "))
        holderGate.open()
        try await queue.runUntilFinished(waiter)
    }

    #if EXIT_TESTS
        @Test("OPERATIONBRIDGE_STUCK_AWAIT_SECONDS logs a task's wait for a key: the key, its holder, since when")
        func stuckKeyWaitIsLogged() async throws {
            let exit = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                setenv("OPERATIONBRIDGE_STUCK_AWAIT_SECONDS", "0.05", 1)
                // This process's own standard error through a pipe: the test waits for the log
                // line itself (a blocking read), not for a length of time.
                let pipe = Pipe()
                let originalError = dup(STDERR_FILENO)
                dup2(pipe.fileHandleForWriting.fileDescriptor, STDERR_FILENO)
                let key = ExclusivityKey("ledger")
                let gate = Gate()
                let holder = KeyHolderOperation("holder", keys: [key], holders: KeyHolders(), gate: gate)
                holder.name = "migration"
                OperationQueue().addOperation(holder)
                await holder.started.wait()
                let waiting = Task { try await withExclusiveAccess(to: key) {} }
                var logged = ""
                while !logged.contains("first in line") {
                    logged += String(decoding: pipe.fileHandleForReading.availableData, as: UTF8.self)
                }
                gate.open()
                try? await waiting.value
                dup2(originalError, STDERR_FILENO)
                FileHandle.standardError.write(Data(logged.utf8))
            }
            let message = String(decoding: try #require(exit).standardErrorContent, as: UTF8.self)
            #expect(message.contains("OperationBridge: a wait for exclusivity has been waiting for more than 0.05 s"))
            #expect(
                message.contains("a task in withExclusiveAccess at OperationBridgeTests/ExclusivityHoldsTests.swift:"))
            #expect(message.contains("for exclusivity key 'ledger': held by KeyHolderOperation 'migration' for "))
        }
    #endif
}

/// A classic operation whose `main()` starts a `Task` that enters the operation's key, opens
/// `entered`, and finishes the operation.
private final class ReentrantClassicOperation: AsyncOperation, @unchecked Sendable {
    let key: ExclusivityKey
    let entered: Gate

    init(key: ExclusivityKey, entered: Gate) {
        self.key = key
        self.entered = entered
        super.init()
    }

    override func main() {
        Task {
            try? await withExclusiveAccess(to: key) { entered.open() }
            finish()
        }
    }
}
