// The unfurl-and-fetch-title chain from the classic operation articles, against a simulated
// service (no network): a classic result operation, an async step appended with `then`, and a
// classic chained operation, awaited from async code with typed errors.
import Foundation
import OperationBridge

/// A pretend web: short links that redirect, and pages with titles.
enum SimulatedWeb {
    static let redirects: [String: String] = [
        "https://bit.ly/swift-ops": "https://www.example.com/operations",
        "https://bit.ly/broken": "https://www.example.com/missing",
    ]
    static let titles: [String: String] = [
        "https://www.example.com/operations": "Getting started with Operations and OperationQueues"
    ]
}

enum UnfurlError: Error, CancellationRepresentable {
    case notAShortLink(String)
    case cancelled
    static var cancellation: UnfurlError { .cancelled }
}

/// A classic, callback-style result operation — the kind teams already have.
final class UnfurlURLOperation: AsyncResultOperation<URL, UnfurlError>, @unchecked Sendable {
    let shortURL: URL

    init(shortURL: URL) {
        self.shortURL = shortURL
    }

    override func main() {
        DispatchQueue.global().async { [self] in
            if let target = SimulatedWeb.redirects[shortURL.absoluteString], let url = URL(string: target) {
                finish(with: .success(url))
            } else {
                finish(with: .failure(.notAShortLink(shortURL.absoluteString)))
            }
        }
    }
}

enum TitleError: Error, UpstreamFailureRepresentable, CancellationRepresentable {
    case noTitle(URL)
    case upstream(UpstreamFailedError)
    case cancelled
    static func upstreamFailed(_ error: UpstreamFailedError) -> TitleError { .upstream(error) }
    static var cancellation: TitleError { .cancelled }
}

/// A classic chained operation: its input comes from the operation it depends on.
final class FetchTitleChainedOperation: ChainedAsyncResultOperation<URL, String, TitleError>, @unchecked Sendable {
    override func main() {
        guard let url = input else { return finish(with: .failure(.cancelled)) }
        DispatchQueue.global().async { [self] in
            if let title = SimulatedWeb.titles[url.absoluteString] {
                finish(with: .success(title))
            } else {
                finish(with: .failure(.noTitle(url)))
            }
        }
    }
}

/// Unfurls `link`, upgrades the URL to HTTPS in an async step, and fetches the page title.
func title(of link: String, on queue: OperationQueue) async -> String {
    let unfurl = UnfurlURLOperation(shortURL: URL(string: link)!)
    // An async step appended to a classic operation.
    let secure = unfurl.bridge.then { (url: URL) async throws -> URL in
        await Task.yield()
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)!
        components.scheme = "https"
        return components.url!
    }
    // A classic chained operation fed by the async step, with typed input.
    let fetchTitle = FetchTitleChainedOperation()
    fetchTitle.takeInput(from: secure)
    // `addOperations(_:waitUntilFinished:)` is unavailable in async code, even with `false`.
    queue.addOperation(unfurl)
    queue.addOperation(secure)
    do {
        let title = try await queue.run(fetchTitle)  // typed throws: TitleError
        return "“\(title)”"
    } catch .upstream(let upstream) {
        return "no title — \(upstream)"
    } catch {
        return "no title — \(error)"
    }
}

let queue = OperationQueue()
queue.maxConcurrentOperationCount = 2

print("OperationBridge demo: classic operations awaited from async code\n")
for link in ["https://bit.ly/swift-ops", "https://bit.ly/broken", "https://example.org/not-short"] {
    print("\(link)\n  → \(await title(of: link, on: queue))")
}

// Run-and-await owns the operation: cancelling the task cancels the operation.
let slow = TaskOperation { () async throws(CancellationError) -> String in
    while true {
        if Task.isCancelled { throw CancellationError() }
        await Task.yield()
    }
}
let owner = Task { try await queue.run(slow) }
owner.cancel()
switch await owner.result {
case .success(let value): print("\nUnexpected value: \(value)")
case .failure(let error): print("\nCancelling the awaiting task cancelled the operation: \(error)")
}
print("Operation cancelled: \(slow.isCancelled), finished: \(slow.isFinished)")
