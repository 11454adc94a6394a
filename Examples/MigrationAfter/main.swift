// MigrationAfter: the feature of MigrationBefore — bookmark a short link: unfurl it, fetch the
// page's title, save a bookmark, sync it — after the steps of Migration.md: the package's base
// classes, typed chaining, async-closure operations, awaiting from async code, an async step,
// no blocking waits, and finally no operations at all.
import Foundation
import OperationBridge

/// A result as one short phrase: `✓ value`, `✗ error`, or `(no result)`.
func describe<Success, Failure>(_ result: Result<Success, Failure>?) -> String {
    switch result {
    case .success(let value)?: "✓ \(value)"
    case .failure(let error)?: "✗ \(explain(error))"
    case nil: "(no result)"
    }
}

/// An error, followed back through the upstream failures of a chain to where it started.
func explain(_ error: any Error) -> String {
    guard let upstream = upstreamFailure(in: error) else { return "\(error)" }
    guard case .failed(let cause) = upstream.reason else { return "\(upstream)" }
    return "\(upstream.upstreamType) failed: \(explain(cause))"
}

/// The ``UpstreamFailedError`` an error of this feature carries, if any.
func upstreamFailure(in error: any Error) -> UpstreamFailedError? {
    switch error {
    case let error as UpstreamFailedError: error
    case TitleError.upstream(let error): error
    case BookmarkError.upstream(let error): error
    case SyncError.upstream(let error): error
    default: nil
    }
}

let links = ["https://bit.ly/swift-ops", "https://bit.ly/broken", "https://example.org/not-short"].map {
    URL(string: $0)!
}
let feature = BookmarkFeature()

print("MigrationAfter: the same feature on OperationBridge, step by step (see Migration.md)\n")

print("Step 1 — the package's base classes; the subclasses compile unchanged")
for link in links {
    print("  \(link) → title \(describe(await feature.title(of: link)))")
}
print(
    "  with .runWithoutInput (the classic policy) → \(describe(await feature.title(of: links[2], classicUpstreamPolicy: true)))"
)
print("  cancelled before it started → \(describe(await feature.cancelledTitle())), no crash")

print("\nSteps 2 and 3 — typed chaining instead of a glue operation, an async closure instead of a closure operation")
for link in links {
    print(link)
    do {
        _ = try await feature.bookmark(link)
    } catch {
        print("  not synced: \(explain(error))")
    }
}

print("\nStep 4 — existing operations called from async code")
await feature.unfurl(links[0])
print("  results(of:), in order: \(try await feature.unfurlAll(links).map(\.absoluteString))")
do {
    print("  values(of:): \(try await feature.unfurlEvery(links))")
} catch {
    print("  values(of:), all or nothing: \(error)")
}
await feature.cancelWhileUnfurling(links[0])

print("\nStep 5 — the title step as an async function, the other steps still operations")
for link in links {
    do {
        print("  \(link) → ✓ \(try await feature.bookmarkFetchingTitleAsync(link))")
    } catch {
        print("  \(link) → ✗ \(explain(error))")
    }
}

print("\nStep 6 — waiting without blocking a thread")
try await feature.shutDown()
print("  queue drained")

print("\nStep 7 — keep the operations, or remove them")
print("  with operations: revision \(try await feature.bookmarkWithOperations(links[0]))")
print("  without operations: revision \(try await feature.bookmarkWithoutOperations(links[0]))")
