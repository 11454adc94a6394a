// A pretend blog backend for the example — a callback CMS, an async renderer and an async link
// checker — plus the classic operations that talk to it. No network: the CMS answers on another
// thread, the async steps suspend with `Task.yield()`.
import Foundation
import OperationBridge

/// A post as the writer left it.
struct Draft: Sendable, CustomStringConvertible {
    let slug: String
    let markdown: String

    var description: String { "draft “\(slug)”, \(markdown.split(separator: "\n").count) lines" }
}

/// A post rendered to HTML.
struct RenderedPage: Sendable, CustomStringConvertible {
    let slug: String
    let html: String
    let links: [URL]

    var description: String { "\(html.utf8.count) bytes of HTML, links: \(links.count)" }
}

enum PublishError: Error, CancellationRepresentable, UpstreamFailureRepresentable {
    case noDraft(String)
    case invalidMarkdown(String)
    case brokenLink(URL)
    case cancelled
    case upstream(UpstreamFailedError)

    static var cancellation: PublishError { .cancelled }
    static func upstreamFailed(_ error: UpstreamFailedError) -> PublishError { .upstream(error) }
}

/// The content management system: callback APIs, as in the existing codebase.
struct CMS: Sendable {
    let drafts: [String: String] = [
        "hello-operations": "# Hello, operations\nRead [the guide](https://swift.org/documentation).",
        "broken-draft": "# Broken\n```swift\nlet unclosed = true",
        "long-post": "# A long post\nSee [one](https://example.com/1) and [two](https://example.com/2).",
    ]

    func draft(_ slug: String, completion: @escaping @Sendable (Draft?) -> Void) {
        DispatchQueue.global().async { completion(drafts[slug].map { Draft(slug: slug, markdown: $0) }) }
    }

    func publish(_ page: RenderedPage, completion: @escaping @Sendable (URL) -> Void) {
        DispatchQueue.global().async { completion(URL(string: "https://blog.example.com/\(page.slug)")!) }
    }
}

/// Renders Markdown headings, paragraphs and links; rejects an unclosed code block.
func render(_ draft: Draft) async throws(PublishError) -> RenderedPage {
    await Task.yield()
    let lines = draft.markdown.split(separator: "\n")
    guard lines.filter({ $0.hasPrefix("```") }).count.isMultiple(of: 2) else {
        throw .invalidMarkdown("unclosed code block in \(draft.slug)")
    }
    let html = lines.map { $0.hasPrefix("# ") ? "<h1>\($0.dropFirst(2))</h1>" : "<p>\($0)</p>" }.joined()
    let links = draft.markdown.split(separator: "(").dropFirst().compactMap { part in
        part.split(separator: ")").first.flatMap { URL(string: String($0)) }
    }
    return RenderedPage(slug: draft.slug, html: html, links: links)
}

/// The outcome of a link check.
struct LinkReport: Sendable, CustomStringConvertible {
    let checked: Int

    var description: String { "\(checked) links answer" }
}

/// Checks that the site's links answer. Checking them for "long-post" takes a minute.
func checkSiteLinks(for slug: String) async throws(PublishError) -> LinkReport {
    if slug == "long-post" {
        do {
            try await Task.sleep(for: .seconds(60))
        } catch {
            throw .cancelled
        }
    }
    await Task.yield()
    return LinkReport(checked: 42)
}

/// Fetches a draft from the CMS: a classic result operation.
final class FetchDraftOperation: AsyncResultOperation<Draft, PublishError>, @unchecked Sendable {
    let slug: String
    let cms: CMS

    init(slug: String, cms: CMS) {
        self.slug = slug
        self.cms = cms
    }

    override func main() {
        cms.draft(slug) { [self] draft in
            finish(with: draft.map { .success($0) } ?? .failure(.noDraft(slug)))
        }
    }
}

/// Publishes the rendered page it takes as input: a classic chained operation.
final class PublishOperation: ChainedAsyncResultOperation<RenderedPage, URL, PublishError>, @unchecked Sendable {
    let cms: CMS

    init(cms: CMS) {
        self.cms = cms
        super.init()
    }

    override func main() {
        guard let page = input else { return finish(with: .failure(.cancelled)) }
        cms.publish(page) { [self] url in
            finish(with: .success(url))
        }
    }
}
