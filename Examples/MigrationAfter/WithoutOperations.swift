// Migration.md, step 7: the feature with the operations that are left after steps 1–6 (Before),
// and with none (After). main.swift runs both.
import Foundation
import OperationBridge

extension BookmarkFeature {
    // Before
    /// Bookmarks `link` and syncs the bookmark with operations on `queue`; returns the revision.
    func bookmarkWithOperations(_ link: URL) async throws(SyncError) -> Int {
        let unfurl = UnfurlURLOperation(shortURL: link, web: web)
        let fetchTitle = unfurl.bridge.then { (url: URL) async throws(TitleError) -> Page in
            try await web.page(at: url)
        }
        let save = SaveBookmarkOperation(store: store)
        save.takeInput(from: fetchTitle)
        let sync = save.bridge.then { (bookmark: Bookmark) async throws(SyncError) -> Int in
            try await cloud.upload(bookmark)
        }
        queue.addOperation(unfurl)
        queue.addOperation(fetchTitle)
        queue.addOperation(save)
        return try await queue.run(sync)
    }

    // After
    /// Bookmarks `link` and syncs the bookmark with async functions only; returns the revision.
    func bookmarkWithoutOperations(_ link: URL) async throws -> Int {
        let url = try await web.unfurl(link)
        let page = try await web.page(at: url)
        let bookmark = await store.save(page)
        return try await cloud.upload(bookmark)
    }
}
