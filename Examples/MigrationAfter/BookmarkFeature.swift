// The feature of MigrationBefore, migrated step by step as Migration.md describes. Each method
// is the code of one step; main.swift runs them in order.
import Foundation
import OperationBridge

/// The feature: the services it uses and the queue it runs on.
struct BookmarkFeature: Sendable {
    let web = SimulatedWeb()
    let store = BookmarkStore()
    let cloud = CloudSync()
    let queue = OperationQueue()

    /// Step 1: the title of `link`'s page, through the classic subclasses on the package's base
    /// classes. With `classicUpstreamPolicy`, the title operation runs even when the unfurl
    /// failed, as it did with the hand-copied class.
    func title(of link: URL, classicUpstreamPolicy: Bool = false) async -> Result<Page, TitleError>? {
        let unfurl = UnfurlURLOperation(shortURL: link, web: web)
        let fetchTitle = FetchTitleOperation(web: web)
        fetchTitle.addDependency(unfurl)
        if classicUpstreamPolicy {
            // After
            fetchTitle.upstreamFailurePolicy = .runWithoutInput
        }
        queue.addOperation(unfurl)
        return await queue.runForOutcome(fetchTitle)
    }

    /// Step 1: cancelling an operation whose copied base class trapped in `cancel()`.
    func cancelledTitle() async -> Result<Page, TitleError>? {
        // After
        let fetchTitle = FetchTitleOperation(web: web)
        fetchTitle.cancel()  // the hand-copied base class called fatalError here
        return await queue.runForOutcome(fetchTitle)  // .failure(.cancelled)
    }

    /// Steps 2 and 3: bookmarks `link` and syncs the bookmark; returns the cloud revision.
    func bookmark(_ link: URL) async throws(SyncError) -> Int {
        let unfurl = UnfurlURLOperation(shortURL: link, web: web)
        let fetchTitle = FetchTitleOperation(web: web)
        fetchTitle.addDependency(unfurl)

        // After
        let save = SaveBookmarkOperation(store: store)
        save.takeInput(from: fetchTitle)

        // After
        let sync = save.bridge.then { (bookmark: Bookmark) async throws(SyncError) -> Int in
            print("  syncing \(bookmark)…")
            return try await cloud.upload(bookmark)
        }
        queue.addOperation(unfurl)
        queue.addOperation(fetchTitle)
        queue.addOperation(save)
        let revision = try await queue.run(sync)
        print("  synced: revision \(revision)")
        return revision
    }

    /// Step 4: an existing operation, awaited with its typed error.
    func unfurl(_ link: URL) async {
        // After
        do {
            let url = try await queue.run(UnfurlURLOperation(shortURL: link, web: web))
            print("  \(link) → \(url)")
        } catch {
            print("  \(link) → \(error)")  // error: UnfurlError
        }
    }

    // After
    /// Unfurls every link; returns the URLs of those that could be unfurled, in the links' order.
    func unfurlAll(_ links: [URL]) async throws -> [URL] {
        let unfurls = links.map { UnfurlURLOperation(shortURL: $0, web: web) }
        let results = try await queue.results(of: unfurls).collect()
        return results.compactMap { try? $0?.get() }
    }

    // After
    /// Unfurls every link, or throws the first failure and cancels the unfurls not finished yet.
    func unfurlEvery(_ links: [URL]) async throws -> [URL] {
        let unfurls = links.map { UnfurlURLOperation(shortURL: $0, web: web) }
        return try await queue.values(of: unfurls).collect()
    }

    /// Step 4: the task that runs an operation owns it.
    func cancelWhileUnfurling(_ link: URL) async {
        // The simulated web answers at once: with the queue suspended, the cancellation always
        // reaches the unfurl before it can start, so this example prints the same every time.
        queue.isSuspended = true
        defer { queue.isSuspended = false }
        // After
        let unfurl = UnfurlURLOperation(shortURL: link, web: web)
        let task = Task { try await queue.run(unfurl) }
        task.cancel()  // cancels `unfurl` too
        let outcome = await task.result  // .failure(UnfurlError.cancelled)
        print("  task: \(outcome); operation cancelled: \(unfurl.isCancelled)")
    }

    /// Step 5: the title step is an async function now; its neighbours are still operations.
    func bookmarkFetchingTitleAsync(_ link: URL) async throws(BookmarkError) -> Bookmark {
        // After
        let unfurl = UnfurlURLOperation(shortURL: link, web: web)
        let fetchTitle = unfurl.bridge.then { (url: URL) async throws(TitleError) -> Page in
            try await web.page(at: url)
        }
        let save = SaveBookmarkOperation(store: store)
        save.takeInput(from: fetchTitle)
        queue.addOperation(unfurl)
        queue.addOperation(fetchTitle)
        return try await queue.run(save)
    }

    // After
    /// Compacts the store, then waits until the queue has no work left.
    func shutDown() async throws(CancellationError) {
        let compact = BlockOperation { [store] in
            store.compact()
        }
        queue.addOperation(compact)
        try await compact.bridge.waitForCompletion()
        print("  store compacted: \(store.count) bookmark(s) left")
        try await queue.waitForAllOperations()
    }
}
