// Classic subclasses in the Swift 5 language mode that declare — and call — members whose names
// the package must leave free: pause(), resume(), isPaused, isTimedOut, timeout, progress,
// whenFinished(_:), addCondition(_:), conditions, observers, delay(_:), retry(), attempt, events
// and state — declared in the subclasses, inherited from protocol extensions, or added to the
// package's classes by the codebase's own extensions (value, outcome, pendingDiagnostics,
// waitForCompletion()). The package's capabilities are reached through `bridge`, so every call
// below must reach the codebase's own member. Written in the style of the classic operation
// articles: state of their own, no locks beyond what such code had. Exits with 1 when a check fails.
import Foundation
import OperationBridge

var failures = 0
func check(_ condition: Bool, _ message: String) {
    if !condition {
        failures += 1
        print("FAILED: \(message)")
    }
}

/// A resumable download, as every download manager has one.
final class ResumableDownloadOperation: AsyncResultOperation<Data, ResumableDownloadOperation.Error> {
    enum Error: Swift.Error {
        case canceled
        case timedOut
    }

    private(set) var isPaused = false
    private(set) var isTimedOut = false
    var timeout: TimeInterval = 30
    var progress = Progress(totalUnitCount: 100)
    private(set) var state = "idle"
    private(set) var events: [String] = []
    private var finishHandlers: [() -> Void] = []

    func pause() {
        isPaused = true
        state = "paused"
        events.append("pause")
    }

    func resume() {
        isPaused = false
        state = "downloading"
        events.append("resume")
    }

    func whenFinished(_ handler: @escaping () -> Void) {
        finishHandlers.append(handler)
    }

    func expire() {
        isTimedOut = true
        events.append("timeout after \(timeout) s")
    }

    override func main() {
        progress.completedUnitCount = 100
        state = "finished"
        // Before finishing: whoever waits for the finish then sees what the handlers did.
        finishHandlers.forEach { $0() }
        finish(with: .success(Data("payload".utf8)))
    }

    override func cancel() {
        cancel(with: .canceled)
    }
}

/// A result operation as the articles write them.
final class AnswerOperation: AsyncResultOperation<Int, AnswerOperation.Error> {
    enum Error: Swift.Error {
        case canceled
    }

    override func main() {
        finish(with: .success(42))
    }
}

/// A classic "condition" system written before the package, on a plain AsyncOperation.
struct LegacyCondition {
    let name: String
    let evaluate: () -> Bool
}

class ConditionalOperation: AsyncOperation {
    private(set) var conditions: [LegacyCondition] = []
    private(set) var observers: [(String) -> Void] = []
    private(set) var attempt = 0
    private(set) var delay: TimeInterval = 0

    func addCondition(_ condition: LegacyCondition) {
        conditions.append(condition)
    }

    func delay(_ seconds: TimeInterval) {
        delay = seconds
    }

    func retry() {
        attempt += 1
        observers.forEach { $0("retry \(attempt)") }
    }

    func addObserver(_ observer: @escaping (String) -> Void) {
        observers.append(observer)
    }

    override func main() {
        let allHold = conditions.allSatisfy { $0.evaluate() }
        observers.forEach { $0(allHold ? "ran" : "skipped") }
        finish()
    }
}

/// A pause capability a codebase shares between its operations through a protocol extension:
/// the subclass gets `pause()`, `resume()` and `isPaused` from the defaults, not from itself.
/// Any member of the same name on `AsyncOperation` — even an unavailable one — would be chosen
/// to satisfy the requirement and break the conformance.
protocol PausableWork: AnyObject {
    var pauseLog: [String] { get set }
}

extension PausableWork {
    func pause() { pauseLog.append("pause") }
    func resume() { pauseLog.append("resume") }
    var isPaused: Bool { pauseLog.last == "pause" }
}

protocol Pausing: AnyObject {
    func pause()
    func resume()
    var isPaused: Bool { get }
}

final class SyncOperation: AsyncOperation, PausableWork, Pausing {
    var pauseLog: [String] = []

    override func main() {
        finish()
    }
}

/// A codebase's own retroactive helpers on the classes, named like the package's capabilities.
extension AsyncResultOperation {
    var value: Success? { try? result?.get() }
    var outcome: String { result.map { "\($0)" } ?? "pending" }
}

extension Operation {
    var pendingDiagnostics: String { "\(name ?? "unnamed"): ready \(isReady)" }
    func waitForCompletion() { waitUntilFinished() }
}

let queue = OperationQueue()

// The download's own pause/resume/isPaused/isTimedOut/timeout/progress/state/events/whenFinished.
let download = ResumableDownloadOperation()
download.pause()
check(download.isPaused && download.state == "paused", "the subclass's own pause() ran")
download.resume()
check(!download.isPaused && download.state == "downloading", "the subclass's own resume() ran")
download.timeout = 5
download.expire()
check(download.isTimedOut, "the subclass's own isTimedOut")
var handlerRan = false
download.whenFinished { handlerRan = true }
queue.addOperation(download)
queue.waitUntilAllOperationsAreFinished()
check(handlerRan, "the subclass's own whenFinished(_:) ran")
check(download.progress.fractionCompleted == 1, "the subclass's own progress")
check(download.events == ["pause", "resume", "timeout after 5.0 s"], "the subclass's own events: \(download.events)")
check(download.state == "finished", "the subclass's own state")
if case .success(let data)? = download.result {
    check(String(decoding: data, as: UTF8.self) == "payload", "the result")
} else {
    check(false, "the download finished with a result")
}
// The package's members are still there, behind `bridge`, and do not disturb the subclass's own.
check(!download.bridge.isPaused, "the package's isPaused is separate")
check(!download.bridge.isTimedOut, "the package's isTimedOut is separate")

// The legacy condition system: conditions, observers, attempt, delay(_:), retry().
let guarded = ConditionalOperation()
var log: [String] = []
guarded.addCondition(LegacyCondition(name: "online") { true })
guarded.addObserver { log.append($0) }
guarded.delay(0.5)
guarded.retry()
check(guarded.attempt == 1 && guarded.delay == 0.5 && guarded.conditions.count == 1, "the subclass's own members")
queue.addOperation(guarded)
queue.waitUntilAllOperationsAreFinished()
check(log == ["retry 1", "ran"], "the subclass's own observers and conditions: \(log)")

// Paused through the package, alongside the subclass's own pause().
let held = ResumableDownloadOperation()
held.bridge.pause()
check(held.bridge.isPaused && !held.isPaused, "the package's pause() holds back without touching the subclass's")
queue.addOperation(held)
held.bridge.resume()
queue.waitUntilAllOperationsAreFinished()
check(held.isFinished, "resumed through the package, the download ran")

// Members that come from a protocol extension and the codebase's own extensions of the classes.
let sync = SyncOperation()
let pausing: Pausing = sync
pausing.pause()
check(sync.isPaused && pausing.isPaused, "the protocol extension's pause() satisfies the requirement")
sync.resume()
check(
    sync.pauseLog == ["pause", "resume"] && !sync.bridge.isPaused,
    "the protocol extension's members: \(sync.pauseLog)"
)
let answer = AnswerOperation()
answer.name = "answer"
check(answer.value == nil && answer.outcome == "pending", "the codebase's own value and outcome before the run")
check(answer.pendingDiagnostics == "answer: ready true", "the codebase's own pendingDiagnostics")
queue.addOperation(answer)
answer.waitForCompletion()
check(answer.value == 42, "the codebase's own value after the run: \(String(describing: answer.value))")
queue.addOperation(sync)
queue.waitUntilAllOperationsAreFinished()
check(sync.isFinished, "the protocol-paused operation ran")

if failures > 0 {
    print("\(failures) check(s) failed")
    exit(1)
}
print("LegacySubclasses: every subclass member resolved to the subclass")
