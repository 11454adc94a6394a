import Foundation
import OperationBridge
import Testing

// The code blocks of Progress.md and of the README's progress recipe are taken verbatim from
// this file (see scripts/check-snippets.py), so every snippet compiles and runs.

/// A classic operation that reports progress from its own work.
final class ImportRecordsOperation: AsyncOperation, @unchecked Sendable {
    let records: [String]

    init(records: [String]) {
        self.records = records
    }

    override func main() {
        bridge.operationProgress.totalUnitCount = Int64(records.count)
        DispatchQueue.global().async { [self] in
            for _ in records {
                // … import one record …
                bridge.operationProgress.advance()
            }
            finish()
        }
    }
}

/// What a screen shows of an import, updated on the main actor.
@MainActor
final class ImportViewModel {
    var fraction = 0.0
    var status = ""

    func watch(_ progress: OperationProgress) async {
        for await snapshot in progress.updates(every: .milliseconds(250)) {
            fraction = snapshot.fractionCompleted
            status = snapshot.localizedDescription
        }
    }
}

@Suite("Progress: documentation snippets")
struct ProgressSnippets {
    @Test("A closure reports units; async code watches the snapshots")
    func closureReports() async {
        let queue = OperationQueue()
        let download = queue.addTask(totalUnitCount: 100) { progress in
            for _ in 0..<100 {
                await Task.yield()  // a chunk received
                progress.advance()
            }
        }
        for await snapshot in download.bridge.operationProgress.updates() {
            print(snapshot.localizedDescription)  // "0% completed", …, "100% completed"
        }
        #expect(download.bridge.operationProgress.snapshot.localizedDescription == "100% completed")
    }

    @Test("A classic subclass reports from its work")
    func classicSubclass() async throws {
        let queue = OperationQueue()
        let operation = ImportRecordsOperation(records: ["a", "b", "c"])
        try await queue.runUntilFinished(operation)
        #expect(operation.bridge.operationProgress.snapshot.completedUnitCount == 3)
    }

    @Test("Aggregating with weights, a group, and the main actor")
    @MainActor
    func aggregation() async throws {
        let queue = OperationQueue()
        let model = ImportViewModel()
        let download = TaskOperation(totalUnitCount: 1_000) { (progress) async -> Data in
            progress.advance(by: 1_000)
            return Data(count: 1_000)
        }
        let unzip = download.bridge.then { (data: Data) async -> Int in data.count }
        let overall = OperationProgress(aggregating: [download, unzip]) { $0 === download ? 9 : 1 }
        queue.addOperation(download)
        queue.addOperation(unzip)
        await model.watch(overall)
        #expect(model.fraction == 1)
        #expect(model.status == "100% completed")

        let imports = (0..<4).map { _ in ImportRecordsOperation(records: ["a", "b"]) }
        let group = try GroupOperation(imports) {}
        queue.addOperation(group)
        await model.watch(group.bridge.operationProgress)  // each child weighs one
        #expect(model.fraction == 1)
    }

    @Test("The package's operations count toward a queue's progress, and hand Foundation a Progress")
    func foundationProgress() async throws {
        let queue = OperationQueue()
        queue.progress.totalUnitCount = 2  // Foundation's opt-in
        let first = ImportRecordsOperation(records: ["a"])
        let second = queue.addTask { () async -> Int in 42 }
        queue.addOperation(first)
        let progress: Progress = second.progress  // ProgressReporting
        try await queue.waitForAllOperations()
        #expect(queue.progress.fractionCompleted == 1)
        #expect(progress.fractionCompleted == 1)
    }
}
