// BatchDownloads: a batch of downloads run by classic operations, consumed from async code as
// the results arrive, then aggregated — the async replacement of the classic "done" operation
// that depends on every download — and watched with a live progress bar.
import Foundation
import OperationBridge

let queue = OperationQueue()
queue.maxConcurrentOperationCount = 2
// In a terminal the transfers take real time, so that the progress bar of part 5 can be seen
// filling; elsewhere (a log, CI) they are instant.
let server = FakeFileServer(connections: 2, secondsPerChunk: standardOutputIsTerminal ? 0.02 : 0)

let files = [
    RemoteFile(name: "report.pdf", kilobytes: 1_200),
    RemoteFile(name: "notes.md", kilobytes: 400),
    RemoteFile(name: "video.mov", kilobytes: 2_000),
    RemoteFile(name: "missing.txt", kilobytes: nil),
    RemoteFile(name: "photo.jpg", kilobytes: 600),
]
let goodFiles = files.filter { $0.kilobytes != nil }

/// A fresh operation for each file: an operation runs once.
func downloads(of files: [RemoteFile]) -> [DownloadOperation] {
    let operations = files.map { DownloadOperation($0, from: server) }
    server.expect(operations)
    return operations
}

print("BatchDownloads: \(files.count) downloads, 2 at a time\n")

// 1. Results as they arrive (completion order), each with the position of its operation.
print("As they arrive — queue.results(of:):")
let batch = downloads(of: files)
for await finished in try queue.results(of: batch) {
    let name = files[finished.index].name
    switch finished.result {
    case .success(let data)?: print("  ✓ #\(finished.index) \(name): \(data.count / 1024) KB")
    case .failure(let error)?: print("  ✗ #\(finished.index) \(name): \(error)")
    case nil: print("  – #\(finished.index) \(name): cancelled")
    }
}

// 2. The classic aggregate: a BlockOperation that depends on every download. It still works
// from async code, awaited with `runUntilFinished`.
print("\nThe classic aggregate — a BlockOperation that depends on every download:")
let classicBatch = downloads(of: files)
let done = BlockOperation {
    let succeeded = classicBatch.filter { if case .success? = $0.result { true } else { false } }
    print("  done: \(succeeded.count) of \(classicBatch.count) downloaded")
}
for download in classicBatch {
    done.addDependency(download)
    queue.addOperation(download)
}
try await queue.runUntilFinished(done)

// 3. Its async replacements.
print("\nIts replacements:")
let results = try await queue.results(of: downloads(of: files)).collect()
let received = results.compactMap { try? $0?.get() }
let kilobytes = received.reduce(0) { $0 + $1.count } / 1024
print("  collect(): \(received.count) of \(results.count) downloaded, \(kilobytes) KB, in submission order")

print("  allSucceeded(), good files only: \(try await queue.results(of: downloads(of: goodFiles)).allSucceeded())")
let stopped = downloads(of: files)
let allOfThem = try queue.results(of: stopped)
print("  allSucceeded(), every file: \(await allOfThem.allSucceeded())")
try await stopped.waitForCompletion()  // the cancelled downloads wind down
// Which downloads were still running when the failure arrived depends on timing; that the
// sequence stopped at the first failure, and that nothing is left running, does not.
print("    stopped at the first failure: \(allOfThem.firstFailure.map { files[$0.index].name } ?? "none")")
print("    downloads still running: \(stopped.filter { !$0.isFinished }.count)")

// 4. All or nothing, with typed errors: the first failure is thrown and the rest are cancelled.
print("\nAll or nothing — queue.values(of:), with typed errors:")
let allOrNothing = downloads(of: files)
let values = try queue.values(of: allOrNothing)  // throws only when the dependencies form a cycle
do throws(DownloadError) {
    let data = try await values.collect()  // in submission order, whatever the completion order
    print("  \(data.count) files downloaded")
} catch {
    print("  threw \(error)")  // error: DownloadError
    try await allOrNothing.waitForCompletion()
    // The downloads that had not finished were cancelled (which ones depends on timing).
    print("  downloads still running: \(allOrNothing.filter { !$0.isFinished }.count)")
}

// 5. Live progress: each download reports the kilobytes it has received (its bridge.operationProgress);
// an aggregate weighs each download by its size; the main actor — top-level code runs on it —
// draws a bar from throttled snapshots until the downloads have finished.
print("\nLive progress — OperationProgress(aggregating:) weighted by size, drawn from updates():")
let tracked = downloads(of: goodFiles)
let overall = OperationProgress(aggregating: tracked) { Int64($0.file.kilobytes ?? 0) }
let trackedResults = try queue.results(of: tracked)
async let downloaded = trackedResults.collect()
await drawProgressBar(for: overall)
print("  \(await downloaded.count) files downloaded")
