// MigrationBefore: bookmark a short link — unfurl it, fetch the page's title, save a bookmark,
// sync it to the cloud — written the classic way: hand-copied base classes
// (ClassicOperations.swift), a glue `BlockOperation`, a closure-style operation
// (ClosureOperation.swift), completion callbacks and blocking waits. Migration.md starts from
// this code; MigrationAfter is the same feature on OperationBridge.
import Foundation

/// The feature: the services it uses and the queue it runs on.
struct BookmarkFeature: Sendable {
    let web = SimulatedWeb()
    let store = BookmarkStore()
    let cloud = CloudSync()
    let queue = OperationQueue()

    /// Bookmarks `link` and syncs the bookmark, blocking the calling thread until it is done.
    func bookmarkAndWait(_ link: URL) {
        // Before
        let unfurl = UnfurlURLOperation(shortURL: link, web: web)
        let fetchTitle = FetchTitleOperation(web: web)
        fetchTitle.addDependency(unfurl)

        // Before
        let save = SaveBookmarkOperation(store: store)
        let glue = BlockOperation { [unowned fetchTitle, unowned save] in
            if case .success(let page)? = fetchTitle.result {
                save.page = page
            }
        }
        glue.addDependency(fetchTitle)
        save.addDependency(glue)

        // Before
        let sync = ClosureOperation<Bookmark, Int> { bookmark, completion in
            cloud.upload(bookmark) { result in
                completion(result.mapError { $0 })
            }
        }
        sync.setInputProvider { [unowned save] in
            try? save.result?.get()
        }
        sync.onStart = { print("  syncing…") }
        sync.whenFinished = { result in
            print("  synced: \(result)")
        }
        sync.addDependency(save)

        queue.addOperations([unfurl, fetchTitle, glue, save, sync], waitUntilFinished: true)
        print("  unfurl \(describe(unfurl.result)) → title \(describe(fetchTitle.result))")
        print("  → save \(describe(save.result)) → sync \(describe(sync.result))")
    }

    /// Unfurls `link` and reports the result through the operation's callback.
    func unfurl(_ link: URL) {
        // Before
        let unfurl = UnfurlURLOperation(shortURL: link, web: web)
        unfurl.onResult = { result in
            print("  \(link) → \(result)")
        }
        queue.addOperation(unfurl)
        unfurl.waitUntilFinished()
    }

    // Before
    /// Unfurls every link, then calls `completion` with the URLs of those that could be unfurled.
    func unfurlAll(_ links: [URL], completion: @escaping @Sendable ([URL]) -> Void) {
        let unfurls = links.map { UnfurlURLOperation(shortURL: $0, web: web) }
        let done = BlockOperation {
            completion(unfurls.compactMap { try? $0.result?.get() })
        }
        for unfurl in unfurls {
            done.addDependency(unfurl)
        }
        queue.addOperations(unfurls + [done], waitUntilFinished: false)
    }

    // Before
    /// Compacts the store, then waits until the queue has no work left.
    func shutDown() {
        let compact = BlockOperation { [store] in
            store.compact()
        }
        queue.addOperations([compact], waitUntilFinished: false)
        compact.waitUntilFinished()
        print("  store compacted: \(store.count) bookmark(s) left")
        queue.waitUntilAllOperationsAreFinished()
    }
}

/// A result as one short phrase: `✓ value`, `✗ error`, or `(no result)`.
func describe<Success, Failure>(_ result: Result<Success, Failure>?) -> String {
    switch result {
    case .success(let value)?: "✓ \(value)"
    case .failure(let error)?: "✗ \(error)"
    case nil: "(no result)"
    }
}

let links = ["https://bit.ly/swift-ops", "https://bit.ly/broken", "https://example.org/not-short"].map {
    URL(string: $0)!
}
let feature = BookmarkFeature()

print("MigrationBefore: hand-copied base classes, glue operations, callbacks, blocking waits\n")
print("Bookmark each link (unfurl → fetch title → glue → save → sync):")
for link in links {
    print(link)
    feature.bookmarkAndWait(link)
}

print("\nUnfurl one link, result through `onResult`:")
feature.unfurl(links[0])

print("\nUnfurl a batch, result through a BlockOperation that depends on every unfurl:")
feature.unfurlAll(links) { urls in
    print("  \(urls.count) of \(links.count) unfurled: \(urls.map(\.absoluteString))")
}
feature.queue.waitUntilAllOperationsAreFinished()

print("\nShut down, blocking until the queue is idle:")
feature.shutDown()
print("  queue drained")

print("\nNot shown: cancelling. The hand-copied AsyncResultOperation.cancel() calls fatalError,")
print("so only subclasses that override it (UnfurlURLOperation) can be cancelled at all.")
