import Foundation
import OperationBridge

// Doubles for the "Operations → async" suites (Tests/OperationBridgeTests/Awaiting/).

/// A value guarded by an `NSLock`, for counters and flags shared between tasks and threads.
///
/// Safety: `value` is only touched inside `withLock`, which holds `lock`.
final class LockedBox<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    var current: Value { withLock { $0 } }
}

/// A one-shot event that tasks can await, and whose wait gives up when the waiting task is
/// cancelled (so that a test with a time limit fails instead of hanging).
///
/// Unlike awaiting a task's `value`, awaiting a signal never escalates anybody's priority.
///
/// Safety: the state is guarded by `lock`; continuations are resumed after releasing it.
final class OneShotSignal: @unchecked Sendable {
    private let lock = NSLock()
    private var fired = false
    private var nextID = 0
    private var waiters: [Int: CheckedContinuation<Bool, Never>] = [:]
    private var cancelledBeforeSuspending: Set<Int> = []

    init() {}

    /// Fires the signal, releasing every waiter, present and future.
    func fire() {
        lock.lock()
        fired = true
        let waiting = waiters.values
        waiters = [:]
        lock.unlock()
        for waiter in waiting { waiter.resume(returning: true) }
    }

    private func makeID() -> Int {
        lock.lock()
        defer { lock.unlock() }
        nextID += 1
        return nextID
    }

    /// Suspends until the signal fires. Returns `false` when the task was cancelled first.
    func wait() async -> Bool {
        let id = makeID()
        return await withTaskCancellationHandler {
            await resumeOrdered { continuation in
                lock.lock()
                if fired {
                    lock.unlock()
                    continuation.resume(returning: true)
                } else if cancelledBeforeSuspending.remove(id) != nil {
                    lock.unlock()
                    continuation.resume(returning: false)
                } else {
                    waiters[id] = continuation
                    lock.unlock()
                }
            }
        } onCancel: {
            lock.lock()
            let waiter = waiters.removeValue(forKey: id)
            if waiter == nil, !fired { cancelledBeforeSuspending.insert(id) }
            lock.unlock()
            waiter?.resume(returning: false)
        }
    }
}

/// A signal that fires once `count` participants have arrived.
final class CountdownSignal: Sendable {
    private let signal = OneShotSignal()
    private let left: LockedBox<Int>

    init(_ count: Int) {
        left = LockedBox(count)
        if count == 0 { signal.fire() }
    }

    /// Records one arrival; the last one fires the signal.
    func arrive() {
        let stillExpected = left.withLock { left in
            left -= 1
            return left
        }
        if stillExpected == 0 { signal.fire() }
    }

    /// How many participants have not arrived yet.
    var remaining: Int { left.current }

    /// Suspends until everybody has arrived. Returns `false` when the task was cancelled first.
    func wait() async -> Bool { await signal.wait() }
}

/// An object that reports its own deallocation. Stored in (or captured by) an operation, it
/// tells the test, without polling, that the operation has been released.
final class ReleaseProbe: Sendable {
    private let onRelease: @Sendable () -> Void

    init(onRelease: @escaping @Sendable () -> Void) { self.onRelease = onRelease }

    /// A probe that fires `released` when it is deallocated.
    convenience init(_ released: OneShotSignal) {
        self.init { released.fire() }
    }

    /// A probe whose deallocation calls back into the package with `callBack`, then fires
    /// `released`: it checks that the package never releases it while holding a lock that
    /// `callBack` takes.
    convenience init(callingBack callBack: @escaping @Sendable () -> Void, then released: Trigger) {
        self.init {
            callBack()
            released.fire()
        }
    }

    deinit { onRelease() }
}

/// A failure type that can express cancellation, with a second cancellation reason that a
/// subclass reports from its own `cancel()`.
enum TransferError: Error, Equatable, CancellationRepresentable {
    case offline
    case cancelled
    case cancelledByUser

    static var cancellation: TransferError { .cancelled }
}

/// A failure type that cannot express cancellation: cancelled operations end without a result.
enum ParseError: Error, Equatable {
    case malformed
}

/// Keeps operations pending in their queue without blocking a thread: they depend on an
/// operation that is in no queue, until ``release()`` starts (and so finishes) it.
///
/// Blocking a `BlockOperation`'s thread on a gate would do too, but on Linux the queues and the
/// Swift concurrency pool share libdispatch's few worker threads: a couple of blocked blocks
/// stall every task, including the one that would open the gate, until libdispatch adds a
/// thread (about a second later).
///
/// Release it while the held operations are alive, or never: on Linux an unfinished operation
/// keeps unretained pointers to the operations that depend on it, and follows them when it
/// finishes.
final class Hold: Sendable {
    private let barrier = BlockOperation {}
    private let released = LockedBox(false)

    init() {}

    /// Makes `operation` wait for ``release()``. Call it before the operation is queued.
    @discardableResult
    func hold<Held: Operation>(_ operation: Held) -> Held {
        operation.addDependency(barrier)
        return operation
    }

    /// Lets the held operations run. Later calls do nothing.
    func release() {
        let first = released.withLock { wasReleased in
            defer { wasReleased = true }
            return !wasReleased
        }
        if first { barrier.start() }
    }
}

/// A result operation whose work the test ends by hand: `main()` records that it ran, opens
/// `started`, and returns; the test then calls `finish(with:)`. Its `cancel()` does what the
/// default one does (so cancelling a running instance does not finish it) and opens
/// `cancelRequested`.
final class ManualResultOperation<Success: Sendable, Failure: Error>: AsyncResultOperation<Success, Failure>,
    @unchecked Sendable
{
    let started = Gate()
    let cancelRequested = Gate()
    private let mainRuns = LockedBox(0)
    private let events: Recorder<String>?
    private let probe: ReleaseProbe?

    init(events: Recorder<String>? = nil, probe: ReleaseProbe? = nil) {
        self.events = events
        self.probe = probe
        super.init()
    }

    /// How many times `main()` ran.
    var mainRunCount: Int { mainRuns.current }

    override func main() {
        mainRuns.withLock { $0 += 1 }
        events?.append("main")
        started.open()
    }

    override func cancel() {
        super.cancel()
        cancelRequested.open()
    }
}

/// An `AsyncResultOperation<Int, TransferError>` whose own `cancel()` reports
/// `TransferError.cancelledByUser` (not the default `.cancelled`) and stops its work at once.
/// Until then it runs until the test calls `finish(with:)`.
final class UserCancellableOperation: AsyncResultOperation<Int, TransferError>, @unchecked Sendable {
    let started = Gate()
    private let mainRuns = LockedBox(0)

    var mainRunCount: Int { mainRuns.current }

    override func main() {
        mainRuns.withLock { $0 += 1 }
        started.open()
        // `cancel()` may have come while the operation was starting, when `isExecuting` was
        // still `false`: honour it here (finishing twice is ignored).
        if isCancelled { finish() }
    }

    override func cancel() {
        cancel(with: .cancelledByUser)
        if isExecuting { finish() }
    }
}

/// A hand-written asynchronous `Operation` subclass, as found in legacy codebases: its own
/// lock-protected `isExecuting`/`isFinished` with KVO-style `willChangeValue`/`didChangeValue`
/// calls. Its work ends when `gate` opens. It is not one of the package's operations, so the
/// bridge has to observe it from outside.
///
/// It records every assignment to `completionBlock`, to show that the bridge never sets it.
final class LegacyAsyncOperation: Operation, @unchecked Sendable {
    private let lock = NSLock()
    private var executing = false
    private var finished = false
    private let gate: Gate?
    private let probe: ReleaseProbe?
    private let events: Recorder<String>?
    let started = Gate()
    let cancelRequested = Gate()
    /// One entry per assignment to `completionBlock`: whether it set a block or `nil`.
    let completionBlockAssignments = Recorder<Bool>()

    init(gate: Gate? = nil, events: Recorder<String>? = nil, probe: ReleaseProbe? = nil) {
        self.gate = gate
        self.events = events
        self.probe = probe
        super.init()
    }

    override var isAsynchronous: Bool { true }

    override var isExecuting: Bool {
        lock.lock()
        defer { lock.unlock() }
        return executing
    }

    override var isFinished: Bool {
        lock.lock()
        defer { lock.unlock() }
        return finished
    }

    override var completionBlock: (@Sendable () -> Void)? {
        get { super.completionBlock }
        set {
            completionBlockAssignments.append(newValue != nil)
            super.completionBlock = newValue
        }
    }

    /// Sets `isCancelled`, like any operation that does not override it, and opens
    /// `cancelRequested`. Running work is not stopped: it ends when `gate` opens.
    override func cancel() {
        super.cancel()
        cancelRequested.open()
    }

    override func start() {
        if isCancelled {
            finishWork(wasExecuting: false)
            return
        }
        willChangeValue(forKey: "isExecuting")
        lock.lock()
        executing = true
        lock.unlock()
        didChangeValue(forKey: "isExecuting")
        events?.append("legacy started")
        started.open()
        guard let gate else { return finishWork(wasExecuting: true) }
        Task {
            await gate.wait()
            self.finishWork(wasExecuting: true)
        }
    }

    private func finishWork(wasExecuting: Bool) {
        events?.append("legacy finished")
        if wasExecuting { willChangeValue(forKey: "isExecuting") }
        willChangeValue(forKey: "isFinished")
        lock.lock()
        executing = false
        finished = true
        lock.unlock()
        if wasExecuting { didChangeValue(forKey: "isExecuting") }
        didChangeValue(forKey: "isFinished")
    }
}

/// A `BlockOperation` that records every assignment to `completionBlock` (whether it set a
/// block or `nil`), to show that awaiting it never takes the property over.
final class CompletionRecordingBlockOperation: BlockOperation, @unchecked Sendable {
    let completionBlockAssignments = Recorder<Bool>()

    override var completionBlock: (@Sendable () -> Void)? {
        get { super.completionBlock }
        set {
            completionBlockAssignments.append(newValue != nil)
            super.completionBlock = newValue
        }
    }
}

/// A queue that records, for every operation added to it (`addOperation(_:)` or
/// `addOperations(_:waitUntilFinished:)`), whether it was already cancelled when it was enqueued,
/// and the size of each `addOperations` batch.
final class EnqueueRecordingQueue: OperationQueue, @unchecked Sendable {
    let cancelledWhenEnqueued = Recorder<Bool>()
    /// How many operations each `addOperations(_:waitUntilFinished:)` call handed the queue.
    let batches = Recorder<Int>()

    override func addOperation(_ operation: Operation) {
        cancelledWhenEnqueued.append(operation.isCancelled)
        super.addOperation(operation)
    }

    override func addOperations(_ operations: [Operation], waitUntilFinished: Bool) {
        batches.append(operations.count)
        for operation in operations { cancelledWhenEnqueued.append(operation.isCancelled) }
        super.addOperations(operations, waitUntilFinished: waitUntilFinished)
    }
}

/// What an awaiting API answered, so that one scenario can run through every API.
enum AwaitAnswer: Equatable, Sendable {
    /// `value` returned, or `outcome` returned `.success`.
    case success(Int)
    /// `value` threw, or `outcome` returned `.failure`.
    case failure(TransferError)
    /// `waitUntilFinished()` returned.
    case finished
    /// `outcome` returned `nil`, or `waitUntilFinished()` threw `CancellationError`.
    case stoppedWaiting
}

/// The non-owning ways of awaiting a result operation.
enum AwaitStyle: String, CaseIterable, Sendable, CustomStringConvertible {
    /// `try await operation.value` — typed throws.
    case value
    /// `await operation.outcome` — the `Result`, or `nil`.
    case outcome
    /// `try await operation.waitForCompletion()` — any `Operation`.
    case waitForCompletion

    var description: String { rawValue }

    /// Awaits `operation` this way.
    func answer(from operation: AsyncResultOperation<Int, TransferError>) async -> AwaitAnswer {
        switch self {
        case .value:
            do {
                return .success(try await operation.bridge.value)
            } catch {
                let typed: TransferError = error  // `value` throws `TransferError`, not `any Error`
                return .failure(typed)
            }
        case .outcome:
            switch await operation.bridge.outcome {
            case .success(let value)?: return .success(value)
            case .failure(let error)?: return .failure(error)
            case nil: return .stoppedWaiting
            }
        case .waitForCompletion:
            do {
                try await operation.bridge.waitForCompletion()
                return .finished
            } catch {
                return .stoppedWaiting
            }
        }
    }

    /// The answer for an operation that finished with `result`.
    func expected(forFinished result: Result<Int, TransferError>) -> AwaitAnswer {
        switch (self, result) {
        case (.waitForCompletion, _): .finished
        case (.value, .success(let value)), (.outcome, .success(let value)): .success(value)
        case (.value, .failure(let error)), (.outcome, .failure(let error)): .failure(error)
        }
    }

    /// The answer when the awaiting task is cancelled before the operation has finished.
    var expectedWhenTaskCancelled: AwaitAnswer {
        switch self {
        case .value: .failure(.cancelled)
        case .outcome, .waitForCompletion: .stoppedWaiting
        }
    }
}

/// Marks the current task cancelled, so that the next `await` starts in a cancelled task.
func cancelCurrentTask() {
    withUnsafeCurrentTask { $0?.cancel() }
}

/// A plain `AsyncOperation` whose work ends only when the test calls `finish()`.
final class ManualOperation: AsyncOperation, @unchecked Sendable {
    let started = Gate()
    let cancelRequested = Gate()

    override func main() {
        started.open()
    }

    override func cancel() {
        super.cancel()
        cancelRequested.open()
    }
}
