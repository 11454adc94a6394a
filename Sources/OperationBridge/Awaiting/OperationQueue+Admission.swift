import Foundation

extension OperationQueue {
    /// What ``admit(_:listed:releasingForeignClaimOnFinish:)`` did.
    enum Admission {
        /// The operation was added to this queue.
        case added
        /// The operation is pending in a queue already — this one, another one (when the package
        /// knows which), or one the package cannot name. It was not added again.
        case pending(in: OperationQueue?)
        /// The operation has started or finished.
        case started
    }

    /// Adds `operation` to this queue unless it has started or is already pending in a queue:
    /// the one way the package hands an operation to a queue, so that it never adds one twice
    /// (Foundation traps on that: "operations finished, executing or already in a queue cannot be
    /// enqueued").
    ///
    /// - The package's operations remember that the package added them (a claim under their own
    ///   lock, O(1)). An operation nobody ever asked `isReady` is in no queue: queues ask when an
    ///   operation is added to them. Only when something asked does the package look whether this
    ///   queue lists it — it may have been added with your own `addOperation(_:)`.
    /// - Other operations are claimed in a small registry until the package sees them finish,
    ///   and looked for in this queue's list first.
    ///
    /// An operation that you added to *another* queue yourself cannot be told apart from a fresh
    /// one unless the package added it there; adding it here then traps in Foundation.
    ///
    /// - Parameters:
    ///   - listed: Whether this queue lists the operation, when the caller has looked already
    ///     (a scheduler looks once for all its steps); `nil` to let this call look when needed.
    ///   - releasingForeignClaimOnFinish: For operations that are not the package's: release the
    ///     registry's claim when the operation finishes by observing it (`true`), or leave it to
    ///     the caller, which observes the operation anyway and calls
    ///     ``releaseForeignClaim(on:)`` (`false`).
    ///   - settledDependencies: See ``enqueue(_:settledDependencies:)``.
    @discardableResult
    func admit(
        _ operation: Operation,
        listed: Bool? = nil,
        releasingForeignClaimOnFinish: Bool = true,
        settledDependencies: Int = 0
    ) -> Admission {
        let admission = decideAdmission(
            of: operation, listed: listed, releasingForeignClaimOnFinish: releasingForeignClaimOnFinish)
        if case .added = admission { enqueue(operation, settledDependencies: settledDependencies) }
        return admission
    }

    /// An operation for ``admit(contentsOf:listed:releasingForeignClaimOnFinish:)``, with the
    /// number of its dependencies the caller knows are settled (see
    /// ``enqueue(_:settledDependencies:)``).
    struct AdmissionRequest {
        let operation: Operation
        let settledDependencies: Int
    }

    /// Admits each operation as ``admit(_:listed:releasingForeignClaimOnFinish:settledDependencies:)``
    /// does, and adds those it adds with one `addOperations(_:waitUntilFinished:)` call, in
    /// order: Foundation then takes its queue's lock and makes its scheduling pass once for all
    /// of them, not once per operation (a graph scheduler hands a fan-out's thousands of
    /// dependents over 256 at a time).
    /// Only for callers that run nothing of the user's between deciding and adding: a graph
    /// scheduler's launches. (A stream must not hold an operation back while the user's
    /// `makeOperation` makes the next: Design.md, "Streaming".)
    func admit(contentsOf requests: [AdmissionRequest], listed: Bool?, releasingForeignClaimOnFinish: Bool) {
        if requests.count == 1 {  // a chain's next step, say: no batch to build
            admit(
                requests[0].operation, listed: listed, releasingForeignClaimOnFinish: releasingForeignClaimOnFinish,
                settledDependencies: requests[0].settledDependencies)
            return
        }
        var adding: [AdmissionRequest] = []
        for request in requests {
            let admission = decideAdmission(
                of: request.operation, listed: listed, releasingForeignClaimOnFinish: releasingForeignClaimOnFinish)
            if case .added = admission { adding.append(request) }
        }
        guard !adding.isEmpty else { return }
        addOperations(adding.map(\.operation), waitUntilFinished: false)
        for request in adding {
            announceReadinessIfAWakeUpMayBeLost(request.operation, settledDependencies: request.settledDependencies)
        }
    }

    /// Decides the admission of `operation` (see
    /// ``admit(_:listed:releasingForeignClaimOnFinish:settledDependencies:)``); `.added` means
    /// the operation is claimed for this queue and the caller must add it now, with
    /// ``enqueue(_:settledDependencies:)`` or as part of a batch.
    private func decideAdmission(
        of operation: Operation, listed: Bool?, releasingForeignClaimOnFinish: Bool
    ) -> Admission {
        if let operation = operation as? AsyncOperation {
            return decideAdmission(of: operation, listed: listed)
        }
        if operation.hasBeenStarted { return .started }
        guard ForeignAdmissions.shared.claim(operation) else { return .pending(in: nil) }
        if releasingForeignClaimOnFinish {
            let observation = FinishObservation.observe(operation) { ForeignAdmissions.shared.release(operation) }
            if observation == nil { ForeignAdmissions.shared.release(operation) }
        }
        if listed ?? operations.contains(where: { $0 === operation }) { return .pending(in: self) }
        if operation.hasBeenStarted { return .started }
        return .added
    }

    /// Adds `operation` to this queue so that the queue cannot miss it becoming ready.
    ///
    /// Linux's queue loses the wake-up of an operation whose last dependency finishes while
    /// `addOperation(_:)` runs: the queue caches the stale "not ready" it read, and its re-test
    /// marks the operation ready without scheduling it, so it waits until something else makes
    /// the queue look again — for good, in a queue with nothing else to do (Design.md,
    /// "Platform facts"). So, for any operation with a dependency the caller does not know to be
    /// settled: when it is ready once added and has not started, its readiness is announced
    /// again, at 1, 4, 16, 64, 256 and 1,024 ms until it has started (one announcement could
    /// itself store a stale answer). The package's own operations also heal the race when you add
    /// them yourself (``AsyncOperation/isReady``), but only when the adding thread stores its
    /// answer within two or three milliseconds; here, after `addOperation(_:)` has returned, the
    /// store is known to be done, however long the adding thread was descheduled. When it is not
    /// ready once added, its last dependency has yet to finish, and that finish tells the queue,
    /// which lists the operation by then. Darwin's queue follows readiness by KVO and needs
    /// nothing.
    ///
    /// - Parameter settledDependencies: How many of the operation's dependencies the caller knows
    ///   Foundation has already counted finished: the graph scheduler launches a step only once
    ///   it has seen its dependencies finish, and a package operation calls its finish observers
    ///   only after Foundation's `isFinished` bookkeeping has returned (and tells them when
    ///   another thread may still be doing it). When every dependency is such, no wake-up can be
    ///   lost and nothing more is done.
    func enqueue(_ operation: Operation, settledDependencies: Int = 0) {
        addOperation(operation)
        announceReadinessIfAWakeUpMayBeLost(operation, settledDependencies: settledDependencies)
    }

    /// The second half of ``enqueue(_:settledDependencies:)``, once `operation` has been added.
    private func announceReadinessIfAWakeUpMayBeLost(_ operation: Operation, settledDependencies: Int) {
        #if !canImport(Darwin)
            guard operation.dependencies.count > settledDependencies else { return }
            if operation.isReady && !operation.hasBeenStarted { operation.announceReadinessAgain(after: 1) }
        #endif
    }

    /// Releases the registry's claim on an operation that is not the package's, once the caller
    /// has seen it finish (see ``admit(_:listed:releasingForeignClaimOnFinish:)``).
    static func releaseForeignClaim(on operation: Operation) {
        guard !(operation is AsyncOperation) else { return }
        ForeignAdmissions.shared.release(operation)
    }

    /// Whether the package may have to look in a queue's list to admit `operation`: it is not
    /// started, and not known to be fresh (for the package's operations: nothing asked whether it
    /// is ready) nor known to be pending.
    static func mayBeListedByOtherCode(_ operation: Operation) -> Bool {
        if let operation = operation as? AsyncOperation { return operation.mayBeQueuedByOtherCode }
        return !operation.hasBeenStarted
    }

    private func decideAdmission(of operation: AsyncOperation, listed: Bool?) -> Admission {
        var decision = operation.admit(to: self, listed: listed)
        if case .lookInList = decision {
            let listed = operations.contains { $0 === operation }
            decision = operation.admit(to: self, listed: listed)
        }
        switch decision {
        case .add:
            return .added
        case .pending(let queue):
            return .pending(in: queue)
        case .started:
            return .started
        case .lookInList:
            preconditionFailure("Internal inconsistency: admission asked to look in the list twice")
        }
    }
}

/// The operations that are not the package's and that the package has added to a queue, until it
/// has seen them finish: so that two of its paths (two pipelines sharing a glue `BlockOperation`,
/// `runUntilFinished` racing a pipeline) never both add one.
///
/// Split into stripes by the operation's address, each with a lock of its own: every
/// `runUntilFinished` of a foreign operation claims and releases one, and many tasks doing so at
/// once contended for a single lock (a sleeping thread to wake on every collision).
///
/// Safety: each stripe's `claimed` is only touched while holding that stripe's `lock`. An
/// operation is claimed only while it is alive and unfinished (the queue retains it), so its
/// identifier is not reused meanwhile.
final class ForeignAdmissions: Sendable {
    static let shared = ForeignAdmissions()

    /// A power of two: the stripe is picked with a mask.
    private static let stripeCount = 16

    /// Safety: `claimed` is only touched while holding `lock`.
    private final class Stripe: @unchecked Sendable {
        let lock = OperationLock()
        var claimed = Set<ObjectIdentifier>()
    }

    private let stripes: [Stripe] = (0..<ForeignAdmissions.stripeCount).map { _ in Stripe() }

    private func stripe(for operation: Operation) -> Stripe {
        // Objects are 16-byte aligned: the bits above the alignment pick the stripe.
        let address = UInt(bitPattern: ObjectIdentifier(operation))
        return stripes[Int((address >> 4) & UInt(Self.stripeCount - 1))]
    }

    /// Claims `operation`. Returns `false` when it is claimed already.
    func claim(_ operation: Operation) -> Bool {
        let stripe = stripe(for: operation)
        return stripe.lock.withCriticalSection { stripe.claimed.insert(ObjectIdentifier(operation)).inserted }
    }

    /// Whether the package has added `operation` to a queue and not seen it finish yet.
    func isClaimed(_ operation: Operation) -> Bool {
        let stripe = stripe(for: operation)
        return stripe.lock.withCriticalSection { stripe.claimed.contains(ObjectIdentifier(operation)) }
    }

    func release(_ operation: Operation) {
        let stripe = stripe(for: operation)
        _ = stripe.lock.withCriticalSection { stripe.claimed.remove(ObjectIdentifier(operation)) }
    }
}

#if !canImport(Darwin)
    extension Operation {
        /// Announces `isReady` after `milliseconds`, and again at four times the interval up to
        /// about a second, unless the operation has started: Linux's queue may have stored a stale
        /// "not ready" for it and must look again, after that store (Design.md, "Platform
        /// facts"). An extra announcement changes nothing. Thread-safe; runs on Dispatch threads.
        func announceReadinessAgain(after milliseconds: Int) {
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(milliseconds)) { [weak self] in
                guard let self, !self.hasBeenStarted else { return }
                self.willChangeValue(forKey: "isReady")
                self.didChangeValue(forKey: "isReady")
                if milliseconds < 1024 { self.announceReadinessAgain(after: max(1, milliseconds * 4)) }
            }
        }
    }
#endif
