// LegacyQueueActor: a sync engine whose state a serial OperationQueue has always guarded, with
// an actor on that same queue. The legacy operations keep running; the actor's methods run as
// operations of the queue, in its order, and legacy code calls the actor synchronously.
//
//   swift run LegacyQueueActor
//
// Every line it prints is deterministic: Examples/Transcripts/LegacyQueueActor.txt.
import Foundation
import OperationBridge

/// The state of the sync engine, now an actor whose executor is the engine's queue.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
actor SyncLedger {
    nonisolated let executor: OperationQueueExecutor
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    private(set) var changes: [String] = []

    init(queue: OperationQueue) {
        executor = OperationQueueExecutor(queue)
    }

    func record(_ change: String) {
        changes.append(change)
    }

    /// Which queue runs the method: the engine's.
    func runningQueueName() -> String {
        OperationQueue.current?.name ?? "none"
    }
}

/// A legacy operation of the engine: it reads the ledger synchronously, without a hop.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
final class UploadChangesOperation: Operation, @unchecked Sendable {
    let ledger: SyncLedger
    private(set) var uploaded: [String] = []

    init(ledger: SyncLedger) {
        self.ledger = ledger
    }

    override func main() {
        uploaded = ledger.assumeIsolated { ledger in
            let changes = ledger.changes
            ledger.record("uploaded \(changes.count)")
            return changes
        }
    }
}

/// Counts how many jobs run at once.
final class Level: @unchecked Sendable {
    private let lock = NSLock()
    private var current = 0
    private(set) var highest = 0

    func enter() {
        lock.withLock {
            current += 1
            highest = max(highest, current)
        }
    }

    func leave() { lock.withLock { current -= 1 } }

    var maximum: Int { lock.withLock { highest } }
}

if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
    let syncQueue = OperationQueue()
    syncQueue.name = "sync"
    syncQueue.maxConcurrentOperationCount = 1
    let ledger = SyncLedger(queue: syncQueue)

    print("1. The actor runs on the engine's queue")
    await ledger.record("edit note 1")
    print("  record(_:) ran on queue '\(await ledger.runningQueueName())'")

    print("2. A legacy operation on the queue reads the actor synchronously")
    syncQueue.addOperation { print("  legacy operation: before the upload") }
    let upload = UploadChangesOperation(ledger: ledger)
    syncQueue.addOperation(upload)
    try await upload.bridge.waitForCompletion()
    print("  uploaded \(upload.uploaded)")
    print("  ledger: \(await ledger.changes)")

    print("3. While the queue is suspended, actor calls wait, as operations do")
    syncQueue.isSuspended = true
    let waiting = Task { await ledger.record("edit note 2") }
    print("  queue suspended: record(_:) waits for it")
    syncQueue.isSuspended = false
    await waiting.value
    print("  resumed: ledger has \(await ledger.changes.count) changes")

    print("4. Async code on a queue of width 2: its jobs run as operations, two at most at once")
    let imageQueue = OperationQueue()
    imageQueue.maxConcurrentOperationCount = 2
    let level = Level()
    let total = await withTaskExecutorPreference(OperationQueueTaskExecutor(imageQueue)) {
        await withTaskGroup(of: Int.self) { group in
            for size in 1...8 {
                group.addTask {
                    level.enter()
                    defer { level.leave() }
                    return (0..<(size * 10_000)).reduce(0, &+)
                }
            }
            var checksum = 0
            for await part in group { checksum &+= part }
            return checksum
        }
    }
    print("  rendered 8 thumbnails (checksum \(total)); at most 2 at once: \(level.maximum <= 2)")
} else {
    print("LegacyQueueActor needs macOS 15 / iOS 18")
}
