import Foundation

extension OperationCondition {
    /// A condition that holds when `condition` fails, and fails when it holds: ProcedureKit's
    /// `NegatedCondition`.
    ///
    /// ```swift
    /// let signUp = SignUpOperation()
    /// signUp.bridge.addCondition(.negated(OperationCondition("signed in") { _ in session.isSignedIn }))
    /// ```
    ///
    /// Its name is `not (name)`; the failure it reports names it, with the reason "'name' holds".
    /// A `condition` that fails — loudly or silently (``silent(_:)``), or because the dependency
    /// it produced failed (``producingDependency(_:)``) — makes it hold.
    ///
    /// ## Cancellation and threading
    /// `condition` is checked as it would be on its own: on the task that checks the operation's
    /// conditions, stopped when the operation is cancelled.
    ///
    /// - Precondition: `condition` checks something: a ``mutuallyExclusive(_:)`` key (at any
    ///   depth) cannot be negated, and traps with a message.
    public static func negated(_ condition: OperationCondition) -> OperationCondition {
        let check = condition.predicate(composedIn: "negated(_:)")
        let name = "not (\(condition.name))"
        return OperationCondition(
            name: name,
            kind: .predicate { operation in
                switch await check(operation) {
                case .holds:
                    .fails(
                        ConditionFailedError(condition: name, operation: operation, reason: "'\(condition.name)' holds")
                    )
                case .fails, .silenced:
                    .holds
                }
            })
    }

    /// A condition that, when `condition` fails, keeps the operation from running without failing
    /// it: the operation is cancelled. ProcedureKit's `IgnoredCondition` (and the "do not run, do
    /// not fail" of its `SilentCondition`'s name).
    ///
    /// ```swift
    /// let sync = SyncOperation()
    /// sync.bridge.addCondition(.silent(OperationCondition("sync enabled") { _ in settings.syncEnabled }))
    /// queue.addOperation(sync)  // when sync is off: cancelled, not failed; main() never runs
    /// ```
    ///
    /// The outcome of an operation a silent condition stopped is a **cancellation**, the way
    /// Foundation and Swift concurrency say "did not run, and that is not an error": `cancel()`
    /// is called (a subclass's override included) once the condition has failed, `isCancelled`
    /// is `true`, a result operation stores its cancellation failure where `Failure` can express
    /// one (and no result otherwise), and every await answers exactly as for an operation you
    /// cancelled — `bridge.value` and `run` throw `Failure.cancellation` (`CancellationError` for
    /// `any Error`), `bridge.outcome` is that failure (`nil` when `Failure` cannot express it),
    /// ``Bridge/outcomeValue`` throws it as ``OperationFailure/failed(_:)`` (or
    /// ``OperationFailure/cancelled`` when `Failure` cannot express it) — never
    /// ``OperationFailure/conditionFailed(_:)``. ``Bridge/silencedConditionFailure`` holds the
    /// ``ConditionFailedError`` that says which condition did it and why;
    /// ``Bridge/conditionFailure`` stays `nil`. Dependents see a cancelled dependency: with
    /// ``noFailedDependencies(cancelledDependencies:)`` and
    /// ``CancelledDependencies/skip``, a whole chain skips quietly.
    ///
    /// Silence is part of the verdict: in ``all(_:)`` a silenced member stops the check and
    /// silences the whole (the operation does not run); ``any(_:)`` is silenced only when every
    /// member failed and all of them silently; ``negated(_:)`` of a silenced condition holds.
    /// Wrapping a silent condition again changes nothing. Its name is `silent (name)`; the
    /// failure it records is `condition`'s own.
    ///
    /// ## Cancellation and threading
    /// `condition` is checked as it would be on its own. A cancellation that comes first stays
    /// the operation's own: ``Bridge/silencedConditionFailure`` is then `nil`.
    ///
    /// - Precondition: `condition` checks something: a ``mutuallyExclusive(_:)`` key (at any
    ///   depth) cannot be silenced (it never fails), and traps with a message.
    public static func silent(_ condition: OperationCondition) -> OperationCondition {
        let check = condition.predicate(composedIn: "silent(_:)")
        return OperationCondition(
            name: "silent (\(condition.name))",
            kind: .predicate { operation in
                switch await check(operation) {
                case .holds: .holds
                case .fails(let failure), .silenced(let failure): .silenced(failure)
                }
            })
    }

    /// A condition that holds when every one of `conditions` holds: ProcedureKit's `AndCondition`.
    ///
    /// ```swift
    /// let upload = UploadOperation()
    /// upload.bridge.addCondition(.any([.all([onWiFi, charging]), userAskedNow]))
    /// ```
    ///
    /// The members are checked one after another, in order; the first that does not hold stops
    /// the check, and its verdict is the whole's: its own ``ConditionFailedError`` (naming the
    /// member, not the composition), failed or silenced (``silent(_:)``). An empty list holds.
    /// Adding the members one by one with ``Bridge/addCondition(_:)`` does the same; `all` is
    /// for nesting inside ``any(_:)``, ``negated(_:)`` or ``silent(_:)``. Its name is
    /// `all of (a, b)`.
    ///
    /// ## Cancellation and threading
    /// Checked on the task that checks the operation's conditions; a cancellation of the
    /// operation stops it between members and inside the one being checked.
    ///
    /// - Precondition: the members check something: a ``mutuallyExclusive(_:)`` key (at any
    ///   depth) traps with a message — add it with its own ``Bridge/addCondition(_:)``.
    public static func all(_ conditions: [OperationCondition]) -> OperationCondition {
        let checks = conditions.map { $0.predicate(composedIn: "all(_:)") }
        return OperationCondition(
            name: "all of (\(conditions.map(\.name).joined(separator: ", ")))",
            kind: .predicate { operation in
                for check in checks {
                    if Task.isCancelled { break }
                    let verdict = await check(operation)
                    guard case .holds = verdict else { return verdict }
                }
                return .holds
            })
    }

    /// A condition that holds when at least one of `conditions` holds: ProcedureKit's
    /// `OrCondition`.
    ///
    /// The members are checked one after another, in order; the first that holds stops the
    /// check. When none holds, the whole fails with a ``ConditionFailedError`` named
    /// `any of (a, b)` whose ``ConditionFailedError/reason`` lists each member's failure — and
    /// is silenced (``silent(_:)``) only when every member was. An empty list fails (no member
    /// holds), with the reason "it has no conditions".
    ///
    /// ## Cancellation and threading
    /// Checked on the task that checks the operation's conditions; a cancellation of the
    /// operation stops it between members and inside the one being checked.
    ///
    /// - Precondition: the members check something: a ``mutuallyExclusive(_:)`` key (at any
    ///   depth) traps with a message.
    public static func any(_ conditions: [OperationCondition]) -> OperationCondition {
        let checks = conditions.map { $0.predicate(composedIn: "any(_:)") }
        let name = "any of (\(conditions.map(\.name).joined(separator: ", ")))"
        return OperationCondition(
            name: name,
            kind: .predicate { operation in
                guard !checks.isEmpty else {
                    return .fails(
                        ConditionFailedError(condition: name, operation: operation, reason: "it has no conditions"))
                }
                var failures: [ConditionFailedError] = []
                var allSilenced = true
                for check in checks {
                    if Task.isCancelled { break }
                    switch await check(operation) {
                    case .holds:
                        return .holds
                    case .fails(let failure):
                        allSilenced = false
                        failures.append(failure)
                    case .silenced(let failure):
                        failures.append(failure)
                    }
                }
                let reason = failures.map { failure in
                    "'\(failure.condition)'"
                        + ((failure.reason ?? failure.underlyingError.map { "\($0)" }).map { ": \($0)" } ?? "")
                }
                let failure = ConditionFailedError(
                    condition: name, operation: operation, reason: "none holds: " + reason.joined(separator: "; "))
                return allSilenced ? .silenced(failure) : .fails(failure)
            })
    }

    /// The check of a condition that a composition wraps; traps for a key, which checks nothing.
    func predicate(composedIn composition: String) -> @Sendable (AsyncOperation) async -> Verdict {
        switch kind {
        case .predicate(let predicate):
            return predicate
        case .exclusive:
            // `fatalError`, not `preconditionFailure`: the message must survive release builds.
            fatalError(
                "OperationCondition.\(composition): '\(name)' cannot be composed: it takes a key rather than checking "
                    + "something. Add it to the operation with its own bridge.addCondition(_:).")
        }
    }
}
