import Foundation
import OperationBridge
import Testing

// The code blocks of GroupsConditionsAndObservers.md and of Migration.md's step 8 are taken
// verbatim from this file (see scripts/check-snippets.py), so every snippet compiles and runs.

/// A download, as existing codebases have them.
final class DownloadOperation: AsyncResultOperation<Data, FetchError>, @unchecked Sendable {
    let url: URL

    init(_ url: URL) {
        self.url = url
    }

    override func main() {
        DispatchQueue.global().async { [self] in
            finish(with: url.path.contains("missing") ? .failure(.notFound) : .success(Data(url.path.utf8)))
        }
    }
}

/// The shape of AsyncOpKit's operations before the migration: preconditions evaluated in
/// `start()`, a `whenFinished` handler called on a queue.
class LegacyPreconditionOperation: Operation, @unchecked Sendable {
    var preconditionEvaluators: [@Sendable () -> Bool] = []
    var whenFinished: (@Sendable (LegacyPreconditionOperation) -> Void)?
    var handlerQueue = OperationQueue.main
    private(set) var skipped = false

    override func main() {
        if preconditionEvaluators.contains(where: { !$0() }) {
            skipped = true
        } else {
            work()
        }
        if let whenFinished {
            handlerQueue.addOperation { whenFinished(self) }
        }
    }

    func work() {}
}

/// The links found on a page (the crawl snippet's stand-in for a network call).
func links(of page: URL) async throws -> [URL] {
    ["1", "2", "3"].map { page.appendingPathComponent($0) }
}

/// The observer of the observers snippet.
// After
struct DownloadLog: OperationObserver {
    let log: Recorder<String>

    func willExecute(_ download: DownloadOperation) {
        log.append("fetching \(download.url.lastPathComponent)")
    }

    func willFinish(_ download: DownloadOperation) {
        let outcome = (try? download.result?.get()) != nil ? "fetched" : "failed"
        log.append("\(download.url.lastPathComponent) \(outcome)")
    }
}

@Suite("Groups, conditions and observers: documentation snippets")
struct GroupsAndConditionsSnippets {
    let urls = ["a", "b", "c"].map { URL(string: "https://example.com/\($0)")! }

    @Test("A group collects its children's results")
    func groupCollects() async throws {
        let queue = OperationQueue()
        let urls = self.urls
        let downloads = urls.map { DownloadOperation($0) }
        let batch = try GroupOperation(collecting: downloads, maxConcurrentChildren: 4)
        let files = try await queue.run(batch)  // [Data], in order; throws FetchError
        #expect(files.count == 3)
    }

    @Test("The classic aggregate, before and after")
    func aggregate() async throws {
        let queue = OperationQueue()
        let urls = self.urls
        let reported = Gate()
        let log = Recorder<String>()

        let completion = Self.classicAggregate(urls, on: queue, log: log)

        // After
        let again = urls.map { DownloadOperation($0) }
        let allDownloaded = try GroupOperation<Void, any Error>(again)
        allDownloaded.bridge.whenFinished(on: .queue(queue)) { result in
            log.append((try? result?.get()) != nil ? "all downloaded" : "some failed")
            reported.open()
        }
        queue.addOperation(allDownloaded)

        await reported.wait()
        try await completion.bridge.waitForCompletion()
        #expect(log.all == ["all downloaded", "all downloaded"])
    }

    /// The classic aggregate: a completion operation that depends on every download.
    private static func classicAggregate(_ urls: [URL], on queue: OperationQueue, log: Recorder<String>) -> Operation {
        // Before
        let downloads = urls.map { DownloadOperation($0) }
        let completion = BlockOperation {
            let allSucceeded = downloads.allSatisfy { (try? $0.result?.get()) != nil }
            log.append(allSucceeded ? "all downloaded" : "some failed")
        }
        for download in downloads { completion.addDependency(download) }
        queue.addOperations(downloads + [completion], waitUntilFinished: false)
        return completion
    }

    @Test("Conditions, before and after")
    func conditions() async throws {
        let queue = OperationQueue()
        let isSignedIn = LockedBox(false)

        // Before
        let legacy = LegacyPreconditionOperation()
        legacy.preconditionEvaluators.append { isSignedIn.current }
        legacy.handlerQueue = queue
        let skipped = Gate()
        legacy.whenFinished = { operation in
            if operation.skipped { skipped.open() }
        }
        queue.addOperation(legacy)

        // After
        let upload = TaskOperation { () async throws(FetchError) -> Int in 42 }
        upload.bridge.addCondition(OperationCondition("signed in") { _ in isSignedIn.current })
        upload.bridge.addCondition(.noFailedDependencies)
        upload.bridge.addCondition(.mutuallyExclusive("network"))
        upload.bridge.whenFinished(on: .queue(queue)) { result in
            if case .failure(let error)? = result { print("upload: \(error)") }
        }
        queue.addOperation(upload)

        await skipped.wait()
        try await upload.bridge.waitForCompletion()
        #expect(upload.bridge.conditionFailure?.condition == "signed in")
    }

    @Test("Exclusive access shared by a task and an operation")
    func exclusiveAccess() async throws {
        let queue = OperationQueue()
        let store = LockedBox([String]())
        let migration = TaskOperation { store.withLock { $0.append("migration") } }
        migration.bridge.addCondition(.mutuallyExclusive("database"))
        queue.addOperation(migration)
        try await withExclusiveAccess(to: "database") {
            store.withLock { $0.append("vacuum") }  // never at the same time as `migration`
        }
        try await migration.bridge.waitForCompletion()
        #expect(store.current.count == 2)
    }

    @Test("A holder re-enters its own key")
    func reentrantKey() async throws {
        let queue = OperationQueue()
        let store = LockedBox([String]())
        let migration = TaskOperation { () async throws -> Void in
            // In migration's body: entered at once, not waited for.
            try await withExclusiveAccess(to: "schema") { store.withLock { $0.append("compact") } }
        }
        migration.bridge.addCondition(.mutuallyExclusive("schema"))
        try await queue.run(migration)
        #expect(store.current == ["compact"])
    }

    @Test("Pause, resume and lifecycle events")
    func pauseAndEvents() async throws {
        let queue = OperationQueue()
        let upload = TaskOperation { () async -> Int in 1 }
        upload.bridge.pause()  // offline: held back, takes no slot
        queue.addOperation(upload)
        upload.bridge.resume()  // online again: runs when the queue has a slot
        var events: [OperationEvent] = []
        for await event in upload.bridge.lifecycleEvents {
            events.append(event)  // .started, .finished
        }
        #expect(events == [.started, .finished])
    }

    @Test("A group that grows while it runs: a child adds the work it finds")
    func growingGroup() async throws {
        let queue = OperationQueue()
        let home = URL(string: "https://example.com/")!
        // After
        let crawl = try GroupOperation<Void, any Error>([])
        try crawl.addChild(
            TaskOperation { [weak crawl] () async throws -> Void in
                for url in try await links(of: home) {
                    try crawl?.addChild(DownloadOperation(url))
                }
            })
        try await queue.run(crawl)  // after every download, those added while it ran included
        #expect(crawl.children.count == 4)
        #expect(crawl.children.allSatisfy { $0.isFinished })
    }

    @Test("An observer told before the work runs and before the finish, with the result")
    func observer() async throws {
        let queue = OperationQueue()
        let log = Recorder<String>()
        // After
        let download = DownloadOperation(urls[0])
        download.bridge.addObserver(DownloadLog(log: log))
        _ = try await queue.run(download)
        #expect(log.all == ["fetching a", "a fetched"])
    }
}

/// A session for the produced-dependency snippets: signed in once its login has run.
final class DemoSession: Sendable {
    private let state = LockedBox(false)
    var isSignedIn: Bool { state.current }
    func signIn() { state.withLock { $0 = true } }
}

/// A classic login operation, run before the condition that needs it is checked.
final class LoginOperation: AsyncOperation, @unchecked Sendable {
    let session: DemoSession

    init(_ session: DemoSession) {
        self.session = session
    }

    override func main() {
        DispatchQueue.global().async { [self] in
            session.signIn()
            finish()
        }
    }
}

@Suite("Composed and producing conditions: documentation snippets")
struct ComposedConditionsSnippets {
    @Test("Composing conditions: silent, any, negated")
    func composing() async throws {
        let queue = OperationQueue()
        let syncEnabled = LockedBox(false)
        let onCellular = LockedBox(true)
        let userAskedNow = OperationCondition("user asked now") { _ in true }

        // After
        let sync = TaskOperation { () async throws(FetchError) -> Int in 1 }
        sync.bridge.addCondition(.silent(OperationCondition("sync enabled") { _ in syncEnabled.current }))
        sync.bridge.addCondition(
            .any([.negated(OperationCondition("on cellular") { _ in onCellular.current }), userAskedNow]))
        queue.addOperation(sync)  // sync off: cancelled, not failed; its work never runs

        try await sync.bridge.waitForCompletion()
        #expect(sync.isCancelled)
        #expect(sync.bridge.silencedConditionFailure?.condition == "sync enabled")
        #expect(sync.bridge.conditionFailure == nil)
    }

    @Test("A condition that produces a dependency: a login first")
    func producing() async throws {
        let queue = OperationQueue()
        let session = DemoSession()

        // After
        let signedIn = OperationCondition("signed in") { _ in session.isSignedIn }
            .producingDependency { _ in session.isSignedIn ? nil : LoginOperation(session) }
        let upload = TaskOperation { () async throws(FetchError) -> Int in 42 }
        upload.bridge.addCondition(signedIn)
        let uploaded = try await queue.run(upload)  // LoginOperation first, then the check, then the upload

        #expect(uploaded == 42)
        #expect(session.isSignedIn)
    }

    @Test("Cancelled dependencies: skip quietly")
    func cancelledDependencies() async throws {
        let queue = OperationQueue()
        let download = DownloadOperation(URL(string: "https://example.com/a")!)
        download.cancel()

        // After
        let report = TaskOperation { () async -> Int in 1 }
        report.addDependency(download)  // the user may cancel the download
        report.bridge.addCondition(.noFailedDependencies(cancelledDependencies: .skip))
        queue.addOperation(download)
        queue.addOperation(report)

        try await report.bridge.waitForCompletion()
        #expect(report.isCancelled && report.bridge.silencedConditionFailure != nil)
    }
}
