import Foundation
import OperationBridge
import Testing

// The code blocks of ActorsOnLegacyQueues.md and of Migration.md's step 9 are taken verbatim
// from this file (see scripts/check-snippets.py), so every snippet compiles and runs.

// MARK: - Migration step 9, before: a class guarded by a serial queue

/// A cache whose state only the operations of `queue` touch.
// Before
final class LegacyBookmarkCache: @unchecked Sendable {
    let queue: OperationQueue
    private var bookmarks: [String: URL] = [:]

    init() {
        queue = OperationQueue()
        queue.name = "bookmarks"
        queue.maxConcurrentOperationCount = 1
    }

    func add(_ url: URL, named name: String) {
        queue.addOperation { self.bookmarks[name] = url }
    }

    func bookmark(named name: String, completion: @escaping @Sendable (URL?) -> Void) {
        queue.addOperation { completion(self.bookmarks[name]) }
    }
}

// MARK: - Migration step 9, after: the same state in an actor on the same queue

/// The cache as an actor whose executor is the queue the legacy operations already use.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
// After
actor BookmarkCache {
    nonisolated let executor: OperationQueueExecutor
    nonisolated var unownedExecutor: UnownedSerialExecutor {
        executor.asUnownedSerialExecutor()
    }
    private var bookmarks: [String: URL] = [:]

    init(queue: OperationQueue) {
        executor = OperationQueueExecutor(queue)
    }

    func add(_ url: URL, named name: String) {
        bookmarks[name] = url
    }

    func bookmark(named name: String) -> URL? {
        bookmarks[name]
    }
}

/// A legacy operation that still runs on the cache's queue, and reads the actor synchronously.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
final class ExportBookmarksOperation: Operation, @unchecked Sendable {
    let cache: BookmarkCache
    let names: [String]
    private(set) var exported: [URL] = []

    init(cache: BookmarkCache, names: [String]) {
        self.cache = cache
        self.names = names
    }

    override func main() {
        // Runs on the cache's queue: no other operation and no actor method runs meanwhile.
        exported = cache.assumeIsolated { cache in
            names.compactMap { cache.bookmark(named: $0) }
        }
    }
}

// MARK: - ActorsOnLegacyQueues.md

/// A global actor for the app's existing database queue.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
@globalActor
actor DatabaseActor {
    static let databaseQueue: OperationQueue = {
        let queue = OperationQueue()
        queue.name = "database"
        queue.maxConcurrentOperationCount = 1
        queue.qualityOfService = .utility
        return queue
    }()
    static let executor = OperationQueueExecutor(databaseQueue)
    static let shared = DatabaseActor()

    nonisolated var unownedExecutor: UnownedSerialExecutor {
        Self.executor.asUnownedSerialExecutor()
    }
}

@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
extension DatabaseActor {
    /// Runs `body` isolated to the database actor, from synchronous code already running on the
    /// database queue (as `MainActor.assumeIsolated` does for the main actor); traps elsewhere.
    static func assumeIsolated<T: Sendable>(_ body: @DatabaseActor () throws -> T) rethrows -> T {
        shared.preconditionIsolated()
        return try withoutActuallyEscaping(body) { body in
            try unsafeBitCast(body, to: (() throws -> T).self)()
        }
    }
}

/// State the legacy database operations and `@DatabaseActor` code share.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
@DatabaseActor
var pendingWrites: [String] = []

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
@DatabaseActor
func recordWrite(_ key: String) {
    pendingWrites.append(key)
}

/// Busy work standing in for rendering a thumbnail.
func renderThumbnail(size: Int) -> Int {
    (0..<size).reduce(0) { $0 &+ $1 }
}

@Suite("Actors on legacy queues: documentation snippets")
struct ExecutorSnippets {
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test("Migration step 9: the legacy operations and the actor share one queue")
    func migrationStep() async throws {
        let legacy = LegacyBookmarkCache()
        let link = try #require(URL(string: "https://example.com"))
        legacy.add(link, named: "home")
        let found = OneShotSignal()
        legacy.bookmark(named: "home") { url in
            if url == link { found.fire() }
        }
        #expect(await found.wait())

        let queue = legacy.queue
        // snippet: migration-actor-on-queue
        let cache = BookmarkCache(queue: queue)
        await cache.add(link, named: "home")
        let export = ExportBookmarksOperation(cache: cache, names: ["home", "missing"])
        queue.addOperation(export)
        try await export.bridge.waitForCompletion()
        print(export.exported)  // [https://example.com]
        // end snippet
        #expect(export.exported == [link])
        #expect(await cache.bookmark(named: "home") == link)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test("A global actor on the database queue, called from async code and from legacy operations")
    func globalActor() async throws {
        // snippet: global-actor-on-queue
        await recordWrite("user:42")
        DatabaseActor.databaseQueue.addOperation {
            DatabaseActor.assumeIsolated {
                print("pending writes: \(pendingWrites.count)")
            }
        }
        // end snippet
        try await DatabaseActor.databaseQueue.waitForAllOperations()
        #expect(await pendingWrites.contains("user:42"))
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test("A task executor bounds async work by the queue's width")
    func taskExecutor() async {
        // snippet: task-executor
        let imageQueue = OperationQueue()
        imageQueue.maxConcurrentOperationCount = 2
        let imageExecutor = OperationQueueTaskExecutor(imageQueue)

        let thumbnails = await withTaskExecutorPreference(imageExecutor) {
            await withTaskGroup(of: Int.self) { group in
                for size in [64, 128, 256, 512] {
                    group.addTask { renderThumbnail(size: size) }
                }
                return await group.reduce(0, +)
            }
        }
        // end snippet
        #expect(thumbnails == [64, 128, 256, 512].map(renderThumbnail(size:)).reduce(0, +))
    }
}
