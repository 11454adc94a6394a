import Foundation
import OperationBridge

// Doubles for the randomized reliability suite: operations of every kind that check, when their
// work starts, that every dependency has finished.

/// Everything a reliability run observes, thread-safe.
///
/// Safety: all state is guarded by `lock`.
final class StressLedger: @unchecked Sendable {
    private let lock = NSLock()
    private var violations: [String] = []
    private var bodiesRun = 0
    private var answers: [Int: Int] = [:]

    /// Called when an operation's work starts: every dependency must have finished.
    func workStarted(_ operation: Operation, name: String) {
        let early = operation.dependencies.filter { !$0.isFinished }
        lock.lock()
        bodiesRun += 1
        if !early.isEmpty {
            violations.append("\(name) started before \(early.count) of its dependencies finished")
        }
        lock.unlock()
    }

    /// Records that awaiter `id` was answered.
    func answered(_ id: Int) {
        lock.lock()
        answers[id, default: 0] += 1
        lock.unlock()
    }

    func violation(_ text: String) {
        lock.lock()
        violations.append(text)
        lock.unlock()
    }

    // MARK: Releases

    /// Counts the operations of the run that have been released (see ``makeProbe()``).
    let releases: CountdownSignal

    /// - Parameter operations: How many operations the run creates; each carries one probe.
    init(operations: Int) {
        releases = CountdownSignal(operations)
    }

    /// A probe to store in (or capture by) an operation: it arrives at ``releases`` when the
    /// operation — and every closure or task holding the probe — has gone away.
    func makeProbe() -> ReleaseProbe {
        ReleaseProbe { [releases] in releases.arrive() }
    }

    var snapshot: (violations: [String], bodiesRun: Int, answers: [Int: Int]) {
        lock.lock()
        defer { lock.unlock() }
        return (violations, bodiesRun, answers)
    }
}

enum StressError: Error, CancellationRepresentable, UpstreamFailureRepresentable, Equatable {
    case planned(Int)
    case cancelled
    case upstream(String)

    static var cancellation: StressError { .cancelled }
    static func upstreamFailed(_ error: UpstreamFailedError) -> StressError { .upstream(error.description) }
}

/// A classic callback-style result operation that succeeds or fails as planned, finishing on
/// another thread.
final class StressResultOperation: AsyncResultOperation<Int, StressError>, @unchecked Sendable {
    let planned: Result<Int, StressError>
    let ledger: StressLedger
    let token: ReleaseProbe

    init(_ planned: Result<Int, StressError>, ledger: StressLedger) {
        self.planned = planned
        self.ledger = ledger
        self.token = ledger.makeProbe()
    }

    override func main() {
        ledger.workStarted(self, name: "result operation")
        DispatchQueue.global().async { [self] in
            if isCancelled { return finish(with: .failure(.cancelled)) }
            finish(with: planned)
        }
    }
}

/// A classic chained operation that adds one to its input.
final class StressChainedOperation: ChainedAsyncResultOperation<Int, Int, StressError>, @unchecked Sendable {
    let ledger: StressLedger
    let token: ReleaseProbe

    init(ledger: StressLedger) {
        self.ledger = ledger
        self.token = ledger.makeProbe()
        super.init(input: nil)
    }

    override func main() {
        ledger.workStarted(self, name: "chained operation")
        guard let input else { return finish(with: .failure(.upstream("no input"))) }
        finish(with: .success(input + 1))
    }
}

/// A plain `AsyncOperation` with no result.
final class StressPlainOperation: AsyncOperation, @unchecked Sendable {
    let ledger: StressLedger
    let token: ReleaseProbe

    init(ledger: StressLedger) {
        self.ledger = ledger
        self.token = ledger.makeProbe()
    }

    override func main() {
        ledger.workStarted(self, name: "plain async operation")
        DispatchQueue.global().async { self.finish() }
    }
}

/// A hand-written, foreign asynchronous operation in the classic KVO style.
final class StressForeignOperation: Operation, @unchecked Sendable {
    private let lock = NSLock()
    private var executing = false
    private var finished = false
    let ledger: StressLedger
    let token: ReleaseProbe

    init(ledger: StressLedger) {
        self.ledger = ledger
        self.token = ledger.makeProbe()
    }

    override var isAsynchronous: Bool { true }
    override var isExecuting: Bool { lock.withLock { executing } }
    override var isFinished: Bool { lock.withLock { finished } }

    override func start() {
        if isCancelled { return markFinished(wasExecuting: false) }
        willChangeValue(forKey: "isExecuting")
        lock.withLock { executing = true }
        didChangeValue(forKey: "isExecuting")
        ledger.workStarted(self, name: "foreign operation")
        DispatchQueue.global().async { self.markFinished(wasExecuting: true) }
    }

    private func markFinished(wasExecuting: Bool) {
        if wasExecuting { willChangeValue(forKey: "isExecuting") }
        willChangeValue(forKey: "isFinished")
        lock.withLock {
            executing = false
            finished = true
        }
        if wasExecuting { didChangeValue(forKey: "isExecuting") }
        didChangeValue(forKey: "isFinished")
    }
}
