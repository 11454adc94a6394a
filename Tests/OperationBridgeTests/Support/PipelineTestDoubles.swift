import Foundation
import OperationBridge
import Testing

// Doubles for the "Async → operations", "Results as an AsyncSequence" and "Pipelines at scale"
// suites (Tests/OperationBridgeTests/Tasks/, Sequences/ and Pipelines/).

/// A value guarded by an `NSLock`, for state shared between tasks, queue threads and tests.
///
/// Safety: `value` is only touched inside `withLock`, which holds `lock`.
final class Guarded<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    var current: Value { withLock { $0 } }

    func set(_ newValue: Value) { withLock { $0 = newValue } }
}

/// A one-shot event that tasks await. Unlike ``Gate``, a wait gives up when the waiting task is
/// cancelled, so work blocked on a trigger stays cancellable and a test with a time limit fails
/// instead of hanging.
///
/// Safety: the state is guarded by `Guarded`'s lock; continuations are resumed after releasing it.
final class Trigger: Sendable {
    private struct State {
        var fired = false
        var nextID = 0
        var waiters: [Int: CheckedContinuation<Bool, Never>] = [:]
        var cancelledBeforeSuspending: Set<Int> = []
    }

    private let state = Guarded(State())

    init() {}

    /// Fires the trigger, releasing every waiter, present and future.
    func fire() {
        let waiters = state.withLock { state in
            state.fired = true
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume(returning: true) }
    }

    var hasFired: Bool { state.withLock { $0.fired } }

    /// Suspends until the trigger fires. Returns `false` when the task was cancelled first.
    @discardableResult
    func wait() async -> Bool {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        return await withTaskCancellationHandler {
            await resumeOrdered { continuation in
                let immediate: Bool? = state.withLock { state in
                    if state.fired { return true }
                    if state.cancelledBeforeSuspending.remove(id) != nil { return false }
                    state.waiters[id] = continuation
                    return nil
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Bool, Never>? in
                if let waiter = state.waiters.removeValue(forKey: id) { return waiter }
                if !state.fired { state.cancelledBeforeSuspending.insert(id) }
                return nil
            }
            waiter?.resume(returning: false)
        }
    }
}

/// Suspends the current task until it is cancelled: what a closure that only reacts to
/// cancellation does.
func suspendUntilCancelled() async {
    await Trigger().wait()
}

/// Fires a trigger when deallocated. Owned by (or captured in) an operation, it tells the test,
/// without polling, that the operation has been released.
final class DeinitProbe: Sendable {
    let trigger: Trigger

    init(_ trigger: Trigger) { self.trigger = trigger }

    deinit { trigger.fire() }
}

/// Counts how many closures run at once, and the most that ever did.
final class ConcurrencyMeter: Sendable {
    private let state = Guarded((current: 0, maximum: 0))

    init() {}

    func enter() {
        state.withLock { state in
            state.current += 1
            state.maximum = max(state.maximum, state.current)
        }
    }

    func leave() { state.withLock { $0.current -= 1 } }

    var current: Int { state.withLock { $0.current } }
    var maximum: Int { state.withLock { $0.maximum } }
}

/// The failure type of most steps in these suites: it can express cancellation and carry an
/// upstream's failure, like a well-integrated error type in an operation codebase.
enum StepError: Error, Equatable, CancellationRepresentable, UpstreamFailureRepresentable, CustomStringConvertible {
    case planned(Int)
    case cancelled
    case upstream(UpstreamFailedError)

    static var cancellation: StepError { .cancelled }

    static func upstreamFailed(_ error: UpstreamFailedError) -> StepError { .upstream(error) }

    /// Upstream failures compare by description: `UpstreamFailedError` is not `Equatable`.
    static func == (lhs: StepError, rhs: StepError) -> Bool {
        switch (lhs, rhs) {
        case (.planned(let left), .planned(let right)): left == right
        case (.cancelled, .cancelled): true
        case (.upstream(let left), .upstream(let right)): left.description == right.description
        default: false
        }
    }

    var description: String {
        switch self {
        case .planned(let index): "planned(\(index))"
        case .cancelled: "cancelled"
        case .upstream(let error): "upstream(\(error))"
        }
    }
}

/// A failure type that can express neither cancellation nor an upstream failure.
enum InexpressibleError: Error, Equatable {
    case boom
}

/// A result operation that ends with `planned` when `trigger` fires (at once when there is no
/// trigger), or with its cancellation failure as soon as it is cancelled — even while it is
/// waiting for the trigger. It never leaves work behind: cancel it or fire its trigger.
final class GatedResultOperation<Success: Sendable, Failure: Error>: AsyncResultOperation<Success, Failure>,
    @unchecked Sendable
{
    let planned: Result<Success, Failure>
    let trigger: Trigger?
    /// Fires when `main()` runs.
    let started = Trigger()
    private let runs = Guarded(0)
    private let waiter = Guarded<Task<Void, Never>?>(nil)
    private let releaseProbe: DeinitProbe?

    init(_ planned: Result<Success, Failure>, trigger: Trigger? = nil, releaseProbe: DeinitProbe? = nil) {
        self.planned = planned
        self.trigger = trigger
        self.releaseProbe = releaseProbe
        super.init()
    }

    /// How many times `main()` ran.
    var mainRuns: Int { runs.current }

    override func main() {
        runs.withLock { $0 += 1 }
        started.fire()
        guard let trigger else { return finish(with: planned) }
        let task = Task { [weak self, trigger] in
            let fired = await trigger.wait()
            guard let self else { return }
            if fired && !self.isCancelled {
                self.finish(with: self.planned)
            } else {
                self.finish()
            }
        }
        waiter.set(task)
        // `cancel()` sets the flag before reading `waiter`; this read comes after the store, so
        // one side always sees the other.
        if isCancelled { task.cancel() }
    }

    override func cancel() {
        super.cancel()
        waiter.current?.cancel()
    }
}

/// A `BlockOperation` (a foreign operation for the package) that owns an optional probe, so that
/// tests can tell when it has been released.
final class ProbedBlockOperation: BlockOperation, @unchecked Sendable {
    let releaseProbe: DeinitProbe?

    init(releaseProbe: DeinitProbe? = nil, _ block: @escaping @Sendable () -> Void) {
        self.releaseProbe = releaseProbe
        super.init()
        addExecutionBlock(block)
    }
}

/// A classic ``ChainedAsyncResultOperation`` subclass, as written in operation codebases: adds
/// `increment` to its input and finishes at once.
final class AddingOperation: ChainedAsyncResultOperation<Int, Int, StepError>, @unchecked Sendable {
    let increment: Int
    private let runs = Guarded(0)

    init(adding increment: Int, input: Int? = nil) {
        self.increment = increment
        super.init(input: input)
    }

    var mainRuns: Int { runs.current }

    override func main() {
        runs.withLock { $0 += 1 }
        guard let input else { return finish(with: .failure(.planned(-1))) }
        finish(with: .success(input + increment))
    }
}

extension Result where Success == Int, Failure == StepError {
    /// Whether this is the cancellation failure.
    var isCancellation: Bool {
        if case .failure(.cancelled) = self { return true }
        return false
    }
}

extension AsyncResultOperation {
    /// Whether the finished operation counts as failed for a pipeline: a failure result, or
    /// cancelled without one.
    var endedInFailure: Bool {
        switch result {
        case .success: false
        case .failure: true
        case nil: isCancelled || bridge.upstreamFailure != nil
        }
    }
}

extension AsyncResultOperation where Failure == StepError {
    /// For an operation stopped by an upstream failure: the failure where it started, when that
    /// is a `StepError`. `nil` when the operation ran, was cancelled, or lost the cause.
    var rootCause: StepError? {
        guard !isCancelled, case .failure(.upstream(let error))? = result, bridge.upstreamFailure != nil else {
            return nil
        }
        return error.rootFailure as? StepError
    }
}

/// The two orders of the results sequences, for parameterized tests.
let bothResultOrders: [ResultOrder] = [.completion, .submission]

/// Compile-time check that a value is `Sendable`.
func requireSendable<Value: Sendable>(_: Value) {}

/// Whether `result` is a `CancellationError` failure.
func isCancellationError<Success, Failure: Error>(_ result: Result<Success, Failure>?) -> Bool {
    guard case .failure(let error)? = result else { return false }
    return error is CancellationError
}
