// MixedPipeline: one Pipeline of classic operations, async steps appended with `then`, a
// TaskOperation and a legacy BlockOperation, awaited for a typed final value — then the same
// pipeline with a failure in the middle, and cancelled as one.
import Foundation
import OperationBridge

/// The steps of publishing one post, and the pipeline that runs them.
///
///     fetch draft ──▶ render ──┬──────────────▶ publish
///                              ▼                  ▲
///     check links ───────▶ purge cache ───────────┘
struct Publication {
    let fetchDraft: FetchDraftOperation  // classic operation
    let render: ChainedTaskOperation<Draft, RenderedPage, PublishError>  // async step
    let checkLinks: TaskOperation<LinkReport, PublishError>  // async closure, no input
    let purgeCache: BlockOperation  // legacy operation
    let publish: PublishOperation  // classic chained operation
    let pipeline: Pipeline

    init(slug: String, cms: CMS, queue: OperationQueue) throws(PipelineError) {
        fetchDraft = FetchDraftOperation(slug: slug, cms: cms)
        render = fetchDraft.bridge.then { (draft: Draft) async throws(PublishError) -> RenderedPage in
            try await MixedPipeline.render(draft)
        }
        checkLinks = TaskOperation { () async throws(PublishError) -> LinkReport in
            try await checkSiteLinks(for: slug)
        }
        purgeCache = BlockOperation {
            print("  (purging the CDN cache for \(slug))")
        }
        purgeCache.addDependency(render)
        purgeCache.addDependency(checkLinks)
        publish = PublishOperation(cms: cms)
        publish.takeInput(from: render)
        publish.addDependency(purgeCache)

        fetchDraft.name = "fetch draft"
        render.name = "render"
        pipeline = try Pipeline([fetchDraft, render, checkLinks, purgeCache, publish], on: queue)
    }

    /// Prints each step and how it ended.
    func printSteps() {
        print("    fetch draft  \(describe(fetchDraft.result))")
        print("    render       \(describe(render.result))")
        print("    check links  \(describe(checkLinks.result))")
        print("    purge cache  \(purgeCache.isCancelled ? "– cancelled, did not run" : "✓ ran")")
        print("    publish      \(describe(publish.result))")
    }
}

/// A result as one short phrase: `✓ value`, `✗ error`, or `(no result)`.
func describe<Success>(_ result: Result<Success, PublishError>?) -> String {
    switch result {
    case .success(let value)?: "✓ \(value)"
    case .failure(.upstream)?: "✗ not run: its upstream failed"
    case .failure(let error)?: "✗ \(error)"
    case nil: "(no result)"
    }
}

let cms = CMS()
let queue = OperationQueue()

print("MixedPipeline: classic operations, async steps, a TaskOperation and a BlockOperation\n")

// 1. Everything succeeds: await the typed value of the last step.
print("1. hello-operations")
let hello = try Publication(slug: "hello-operations", cms: cms, queue: queue)
let url = try await hello.pipeline.value(of: hello.publish)  // throws(PublishError)
print("  published at \(url)")
hello.printSteps()

// 2. A failure in the middle: `render` fails. The purge that depends on it is a legacy
// BlockOperation, not the package's: it still runs, as Foundation runs it, after its dependencies
// whatever their outcome; `publish`, which takes its input from `render`, reports the failure in
// its own typed result — `.upstream(…)`, not a cancellation; `check links`, which does not depend
// on it, goes on.
print("\n2. broken-draft — a failure in the middle")
let broken = try Publication(slug: "broken-draft", cms: cms, queue: queue)
do {
    _ = try await broken.pipeline.value(of: broken.publish)
} catch {
    print("  not published: \(error)")  // error: PublishError, here `.upstream(…)`
}
try await broken.pipeline.waitForCompletion()
broken.printSteps()
// The step where the failure started, whatever the error types along the way can express.
print("  first failure: \(broken.pipeline.firstFailure.map(String.init(describing:)) ?? "none")")

// 3. Cancelled as one: while the links are being checked, cancel the whole pipeline. Steps that
// have not finished are cancelled; the running async step sees its task cancelled.
print("\n3. long-post — the pipeline cancelled while the links are checked")
let long = try Publication(slug: "long-post", cms: cms, queue: queue)
print("  rendered: \(try await long.pipeline.value(of: long.render)); cancelling")
long.pipeline.cancel()
do {
    _ = try await long.pipeline.value(of: long.publish)
} catch {
    print("  not published: \(error)")
}
try await long.pipeline.waitForCompletion()
long.printSteps()
print("  every step finished: \(long.pipeline.operations.allSatisfy(\.isFinished))")
