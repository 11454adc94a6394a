// The feature's operations, written against the hand-copied base classes: a result operation,
// a chained operation, and an operation whose input a glue operation sets.
import Foundation

// Before
enum UnfurlError: Error {
    case notAShortLink(URL)
    case cancelled
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

    /// The base class traps in `cancel()`, so every subclass that may be cancelled overrides it.
    override func cancel() {
        cancel(with: .cancelled)
    }
}

// Before
enum TitleError: Error {
    case noTitle(URL)
    case missingURL
}

/// Fetches the title of the page its input URL points to.
final class FetchTitleOperation: ChainedAsyncResultOperation<URL, Page, TitleError>, @unchecked Sendable {
    let web: SimulatedWeb

    init(web: SimulatedWeb) {
        self.web = web
        super.init()
    }

    override func main() {
        // Runs even when the unfurl failed: the input is then `nil`, and the cause is lost.
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

// Before
enum BookmarkError: Error {
    case noPage
}

/// Saves a page as a bookmark. Someone must set `page` before the operation starts.
final class SaveBookmarkOperation: AsyncResultOperation<Bookmark, BookmarkError>, @unchecked Sendable {
    let store: BookmarkStore
    var page: Page?

    init(store: BookmarkStore) {
        self.store = store
    }

    override func main() {
        guard let page else {
            return finish(with: .failure(.noPage))
        }
        store.save(page) { [self] bookmark in
            finish(with: .success(bookmark))
        }
    }
}

/// The failure of ``CloudSync``.
enum SyncError: Error {
    case offline
}
