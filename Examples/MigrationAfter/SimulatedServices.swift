// The services the example feature talks to, simulated so that it runs without a network:
// callback APIs that answer on another thread, as real networking code does.
import Foundation

/// A web page: where it lives and its title.
struct Page: Sendable, CustomStringConvertible {
    let url: URL
    let title: String

    var description: String { "page “\(title)”" }
}

/// A saved bookmark.
struct Bookmark: Sendable, CustomStringConvertible {
    let title: String
    let url: URL

    var description: String { "bookmark “\(title)”" }
}

/// A pretend web: short links that redirect, and pages with titles.
struct SimulatedWeb: Sendable {
    let redirects: [URL: URL] = [
        URL(string: "https://bit.ly/swift-ops")!: URL(string: "https://www.example.com/operations")!,
        URL(string: "https://bit.ly/broken")!: URL(string: "https://www.example.com/missing")!,
    ]
    let titles: [URL: String] = [
        URL(string: "https://www.example.com/operations")!: "Getting started with Operations and OperationQueues"
    ]

    /// Calls `completion` with the target of `shortURL`, or `nil` when it is not a short link.
    func unfurl(_ shortURL: URL, completion: @escaping @Sendable (URL?) -> Void) {
        DispatchQueue.global().async { completion(redirects[shortURL]) }
    }

    /// Calls `completion` with the title of the page at `url`, or `nil` when there is none.
    func title(of url: URL, completion: @escaping @Sendable (String?) -> Void) {
        DispatchQueue.global().async { completion(titles[url]) }
    }
}

/// A pretend local database of bookmarks.
final class BookmarkStore: @unchecked Sendable {
    // Safety: `bookmarks` is only touched while holding `lock`.
    private let lock = NSLock()
    private var bookmarks: [Bookmark] = []

    /// Saves `page` as a bookmark and calls `completion` with it.
    func save(_ page: Page, completion: @escaping @Sendable (Bookmark) -> Void) {
        DispatchQueue.global().async { [self] in
            let bookmark = Bookmark(title: page.title, url: page.url)
            lock.lock()
            bookmarks.append(bookmark)
            lock.unlock()
            completion(bookmark)
        }
    }

    /// The number of bookmarks saved.
    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return bookmarks.count
    }

    /// Removes duplicate bookmarks (the same URL saved more than once), keeping the first.
    func compact() {
        lock.lock()
        defer { lock.unlock() }
        var seen = Set<URL>()
        bookmarks = bookmarks.filter { seen.insert($0.url).inserted }
    }
}

/// A pretend cloud service that keeps a copy of the bookmarks.
final class CloudSync: @unchecked Sendable {
    // Safety: `revision` is only touched while holding `lock`.
    private let lock = NSLock()
    private var revision = 0

    /// Uploads `bookmark` and calls `completion` with the new revision of the cloud copy.
    func upload(_ bookmark: Bookmark, completion: @escaping @Sendable (Result<Int, SyncError>) -> Void) {
        DispatchQueue.global().async { [self] in
            lock.lock()
            revision += 1
            let revision = self.revision
            lock.unlock()
            completion(.success(revision))
        }
    }
}
