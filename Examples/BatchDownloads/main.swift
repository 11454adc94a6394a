// BatchDownloads: a batch of downloads run by classic operations, consumed from async code as
// the results arrive, then aggregated — the async replacement of the classic "done" operation
// that depends on every download.
import Foundation
import OperationBridge

let server = FakeFileServer()
let queue = OperationQueue()
queue.maxConcurrentOperationCount = 2

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
    files.map { DownloadOperation($0, from: server) }
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
print("  allSucceeded(), every file: \(try await queue.results(of: stopped).allSucceeded())")
try await stopped.waitForCompletion()  // the cancelled downloads wind down
print("    stopped at the first failure; cancelled: \(zip(files, stopped).filter { $1.isCancelled }.map(\.0))")

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
    print("  cancelled: \(zip(files, allOrNothing).filter { $1.isCancelled }.map(\.0))")
}
