// Classic operation code, written as the well-known articles write it, compiled in the Swift 5
// language mode against the package: it compiles after the hand-copied base classes are deleted.
//
// One change: `@unchecked Sendable` is restated on each subclass. Without it the code still
// compiles, with one warning per class ("must restate inherited '@unchecked Sendable'
// conformance") that comes from Foundation's `Operation` itself — a hand-copied base class gets
// it too — and CI builds every target with warnings as errors. Swift 6 mode requires it (see
// Migration.md, step 6).
import Foundation
import OperationBridge

final class UnfurlURLChainedOperation: ChainedAsyncResultOperation<URL, URL, UnfurlURLChainedOperation.Error>,
    @unchecked Sendable
{
    enum Error: Swift.Error {
        case canceled
        case missingInputURL
        case missingRedirectURL
        case underlying(error: Swift.Error)
    }

    private var work: DispatchWorkItem?

    /// Unfurls `shortURL`.
    public init(shortURL: URL) {
        super.init(input: shortURL)
    }

    /// Resolves the redirect.
    override final public func main() {
        guard let input = input else { return finish(with: .failure(.missingInputURL)) }
        let work = DispatchWorkItem { [weak self] in
            var components = URLComponents(url: input, resolvingAgainstBaseURL: false)
            components?.host = "www.example.com"
            guard let redirect = components?.url else {
                self?.finish(with: .failure(.missingRedirectURL))
                return
            }
            self?.finish(with: .success(redirect))
        }
        self.work = work
        DispatchQueue.global().async(execute: work)
    }

    /// Stops the request.
    override final public func cancel() {
        work?.cancel()
        cancel(with: .canceled)
    }
}

final class FetchTitleChainedOperation: ChainedAsyncResultOperation<URL, String, FetchTitleChainedOperation.Error>,
    @unchecked Sendable
{
    enum Error: Swift.Error {
        case canceled
        case missingPageURL
        case underlying(error: Swift.Error)
    }

    /// Fetches the title.
    override final public func main() {
        guard let pageURL = input else { return finish(with: .failure(.missingPageURL)) }
        DispatchQueue.global().async {
            self.finish(with: .success("Title of \(pageURL.absoluteString)"))
        }
    }

    /// Reports the cancellation.
    override final public func cancel() {
        cancel(with: .canceled)
    }
}

let queue = OperationQueue()
let unfurl = UnfurlURLChainedOperation(shortURL: URL(string: "https://bit.ly/33UDb5L")!)
let fetchTitle = FetchTitleChainedOperation()
fetchTitle.addDependency(unfurl)
fetchTitle.onResult = { result in
    print("Classic chain in Swift 5 mode finished: \(result)")
}
queue.addOperations([unfurl, fetchTitle], waitUntilFinished: true)
// And the same operation cancelled before it starts: no crash, a typed result.
let cancelled = FetchTitleChainedOperation()
cancelled.cancel()
queue.addOperations([cancelled], waitUntilFinished: true)
print("Cancelled before start: \(String(describing: cancelled.result))")
