import Foundation

extension OperationCondition {
    /// This condition, preceded by an operation that must run first — a login before "signed
    /// in" is checked: ProcedureKit's `Condition.produceDependency(_:)`.
    ///
    /// ```swift
    /// let signedIn = OperationCondition("signed in") { _ in session.isSignedIn }
    ///     .producingDependency { _ in session.isSignedIn ? nil : LoginOperation(session) }
    /// upload.bridge.addCondition(signedIn)
    /// try await queue.run(upload)  // LoginOperation runs first, then the check, then upload
    /// ```
    ///
    /// When the operation's conditions are checked — once its queue has it and its dependencies
    /// have finished — and this condition's turn comes, `makeDependency` is called with the
    /// operation. The operation it returns (`nil`: none needed) is added to the queue the operation
    /// waits in, and the check waits for it to finish; then the condition is checked. The
    /// operation waits for it as for a dependency: it is not ready meanwhile and takes no queue
    /// slot (so a queue with one slot runs the produced operation), and its `main()` runs only
    /// after the produced operation and the check. The produced operation is not added to the
    /// operation's `dependencies` (as in ProcedureKit): those stay yours, and
    /// ``noFailedDependencies`` does not see it.
    ///
    /// - **The queue.** The operation's own queue when the package handed the operation to it
    ///   (`run`, `runForOutcome`, `runUntilFinished`, pipelines, results sequences, groups).
    ///   An operation you added with Foundation's `addOperation(_:)` does not tell anyone its queue
    ///   — neither platform has an API for it — so the produced operation then runs on the
    ///   package's own queue without a width limit.
    /// - **Failed or cancelled.** When the produced operation fails or is cancelled (by someone
    ///   else), the condition fails without being checked: the ``ConditionFailedError`` names this
    ///   condition, its reason names the produced operation and how it failed, and its
    ///   ``ConditionFailedError/underlyingError`` is that operation's failure, if it had one. Wrap
    ///   the condition in ``silent(_:)`` to skip quietly instead.
    /// - **The operation is cancelled** before this condition's turn: nothing is produced (the
    ///   closure is not called). Once the closure has made an operation, the package hands it to
    ///   the queue whatever happens, so that it finishes; when the operation is cancelled while
    ///   the produced one is pending or running, the package cancels the produced one (if the
    ///   package added it), and the operation finishes cancelled without waiting for it.
    /// - **Never queued**, or never ready: nothing is produced. An operation's conditions are
    ///   checked at most once, so the closure is called at most once per operation, even when
    ///   the condition is on several of them (each gets its own call).
    /// - **Already queued.** The package never adds an operation twice: when the closure returns an
    ///   operation already pending in a queue the package knows (one it produced for another
    ///   operation — a login shared by several uploads), or one that has started or finished, the
    ///   check only waits for it, and does not cancel it with the operation. One you added to a
    ///   queue yourself cannot be told apart from a fresh one: Foundation traps when it is added
    ///   again.
    /// - **A cycle.** An operation that is the guarded operation itself, or depends on it
    ///   directly, would wait for ever: the condition fails, saying so.
    ///
    /// In a composition (``all(_:)``, ``any(_:)``, ``negated(_:)``, ``silent(_:)``) the produced
    /// operation runs just before this member is checked, when its turn comes.
    ///
    /// ## Cancellation and threading
    /// `makeDependency` runs on the task that checks the operation's conditions, never on a queue's
    /// thread, and must not block. Cancelling the operation stops the wait (see above).
    ///
    /// - Parameter makeDependency: Called with the operation the condition is attached to; returns
    ///   the operation to run first, or `nil` when nothing needs to.
    /// - Returns: The condition, with the same name, checked after the produced operation.
    /// - Precondition: the condition checks something: a ``mutuallyExclusive(_:)`` key produces
    ///   nothing, and traps with a message.
    public func producingDependency(
        _ makeDependency: @escaping @Sendable (Operation) -> Operation?
    ) -> OperationCondition {
        let check = predicate(composedIn: "producingDependency(_:)")
        let name = self.name
        return OperationCondition(
            name: name,
            kind: .predicate { operation in
                // Cancelled (the operation was: only its cancellation stops the gate's task), the
                // verdict is not read; nothing more is produced or checked.
                guard !Task.isCancelled else { return .holds }
                if let dependency = makeDependency(operation),
                    let failure = await Self.run(dependency, producedFor: operation, by: name)
                {
                    return .fails(failure)
                }
                guard !Task.isCancelled else { return .holds }
                return await check(operation)
            })
    }

    /// Hands `dependency` to the queue `operation` waits in (see
    /// ``producingDependency(_:)``) and waits for it; the failure of the condition `name` when it
    /// failed, was cancelled or would wait for `operation` itself, `nil` otherwise — also when the
    /// wait stopped because `operation` was cancelled (the gate then ends with the cancellation).
    private static func run(
        _ dependency: Operation,
        producedFor operation: AsyncOperation,
        by name: String
    ) async -> ConditionFailedError? {
        func described(_ dependency: Operation) -> String {
            "\(type(of: dependency))" + (dependency.name.map { " '\($0)'" } ?? "")
        }
        if dependency === operation || dependency.dependencies.contains(where: { $0 === operation }) {
            // Kept until the operation has finished: on Linux a dependency keeps unretained
            // pointers to its dependents, and finishing would touch the freed dependent
            // (Design.md, "Platform facts").
            _ = operation.addFinishObserver { withExtendedLifetime(dependency) {} }
            return ConditionFailedError(
                condition: name, operation: operation,
                reason: "the dependency it produced, \(described(dependency)), would wait for the operation itself")
        }
        // Handed to the queue even when the operation was cancelled meanwhile: the wait below
        // then cancels it at once, and it finishes when its queue starts it — none is lost.
        let queue = operation.admittedQueue ?? SharedQueues.unbounded
        let owned: Bool
        if case .added = queue.admit(dependency) { owned = true } else { owned = false }
        let finished = await OperationWaiter.waitForFinish(
            of: dependency, onTaskCancellation: owned ? .cancelOperation : .stopWaiting)
        guard finished, !Task.isCancelled, dependency.stepFailed else { return nil }
        let reason = dependency.failureReason
        let underlying: (any Error)?
        if case .failed(let error) = reason { underlying = error } else { underlying = nil }
        return ConditionFailedError(
            condition: name, operation: operation,
            reason: "the dependency it produced, \(described(dependency)), "
                + (dependency.isPlainCancellation ? "was cancelled" : "failed: \(reason)"),
            underlyingError: underlying)
    }
}
