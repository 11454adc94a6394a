// FlakyService: a quote service that fails now and then, and hangs now and then, handled with
// retries, time limits and a delayed start. Every line printed is deterministic: the service
// follows a script, and a hanging call ends only when it is cancelled.
import Foundation
import OperationBridge

/// What the quote service can fail with. It can say "cancelled" and "timed out", so awaits and
/// retries report them in the service's own type.
enum QuoteError: Error, TimeoutRepresentable, CustomStringConvertible {
    case unavailable
    case unknownSymbol(String)
    case cancelled
    case timedOut

    static var cancellation: QuoteError { .cancelled }
    static var timeout: QuoteError { .timedOut }

    /// Worth another attempt.
    var isTransient: Bool {
        switch self {
        case .unavailable, .timedOut: true
        case .unknownSymbol, .cancelled: false
        }
    }

    var description: String {
        switch self {
        case .unavailable: "unavailable"
        case .unknownSymbol(let symbol): "unknown symbol \(symbol)"
        case .cancelled: "cancelled"
        case .timedOut: "timed out"
        }
    }
}

/// A simulated service that answers calls as its script says: fail, hang (until the caller
/// gives up), or quote a price.
final class QuoteService: Sendable {
    enum Answer: Sendable {
        case fail(QuoteError)
        case hang
        case price(Double)
    }

    private let script: [Answer]
    private let calls = Counter()

    init(_ script: [Answer]) {
        self.script = script
    }

    /// The callback API of the legacy code: `completion` is called on another thread.
    func quote(_ symbol: String, completion: @escaping @Sendable (Result<Double, QuoteError>) -> Void) {
        let answer = script[min(calls.next(), script.count - 1)]
        switch answer {
        case .fail(let error): DispatchQueue.global().async { completion(.failure(error)) }
        case .price(let price): DispatchQueue.global().async { completion(.success(price)) }
        case .hang: break  // never answers
        }
    }

    /// The async API of the newer code: a hanging call ends when its task is cancelled.
    func quote(_ symbol: String) async throws(QuoteError) -> Double {
        let answer = script[min(calls.next(), script.count - 1)]
        switch answer {
        case .fail(let error):
            throw error
        case .price(let price):
            return price
        case .hang:
            try? await Task.sleep(for: .seconds(3600))
            throw .cancelled
        }
    }
}

/// A thread-safe call counter.
final class Counter: @unchecked Sendable {
    // Safety: `value` is only touched while holding `lock`.
    private let lock = NSLock()
    private var value = 0

    /// The number of this call, from 0.
    func next() -> Int {
        lock.lock()
        defer {
            value += 1
            lock.unlock()
        }
        return value
    }
}

/// A classic operation from the legacy code base: one call to the service. Like much legacy
/// code, it ignores cancellation: it ends when the service answers.
final class QuoteOperation: AsyncResultOperation<Double, QuoteError>, @unchecked Sendable {
    let symbol: String
    let service: QuoteService

    init(symbol: String, service: QuoteService) {
        self.symbol = symbol
        self.service = service
    }

    override func main() {
        service.quote(symbol) { [self] result in finish(with: result) }
    }
}

/// Prints a retrying operation's attempts and its outcome.
func report(_ retrying: RetryingOperation<Double, QuoteError>) {
    for (number, failure) in retrying.failedAttempts.enumerated() {
        switch failure {
        case .failed(let error): print("  attempt \(number + 1) failed: \(error)")
        default: print("  attempt \(number + 1) failed: \(failure)")
        }
    }
    switch retrying.result {
    case .success(let price)?: print("  → \(price) after \(retrying.attemptCount) attempt(s)")
    case .failure(let error)?: print("  → failed after \(retrying.attemptCount) attempt(s): \(error)")
    case nil: print("  → no result")
    }
}

let queue = OperationQueue()
queue.maxConcurrentOperationCount = 2

print("1. A classic operation, retried with an exponential, jittered backoff")
let flaky = QuoteService([.fail(.unavailable), .fail(.unavailable), .price(101.5)])
let retried = RetryingOperation(
    maxAttempts: 4,
    backoff: .exponential(initial: .milliseconds(10), maximum: .milliseconds(100)).jittered(seed: 7),
    retryingWhen: { $0.isTransient }
) { _ in
    QuoteOperation(symbol: "ACME", service: flaky)  // a fresh operation per attempt
}
_ = try? await queue.run(retried)
report(retried)

print("2. A permanent error is not retried")
let unknown = QuoteService([.fail(.unknownSymbol("ACMEE")), .price(1)])
let notRetried = RetryingOperation(maxAttempts: 4, retryingWhen: { $0.isTransient }) { _ in
    QuoteOperation(symbol: "ACMEE", service: unknown)
}
do {
    _ = try await queue.run(notRetried)
} catch {
    print("  caught \(error)")  // the typed QuoteError of the last attempt
}
report(notRetried)

print("3. An async call that hangs, bounded per attempt and retried")
let hanging = QuoteService([.hang, .hang, .price(99.25)])
let bounded = RetryingOperation(
    maxAttempts: 3, backoff: .constant(.milliseconds(5)), attemptTimeLimit: .milliseconds(100),
    retryingWhen: { $0.isTransient }
) { (_: Int) async throws(QuoteError) -> Double in
    try await hanging.quote("ACME")
}
_ = try? await queue.run(bounded)
report(bounded)

print("4. A legacy operation that ignores cancellation, awaited with a time limit")
let stuck = QuoteService([.hang])
let stuckOperation = QuoteOperation(symbol: "ACME", service: stuck)
do {
    _ = try await queue.run(stuckOperation, within: .timeout(.milliseconds(100)))  // .cancelAndReturn
} catch .timedOut {
    print("  no quote within 100 ms: the await returned; timed out: \(stuckOperation.bridge.isTimedOut)")
} catch {
    print("  failed: \(error)")
}
print("  the operation still holds its slot (it ignores cancellation): running \(stuckOperation.isExecuting)")
stuckOperation.finish(with: .success(1))  // what the service would do when it finally answers
print("  its late answer is dropped; its result stays \(stuckOperation.result.map { "\($0)" } ?? "none")")

print("5. A refresh that starts after a delay, without a thread or a queue slot while it waits")
let refresh = queue.addTask(after: .milliseconds(50)) { () async throws(QuoteError) -> Double in
    try await QuoteService([.price(100)]).quote("ACME")
}
print("  waiting: ready \(refresh.isReady), running \(refresh.isExecuting)")
print("  refreshed: \(try await refresh.bridge.value)")
let abandoned = queue.addTask(after: .seconds(3600)) { () async throws(QuoteError) -> Double in 0 }
abandoned.cancel()  // ends the wait at once
try await abandoned.bridge.waitForCompletion()
print("  a cancelled delayed refresh finished without running: \(abandoned.result.map { "\($0)" } ?? "none")")
