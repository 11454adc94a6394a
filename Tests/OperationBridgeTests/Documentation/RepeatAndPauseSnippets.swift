import Foundation
import OperationBridge
import Testing

// The code blocks of DeadlinesAndRetries.md on deadlines and repeating operations, of
// ReportingProgress.md on pausing, and of Migration.md's ProcedureKit steps are taken verbatim
// from this file (see scripts/check-snippets.py), so every snippet compiles and runs.

/// The status of an export job, as a service reports it.
enum ExportStatus: Sendable, Equatable {
    case queued
    case running
    case ready
}

/// The failures of the export service: one worth polling again, one not.
enum ExportError: Error, Equatable, CancellationRepresentable {
    case busy
    case unknownJob
    case cancelled

    static var cancellation: ExportError { .cancelled }
}

/// A scripted export service: each call reports the next status.
final class ExportService: Sendable {
    private let script: LockedBox<[Result<ExportStatus, ExportError>]>

    init(_ script: [Result<ExportStatus, ExportError>]) {
        self.script = LockedBox(script)
    }

    func status(of job: String) async throws(ExportError) -> ExportStatus {
        let next = script.withLock { $0.count > 1 ? $0.removeFirst() : $0[0] }
        return try next.get()
    }
}

/// A classic operation that asks the service for a job's status once.
final class ExportStatusOperation: AsyncResultOperation<ExportStatus, ExportError>, @unchecked Sendable {
    let job: String
    let service: ExportService

    init(job: String, service: ExportService) {
        self.job = job
        self.service = service
    }

    override func main() {
        Task { [self] in
            do throws(ExportError) {
                finish(with: .success(try await service.status(of: job)))
            } catch {
                finish(with: .failure(error))
            }
        }
    }
}

@Suite("Deadlines, repeats and pausing: documentation snippets")
struct RepeatAndPauseSnippets {
    @Test("One deadline for a batch of uploads")
    func batchDeadline() async throws {
        let queue = OperationQueue()
        var uploads: [TaskOperation<Int, QuoteError>] = []
        // After
        let batchEnds = ContinuousClock.now + .seconds(60)
        for file in ["a.txt", "b.txt", "c.txt"] {
            let upload = TaskOperation { () async throws(QuoteError) -> Int in file.count }
            upload.bridge.limitRunningTime(until: batchEnds)  // one deadline for the whole batch
            queue.addOperation(upload)
            uploads.append(upload)
        }
        for upload in uploads { #expect(try await upload.bridge.value == 5) }
    }

    @Test("Polling a classic operation until the job is ready")
    func pollClassic() async throws {
        let queue = OperationQueue()
        let job = "nightly"
        let service = ExportService([.success(.queued), .success(.running), .success(.ready)])
        // After
        let export = RepeatingOperation(
            maxIterations: 20,
            wait: .constant(.milliseconds(10)),
            until: { $0 == .ready }
        ) { _ in
            ExportStatusOperation(job: job, service: service)  // a fresh operation per poll
        }
        let status = try await queue.run(export)  // .ready, or the 20th status if it never was
        #expect(status == .ready && export.iterationCount == 3)
    }

    @Test("Polling an async function, going on after a busy answer")
    func pollClosure() async throws {
        let queue = OperationQueue()
        let job = "nightly"
        let service = ExportService([.failure(.busy), .success(.running), .success(.ready)])
        let ready = RepeatingOperation(
            maxIterations: 10,
            wait: .exponential(initial: .milliseconds(5), maximum: .milliseconds(40)),
            continuingAfter: { failure in
                if case .failed(let error) = failure { return error == .busy }
                return false
            },
            until: { $0 == .ready }
        ) { (_: Int) async throws(ExportError) -> ExportStatus in
            try await service.status(of: job)
        }
        let status = try await queue.run(ready)
        #expect(status == .ready && ready.failedIterations.count == 1)
    }

    @Test("Pausing a parent Progress holds the operation back until it is resumed")
    func pauseThroughProgress() async throws {
        let queue = OperationQueue()
        let sync = ImportRecordsOperation(records: ["a", "b"])
        let parent = Progress(totalUnitCount: 1)
        parent.addChild(sync.bridge.operationProgress.foundationProgress, withPendingUnitCount: 1)
        parent.pause()  // the user tapped "Pause": the operation is held back
        queue.addOperation(sync)
        // …
        parent.resume()  // it starts when the queue has a slot
        try await sync.bridge.waitForCompletion()
        #expect(sync.bridge.operationProgress.fractionCompleted == 1)
    }

    @Test("The operation's pause shows on its Foundation progress")
    func pauseShowsOnProgress() {
        let sync = ImportRecordsOperation(records: ["a"])
        let progress = sync.bridge.operationProgress.foundationProgress
        sync.bridge.pause()
        print(progress.isPaused)  // true: a progress view shows it paused
        #expect(progress.isPaused)
        sync.bridge.resume()
        #expect(!progress.isPaused)
    }
}
