import Foundation
import OperationBridge

// Doubles for the tests of the base operation classes (Tests/OperationBridgeTests/Operations/).

/// A thread-safe counter.
///
/// Safety: `count` is only touched while holding `lock`.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0

    init() {}

    /// Adds one and returns the new value.
    @discardableResult
    func increment() -> Int {
        lock.lock()
        defer { lock.unlock() }
        count += 1
        return count
    }

    var value: Int {
        lock.lock()
        defer { lock.unlock() }
        return count
    }
}

/// The highest value a concurrently changed level ever reached (for example the number of
/// operations executing at once).
///
/// Safety: state is only touched while holding `lock`.
final class HighWaterMark: @unchecked Sendable {
    private let lock = NSLock()
    private var current = 0
    private var highest = 0

    init() {}

    func enter() {
        lock.lock()
        current += 1
        highest = max(highest, current)
        lock.unlock()
    }

    func leave() {
        lock.lock()
        current -= 1
        lock.unlock()
    }

    var maximum: Int {
        lock.lock()
        defer { lock.unlock() }
        return highest
    }
}

/// Lets a task wait until `count` arrivals have happened (from any thread).
///
/// Safety: state is only touched while holding `lock`; continuations are resumed after it is
/// released.
final class Latch: @unchecked Sendable {
    private let lock = NSLock()
    private var remaining: Int
    private var waiters: [CheckedContinuation<Void, Never>] = []

    init(count: Int) {
        remaining = count
    }

    func arrive() {
        lock.lock()
        remaining -= 1
        let ready = remaining <= 0 ? waiters : []
        if remaining <= 0 { waiters = [] }
        lock.unlock()
        for waiter in ready { waiter.resume() }
    }

    func wait() async {
        await resumeOrdered { continuation in
            lock.lock()
            if remaining <= 0 {
                lock.unlock()
                continuation.resume()
            } else {
                waiters.append(continuation)
                lock.unlock()
            }
        }
    }
}

/// What an operation's lifecycle properties read at one moment.
struct LifecycleSnapshot: Hashable, Sendable, CustomStringConvertible {
    var isExecuting: Bool
    var isFinished: Bool
    var isCancelled: Bool

    static let pending = LifecycleSnapshot(isExecuting: false, isFinished: false, isCancelled: false)
    static let executing = LifecycleSnapshot(isExecuting: true, isFinished: false, isCancelled: false)
    static let finished = LifecycleSnapshot(isExecuting: false, isFinished: true, isCancelled: false)
    static let cancelledPending = LifecycleSnapshot(isExecuting: false, isFinished: false, isCancelled: true)
    static let cancelledExecuting = LifecycleSnapshot(isExecuting: true, isFinished: false, isCancelled: true)
    static let cancelledFinished = LifecycleSnapshot(isExecuting: false, isFinished: true, isCancelled: true)

    var description: String {
        "(executing: \(isExecuting), finished: \(isFinished), cancelled: \(isCancelled))"
    }
}

extension Operation {
    /// The lifecycle properties, read one after the other.
    var lifecycleSnapshot: LifecycleSnapshot {
        LifecycleSnapshot(isExecuting: isExecuting, isFinished: isFinished, isCancelled: isCancelled)
    }
}

/// An ``AsyncOperation`` that records what it saw in `main()` and finishes as the test says.
final class ProbeOperation: AsyncOperation, @unchecked Sendable {
    enum Ending: Sendable {
        /// `main()` calls `finish()` before returning.
        case inMain
        /// A task calls `finish()` once the gate opens.
        case whenOpened(Gate)
        /// The test calls `finish()`.
        case byTest
    }

    let ending: Ending
    let mainCalls = Counter()
    let snapshotsInMain = Recorder<LifecycleSnapshot>()
    let started = Gate()
    private let onMain: (@Sendable () -> Void)?

    init(_ ending: Ending = .inMain, onMain: (@Sendable () -> Void)? = nil) {
        self.ending = ending
        self.onMain = onMain
        super.init()
    }

    override func main() {
        mainCalls.increment()
        snapshotsInMain.append(lifecycleSnapshot)
        onMain?()
        started.open()
        switch ending {
        case .inMain:
            finish()
        case .whenOpened(let gate):
            Task {
                await gate.wait()
                self.finish()
            }
        case .byTest:
            break
        }
    }
}

/// An ``AsyncResultOperation`` that records what it saw in `main()` and ends as the test says.
///
/// Work that ends after a gate checks `isCancelled` first, as well-behaved operations do: a
/// cancelled operation ends with `finish()` (its result is the cancellation failure, if any).
final class ProbeResultOperation<Failure: Error>: AsyncResultOperation<Int, Failure>, @unchecked Sendable {
    enum Ending: Sendable {
        /// `main()` calls `finish(with:)` before returning.
        case inMain(Result<Int, Failure>)
        /// A task ends the operation once the gate opens.
        case whenOpened(Gate, Result<Int, Failure>)
        /// The test ends the operation.
        case byTest
    }

    let ending: Ending
    let mainCalls = Counter()
    let snapshotsInMain = Recorder<LifecycleSnapshot>()
    let started = Gate()

    init(_ ending: Ending) {
        self.ending = ending
        super.init()
    }

    override func main() {
        mainCalls.increment()
        snapshotsInMain.append(lifecycleSnapshot)
        started.open()
        switch ending {
        case .inMain(let result):
            finish(with: result)
        case .whenOpened(let gate, let result):
            Task {
                await gate.wait()
                if self.isCancelled {
                    self.finish()
                } else {
                    self.finish(with: result)
                }
            }
        case .byTest:
            break
        }
    }
}

/// A ``ChainedAsyncResultOperation`` whose `main()` records its input and finishes with
/// `body(input)` at once.
final class ChainedProbe<Input, Failure: Error>: ChainedAsyncResultOperation<Input, Int, Failure>,
    @unchecked Sendable
{
    let mainCalls = Counter()
    let inputsSeen = Recorder<Input?>()
    private let body: @Sendable (Input?) -> Result<Int, Failure>

    init(input: Input? = nil, body: @escaping @Sendable (Input?) -> Result<Int, Failure>) {
        self.body = body
        super.init(input: input)
    }

    override func main() {
        mainCalls.increment()
        let input = self.input
        inputsSeen.append(input)
        finish(with: body(input))
    }
}

/// A plain Foundation operation that provides an output to chained operations the classic way.
///
/// Safety: `produced` is only touched while holding `lock`.
final class ProducerOperation: Operation, ChainedOperationOutputProviding, @unchecked Sendable {
    private let lock = NSLock()
    private let value: any Sendable
    private var produced: (any Sendable)?

    init(producing value: any Sendable) {
        self.value = value
        super.init()
    }

    override func main() {
        lock.lock()
        produced = value
        lock.unlock()
    }

    var output: Any? {
        lock.lock()
        defer { lock.unlock() }
        return produced
    }
}

/// An error type that cannot express cancellation.
enum PlainError: Error, Equatable {
    case boom(Int)
}

/// An error type that expresses cancellation through ``CancellationRepresentable``.
enum RepresentableError: Error, Equatable, CancellationRepresentable {
    case boom(Int)
    case cancelled

    static var cancellation: RepresentableError { .cancelled }
}

/// An error type that carries an ``UpstreamFailedError`` (and cannot express cancellation).
enum UpstreamAwareError: Error, UpstreamFailureRepresentable {
    case boom
    case upstream(UpstreamFailedError)

    static func upstreamFailed(_ error: UpstreamFailedError) -> UpstreamAwareError { .upstream(error) }
}

/// The failure types the cancellation tests cover.
enum FailureKind: String, CaseIterable, Sendable, CustomStringConvertible {
    /// `CancellationError` itself.
    case cancellationError
    /// `any Error`, a supertype of `CancellationError`.
    case anyError
    /// An enum adopting ``CancellationRepresentable``.
    case representable
    /// An enum that cannot express cancellation.
    case plain

    var description: String { rawValue }

    /// Whether a cancelled operation with this failure type ends with a cancellation failure.
    var expressesCancellation: Bool { self != .plain }

    /// The outcome a cancelled operation with this failure type reports.
    var cancellationOutcome: Outcome {
        switch self {
        case .cancellationError, .anyError: .failure("CancellationError")
        case .representable: .failure("RepresentableError.cancelled")
        case .plain: .none
        }
    }
}

/// A comparable summary of an `Result<Int, some Error>?`.
enum Outcome: Hashable, Sendable, CustomStringConvertible {
    case success(Int)
    case failure(String)
    /// No result.
    case none

    init<Failure: Error>(_ result: Result<Int, Failure>?) {
        switch result {
        case .success(let value)?: self = .success(value)
        case .failure(let error)?: self = .failure(Outcome.describe(error))
        case nil: self = .none
        }
    }

    /// A stable name for an error: its dynamic type and case.
    static func describe(_ error: any Error) -> String {
        if error is CancellationError { return "CancellationError" }
        return "\(type(of: error)).\(error)"
    }

    var description: String {
        switch self {
        case .success(let value): "success(\(value))"
        case .failure(let error): "failure(\(error))"
        case .none: "none"
        }
    }
}

/// Runs `body` on a thread outside the cooperative pool and returns its value, so tests can
/// block, spin or call `DispatchQueue.concurrentPerform` without starving Swift concurrency.
func onDispatchThread<Value: Sendable>(_ body: @escaping @Sendable () -> Value) async -> Value {
    await resumeOrdered { continuation in
        DispatchQueue.global().async {
            continuation.resume(returning: body())
        }
    }
}

/// Waits until every block submitted to `queue` so far has run. For a serial queue (or an
/// operation queue's serial `underlyingQueue`), this means its threads have let go of
/// everything those blocks held.
func drain(_ queue: DispatchQueue) async {
    await resumeOrdered { continuation in
        queue.async { continuation.resume() }
    }
}

extension Gate {
    /// A gate that is already open.
    static func alreadyOpen() -> Gate {
        let gate = Gate()
        gate.open()
        return gate
    }
}

extension OperationQueue {
    /// Adds `operations` without waiting: Foundation's `addOperations(_:waitUntilFinished:)`,
    /// which is unavailable from async code. One batch, as in classic code: the queue reads every
    /// operation's readiness before it starts any, so none of them can finish while a later one
    /// is being added (Linux's queue could forget that one; Design.md, "Platform facts").
    func addOperationsWithoutWaiting(_ operations: [Operation]) {
        addOperations(operations, waitUntilFinished: false)
    }
}
