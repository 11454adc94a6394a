import Foundation

/// Something that must hold before an operation runs, checked after its dependencies have
/// finished and before `main()`: a predicate (synchronous or `async`), or exclusive access to a
/// key.
///
/// ```swift
/// let upload = UploadOperation(file)                       // a classic AsyncOperation subclass
/// upload.bridge.addCondition(.noFailedDependencies)
/// upload.bridge.addCondition(OperationCondition("signed in") { _ in await session.isSignedIn })
/// upload.bridge.addCondition(.mutuallyExclusive("network"))
/// upload.addDependency(compress)
/// queue.addOperation(upload)
/// ```
///
/// Attach conditions with ``Bridge/addCondition(_:)``. A condition that fails — its predicate
/// returns `false`, or its check throws (``init(_:evaluate:)``) — finishes the operation without
/// running it, with a ``ConditionFailedError`` naming the condition and carrying the reason (see
/// ``Bridge/conditionFailure``). A failed condition is not a cancellation.
///
/// Conditions compose: ``negated(_:)``, ``all(_:)``, ``any(_:)``, and ``silent(_:)`` — which skips
/// the operation, cancelled rather than failed, when its condition fails. A condition can run an
/// operation before it is checked (``producingDependency(_:)``, a login before "signed in").
///
/// ## Cancellation and threading
/// Predicates run on a task of their own, one after another in the order added, never on a
/// queue's thread; the operation is not ready meanwhile, so it takes no queue slot. Cancelling the
/// operation cancels that task. A predicate may run on any thread, at most once per operation.
public struct OperationCondition: Sendable {
    enum Kind {
        /// Checks the condition for the operation.
        case predicate(@Sendable (AsyncOperation) async -> Verdict)
        /// Holds the key while the operation runs.
        case exclusive(ExclusivityKey)
    }

    /// The condition's name, as failures report it.
    public let name: String
    let kind: Kind

    /// A condition that holds when `isSatisfied` returns `true` for the operation.
    ///
    /// - Parameters:
    ///   - name: What the condition checks, for the failure it reports ("signed in").
    ///   - isSatisfied: Called with the operation once its dependencies have finished, on a task
    ///     of its own; it may suspend. A synchronous closure works too.
    public init(_ name: String, isSatisfied: @escaping @Sendable (Operation) async -> Bool) {
        self.name = name
        self.kind = .predicate { operation in
            await isSatisfied(operation) ? .holds : .fails(ConditionFailedError(condition: name, operation: operation))
        }
    }

    /// A condition that holds when `evaluate` returns, and fails when it throws: the error is the
    /// reason, carried by the ``ConditionFailedError`` as its ``ConditionFailedError/underlyingError``.
    ///
    /// ```swift
    /// upload.bridge.addCondition(
    ///     OperationCondition("signed in") { _ throws(SessionError) in
    ///         try await session.requireSignedIn()   // throws SessionError.expired
    ///     })
    /// // later: upload.bridge.conditionFailure?.underlyingError as? SessionError == .expired
    /// ```
    ///
    /// For checks that can say why they fail, as ProcedureKit's conditions can. A thrown
    /// `CancellationError` is a reason like any other: the condition fails, and the operation is
    /// not cancelled — unless it was cancelled itself, which stops the check (the operation then
    /// ends cancelled, whatever `evaluate` throws).
    ///
    /// - Parameters:
    ///   - name: What the condition checks, for the failure it reports ("signed in").
    ///   - evaluate: Called with the operation once its dependencies have finished, on a task of
    ///     its own; it may suspend. A synchronous closure works too.
    public init<Failure: Error>(
        _ name: String,
        evaluate: @escaping @Sendable (Operation) async throws(Failure) -> Void
    ) {
        self.name = name
        self.kind = .predicate { operation in
            do throws(Failure) {
                try await evaluate(operation)
                return .holds
            } catch {
                return .fails(ConditionFailedError(condition: name, operation: operation, underlyingError: error))
            }
        }
    }

    init(name: String, kind: Kind) {
        self.name = name
        self.kind = kind
    }

    /// Holds when none of the operation's dependencies failed: a failure result, cancelled, or
    /// stopped by a failure of its own upstream or condition.
    ///
    /// The classic precondition of dependent work: `addDependency(_:)` alone runs the operation
    /// whatever its dependencies' outcome. The failure names the first failed dependency. A
    /// cancelled dependency fails it too; ``noFailedDependencies(cancelledDependencies:)`` chooses
    /// otherwise.
    public static var noFailedDependencies: OperationCondition {
        noFailedDependencies(cancelledDependencies: .fail)
    }

    /// What ``OperationCondition/noFailedDependencies(cancelledDependencies:)`` makes of a
    /// dependency that was cancelled (rather than failed).
    ///
    /// A cancelled dependency is one whose `isCancelled` is `true` and that did not time out (a
    /// timeout is a failure, see ``Bridge/isTimedOut``); a package operation stopped by its own
    /// upstream or condition is not cancelled, and counts as failed.
    public enum CancelledDependencies: Sendable, Hashable {
        /// A cancelled dependency fails the condition, as a failed one does
        /// (``OperationCondition/noFailedDependencies``).
        case fail
        /// A cancelled dependency skips the operation without failing it, as
        /// ``OperationCondition/silent(_:)`` does: the operation is cancelled
        /// (``Bridge/silencedConditionFailure`` says why). ProcedureKit's
        /// `NoFailedDependenciesCondition(ignoreCancellations: true)`.
        case skip
        /// A cancelled dependency is not a failure: the operation runs, unless another
        /// dependency failed.
        case ignore
    }

    /// Holds when none of the operation's dependencies failed; what a *cancelled* dependency does
    /// is `cancelledDependencies`.
    ///
    /// ```swift
    /// let report = ReportOperation()
    /// report.addDependency(download)  // the user may cancel the download
    /// report.bridge.addCondition(.noFailedDependencies(cancelledDependencies: .skip))
    /// ```
    ///
    /// Failed dependencies are looked at first: with a failed and a cancelled dependency, the
    /// condition fails whatever `cancelledDependencies` says, naming the failed one.
    ///
    /// ## Cancellation and threading
    /// Checked once the dependencies have finished, on the task that checks the operation's
    /// conditions; it reads each dependency's outcome (thread-safe).
    ///
    /// - Parameter cancelledDependencies: ``CancelledDependencies/fail`` (as
    ///   ``noFailedDependencies``), ``CancelledDependencies/skip`` or
    ///   ``CancelledDependencies/ignore``.
    public static func noFailedDependencies(cancelledDependencies: CancelledDependencies) -> OperationCondition {
        let name = "no failed dependencies"
        return OperationCondition(
            name: name,
            kind: .predicate { operation in
                let finished = operation.dependencies.filter(\.stepFailed)
                let failed = cancelledDependencies == .fail ? finished : finished.filter { !$0.isPlainCancellation }
                if let failed = failed.first {
                    let failedName = failed.name.map { " '\($0)'" } ?? ""
                    return .fails(
                        ConditionFailedError(
                            condition: name, operation: operation,
                            reason: "dependency \(type(of: failed))\(failedName) failed: \(failed.failureReason)"))
                }
                guard cancelledDependencies == .skip, let cancelled = finished.first else { return .holds }
                let cancelledName = cancelled.name.map { " '\($0)'" } ?? ""
                return .silenced(
                    ConditionFailedError(
                        condition: name, operation: operation,
                        reason: "dependency \(type(of: cancelled))\(cancelledName) was cancelled"))
            })
    }

    /// Holds `key` while the operation runs: no other holder of `key` — operation or task (see
    /// ``withExclusiveAccess(to:isolation:fileID:line:_:)-(ExclusivityKey...,_,_,_,_)``) — runs at the same time.
    ///
    /// The key is asked for once the dependencies and the other conditions have passed — when the
    /// operation is about to run, not when it is queued — and released when it finishes. Waiting
    /// for it takes no queue slot (the operation is not ready), so no queue width can deadlock;
    /// holders take turns in the order they asked. Several keys on one operation are taken
    /// together, never some of them.
    public static func mutuallyExclusive(_ key: ExclusivityKey) -> OperationCondition {
        OperationCondition(name: "mutually exclusive (\(key))", kind: .exclusive(key))
    }

    /// Checks the condition for `operation`.
    func check(_ operation: AsyncOperation) async -> Verdict {
        guard case .predicate(let predicate) = kind else { return .holds }
        return await predicate(operation)
    }

    /// What checking a condition found.
    enum Verdict: Sendable {
        /// The condition holds.
        case holds
        /// The condition failed: the operation finishes without running, failed
        /// (``Bridge/conditionFailure``).
        case fails(ConditionFailedError)
        /// The condition failed silently (``OperationCondition/silent(_:)``): the operation is
        /// cancelled, not failed (``Bridge/silencedConditionFailure``).
        case silenced(ConditionFailedError)
    }
}

extension Operation {
    /// Whether the finished operation was cancelled, as opposed to failed: `isCancelled`, and —
    /// for the package's operations — not timed out (a package operation stopped by an upstream
    /// or a condition is not cancelled).
    var isPlainCancellation: Bool {
        guard isCancelled else { return false }
        guard let operation = self as? AsyncOperation else { return true }
        return !operation.bridge.isTimedOut
    }
}

extension Bridge where Base: AsyncOperation {
    /// Attaches `condition`: the operation runs only once it holds, checked after the
    /// dependencies have finished and before ``AsyncOperation/main()``.
    ///
    /// A failed condition — a predicate that returned `false`, or a check that threw (its error is
    /// ``ConditionFailedError/underlyingError``) — finishes the operation without running it. It
    /// is not a cancellation: `isCancelled` stays `false`, and ``conditionFailure`` names the
    /// condition. A result operation stores it as its failure where its `Failure` can say it
    /// (``ConditionFailureRepresentable``, `any Error`), its cancellation value as a stand-in
    /// where that is all `Failure` can say, and no result otherwise; ``Bridge/outcomeValue`` throws
    /// ``OperationFailure/conditionFailed(_:)`` unless the result says it itself. Dependents,
    /// pipelines and results sequences see it as failed, and ``UpstreamFailedError/rootFailure``
    /// reaches the ``ConditionFailedError``.
    ///
    /// A silent condition (``OperationCondition/silent(_:)``) that fails cancels the operation
    /// instead — `cancel()` is called, a subclass's override included, from the task that checks
    /// the conditions — and ``silencedConditionFailure`` says why. Conditions that produce a
    /// dependency (``OperationCondition/producingDependency(_:)``) run it just before their check.
    ///
    /// A condition is a guarantee: the operation's `main()` never runs unless every condition
    /// held. While they are checked the operation is not ready; a failed one decides the outcome
    /// in the same step as it fails, so whoever starts the operation afterwards finishes it
    /// without running.
    ///
    /// Add conditions before the operation is queued. Adding one once its conditions are being
    /// checked, or it has started, is a programmer error and traps with a message. Adding one
    /// after the operation was queued races with the queue: it may be checked, or the queue may
    /// start the operation first, which then traps ("started before its conditions were
    /// checked") — do not rely on either. An operation with conditions must be started by a
    /// queue (or a pipeline): starting it by hand before they passed traps too.
    ///
    /// ## Cancellation and threading
    /// Safe from any thread. Cancelling the operation stops the check or the wait for a key; the
    /// cancelled operation is ready at once and finishes without running.
    public func addCondition(_ condition: OperationCondition) {
        base.addToGate(condition)
    }

    /// The failed condition that kept the operation from running, if that is why it finished
    /// without running. Thread-safe.
    public var conditionFailure: ConditionFailedError? {
        base.lock.withCriticalSection { base.rare?.conditionFailure }
    }

    /// The failure of a silent condition (``OperationCondition/silent(_:)``, or
    /// ``OperationCondition/noFailedDependencies(cancelledDependencies:)`` with
    /// ``OperationCondition/CancelledDependencies/skip``) that cancelled the operation, if that is
    /// why it was cancelled. Thread-safe.
    ///
    /// A silent condition skips the operation without failing it: the operation is cancelled
    /// (`isCancelled` is `true`, the awaits answer a cancellation), and this says which condition
    /// did it and why. ``conditionFailure`` stays `nil`. It is set before the cancellation, so
    /// whoever sees the operation cancelled or finished sees it.
    public var silencedConditionFailure: ConditionFailedError? {
        base.lock.withCriticalSection { base.rare?.silencedConditionFailure }
    }
}
