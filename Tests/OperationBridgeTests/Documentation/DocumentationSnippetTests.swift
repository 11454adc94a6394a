import Foundation
import OperationBridge
import Testing

// The code blocks of the DocC articles are taken verbatim from this file (see
// scripts/check-snippets.py), so every snippet compiles and runs in CI.

enum FetchError: Error, CancellationRepresentable {
    case notFound
    case cancelled
    static var cancellation: FetchError { .cancelled }
}

/// A classic callback-style result operation, as found in existing codebases.
final class FetchNumberOperation: AsyncResultOperation<Int, FetchError>, @unchecked Sendable {
    let number: Int

    init(_ number: Int) {
        self.number = number
    }

    override func main() {
        DispatchQueue.global().async { [self] in
            if number >= 0 {
                finish(with: .success(number))
            } else {
                finish(with: .failure(.notFound))
            }
        }
    }
}

/// A legacy error enum: no `cancelled` case.
enum DirectoryError: Error {
    case notFound
}

/// A classic operation whose error type cannot express cancellation.
final class DirectoryLookup: AsyncResultOperation<String, DirectoryError>, @unchecked Sendable {
    let key: String

    init(_ key: String) {
        self.key = key
    }

    override func main() {
        finish(with: key.isEmpty ? .failure(.notFound) : .success(key.uppercased()))
    }
}

enum RequestContext {
    @TaskLocal static var id = "none"
}

@Suite struct DocumentationSnippetTests {
    @Test func awaitingAResultOperation() async throws {
        let queue = OperationQueue()
        // Awaiting a result operation with its typed error.
        let fetch = FetchNumberOperation(42)
        queue.addOperation(fetch)
        let number = try await fetch.bridge.value  // throws(FetchError)
        #expect(number == 42)
    }

    @Test func runAndAwait() async {
        let queue = OperationQueue()
        do {
            let number = try await queue.run(FetchNumberOperation(-1))
            print(number)
        } catch .notFound {
            print("not found")  // typed: the compiler knows every case
        } catch {
            print("cancelled")
        }
    }

    @Test func outcomeOfAnyFailureType() async {
        let queue = OperationQueue()
        let fetch = FetchNumberOperation(7)
        queue.addOperation(fetch)
        switch await fetch.bridge.outcome {
        case .success(let number)?: print("got \(number)")
        case .failure(let error)?: print("failed: \(error)")
        case nil: print("cancelled without a result")
        }
        #expect(fetch.result.map { try? $0.get() } == 7)
    }

    @Test func awaitingForeignOperations() async throws {
        let queue = OperationQueue()
        // Any Operation, and a whole queue, without blocking a thread.
        let legacy = BlockOperation { print("legacy work") }
        queue.addOperation(legacy)
        try await legacy.bridge.waitForCompletion()
        try await queue.waitForAllOperations()
        #expect(legacy.isFinished)
    }

    @Test func resultsAsTheyFinish() async throws {
        let queue = OperationQueue()
        let fetches = (1...5).map(FetchNumberOperation.init)
        for await finished in try queue.results(of: fetches) {
            print("#\(finished.index):", finished.result.map { try? $0.get() } as Any)
        }
        let numbers = try await queue.values(of: (1...5).map(FetchNumberOperation.init), order: .submission).collect()
        #expect(numbers == [1, 2, 3, 4, 5])
    }

    @Test func allSucceeded() async throws {
        let queue = OperationQueue()
        let fetches = [FetchNumberOperation(1), FetchNumberOperation(-1), FetchNumberOperation(3)]
        let everyFetchSucceeded = await (try queue.results(of: fetches)).allSucceeded()
        #expect(!everyFetchSucceeded)
    }

    @Test func taskOperationBasics() async throws {
        let queue = OperationQueue()
        let fetch = FetchNumberOperation(20)
        // An async closure as an operation: it can depend on operations and be depended on.
        let doubled = TaskOperation { () async throws(FetchError) -> Int in
            if Task.isCancelled { throw .cancelled }
            return 2
        }
        doubled.addDependency(fetch)
        queue.addOperation(fetch)
        queue.addOperation(doubled)
        #expect(try await doubled.bridge.value == 2)
    }

    @Test func thenAppendsAnAsyncStep() async throws {
        let queue = OperationQueue()
        let fetch = FetchNumberOperation(21)
        let doubled = fetch.bridge.then { (number: Int) async -> Int in number * 2 }
        queue.addOperation(fetch)
        queue.addOperation(doubled)
        let answer = await doubled.bridge.outcome?.get()  // Result<Int, Never>: nothing to catch
        #expect(answer == 42)
    }

    @Test func addTaskReturnsAHandle() async throws {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 2  // limits async work too
        let upload = queue.addTask { () async throws(CancellationError) -> String in
            "receipt"
        }
        let receipt = try await upload.bridge.value  // or cancel it: upload.cancel()
        #expect(receipt == "receipt")
    }

    @Test func taskLocalsDoNotCrossTheQueue() async {
        let queue = OperationQueue()
        await RequestContext.$id.withValue("request-7") {
            // Read the task-local where it is bound, and bind it again inside the closure.
            let requestID = RequestContext.id
            let step = queue.addTask { () async -> String in
                let seenWithoutRebinding = RequestContext.id  // "none": not inherited
                return RequestContext.$id.withValue(requestID) { RequestContext.id + " / " + seenWithoutRebinding }
            }
            #expect(await step.bridge.outcome?.get() == "request-7 / none")
        }
    }

    @Test func pipelineOfOperationsAndAsyncSteps() async throws {
        let queue = OperationQueue()
        let fetch = FetchNumberOperation(5)
        let squared = fetch.bridge.then { (number: Int) async -> Int in number * number }
        let report = squared.bridge.then { (square: Int) async throws -> String in "square: \(square)" }
        let pipeline = try Pipeline([fetch, squared, report], on: queue)
        let text = try await pipeline.value(of: report)
        #expect(text == "square: 25")
    }

    @Test func pipelineFailureNamesTheUpstream() async throws {
        let queue = OperationQueue()
        let fetch = FetchNumberOperation(-1)  // fails with .notFound
        let report = fetch.bridge.then { (number: Int) async throws -> String in "number: \(number)" }
        let pipeline = try Pipeline([fetch, report], on: queue)
        do {
            _ = try await pipeline.value(of: report)
        } catch let error as UpstreamFailedError {
            print(error)  // "Upstream operation FetchNumberOperation failed: notFound"
        }
        #expect(report.result.map { (try? $0.get()) == nil } == true)
    }

    @Test func pipelineRejectsACycle() throws {
        let queue = OperationQueue()
        let first = BlockOperation {}
        let second = BlockOperation {}
        first.addDependency(second)
        second.addDependency(first)
        #expect(throws: PipelineError.self) {
            try Pipeline([first, second], on: queue)
        }
    }

    @Test func testingWithGates() async throws {
        // A gate: the test decides when the operation's work may end.
        let (gate, open) = AsyncStream.makeStream(of: Void.self)
        let queue = OperationQueue()
        let step = queue.addTask { () async -> String in
            for await _ in gate { break }
            return "done"
        }
        #expect(!step.isFinished)  // deterministic: the gate is still closed
        open.yield()
        #expect(await step.bridge.outcome?.get() == "done")
    }

    @Test func testingReleases() async throws {
        let queue = OperationQueue()
        weak var released: FetchNumberOperation?
        do {
            let fetch = FetchNumberOperation(1)
            released = fetch
            _ = try await queue.run(fetch)
        }
        try await queue.waitForAllOperations()
        #expect(released == nil)  // the bridge keeps no finished operation alive
    }

    @Test func awaitingALegacyErrorType() async {
        let queue = OperationQueue()
        let lookup = DirectoryLookup("")
        // `DirectoryError` has no `cancelled` case: `value` and `run` are unavailable, and the
        // compiler points to the typed wrapper.
        do {
            let record = try await queue.runForOutcomeValue(lookup)  // throws(OperationFailure<DirectoryError>)
            print(record)
        } catch .failed(let error) {
            print("failed: \(error)")  // error: DirectoryError
        } catch {
            print("no record: \(error)")  // .cancelled, or .upstreamFailed(let cause)
        }
    }

    @Test func neverFailingOperations() async {
        let queue = OperationQueue()
        // An operation that cannot fail: no `try`; `nil` only if it was cancelled before it ran.
        let answer = await queue.addTask { 6 * 7 }.bridge.value  // Int?
        #expect(answer == 42)
    }

    @Test func runningAnOperationAlreadyQueued() async throws {
        let queue = OperationQueue()
        // Already in the queue: `run` awaits it; it does not add it a second time.
        let upload = queue.addTask { () async throws(CancellationError) -> Int in 201 }
        let status = try await queue.run(upload)
        #expect(status == 201)
    }

    @Test func leavingALoopInTopLevelCode() async throws {
        let queue = OperationQueue()
        let fetches = (1...5).map(FetchNumberOperation.init)
        let results = try queue.results(of: fetches)
        for await finished in results {
            if case .failure? = finished.result { break }
        }
        results.cancel()  // needed after a loop in main.swift; harmless anywhere
        try await fetches.waitForCompletion()
    }

    @Test func explainingAStuckAwait() async {
        let login = BlockOperation {}
        let fetch = FetchNumberOperation(1)
        fetch.addDependency(login)  // `login` is never queued: `fetch` would wait forever
        print(fetch.bridge.pendingDiagnostics)
        #expect(fetch.bridge.pendingDiagnostics.contains("BlockOperation"))
    }

    @Test func aFailureThroughGlue() async throws {
        let queue = OperationQueue()
        let fetch = FetchNumberOperation(-1)  // fails with .notFound
        let glue = BlockOperation { print("glue") }  // not the package's: it runs, as Foundation runs it
        glue.addDependency(fetch)
        let store = TaskOperation { () async throws -> Int in 1 }
        store.addDependency(glue)  // the package's step after it: the pipeline stops it
        let pipeline = try Pipeline([fetch, glue, store], on: queue)
        try await pipeline.waitForCompletion()
        print(store.bridge.upstreamFailure?.rootFailure as Any)  // Optional(FetchError.notFound)
        print(pipeline.firstFailure as Any)  // Step 0 (FetchNumberOperation) failed: notFound
        #expect(store.bridge.upstreamFailure?.rootFailure as? FetchError == .notFound)
        #expect(!store.isCancelled)
        #expect(!glue.isCancelled)
    }

    @Test func aCycleThroughAnOutsideOperation() throws {
        let queue = OperationQueue()
        let step = FetchNumberOperation(1)
        let outside = BlockOperation {}
        step.addDependency(outside)
        outside.addDependency(step)  // outside the pipeline, and waiting for it
        #expect(throws: PipelineError.self) {
            try Pipeline([step], on: queue)
        }
        outside.removeDependency(step)
    }
}

// MARK: Deadlines

enum QuoteError: Error, Equatable, TimeoutRepresentable {
    case unavailable
    case cancelled
    case timedOut
    static var cancellation: QuoteError { .cancelled }
    static var timeout: QuoteError { .timedOut }
}

/// A legacy operation that ignores cancellation while it waits for its service.
final class QuoteOperation: AsyncResultOperation<Int, QuoteError>, @unchecked Sendable {
    let service: Gate

    init(service: Gate) {
        self.service = service
    }

    override func main() {
        // A service that has answered already answers on the queue's thread: the documented
        // snippet with its real 3 s limit must not depend on the cooperative pool, which the
        // sanitizer runs can keep busy for seconds.
        if service.hasOpened { return finish(with: .success(42)) }
        Task { [self] in
            await service.wait()
            finish(with: .success(42))
        }
    }
}

@Suite struct DeadlineSnippetTests {
    @Test func boundTheWait() async throws {
        let queue = OperationQueue()
        let quote = QuoteOperation(service: Gate())  // the service never answers
        let clock = TestClock()
        let waiting = Task { () async throws(QuoteError) -> Int in
            try await queue.run(quote, within: .timeout(.seconds(3), clock: clock))
        }
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(3))
        await #expect(throws: QuoteError.timedOut) { try await waiting.value }
        #expect(quote.isCancelled)
        quote.service.open()
        try await quote.bridge.waitForCompletion()
    }

    @Test func documentedTimeoutSnippet() async {
        let queue = OperationQueue()
        let service = Gate()
        service.open()
        // snippet: timeout
        let quote = QuoteOperation(service: service)
        do {
            let price = try await queue.run(quote, within: .timeout(.seconds(3)))
            print("price: \(price)")
        } catch .timedOut {
            print("no quote within 3 s")  // the operation was cancelled
        } catch {
            print("failed: \(error)")
        }
        // end snippet
        #expect(quote.result == .success(42))
    }

    @Test func documentedLegacyTimeoutSnippet() async {
        let queue = OperationQueue()
        let lookup = DirectoryLookup("ada")
        // snippet: legacy timeout
        do {
            let entry = try await queue.runForOutcomeValue(
                lookup, within: .timeout(.seconds(5), onTimeout: .cancelAndWait))
            print(entry)
        } catch .timedOut {
            print("the lookup took too long; it has ended, cancelled")
        } catch {
            print("no entry: \(error)")
        }
        // end snippet
        #expect(lookup.isFinished)
    }
}
