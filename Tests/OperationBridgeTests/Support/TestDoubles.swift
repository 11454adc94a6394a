import Foundation
import Testing

@testable import OperationBridge

/// `withCheckedContinuation`, then what the package does after each of its own continuation
/// waits (`continuationResumed()`): ThreadSanitizer learns that whatever the resumer did before
/// `resume` happens before what the task does next. Without it, a resume that lands before the
/// task reaches its suspension orders nothing for the sanitizer (the Swift runtime records the
/// order only when it enqueues the task again), and a test that then reads what an operation's
/// `main()` wrote is reported as a data race — as CI61 did once. Every continuation the tests
/// wait on goes through this or ``resumeOrderedThrowing(isolation:_:)``.
func resumeOrdered<Value>(
    isolation: isolated (any Actor)? = #isolation,
    _ body: (CheckedContinuation<Value, Never>) -> Void
) async -> Value {
    let value = await withCheckedContinuation(isolation: isolation, body)
    continuationResumed()
    return value
}

/// ``resumeOrdered(isolation:_:)`` for a continuation that may throw.
func resumeOrderedThrowing<Value>(
    isolation: isolated (any Actor)? = #isolation,
    _ body: (CheckedContinuation<Value, any Error>) -> Void
) async throws -> Value {
    defer { continuationResumed() }
    return try await withCheckedThrowingContinuation(isolation: isolation, body)
}

/// A gate a test opens by hand: tasks and threads wait at it until `open()`.
///
/// Safety: state is guarded by `lock`.
final class Gate: @unchecked Sendable {
    private let lock = NSLock()
    private var isOpen = false
    private var waiters: [CheckedContinuation<Void, Never>] = []
    private let condition = NSCondition()

    init() {}

    /// Opens the gate, releasing every waiter, present and future.
    func open() {
        lock.lock()
        isOpen = true
        let waiting = waiters
        waiters = []
        lock.unlock()
        for waiter in waiting { waiter.resume() }
        condition.lock()
        condition.broadcast()
        condition.unlock()
    }

    /// Whether the gate has opened.
    var hasOpened: Bool { lockedIsOpen() }

    /// Suspends the task until the gate opens.
    func wait() async {
        await resumeOrdered { continuation in
            lock.lock()
            if isOpen {
                lock.unlock()
                continuation.resume()
            } else {
                waiters.append(continuation)
                lock.unlock()
            }
        }
    }

    /// Blocks the calling (non-cooperative) thread until the gate opens. For operation bodies
    /// running on a queue's own threads only.
    func blockingWait() {
        condition.lock()
        while !lockedIsOpen() { condition.wait() }
        condition.unlock()
    }

    private func lockedIsOpen() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return isOpen
    }
}

/// A thread-safe box for values recorded by test operations.
final class Recorder<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Value] = []

    init() {}

    func append(_ value: Value) {
        lock.lock()
        values.append(value)
        lock.unlock()
    }

    var all: [Value] {
        lock.lock()
        defer { lock.unlock() }
        return values
    }
}

/// A result operation whose outcome the test decides: it finishes with `result` when `gate`
/// (if any) opens, on a background thread.
final class ControlledOperation<Success: Sendable, Failure: Error>: AsyncResultOperation<Success, Failure>,
    @unchecked Sendable
{
    let outcomeToReport: Result<Success, Failure>
    let gate: Gate?
    let started = Gate()

    init(_ result: Result<Success, Failure>, gate: Gate? = nil) {
        self.outcomeToReport = result
        self.gate = gate
        super.init()
    }

    override func main() {
        started.open()
        guard let gate else { return finish(with: outcomeToReport) }
        Task {
            await gate.wait()
            self.finish(with: self.outcomeToReport)
        }
    }
}

/// A result operation that never finishes on its own: it ends only when cancelled.
final class NeverEndingOperation: AsyncResultOperation<Int, CancellationError>, @unchecked Sendable {
    let started = Gate()

    override func main() {
        started.open()
        // A cancellation that arrived while the operation was starting (before it counted as
        // executing) did not finish it: do it here. One arriving later finishes it in `cancel()`.
        if isCancelled { finish() }
    }

    override func cancel() {
        super.cancel()
        if isExecuting { finish() }
    }
}

/// Weakly references an object, to prove it was released.
struct WeakBox<Object: AnyObject>: @unchecked Sendable {
    weak var object: Object?
    init(_ object: Object) { self.object = object }
}

/// Sizes of the randomized stress tests.
///
/// `OPERATIONBRIDGE_STRESS_SCALE` multiplies every default size (for example `100` for a long
/// local run, `0.2` under ThreadSanitizer, which is about ten times slower), and above 1 every
/// suite's time limit (``timeLimit(minutes:)``).
/// `OPERATIONBRIDGE_STRESS_SEED` replays a run: every stress test prints the seed it used.
enum Stress {
    static var scale: Double {
        ProcessInfo.processInfo.environment["OPERATIONBRIDGE_STRESS_SCALE"].flatMap(Double.init) ?? 1
    }

    /// A suite's time limit: `minutes` at the default scale, and as many times longer as a
    /// ``scale`` above 1 asks. A larger scale makes the stress suites run longer side by side
    /// with every other suite, so a test waiting its turn for a thread of the loaded machine
    /// would otherwise be cut off, and then report what the cancellation did to it.
    static func timeLimit(minutes: Int) -> TimeLimitTrait.Duration {
        .minutes(Int((Double(minutes) * max(1, scale)).rounded(.up)))
    }

    /// `base` scaled by ``scale``, at least 1.
    static func iterations(_ base: Int) -> Int {
        max(1, Int((Double(base) * scale).rounded()))
    }

    /// The seed to use: the environment's, or a fresh random one.
    static func seed() -> UInt64 {
        ProcessInfo.processInfo.environment["OPERATIONBRIDGE_STRESS_SEED"].flatMap(UInt64.init)
            ?? UInt64.random(in: 1...UInt64.max)
    }

    /// A generator seeded with ``seed()``, after printing the seed under `test`'s name so that a
    /// failing run can be replayed.
    static func generator(for test: String) -> SeededGenerator {
        let seed = seed()
        print("\(test): seed \(seed) (replay with OPERATIONBRIDGE_STRESS_SEED=\(seed))")
        return SeededGenerator(seed: seed)
    }

    /// Runs `plans` in `lanes` concurrent tasks, each taking every `lanes`-th plan in order, and
    /// returns when all have run: many rounds at once on fresh queues, to load the machine.
    static func runInLanes<Plan: Sendable>(
        _ plans: [Plan], lanes: Int = 8, _ run: @escaping @Sendable (Plan) async -> Void
    ) async {
        await withTaskGroup(of: Void.self) { group in
            for lane in 0..<lanes {
                let mine = stride(from: lane, to: plans.count, by: lanes).map { plans[$0] }
                group.addTask {
                    for plan in mine { await run(plan) }
                }
            }
        }
    }
}

extension Result {
    /// The failure, if the result is one.
    var failureValue: Failure? {
        guard case .failure(let error) = self else { return nil }
        return error
    }
}

/// A small, fast, seedable generator (SplitMix64), so a failing stress run can be replayed.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
