import Foundation
import OperationBridge
import Testing

/// A classic download: an `AsyncResultOperation` subclass with its own error enum.
private final class ClassicDownload: AsyncResultOperation<Data, ClassicDownload.Error>, @unchecked Sendable {
    enum Error: Swift.Error, Equatable {
        case offline
    }

    private let fails: Bool

    init(fails: Bool) {
        self.fails = fails
        super.init()
    }

    override func main() {
        finish(with: fails ? .failure(.offline) : .success(Data([1])))
    }
}

/// The "downloads finished" aggregate of the classic article: a plain `Operation` that depends
/// on every download and, in its own `main()`, tells whether all of them succeeded.
private final class DownloadsFinishedAggregate: Operation, @unchecked Sendable {
    private let completion: @Sendable (Bool) -> Void

    init(completion: @escaping @Sendable (Bool) -> Void) {
        self.completion = completion
        super.init()
    }

    override func main() {
        let allSucceeded = dependencies.allSatisfy { dependency in
            guard case .success? = (dependency as? ClassicDownload)?.result else { return false }
            return true
        }
        completion(allSucceeded)
    }
}

/// A classic step with a legacy error enum: it can say neither "cancelled" nor "upstream failed".
private final class ClassicLegacyStep: AsyncResultOperation<Int, ClassicLegacyStep.Error>, @unchecked Sendable {
    enum Error: Swift.Error, Equatable {
        case notFound
    }

    let runs = Guarded(0)

    override func main() {
        runs.withLock { $0 += 1 }
        finish(with: .success(10))
    }
}

/// A classic step whose enum can say "cancelled", as the articles write it, but not "upstream
/// failed".
private final class ClassicCancellableStep: AsyncResultOperation<Int, ClassicCancellableStep.Error>,
    @unchecked Sendable
{
    enum Error: Swift.Error, Equatable, CancellationRepresentable {
        case canceled
        case offline
        static var cancellation: Error { .canceled }
    }

    override func main() {
        finish(with: .success(20))
    }

    override func cancel() {
        cancel(with: .canceled)
    }
}

/// Item 2 of issue 35: wherever the package schedules them, operations that are not the
/// package's run after their dependencies whatever their outcome, as Foundation runs them; only
/// the package's own steps skip with the root cause, which still passes through them.
@Suite(.timeLimit(Stress.timeLimit(minutes: 1)))
struct ForeignStepTests {
    enum Scheduling: String, CaseIterable, Sendable {
        /// `queue.addOperations(_:waitUntilFinished:)`: what Foundation does.
        case foundation
        /// `Pipeline(_:on:)`, as Migration.md step 6 offers it.
        case pipeline
        /// A `GroupOperation` of the same operations.
        case group
    }

    private static func run(_ operations: [Operation], _ scheduling: Scheduling) async throws {
        let queue = OperationQueue()
        switch scheduling {
        case .foundation:
            queue.addOperationsWithoutWaiting(operations)
            try await operations.waitForCompletion()
        case .pipeline:
            try await Pipeline(operations, on: queue).waitForCompletion()
        case .group:
            let group = try GroupOperation<Void, any Error>(operations)
            queue.addOperation(group)
            try await group.bridge.waitForCompletion()
        }
    }

    @Test(
        "The downloads-finished aggregate runs after a failed download and reports it, as with Foundation",
        arguments: Scheduling.allCases)
    func theAggregateRunsAfterAFailedDownload(scheduling: Scheduling) async throws {
        let downloads = [ClassicDownload(fails: false), ClassicDownload(fails: true), ClassicDownload(fails: false)]
        let reported = Recorder<Bool>()
        let aggregate = DownloadsFinishedAggregate { reported.append($0) }
        for download in downloads { aggregate.addDependency(download) }
        try await Self.run(downloads + [aggregate], scheduling)
        #expect(reported.all == [false])
        #expect(!aggregate.isCancelled)
    }

    @Test(
        "Classic result operations run after a failed step: every one ends with a result, none reads as cancelled",
        arguments: Scheduling.allCases)
    func classicResultOperationsRunAfterAFailedStep(scheduling: Scheduling) async throws {
        let root = GatedResultOperation<Int, StepError>(.failure(.planned(5)))
        let legacy = ClassicLegacyStep()
        let cancellable = ClassicCancellableStep()
        legacy.addDependency(root)
        cancellable.addDependency(root)
        // A package step after a classic step that succeeded: the classic step recovered, so it runs.
        let after = legacy.bridge.then { (value: Int) async throws(StepError) -> Int in value + 1 }
        try await Self.run([root, legacy, cancellable, after], scheduling)
        #expect(legacy.result == .success(10))
        #expect(cancellable.result == .success(20))
        #expect(!legacy.isCancelled && !cancellable.isCancelled)
        #expect(legacy.runs.current == 1)
        #expect(after.result == .success(11))
    }

    @Test(
        "A BlockOperation and a plain subclass run after a failed step; the package's step after them skips with the root cause",
        arguments: Scheduling.allCases)
    func glueRunsAndTheRootCausePassesThrough(scheduling: Scheduling) async throws {
        let log = Recorder<String>()
        let root = GatedResultOperation<Int, StepError>(.failure(.planned(7)))
        let glue = BlockOperation { log.append("glue") }
        glue.addDependency(root)
        let aggregate = DownloadsFinishedAggregate { _ in log.append("aggregate") }
        aggregate.addDependency(glue)
        let ran = Guarded(false)
        let step = TaskOperation { () async throws(StepError) -> Int in
            ran.set(true)
            return 1
        }
        step.addDependency(aggregate)
        try await Self.run([root, glue, aggregate, step], scheduling)
        #expect(log.all == ["glue", "aggregate"])
        #expect(!glue.isCancelled && !aggregate.isCancelled)
        switch scheduling {
        case .foundation:
            // Foundation runs everything: the package's step too, and it knows of no failure.
            #expect(ran.current)
            #expect(step.bridge.upstreamFailure == nil)
        case .pipeline, .group:
            #expect(!ran.current)
            #expect(!step.isCancelled)
            #expect(step.rootCause == .planned(7))
        }
    }

    @Test("A foreign step that depends on a foreign step that failed also runs, and passes the cause on")
    func aCancelledGlueIsAFailureTheNextForeignStepRunsAfter() async throws {
        let log = Recorder<String>()
        let cancelledGlue = BlockOperation { log.append("cancelled") }
        cancelledGlue.cancel()
        let next = BlockOperation { log.append("next") }
        next.addDependency(cancelledGlue)
        let step = AddingOperation(adding: 1, input: 1)
        step.addDependency(next)
        let pipeline = try Pipeline([cancelledGlue, next, step], on: OperationQueue())
        try await pipeline.waitForCompletion()
        #expect(log.all == ["next"])
        #expect(step.mainRuns == 0)
        guard case .failure(.upstream(let error))? = step.result, case .cancelled = error.reason else {
            Issue.record("expected an upstream cancellation, got \(String(describing: step.result))")
            return
        }
        #expect(pipeline.firstFailure?.operation === cancelledGlue)
    }

    /// A results sequence holds only result operations: a foreign operation can only be a
    /// dependency outside it, which its queue runs, as Foundation does.
    @Test("In a results sequence, a foreign dependency outside it keeps Foundation's semantics")
    func inAResultsSequence() async throws {
        let queue = OperationQueue()
        let log = Recorder<String>()
        let root = GatedResultOperation<Int, StepError>(.failure(.planned(3)))
        let glue = BlockOperation { log.append("glue") }
        glue.addDependency(root)
        let step = TaskOperation { () async throws(StepError) -> Int in 1 }
        step.addDependency(glue)
        let glueQueue = OperationQueue()
        glueQueue.addOperation(glue)  // outside the sequence: the queue runs it, as Foundation does
        let results = try queue.results(of: [root, step], order: .submission)
        let collected = await results.collect()
        #expect(collected[0] == .failure(.planned(3)))
        #expect(log.all == ["glue"])
        #expect(step.result == .success(1))  // outside dependencies are Foundation's: it ran
    }

    @Test("An explicit .cancelAll still cancels the foreign dependents")
    func cancelAllCancelsForeignDependents() async throws {
        let log = Recorder<String>()
        let root = GatedResultOperation<Int, StepError>(.failure(.planned(1)))
        let glue = BlockOperation { log.append("glue") }
        glue.addDependency(root)
        let step = AddingOperation(adding: 1, input: 1)
        step.addDependency(glue)
        let pipeline = try Pipeline([root, glue, step], on: OperationQueue(), failurePolicy: .cancelAll)
        try await pipeline.waitForCompletion()
        #expect(log.all.isEmpty)
        #expect(glue.isCancelled)
        #expect(step.rootCause == .planned(1))
    }
}
