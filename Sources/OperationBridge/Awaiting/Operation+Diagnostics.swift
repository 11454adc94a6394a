import Foundation

extension Bridge {
    /// A description of why the operation has not finished: its state, what the package knows of
    /// its queue (suspended? every slot in use?), and its unfinished dependencies with theirs.
    ///
    /// An operation that waits for its exclusivity keys (``OperationCondition/mutuallyExclusive(_:)``)
    /// says, for each key, who holds it and since when, and how many wait ahead of it; one that
    /// holds keys says which, and since when.
    ///
    /// Use it when an await seems stuck — or let the package print it for you: with the
    /// environment variable `OPERATIONBRIDGE_STUCK_AWAIT_SECONDS=<seconds>` set, every await of the
    /// package that lasts longer than that writes this description to standard error.
    ///
    /// ```swift
    /// print(download.bridge.pendingDiagnostics)
    /// // FetchOperation 'avatar': pending (not started), not cancelled
    /// //   queue: not added to a queue by the package (it may be in a queue you added it to)
    /// //   waits for 1 unfinished dependency:
    /// //   - BlockOperation 'login': pending (not started), not cancelled; queue: not known to the package
    /// ```
    ///
    /// Thread-safe; it reads the operations and queues at the moment it is called. Knowledge of
    /// queues is what the package has: the queue it added an operation to, or found it in, until
    /// the operation's async work starts (a running `TaskOperation` reports only that it started).
    public var pendingDiagnostics: String { base.diagnosticReport }
}

extension Operation {
    /// The text of ``Bridge/pendingDiagnostics``, written from the operation's ``WaitFacts``.
    var diagnosticReport: String {
        let facts = WaitFacts(self)
        var lines = ["\(diagnosticName): \(facts.stateText)", "  queue: \(facts.placement.text)"]
        lines += facts.holdLines.map { "  \($0)" }
        lines += facts.exclusivity?.lines(now: .now).map { "  \($0)" } ?? []
        let unfinished = facts.unfinishedDependencies
        if !unfinished.isEmpty {
            let count =
                unfinished.count == 1 ? "1 unfinished dependency" : "\(unfinished.count) unfinished dependencies"
            lines.append("  waits for \(count):")
            for dependency in unfinished {
                let dependencyFacts = WaitFacts(dependency)
                lines.append(
                    "  - \(dependency.diagnosticName): \(dependencyFacts.stateText); queue: \(dependencyFacts.placement.text)"
                )
            }
        }
        return lines.joined(separator: "\n")
    }

    /// The operation's type and, if it has one, its name.
    var diagnosticName: String {
        "\(type(of: self))" + (name.map { " '\($0)'" } ?? "")
    }
}

/// What the package knows, at one moment, of an operation and of what it waits for: its state,
/// its queue, its unfinished dependencies, and — for the package's operations — the pause, delay,
/// conditions and exclusivity keys that hold it back. Gathered once per operation, and written out
/// both as ``Bridge/pendingDiagnostics`` and as a ``WaitGraph``.
///
/// Each part is read under the lock that guards it, one after the other: the facts are a
/// snapshot of each part, not of the whole (an operation may move on while they are read).
struct WaitFacts {
    /// How far the operation has got.
    enum Phase {
        case pending
        /// A package operation that has started and is not executing (it is finishing).
        case started
        case executing
        case finished
    }

    let phase: Phase
    let isCancelled: Bool
    let placement: QueuePlacement
    /// Its dependencies that have not finished, in the order of `dependencies`.
    let unfinishedDependencies: [Operation]
    /// What holds it back from becoming ready (nothing for operations that are not the package's).
    let holds: ReadinessHolds
    /// The exclusivity keys it waits for or holds.
    let exclusivity: ExclusivityStatus?

    /// Gathers the facts of `operation`; `placement` overrides where the package thinks it is (a
    /// queue that lists it, a pipeline that holds it).
    init(_ operation: Operation, placement: QueuePlacement? = nil) {
        let finished = operation.isFinished
        let executing = !finished && operation.isExecuting
        let package = operation as? AsyncOperation
        if finished {
            phase = .finished
        } else if executing {
            phase = .executing
        } else if package?.hasStarted == true {
            phase = .started
        } else {
            phase = .pending
        }
        isCancelled = operation.isCancelled
        self.placement = placement ?? QueuePlacement(of: operation)
        unfinishedDependencies = finished ? [] : operation.dependencies.filter { !$0.isFinished }
        holds = package?.readinessHolds ?? ReadinessHolds()
        exclusivity = holds.request.flatMap(ExclusivityCoordinator.shared.status(of:))
    }

    /// "pending (not started), not cancelled".
    var stateText: String {
        if phase == .finished { return "finished" }
        let cancelled = isCancelled ? "cancelled" : "not cancelled"
        switch phase {
        case .executing: return "executing, \(cancelled)"
        case .started: return "started, \(cancelled)"
        case .pending, .finished: return "pending (not started), \(cancelled)"
        }
    }

    /// The pause, delay and conditions that hold a pending operation back, one line each.
    var holdLines: [String] {
        guard phase == .pending else { return [] }
        var lines: [String] = []
        if holds.isPaused { lines.append("paused: it becomes ready only after bridge.resume()") }
        if holds.isDelayed { lines.append("delayed: it becomes ready once its delayed start has passed") }
        if !holds.conditions.isEmpty {
            let names = holds.conditions.map { "'\($0)'" }.joined(separator: ", ")
            if holds.isChecking {
                lines.append("its conditions are being checked: \(names)")
            } else if holds.request == nil {
                lines.append("conditions, checked once its dependencies have finished: \(names)")
            }
        }
        return lines
    }
}

/// Where an operation is, as far as the package knows.
enum QueuePlacement {
    /// In this queue: the package added it there, or found it in the queue's list.
    case queue(OperationQueue)
    /// One of the package's: the package did not add it to a queue, but something asked whether
    /// it is ready (queues ask when an operation is added to them).
    case perhapsQueuedByOtherCode
    /// One of the package's whose async work has started: its queue is not followed any more.
    case startedUnfollowed
    /// One of the package's, in no queue.
    case nowhere
    /// Not the package's: the package added it to a queue and has not seen it finish.
    case addedByThePackage
    /// Not the package's, and not known to it.
    case unknown
    /// A step of a ``Pipeline`` that the pipeline has not handed to its queue yet: it does once
    /// the pipeline has started (`started`) and the step's dependencies in it have finished.
    case heldByPipeline(started: Bool)

    /// What the package knows of the queue of `operation`.
    init(of operation: Operation) {
        if let operation = operation as? AsyncOperation {
            if let queue = operation.admittedQueue {
                self = .queue(queue)
            } else if operation.mayBeQueuedByOtherCode {
                self = .perhapsQueuedByOtherCode
            } else if operation.hasStarted {
                // The package lets go of the queue once the operation's async work has started.
                self = .startedUnfollowed
            } else {
                self = .nowhere
            }
        } else {
            self = ForeignAdmissions.shared.isClaimed(operation) ? .addedByThePackage : .unknown
        }
    }

    /// The queue line of ``Bridge/pendingDiagnostics``.
    var text: String {
        switch self {
        case .queue(let queue): QueueFacts(queue).description
        case .perhapsQueuedByOtherCode: "not added to a queue by the package (it may be in a queue you added it to)"
        case .startedUnfollowed: "started (the package follows an operation's queue until its work starts)"
        case .nowhere: "in no queue (it starts only once it is added to a queue or started by hand)"
        case .addedByThePackage: "added to a queue by the package"
        case .unknown: "not known to the package"
        case .heldByPipeline(let started):
            started
                ? "held by its pipeline until its dependencies in the pipeline have finished"
                : "held by its pipeline, which has not started"
        }
    }
}

/// What a queue looks like at one moment: its name, whether it is suspended, its width, and the
/// operations that hold its slots.
struct QueueFacts {
    let queue: OperationQueue
    let isSuspended: Bool
    /// `maxConcurrentOperationCount`, or `nil` when the queue has no limit.
    let width: Int?
    /// The listed operations that are executing, in the queue's order.
    let executing: [Operation]
    /// How many listed operations have neither started nor finished.
    let pendingCount: Int
    /// The operations the queue lists.
    let listed: Set<ObjectIdentifier>

    init(_ queue: OperationQueue) {
        self.queue = queue
        let listed = queue.operations
        self.listed = Set(listed.lazy.map(ObjectIdentifier.init))
        var executing: [Operation] = []
        var finished = 0
        for operation in listed {
            if operation.isFinished {
                finished += 1
            } else if operation.isExecuting {
                executing.append(operation)
            }
        }
        self.executing = executing
        pendingCount = listed.count - executing.count - finished
        isSuspended = queue.isSuspended
        let width = queue.maxConcurrentOperationCount
        self.width = width == OperationQueue.defaultMaxConcurrentOperationCount ? nil : width
    }

    /// Every slot is in use: nothing more starts until one is free.
    var isSaturated: Bool { width.map { executing.count >= $0 } ?? false }

    /// "'name'", or "'?'" for a queue without a name.
    var quotedName: String { "'\(queue.name ?? "?")'" }

    /// The parts of the description after the name: suspended, slots, pending.
    var parts: [String] {
        var parts: [String] = []
        if isSuspended { parts.append("SUSPENDED (nothing starts until isSuspended = false)") }
        if let width {
            let saturated = isSaturated ? " — SATURATED" : ""
            parts.append("\(executing.count) of \(width) slots in use\(saturated)")
        } else {
            parts.append("\(executing.count) executing, no slot limit")
        }
        parts.append("\(pendingCount) pending")
        return parts
    }

    /// The queue's name, whether it is suspended, and how many of its slots are in use.
    var description: String { ([quotedName] + parts).joined(separator: ", ") }
}

/// Logs awaits that last longer than `OPERATIONBRIDGE_STUCK_AWAIT_SECONDS` to standard error: an
/// operation's with its ``Bridge/pendingDiagnostics`` and the ``WaitGraph`` of its queue when the
/// package knows the queue (otherwise the operation's own ``Bridge/waitGraph``), a pipeline's and
/// a queue drain's with their ``WaitGraph``, a wait for exclusivity keys with the keys, their
/// holders and since when. Off (and free) when the variable is not set.
enum StuckAwaitWatchdog {
    /// The threshold in seconds, read once from the environment; `nil` when unset or not positive.
    static let threshold: Double? = {
        guard let text = ProcessInfo.processInfo.environment["OPERATIONBRIDGE_STUCK_AWAIT_SECONDS"],
            let seconds = Double(text), seconds > 0
        else { return nil }
        return seconds
    }()

    /// Starts watching an await of `operation`, pending in `queue` when the caller knows it
    /// (otherwise in the queue the package added it to, if any): a ``DeadlineTimer`` to cancel
    /// when the await ends, or `nil` when the watchdog is off. The queue is held weakly.
    static func watch(_ operation: Operation, in queue: OperationQueue? = nil) -> DeadlineTimer? {
        guard threshold != nil else { return nil }
        let queue = WeakQueue(object: queue ?? (operation as? AsyncOperation)?.admittedQueue)
        return watch(what: "an await") { [weak operation] in
            guard let operation, !operation.isFinished else { return nil }
            // The queue's graph when the queue is known; otherwise what the operation waits for.
            let graph = queue.object?.waitGraph ?? WaitGraph(operation: operation)
            return operation.diagnosticReport + "\n" + graph.text + "\n"
        }
    }

    /// Starts watching a drain of `queue` (``Foundation/OperationQueue/waitForAllOperations()``):
    /// a ``DeadlineTimer`` to cancel when it ends, or `nil` when the watchdog is off.
    static func watchDrain(of queue: OperationQueue) -> DeadlineTimer? {
        guard threshold != nil else { return nil }
        let queue = WeakQueue(object: queue)
        return watch(what: "a wait for all operations of a queue") { queue.object.map { $0.waitGraph.text + "\n" } }
    }

    /// Starts watching an await of `pipeline`: a ``DeadlineTimer`` to cancel when the await
    /// ends, or `nil` when the watchdog is off.
    static func watch(_ pipeline: Pipeline) -> DeadlineTimer? {
        guard threshold != nil else { return nil }
        return watch(what: "an await of a pipeline") { [weak pipeline] in pipeline.map { $0.waitGraph.text + "\n" } }
    }

    /// Writes what `report` returns — unless `nil`: nothing to report any more — once the
    /// threshold has passed.
    private static func watch(what: String, report: @escaping @Sendable () -> String?) -> DeadlineTimer? {
        guard let threshold else { return nil }
        let clock = ContinuousClock()
        return DeadlineTimer.schedule(at: clock.now + .seconds(threshold), on: clock) {
            guard let report = report() else { return }
            let text =
                "OperationBridge: \(what) has been waiting for more than \(threshold) s "
                + "(OPERATIONBRIDGE_STUCK_AWAIT_SECONDS):\n\(report)"
            FileHandle.standardError.write(Data(text.utf8))
        }
    }

    /// Starts watching a task's wait for the keys of `request`
    /// (``withExclusiveAccess(to:isolation:fileID:line:_:)-(ExclusivityKey...,_,_,_,_)``): a
    /// ``DeadlineTimer`` to cancel when the wait ends, or `nil` when the watchdog is off.
    static func watch(_ request: ExclusivityRequest) -> DeadlineTimer? {
        guard let threshold else { return nil }
        let clock = ContinuousClock()
        return DeadlineTimer.schedule(at: clock.now + .seconds(threshold), on: clock) {
            let lines = ExclusivityCoordinator.shared.describe(request, onlyIfWaiting: true)
            guard !lines.isEmpty else { return }  // granted or withdrawn meanwhile
            let text =
                "OperationBridge: a wait for exclusivity has been waiting for more than \(threshold) s "
                + "(OPERATIONBRIDGE_STUCK_AWAIT_SECONDS):\n\(request.holder)\n"
                + lines.map { "  \($0)\n" }.joined()
            FileHandle.standardError.write(Data(text.utf8))
        }
    }
}

/// A weak reference to a queue, for a report that must not keep it alive.
///
/// Safety: a weak reference is read and written atomically by the runtime; it never changes.
private struct WeakQueue: @unchecked Sendable {
    weak var object: OperationQueue?
}
