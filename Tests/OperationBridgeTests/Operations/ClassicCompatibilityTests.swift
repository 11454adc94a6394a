import Foundation
import OperationBridge
import Testing

// Code written the way the classic articles write asynchronous operations. It is unchanged
// except for what Swift 6 requires of any `Operation` subclass (restating `@unchecked
// Sendable`; without it the compiler warns), what this package's `ExistentialAny` setting
// requires (`any Swift.Error`), `private` to keep the test module's names free, and a fake
// service with `URLSession`'s callback shape instead of the network. It compiles against the
// package after the hand-copied base classes are deleted.

// MARK: - A hand-written Foundation asynchronous operation (the KVO-style original)

/// The classic hand-written asynchronous `Operation`: `isExecuting`/`isFinished` overrides
/// behind a concurrent queue, with `willChangeValue`/`didChangeValue` around every change.
private class ClassicAsyncOperation: Operation, @unchecked Sendable {
    private let lockQueue = DispatchQueue(label: "com.example.asyncoperation", attributes: .concurrent)

    override var isAsynchronous: Bool {
        true
    }

    private var _isExecuting: Bool = false
    override private(set) var isExecuting: Bool {
        get {
            lockQueue.sync { () -> Bool in
                _isExecuting
            }
        }
        set {
            willChangeValue(forKey: "isExecuting")
            lockQueue.sync(flags: [.barrier]) {
                _isExecuting = newValue
            }
            didChangeValue(forKey: "isExecuting")
        }
    }

    private var _isFinished: Bool = false
    override private(set) var isFinished: Bool {
        get {
            lockQueue.sync { () -> Bool in
                _isFinished
            }
        }
        set {
            willChangeValue(forKey: "isFinished")
            lockQueue.sync(flags: [.barrier]) {
                _isFinished = newValue
            }
            didChangeValue(forKey: "isFinished")
        }
    }

    override func start() {
        guard !isCancelled else {
            finish()
            return
        }

        isFinished = false
        isExecuting = true
        main()
    }

    override func main() {
        fatalError("Subclasses must implement `main` without overriding super.")
    }

    func finish() {
        isExecuting = false
        isFinished = true
    }
}

// MARK: - The same work on both implementations

/// The two implementations compared by the differential tests.
enum OperationImplementation: String, CaseIterable, Sendable, CustomStringConvertible {
    /// ``ClassicAsyncOperation``, written against Foundation only.
    case handWrittenFoundation
    /// ``AsyncOperation`` from this package.
    case asyncOperation

    var description: String { rawValue }

    /// An operation whose `main()` records `name` in `log` and hands `work` a way to finish.
    func makeOperation(
        _ name: String,
        log: Recorder<String>,
        work: @escaping @Sendable (_ finish: @escaping @Sendable () -> Void) -> Void
    ) -> Operation {
        switch self {
        case .handWrittenFoundation: return HandWrittenWorker(name, log: log, work: work)
        case .asyncOperation: return BridgedWorker(name, log: log, work: work)
        }
    }
}

private final class HandWrittenWorker: ClassicAsyncOperation, @unchecked Sendable {
    let label: String
    let log: Recorder<String>
    let work: @Sendable (_ finish: @escaping @Sendable () -> Void) -> Void

    init(_ label: String, log: Recorder<String>, work: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void) {
        self.label = label
        self.log = log
        self.work = work
        super.init()
    }

    override func main() {
        log.append("main \(label)")
        work { [self] in
            log.append("finish \(label)")
            finish()
        }
    }
}

private final class BridgedWorker: AsyncOperation, @unchecked Sendable {
    let label: String
    let log: Recorder<String>
    let work: @Sendable (_ finish: @escaping @Sendable () -> Void) -> Void

    init(_ label: String, log: Recorder<String>, work: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void) {
        self.label = label
        self.log = log
        self.work = work
        super.init()
    }

    override func main() {
        log.append("main \(label)")
        work { [self] in
            log.append("finish \(label)")
            finish()
        }
    }
}

/// A result as text: the classic error enums carry `any Error`, so they are not `Equatable`.
private func summary<Success, Failure>(_ result: Result<Success, Failure>?) -> String {
    switch result {
    case .success(let value)?: "success(\(value))"
    case .failure(let error)?: "failure(\(error))"
    case nil: "none"
    }
}

/// Work that finishes later, on another thread.
private let finishOnAnotherThread: @Sendable (@escaping @Sendable () -> Void) -> Void = { finish in
    DispatchQueue.global().async { finish() }
}

@Suite(.timeLimit(Stress.timeLimit(minutes: 1)))
struct ClassicCompatibilityTests {
    // MARK: - Differential: hand-written Foundation subclass vs AsyncOperation

    /// Enqueued last-first: A→B→C run in dependency order, each after its predecessor finished.
    private func dependencyOrder(_ implementation: OperationImplementation) async throws -> [String] {
        let queue = OperationQueue()
        let log = Recorder<String>()
        let a = implementation.makeOperation("A", log: log, work: finishOnAnotherThread)
        let b = implementation.makeOperation("B", log: log, work: finishOnAnotherThread)
        let c = implementation.makeOperation("C", log: log, work: finishOnAnotherThread)
        b.addDependency(a)
        c.addDependency(b)
        queue.addOperationsWithoutWaiting([c, b, a])
        try await queue.waitForAllOperations()
        return log.all
    }

    @Test func dependencyOrderMatches() async throws {
        let foundation = try await dependencyOrder(.handWrittenFoundation)
        #expect(foundation == ["main A", "finish A", "main B", "finish B", "main C", "finish C"])
        #expect(try await dependencyOrder(.asyncOperation) == foundation)
    }

    struct CancelBeforeStartObservation: Equatable {
        var stateBeforeStart: LifecycleSnapshot
        var stateAfterStart: LifecycleSnapshot
        var blockerFinishedFirst: Bool
        var log: [String]
    }

    /// A queued operation waiting for a dependency is cancelled: the queue starts it at once,
    /// and it finishes without running `main()`.
    private func cancelBeforeStartOnAQueue(_ implementation: OperationImplementation) async throws
        -> CancelBeforeStartObservation
    {
        let queue = OperationQueue()
        let gate = Gate()
        let log = Recorder<String>()
        let blocker = implementation.makeOperation("blocker", log: log) { finish in
            Task {
                await gate.wait()
                finish()
            }
        }
        let target = implementation.makeOperation("target", log: log, work: finishOnAnotherThread)
        target.addDependency(blocker)
        queue.addOperationsWithoutWaiting([blocker, target])

        let before = target.lifecycleSnapshot
        target.cancel()
        try await target.bridge.waitForCompletion()
        let blockerFinishedFirst = blocker.isFinished
        let after = target.lifecycleSnapshot
        gate.open()
        try await queue.waitForAllOperations()
        return CancelBeforeStartObservation(
            stateBeforeStart: before,
            stateAfterStart: after,
            blockerFinishedFirst: blockerFinishedFirst,
            log: log.all
        )
    }

    @Test func cancelBeforeStartOnAQueueMatches() async throws {
        let foundation = try await cancelBeforeStartOnAQueue(.handWrittenFoundation)
        #expect(
            foundation
                == CancelBeforeStartObservation(
                    stateBeforeStart: .pending,
                    stateAfterStart: .cancelledFinished,
                    blockerFinishedFirst: false,
                    log: ["main blocker", "finish blocker"]
                )
        )
        #expect(try await cancelBeforeStartOnAQueue(.asyncOperation) == foundation)
    }

    /// Cancelled before a manual `start()`: not finished until started, then finished without
    /// running `main()`.
    private func cancelBeforeManualStart(_ implementation: OperationImplementation) -> [LifecycleSnapshot] {
        let log = Recorder<String>()
        let operation = implementation.makeOperation("manual", log: log) { finish in finish() }
        var states = [operation.lifecycleSnapshot]
        operation.cancel()
        states.append(operation.lifecycleSnapshot)
        operation.start()
        states.append(operation.lifecycleSnapshot)
        #expect(log.all.isEmpty, "main() never runs for \(implementation)")
        return states
    }

    @Test func cancelBeforeManualStartMatches() {
        let foundation = cancelBeforeManualStart(.handWrittenFoundation)
        #expect(foundation == [.pending, .cancelledPending, .cancelledFinished])
        #expect(cancelBeforeManualStart(.asyncOperation) == foundation)
    }

    struct CompletionObservation: Equatable {
        var stateSeenByCompletionBlock: [LifecycleSnapshot]
        var stateSeenByDependent: [LifecycleSnapshot]
        var stateWhileWorking: LifecycleSnapshot
        var log: [String]
    }

    /// The completion block and a dependent see a finished operation; while the work is in
    /// flight after `main()` returned, the operation is executing.
    private func completion(_ implementation: OperationImplementation) async throws -> CompletionObservation {
        let queue = OperationQueue()
        let gate = Gate()
        let working = Gate()
        let log = Recorder<String>()
        let operation = implementation.makeOperation("work", log: log) { finish in
            working.open()
            Task {
                await gate.wait()
                finish()
            }
        }
        let seenByCompletion = Recorder<LifecycleSnapshot>()
        let completed = Latch(count: 1)
        operation.completionBlock = { [weak operation] in
            if let operation { seenByCompletion.append(operation.lifecycleSnapshot) }
            completed.arrive()
        }
        let seenByDependent = Recorder<LifecycleSnapshot>()
        let dependent = BlockOperation { [operation] in seenByDependent.append(operation.lifecycleSnapshot) }
        dependent.addDependency(operation)
        queue.addOperationsWithoutWaiting([dependent, operation])

        await working.wait()
        let whileWorking = operation.lifecycleSnapshot
        gate.open()
        await completed.wait()
        try await queue.waitForAllOperations()
        return CompletionObservation(
            stateSeenByCompletionBlock: seenByCompletion.all,
            stateSeenByDependent: seenByDependent.all,
            stateWhileWorking: whileWorking,
            log: log.all
        )
    }

    @Test func completionMatches() async throws {
        let foundation = try await completion(.handWrittenFoundation)
        #expect(
            foundation
                == CompletionObservation(
                    stateSeenByCompletionBlock: [.finished],
                    stateSeenByDependent: [.finished],
                    stateWhileWorking: .executing,
                    log: ["main work", "finish work"]
                )
        )
        #expect(try await completion(.asyncOperation) == foundation)
    }

    /// With one slot, operations whose work outlives `main()` run one at a time, in order.
    private func serialQueue(_ implementation: OperationImplementation) async throws -> [String] {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let log = Recorder<String>()
        for index in 0..<10 {
            queue.addOperation(implementation.makeOperation("\(index)", log: log, work: finishOnAnotherThread))
        }
        try await queue.waitForAllOperations()
        return log.all
    }

    @Test func serialQueueMatches() async throws {
        let foundation = try await serialQueue(.handWrittenFoundation)
        #expect(foundation == (0..<10).flatMap { ["main \($0)", "finish \($0)"] })
        #expect(try await serialQueue(.asyncOperation) == foundation)
    }

    /// Foundation's own blocking `waitUntilFinished()` (from a plain thread) returns for both:
    /// the `isFinished` notification reached Foundation.
    @Test(arguments: OperationImplementation.allCases)
    func foundationsBlockingWaitReturns(implementation: OperationImplementation) async throws {
        let gate = Gate()
        let log = Recorder<String>()
        let operation = implementation.makeOperation("blocking", log: log) { finish in
            Task {
                await gate.wait()
                finish()
            }
        }
        operation.start()
        let waiter = Task {
            await onDispatchThread {
                // Let the work finish while this thread blocks in Foundation's wait.
                gate.open()
                operation.waitUntilFinished()
                return operation.lifecycleSnapshot
            }
        }
        #expect(await waiter.value == .finished)
    }

    // MARK: - Classic result and chained subclasses, written as in the articles

    @Test func classicChainedSubclassesRunThroughDependencies() async throws {
        let service = FakeLinkService()
        let queue = OperationQueue()
        let unfurlOperation = UnfurlURLChainedOperation(service: service, input: URL(string: "https://bit.ly/33UDb5L")!)
        let fetchTitleOperation = FetchTitleChainedOperation(service: service)
        fetchTitleOperation.addDependency(unfurlOperation)
        queue.addOperationsWithoutWaiting([unfurlOperation, fetchTitleOperation])
        try await queue.waitForAllOperations()

        #expect(summary(unfurlOperation.result) == "success(https://www.avanderlee.com/swift/)")
        #expect(fetchTitleOperation.input == URL(string: "https://www.avanderlee.com/swift/")!)
        #expect(summary(fetchTitleOperation.result) == "success(Swift | SwiftLee)")
    }

    @Test func classicResultSubclassRunsAndAwaits() async throws {
        let service = FakeLinkService()
        let queue = OperationQueue()
        let operation = UnfurlURLOperation(service: service, shortURL: URL(string: "https://bit.ly/33UDb5L")!)
        queue.addOperation(operation)
        #expect(summary(await operation.bridge.outcome) == "success(https://www.avanderlee.com/swift/)")
    }

    @Test func cancellingAClassicSubclassUsesItsOwnCancelOverride() async throws {
        let service = FakeLinkService(holdsRequests: true)
        let queue = OperationQueue()
        let operation = UnfurlURLChainedOperation(service: service, input: URL(string: "https://bit.ly/33UDb5L")!)
        queue.addOperation(operation)
        await service.requested.wait()

        operation.cancel()
        #expect(summary(operation.result) == "failure(canceled)")
        #expect(operation.lifecycleSnapshot == .cancelledExecuting)
        // The cancelled task reports its error later; the first result stays.
        service.deliverHeldRequests()
        try await operation.bridge.waitForCompletion()
        #expect(summary(operation.result) == "failure(canceled)")
        #expect(operation.lifecycleSnapshot == .cancelledFinished)
        #expect(service.cancelledTasks.value == 1)
    }

    @Test func aClassicSubclassCancelledBeforeStartFinishesWithItsCancellationFailure() async throws {
        let service = FakeLinkService()
        let queue = OperationQueue()
        let operation = UnfurlURLOperation(service: service, shortURL: URL(string: "https://bit.ly/33UDb5L")!)
        operation.cancel()
        queue.addOperation(operation)
        try await operation.bridge.waitForCompletion()
        #expect(summary(operation.result) == "failure(canceled)")
        #expect(service.requests.value == 0)
    }

    @Test(arguments: [UpstreamFailurePolicy.fail, .runWithoutInput])
    func aClassicChainedSubclassAfterAFailedUpstream(policy: UpstreamFailurePolicy) async throws {
        let service = FakeLinkService()
        let queue = OperationQueue()
        let unfurlOperation = UnfurlURLChainedOperation(service: service, input: FakeLinkService.unknownURL)
        let fetchTitleOperation = FetchTitleChainedOperation(service: service)
        fetchTitleOperation.upstreamFailurePolicy = policy
        fetchTitleOperation.addDependency(unfurlOperation)
        queue.addOperationsWithoutWaiting([unfurlOperation, fetchTitleOperation])
        try await queue.waitForAllOperations()

        #expect(summary(unfurlOperation.result) == "failure(missingRedirectURL)")
        switch policy {
        case .fail:
            // Its error type expresses neither an upstream failure nor cancellation: it finishes
            // without running and without a result, not cancelled, and keeps the cause.
            #expect(fetchTitleOperation.result == nil)
            #expect(!fetchTitleOperation.isCancelled)
            #expect(fetchTitleOperation.bridge.upstreamFailure?.rootFailure.map { "\($0)" } == "missingRedirectURL")
            #expect(service.titleRequests.value == 0)
        case .runWithoutInput:
            // The classic behaviour: `main()` runs without an input.
            #expect(summary(fetchTitleOperation.result) == "failure(missingInputURL)")
            #expect(!fetchTitleOperation.isCancelled)
        }
    }

    @Test func aClassicAsyncOperationSubclassRuns() async throws {
        let queue = OperationQueue()
        let uploads = Counter()
        let operation = FileUploadOperation(fileURL: URL(fileURLWithPath: "/tmp/file.txt"), uploads: uploads)
        queue.addOperation(operation)
        try await operation.bridge.waitForCompletion()
        #expect(uploads.value == 1)
        #expect(operation.lifecycleSnapshot == .finished)
    }
}

// MARK: - The classic subclasses

/// A stand-in for `URLSession` with the same callback shape, so the tests stay hermetic.
///
/// Safety: `held` is only touched while holding `lock`.
private final class FakeLinkService: @unchecked Sendable {
    static let unknownURL = URL(string: "https://bit.ly/unknown")!

    final class DataTask: @unchecked Sendable {
        private let onCancel: @Sendable () -> Void
        private let onResume: @Sendable () -> Void

        init(onResume: @escaping @Sendable () -> Void, onCancel: @escaping @Sendable () -> Void) {
            self.onResume = onResume
            self.onCancel = onCancel
        }

        func resume() { onResume() }
        func cancel() { onCancel() }
    }

    struct Cancelled: Error {}

    let requests = Counter()
    let titleRequests = Counter()
    let cancelledTasks = Counter()
    let requested = Gate()
    private let holdsRequests: Bool
    private let lock = NSLock()
    private var held: [@Sendable () -> Void] = []

    init(holdsRequests: Bool = false) {
        self.holdsRequests = holdsRequests
    }

    /// Resolves a short link, calling back on another thread (`holdsRequests`: only when
    /// ``deliverHeldRequests()`` is called).
    func redirectTask(
        for url: URL,
        completionHandler: @escaping @Sendable (URL?, (any Error)?) -> Void
    ) -> DataTask {
        let answer: @Sendable (Bool) -> Void = { cancelled in
            if cancelled {
                completionHandler(nil, Cancelled())
            } else if url == Self.unknownURL {
                completionHandler(nil, nil)
            } else {
                completionHandler(URL(string: "https://www.avanderlee.com/swift/")!, nil)
            }
        }
        let cancelled = Counter()
        return DataTask(
            onResume: { [self] in
                requests.increment()
                requested.open()
                deliver { answer(cancelled.value > 0) }
            },
            onCancel: { [self] in
                cancelled.increment()
                cancelledTasks.increment()
            }
        )
    }

    func titleTask(for url: URL, completionHandler: @escaping @Sendable (String?, (any Error)?) -> Void) -> DataTask {
        DataTask(
            onResume: { [self] in
                titleRequests.increment()
                deliver { completionHandler("Swift | SwiftLee", nil) }
            },
            onCancel: {}
        )
    }

    func deliverHeldRequests() {
        lock.lock()
        let deliveries = held
        held = []
        lock.unlock()
        for delivery in deliveries { DispatchQueue.global().async(execute: delivery) }
    }

    private func deliver(_ delivery: @escaping @Sendable () -> Void) {
        if holdsRequests {
            lock.lock()
            held.append(delivery)
            lock.unlock()
        } else {
            DispatchQueue.global().async(execute: delivery)
        }
    }
}

private final class UnfurlURLChainedOperation: ChainedAsyncResultOperation<URL, URL, UnfurlURLChainedOperation.Error>,
    @unchecked Sendable
{
    enum Error: Swift.Error {
        case canceled
        case missingRedirectURL
        case missingInputURL
        case underlying(error: any Swift.Error)
    }

    private let service: FakeLinkService
    private var dataTask: FakeLinkService.DataTask?

    init(service: FakeLinkService, input: URL? = nil) {
        self.service = service
        super.init(input: input)
    }

    override func main() {
        guard let input = input else { return finish(with: .failure(.missingInputURL)) }

        dataTask = service.redirectTask(for: input) { [weak self] redirectURL, error in
            if let error = error {
                self?.finish(with: .failure(.underlying(error: error)))
            } else if let redirectURL = redirectURL {
                self?.finish(with: .success(redirectURL))
            } else {
                self?.finish(with: .failure(.missingRedirectURL))
            }
        }
        dataTask?.resume()
    }

    override func cancel() {
        dataTask?.cancel()
        cancel(with: .canceled)
    }
}

private final class FetchTitleChainedOperation: ChainedAsyncResultOperation<
    URL, String, FetchTitleChainedOperation.Error
>,
@unchecked Sendable
{
    enum Error: Swift.Error {
        case canceled
        case dataParsingFailed
        case missingInputURL
        case missingPageTitle
        case underlying(error: any Swift.Error)
    }

    private let service: FakeLinkService
    private var dataTask: FakeLinkService.DataTask?

    init(service: FakeLinkService, input: URL? = nil) {
        self.service = service
        super.init(input: input)
    }

    override func main() {
        guard let input = input else { return finish(with: .failure(.missingInputURL)) }

        dataTask = service.titleTask(for: input) { [weak self] title, error in
            if let error = error {
                self?.finish(with: .failure(.underlying(error: error)))
            } else if let title = title {
                self?.finish(with: .success(title))
            } else {
                self?.finish(with: .failure(.missingPageTitle))
            }
        }
        dataTask?.resume()
    }

    override func cancel() {
        dataTask?.cancel()
        cancel(with: .canceled)
    }
}

private final class UnfurlURLOperation: AsyncResultOperation<URL, UnfurlURLOperation.Error>, @unchecked Sendable {
    enum Error: Swift.Error {
        case canceled
        case missingRedirectURL
        case underlying(error: any Swift.Error)
    }

    private let service: FakeLinkService
    private let shortURL: URL
    private var dataTask: FakeLinkService.DataTask?

    init(service: FakeLinkService, shortURL: URL) {
        self.service = service
        self.shortURL = shortURL
    }

    override func main() {
        dataTask = service.redirectTask(for: shortURL) { [weak self] redirectURL, error in
            if let error = error {
                self?.finish(with: .failure(.underlying(error: error)))
            } else if let redirectURL = redirectURL {
                self?.finish(with: .success(redirectURL))
            } else {
                self?.finish(with: .failure(.missingRedirectURL))
            }
        }
        dataTask?.resume()
    }

    override func cancel() {
        dataTask?.cancel()
        cancel(with: .canceled)
    }
}

private final class FileUploadOperation: AsyncOperation, @unchecked Sendable {
    private let fileURL: URL
    private let uploads: Counter

    init(fileURL: URL, uploads: Counter) {
        self.fileURL = fileURL
        self.uploads = uploads
    }

    override func main() {
        DispatchQueue.global().async {
            self.uploads.increment()
            self.finish()
        }
    }

    override func cancel() {
        super.cancel()
    }
}
