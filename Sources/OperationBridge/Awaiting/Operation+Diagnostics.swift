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
    /// The text of ``Bridge/pendingDiagnostics``.
    var diagnosticReport: String {
        var lines = ["\(diagnosticName): \(diagnosticState)", "  queue: \(diagnosticQueue)"]
        if let operation = self as? AsyncOperation, let request = operation.exclusivityRequest {
            lines += ExclusivityCoordinator.shared.describe(request).map { "  \($0)" }
        }
        let unfinished = dependencies.filter { !$0.isFinished }
        if !unfinished.isEmpty {
            let count =
                unfinished.count == 1 ? "1 unfinished dependency" : "\(unfinished.count) unfinished dependencies"
            lines.append("  waits for \(count):")
            for dependency in unfinished {
                lines.append(
                    "  - \(dependency.diagnosticName): \(dependency.diagnosticState); queue: \(dependency.diagnosticQueue)"
                )
            }
        }
        return lines.joined(separator: "\n")
    }

    /// The operation's type and, if it has one, its name.
    var diagnosticName: String {
        "\(type(of: self))" + (name.map { " '\($0)'" } ?? "")
    }

    private var diagnosticState: String {
        if isFinished { return "finished" }
        let cancelled = isCancelled ? "cancelled" : "not cancelled"
        if isExecuting { return "executing, \(cancelled)" }
        if let operation = self as? AsyncOperation, operation.hasStarted {
            return "started, \(cancelled)"
        }
        return "pending (not started), \(cancelled)"
    }

    private var diagnosticQueue: String {
        if let operation = self as? AsyncOperation {
            if let queue = operation.admittedQueue { return queue.diagnosticDescription }
            if operation.mayBeQueuedByOtherCode {
                return "not added to a queue by the package (it may be in a queue you added it to)"
            }
            // The package lets go of the queue once the operation's async work has started.
            if operation.hasStarted {
                return "started (the package follows an operation's queue until its work starts)"
            }
            return "in no queue (it starts only once it is added to a queue or started by hand)"
        }
        if ForeignAdmissions.shared.isClaimed(self) { return "added to a queue by the package" }
        return "not known to the package"
    }
}

extension OperationQueue {
    /// The queue's name, whether it is suspended, and how many of its slots are in use.
    fileprivate var diagnosticDescription: String {
        let listed = operations
        let executing = listed.filter(\.isExecuting).count
        let pending = listed.count - executing - listed.filter(\.isFinished).count
        let width = maxConcurrentOperationCount
        var parts = ["'\(name ?? "?")'"]
        if isSuspended { parts.append("SUSPENDED (nothing starts until isSuspended = false)") }
        if width == OperationQueue.defaultMaxConcurrentOperationCount {
            parts.append("\(executing) executing, no slot limit")
        } else {
            let saturated = executing >= width ? " — SATURATED" : ""
            parts.append("\(executing) of \(width) slots in use\(saturated)")
        }
        parts.append("\(pending) pending")
        return parts.joined(separator: ", ")
    }
}

/// Logs awaits that last longer than `OPERATIONBRIDGE_STUCK_AWAIT_SECONDS` to standard error: an
/// operation's with its ``Bridge/pendingDiagnostics``, a wait for exclusivity keys
/// with the keys, their holders and since when. Off (and free) when the variable is not set.
enum StuckAwaitWatchdog {
    /// The threshold in seconds, read once from the environment; `nil` when unset or not positive.
    static let threshold: Double? = {
        guard let text = ProcessInfo.processInfo.environment["OPERATIONBRIDGE_STUCK_AWAIT_SECONDS"],
            let seconds = Double(text), seconds > 0
        else { return nil }
        return seconds
    }()

    /// Starts watching an await of `operation`: a ``DeadlineTimer`` to cancel when the await
    /// ends, or `nil` when the watchdog is off.
    static func watch(_ operation: Operation) -> DeadlineTimer? {
        guard let threshold else { return nil }
        let clock = ContinuousClock()
        return DeadlineTimer.schedule(at: clock.now + .seconds(threshold), on: clock) { [weak operation] in
            guard let operation else { return }
            let text =
                "OperationBridge: an await has been waiting for more than \(threshold) s "
                + "(OPERATIONBRIDGE_STUCK_AWAIT_SECONDS):\n\(operation.diagnosticReport)\n"
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
