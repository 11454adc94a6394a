import Foundation
import OperationBridge
import Testing

// The code blocks of Streaming.md and of the README's streaming recipe are taken verbatim from
// this file (see scripts/check-snippets.py), so every snippet compiles and runs.

/// A row of a file to import, as an existing codebase's operation would produce it.
struct Row: Sendable, Equatable {
    let fields: [String]
}

enum ImportError: Error, Equatable, CancellationRepresentable {
    case malformed(line: String)
    case cancelled

    static let cancellation = ImportError.cancelled
}

/// A classic operation: parses one line.
final class ParseLineOperation: AsyncResultOperation<Row, ImportError>, @unchecked Sendable {
    let line: String

    init(line: String) {
        self.line = line
    }

    override func main() {
        let fields = line.split(separator: ",").map(String.init)
        finish(with: fields.count == 3 ? .success(Row(fields: fields)) : .failure(.malformed(line: line)))
    }
}

/// The lines of a file, as an `AsyncSequence` (a stand-in for `url.lines`).
func lines(of count: Int, malformedAt bad: Int? = nil) -> AsyncStream<String> {
    AsyncStream { continuation in
        for index in 0..<count { continuation.yield(index == bad ? "oops" : "\(index),name\(index),\(index * 2)") }
        continuation.finish()
    }
}

@Suite("Streaming: documentation snippets")
struct StreamingSnippets {
    @Test("Results in completion order, at most eight in flight")
    func completionOrder() async throws {
        let queue = OperationQueue()
        let fileLines = lines(of: 1_000)
        var parsed = 0
        // snippet: streaming-results
        let rows = queue.results(streaming: fileLines, maxInFlight: 8) { line in
            ParseLineOperation(line: line)
        }
        for try await finished in rows {
            if case .success(let row)? = finished.result {
                parsed += 1
                _ = row
            }
        }
        #expect(parsed == 1_000)
    }

    @Test("Values in input order, typed failure, from a Sequence")
    func valuesInInputOrder() async {
        let queue = OperationQueue()
        let fileLines = (0..<100).map { "\($0),name\($0),\($0 * 2)" } + ["oops"]
        var table: [Row] = []
        // snippet: streaming-values
        let values = queue.values(streaming: fileLines, maxInFlight: 4, order: .input) { line in
            ParseLineOperation(line: line)
        }
        do throws(ImportError) {
            for try await row in values {
                table.append(row.value)
            }
        } catch {
            print("stopped at \(error); the lines in flight were cancelled")
        }
        #expect(table.count == 100)
        #expect(table.first == Row(fields: ["0", "name0", "0"]))
    }

    @Test("Async steps, a reorder window, and leaving the loop early")
    func asyncStepsAndEarlyExit() async {
        let queue = OperationQueue()
        var firstPages: [Int] = []
        // snippet: streaming-async-steps
        let order = StreamOrder.input(reorderWindow: 32)
        let pages = queue.results(streaming: 1...1_000_000, maxInFlight: 8, order: order) { number in
            TaskOperation { () async -> Int in
                number * 10  // a page fetched from an API
            }
        }
        for await page in pages {
            firstPages.append(page.input)
            if firstPages.count == 20 { break }  // stops pulling; cancels what is in flight
        }
        #expect(firstPages == Array(1...20))
    }
}
