// Async versions of the callback services, each written once with a continuation (Migration.md,
// steps 3, 5 and 7). The callback APIs call back exactly once, so each continuation is resumed
// exactly once.
import Foundation

// After
extension SimulatedWeb {
    /// The page at `url`, with its title.
    func page(at url: URL) async throws(TitleError) -> Page {
        let title = await withCheckedContinuation { continuation in
            self.title(of: url) { continuation.resume(returning: $0) }
        }
        guard let title else { throw .noTitle(url) }
        return Page(url: url, title: title)
    }
}

extension SimulatedWeb {
    /// The URL `shortURL` redirects to.
    func unfurl(_ shortURL: URL) async throws(UnfurlError) -> URL {
        let url = await withCheckedContinuation { continuation in
            self.unfurl(shortURL) { continuation.resume(returning: $0) }
        }
        guard let url else { throw .notAShortLink(shortURL) }
        return url
    }
}

extension BookmarkStore {
    /// Saves `page` as a bookmark.
    func save(_ page: Page) async -> Bookmark {
        await withCheckedContinuation { continuation in
            save(page) { continuation.resume(returning: $0) }
        }
    }
}

// After
extension CloudSync {
    /// Uploads `bookmark`; returns the new revision of the cloud copy.
    func upload(_ bookmark: Bookmark) async throws(SyncError) -> Int {
        try await withCheckedContinuation { continuation in
            upload(bookmark) { continuation.resume(returning: $0) }
        }.get()
    }
}
