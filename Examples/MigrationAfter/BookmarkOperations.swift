// The feature's operations on OperationBridge (Migration.md, steps 1 and 2). The subclasses are
// the ones of MigrationBefore: they compile unchanged against the package. The error types adopt
// two small protocols so that cancellation and upstream failures have a typed value.

// After
import Foundation
import OperationBridge

// After
enum UnfurlError: Error, CancellationRepresentable {
    case notAShortLink(URL)
    case cancelled

    static var cancellation: UnfurlError { .cancelled }
}

/// Unfurls a short link into the URL it redirects to.
final class UnfurlURLOperation: AsyncResultOperation<URL, UnfurlError>, @unchecked Sendable {
    let shortURL: URL
    let web: SimulatedWeb

    init(shortURL: URL, web: SimulatedWeb) {
        self.shortURL = shortURL
        self.web = web
    }

    override func main() {
        web.unfurl(shortURL) { [self] url in
            if let url {
                finish(with: .success(url))
            } else {
                finish(with: .failure(.notAShortLink(shortURL)))
            }
        }
    }
}

// After
enum TitleError: Error, CancellationRepresentable, UpstreamFailureRepresentable {
    case noTitle(URL)
    case missingURL
    case cancelled
    case upstream(UpstreamFailedError)

    static var cancellation: TitleError { .cancelled }
    static func upstreamFailed(_ error: UpstreamFailedError) -> TitleError { .upstream(error) }
}

/// Fetches the title of the page its input URL points to.
final class FetchTitleOperation: ChainedAsyncResultOperation<URL, Page, TitleError>, @unchecked Sendable {
    let web: SimulatedWeb

    init(web: SimulatedWeb) {
        self.web = web
        super.init()
    }

    override func main() {
        // Runs only with an input: when the unfurl failed, the operation ends with
        // `.upstream(…)` without running (see `upstreamFailurePolicy`).
        guard let url = input else {
            return finish(with: .failure(.missingURL))
        }
        web.title(of: url) { [self] title in
            if let title {
                finish(with: .success(Page(url: url, title: title)))
            } else {
                finish(with: .failure(.noTitle(url)))
            }
        }
    }
}

// After
enum BookmarkError: Error, CancellationRepresentable, UpstreamFailureRepresentable {
    case noPage
    case cancelled
    case upstream(UpstreamFailedError)

    static var cancellation: BookmarkError { .cancelled }
    static func upstreamFailed(_ error: UpstreamFailedError) -> BookmarkError { .upstream(error) }
}

// After
/// Saves a page as a bookmark. Its input comes from the operation that fetched the page.
final class SaveBookmarkOperation: ChainedAsyncResultOperation<Page, Bookmark, BookmarkError>, @unchecked Sendable {
    let store: BookmarkStore

    init(store: BookmarkStore) {
        self.store = store
        super.init()
    }

    override func main() {
        guard let page = input else {
            return finish(with: .failure(.noPage))
        }
        store.save(page) { [self] bookmark in
            finish(with: .success(bookmark))
        }
    }
}

/// The failure of ``CloudSync``.
enum SyncError: Error, CancellationRepresentable, UpstreamFailureRepresentable {
    case offline
    case cancelled
    case upstream(UpstreamFailedError)

    static var cancellation: SyncError { .cancelled }
    static func upstreamFailed(_ error: UpstreamFailedError) -> SyncError { .upstream(error) }
}
