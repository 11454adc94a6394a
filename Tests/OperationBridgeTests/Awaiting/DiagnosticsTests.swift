import Foundation
import OperationBridge
import Testing

/// A stuck await can explain itself: `pendingDiagnostics` describes why an operation has not
/// finished, and `OPERATIONBRIDGE_STUCK_AWAIT_SECONDS` logs awaits that last too long.
@Suite(.timeLimit(Stress.timeLimit(minutes: 1)))
struct DiagnosticsTests {
    @Test("An operation whose dependency was never queued: both are described")
    func unqueuedDependency() {
        let login = BlockOperation {}
        login.name = "login"
        let fetch = ManualResultOperation<Int, TransferError>()
        fetch.name = "avatar"
        fetch.addDependency(login)
        let text = fetch.bridge.pendingDiagnostics
        #expect(
            text.contains("ManualResultOperation<Int, TransferError> 'avatar': pending (not started), not cancelled"))
        #expect(text.contains("not added to a queue by the package (it may be in a queue you added it to)"))
        #expect(ManualResultOperation<Int, TransferError>().bridge.pendingDiagnostics.contains("queue: in no queue"))
        #expect(text.contains("waits for 1 unfinished dependency"))
        #expect(
            text.contains(
                "BlockOperation 'login': pending (not started), not cancelled; queue: not known to the package"))
    }

    @Test("A suspended queue and a saturated queue say so")
    func suspendedAndSaturatedQueues() async {
        let suspended = OperationQueue()
        suspended.name = "paused"
        suspended.isSuspended = true
        let waiting = suspended.addTask { () async -> Int in 1 }
        #expect(waiting.bridge.pendingDiagnostics.contains("'paused', SUSPENDED"))
        suspended.isSuspended = false
        _ = await waiting.bridge.value

        let serial = OperationQueue()
        serial.name = "serial"
        serial.maxConcurrentOperationCount = 1
        let busy = ManualResultOperation<Int, TransferError>()
        serial.addOperation(busy)
        await busy.started.wait()
        let next = serial.addTask { () async -> Int in 2 }
        #expect(next.bridge.pendingDiagnostics.contains("1 of 1 slots in use — SATURATED"))
        busy.finish(with: .success(0))
        #expect(await next.bridge.value == 2)
    }

    @Test("A running TaskOperation says it started: its queue is followed only until the work starts")
    func runningTaskOperation() async {
        let queue = OperationQueue()
        queue.name = "uploads"
        let entered = Trigger()
        let running = queue.addTask { () async -> Int in
            entered.fire()
            await suspendUntilCancelled()
            return 0
        }
        // The queue is let go of before the work's first line runs.
        #expect(await entered.wait())
        let text = running.bridge.pendingDiagnostics
        #expect(text.contains("TaskOperation<Int, Never>: executing, not cancelled"))
        #expect(text.contains("queue: started (the package follows an operation's queue until its work starts)"))
        running.cancel()
        _ = await running.bridge.outcome
    }

    #if EXIT_TESTS
        @Test("OPERATIONBRIDGE_STUCK_AWAIT_SECONDS logs an await that lasts longer, with the diagnostics")
        func stuckAwaitIsLogged() async throws {
            let exit = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                setenv("OPERATIONBRIDGE_STUCK_AWAIT_SECONDS", "0.05", 1)
                // Read this process's own standard error through a pipe, so the test waits for the
                // log line itself (a blocking read), not for a length of time.
                let pipe = Pipe()
                let originalError = dup(STDERR_FILENO)
                dup2(pipe.fileHandleForWriting.fileDescriptor, STDERR_FILENO)
                let never = BlockOperation {}
                never.name = "never queued"
                let stuck = ManualResultOperation<Int, TransferError>()
                stuck.name = "stuck"
                stuck.addDependency(never)
                let awaiting = Task { await stuck.bridge.outcome }
                var logged = ""
                while !logged.contains("waits for 1 unfinished dependency") {
                    logged += String(decoding: pipe.fileHandleForReading.availableData, as: UTF8.self)
                }
                awaiting.cancel()
                _ = await awaiting.value
                dup2(originalError, STDERR_FILENO)
                FileHandle.standardError.write(Data(logged.utf8))
            }
            let message = String(decoding: try #require(exit).standardErrorContent, as: UTF8.self)
            #expect(message.contains("OperationBridge: an await has been waiting for more than 0.05 s"))
            #expect(message.contains("ManualResultOperation<Int, TransferError> 'stuck': pending (not started)"))
            #expect(message.contains("BlockOperation 'never queued'"))
        }
    #endif
}
