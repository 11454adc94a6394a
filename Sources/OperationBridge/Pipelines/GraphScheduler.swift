import Foundation

/// Runs a set of operations that may depend on each other, adding each one to the queue only
/// once its dependencies inside the set have finished.
///
/// On Linux, `OperationQueue` rescans every pending operation whenever one finishes, so handing
/// it a whole dependency graph is quadratic. Keeping only ready operations in the queue keeps
/// the cost linear. Dependencies on operations outside the set are left to the queue, which
/// honours them as usual.
///
/// This is the one scheduling mechanism of the package: ``Pipeline``, the results sequences and
/// the batch helpers all use it.
///
/// Safety: all mutable state lives in `machine`, which is only touched while holding `lock`;
/// queue calls, cancellations and callbacks run after the lock is released.
final class GraphScheduler: @unchecked Sendable {
    /// Called once per operation (by node index), after it has finished. May run on any thread,
    /// concurrently for different nodes.
    typealias FinishHandler = @Sendable (_ node: Int) -> Void

    /// The distinct operations, in first-seen order.
    let operations: [Operation]
    /// For each position of the input array, the node of its operation (duplicates share one).
    let nodeOfPosition: [Int]

    /// For each node, the nodes that depend on it (immutable, so read without the lock).
    private let dependents: [[Int]]
    /// Dependencies on operations outside the set, by dependent node.
    private let outsideDependencies: [(node: Int, dependency: Operation)]
    private let queue: OperationQueue?
    private let lock = NSLock()
    private var machine: GraphStateMachine
    private var onFinish: FinishHandler?
    private var drainWaiters: [CompletionSlot<Bool>] = []

    /// Builds the graph and checks it for cycles. Nothing runs yet.
    ///
    /// - Parameters:
    ///   - operations: The operations; an operation listed twice is scheduled once.
    ///   - queue: Where ready operations are added; `nil` to only observe operations that are
    ///     already queued elsewhere.
    ///   - failurePolicy: What a failed step does to the others.
    /// - Throws: ``PipelineError/dependencyCycle(operations:)`` when the dependencies inside the
    ///   set form a cycle.
    init(
        _ operations: [Operation],
        queue: OperationQueue?,
        failurePolicy: PipelineFailurePolicy
    ) throws(PipelineError) {
        var nodeOf: [ObjectIdentifier: Int] = [:]
        nodeOf.reserveCapacity(operations.count)
        var unique: [Operation] = []
        var positions: [Int] = []
        positions.reserveCapacity(operations.count)
        for operation in operations {
            let id = ObjectIdentifier(operation)
            if let node = nodeOf[id] {
                positions.append(node)
            } else {
                nodeOf[id] = unique.count
                positions.append(unique.count)
                unique.append(operation)
            }
        }
        var outsideDependencies: [(node: Int, dependency: Operation)] = []
        let dependencies = unique.enumerated().map { node, operation in
            operation.dependencies.compactMap { dependency in
                if let inside = nodeOf[ObjectIdentifier(dependency)] { return inside }
                outsideDependencies.append((node, dependency))
                return nil
            }
        }
        let machine = GraphStateMachine(dependencies: dependencies, failurePolicy: failurePolicy)
        if let cycle = machine.nodesOnCycles() {
            throw .dependencyCycle(operations: cycle.map { unique[$0] })
        }
        self.operations = unique
        self.nodeOfPosition = positions
        self.dependents = machine.dependents
        self.outsideDependencies = outsideDependencies
        self.queue = queue
        self.machine = machine
    }

    /// Starts scheduling. Call it once. `onFinish` is called for every node as it finishes.
    func start(onFinish: @escaping FinishHandler) {
        retainStepsUntilOutsideDependenciesFinish()
        admitStepsListedInTheQueue()
        let ready = lock.withCriticalSection {
            self.onFinish = onFinish
            return machine.start()
        }
        launch(ready)
    }

    /// Keeps each operation alive until its dependencies outside the set have finished.
    ///
    /// On Linux an operation refers to its dependents through unretained pointers, and a
    /// cancelled operation finishes without waiting for its dependencies. A step cancelled while
    /// an outside dependency still runs could otherwise be released, once the run is over, before
    /// that dependency finishes — which would then touch freed memory. (Dependencies inside the
    /// set are safe: the scheduler holds every operation until all have finished.)
    private func retainStepsUntilOutsideDependenciesFinish() {
        for (node, dependency) in outsideDependencies where !dependency.isFinished {
            let step = operations[node]
            _ = FinishObservation.observe(dependency) { withExtendedLifetime(step) {} }
        }
    }

    /// Finds the steps that are already pending in the queue — added with your own
    /// `addOperation(_:)`, say — so that they are awaited, never added again. One look at the
    /// queue's list for the whole set, and only when some step may be in it (see
    /// `OperationQueue.mayBeListedByOtherCode(_:)`); later launches do not look again.
    private func admitStepsListedInTheQueue() {
        guard let queue, operations.contains(where: OperationQueue.mayBeListedByOtherCode) else { return }
        let listed = Set(queue.operations.map(ObjectIdentifier.init))
        for operation in operations where listed.contains(ObjectIdentifier(operation)) {
            queue.admit(operation, listed: true, releasingForeignClaimOnFinish: false)
        }
    }

    /// Cancels every operation that has not finished. Operations that were not queued yet are
    /// queued now, cancelled, so that they finish (without running) and nobody waiting for
    /// them is left hanging.
    func cancelAll() {
        let action = lock.withCriticalSection { machine.cancelAll() }
        perform(action)
    }

    /// The operation whose failure was the first to be recorded before the run was cancelled as
    /// a whole, if any: under ``PipelineFailurePolicy/cancelAll``, the failure that stopped
    /// everything else.
    var firstFailedOperation: Operation? {
        lock.withCriticalSection { machine.firstFailure.map { operations[$0] } }
    }

    /// Suspends until every operation of the set has finished.
    ///
    /// - Returns: `false` when the awaiting task was cancelled first (nothing is cancelled).
    func waitForAll() async -> Bool {
        let slot = CompletionSlot<Bool>()
        let done = lock.withCriticalSection {
            if machine.unfinishedCount == 0 { return true }
            drainWaiters.append(slot)
            return false
        }
        if done { return true }
        return await withTaskCancellationHandler {
            await slot.wait()
        } onCancel: {
            slot.fulfill(false)
        }
    }

    /// Caller holds `lock`.
    private func takeDrainWaitersLocked() -> [CompletionSlot<Bool>] {
        defer { drainWaiters = [] }
        return drainWaiters
    }

    // MARK: - Private

    private func launch(_ nodes: [Int]) {
        for node in nodes where !observeAndEnqueue(node) {
            nodeFinished(node)
        }
    }

    /// Observes the node's operation and admits it to the queue: added unless it has started or
    /// is pending in a queue already. Returns `false` when the operation had already finished
    /// (nothing was observed).
    private func observeAndEnqueue(_ node: Int) -> Bool {
        let operation = operations[node]
        // Strong: the scheduler must outlive its handle until every step has finished. The
        // observer is dropped when the operation finishes, so no cycle outlives the work.
        guard FinishObservation.observe(operation, { self.nodeFinished(node) }) != nil else { return false }
        // The list was looked at once, at the start.
        queue?.admit(operation, listed: false, releasingForeignClaimOnFinish: false)
        return true
    }

    private func nodeFinished(_ node: Int) {
        // Iterative, so that long runs of already-finished operations do not recurse.
        var pending = [node]
        while let node = pending.popLast() {
            OperationQueue.releaseForeignClaim(on: operations[node])
            let failed = operations[node].stepFailed
            // Asked outside the lock: it reads the operations' own state.
            let reporting =
                failed ? dependents[node].filter { operations[$0].reportsFailure(ofUpstream: operations[node]) } : []
            let (action, handler, drained) = lock.withCriticalSection {
                let action = machine.finished(node, failed: failed, reportedBy: reporting)
                let drained = machine.unfinishedCount == 0 ? takeDrainWaitersLocked() : []
                return (action, onFinish, drained)
            }
            guard let action else { continue }
            defer { for waiter in drained { waiter.fulfill(true) } }
            // Report the node before cancelling the others because of it: an operation that
            // finishes inside `cancel()` must not be delivered before the failure that caused it.
            handler?(node)
            for cancelled in action.cancel { operations[cancelled].cancel() }
            for next in action.launch where !observeAndEnqueue(next) {
                pending.append(next)
            }
        }
    }

    private func perform(_ action: GraphStateMachine.Action) {
        for node in action.cancel { operations[node].cancel() }
        launch(action.launch)
    }
}

/// The bookkeeping of ``GraphScheduler``: which nodes wait for how many dependencies, which are
/// launched, which are finished.
struct GraphStateMachine {
    private enum Phase {
        /// Waiting for in-set dependencies.
        case waiting
        /// Handed to the queue (or being observed); not finished yet.
        case launched
        /// Finished.
        case finished
    }

    /// What the scheduler must do after the lock is released.
    struct Action {
        /// Nodes whose operations must be cancelled.
        var cancel: [Int] = []
        /// Nodes to observe and add to the queue.
        var launch: [Int] = []
    }

    /// For each node, the nodes that depend on it.
    let dependents: [[Int]]
    private var remaining: [Int]
    private var phase: [Phase]
    private var markedCancelled: [Bool]
    private let failurePolicy: PipelineFailurePolicy
    private var cancelledAll = false
    private(set) var unfinishedCount: Int
    /// The first node recorded as failed while the run had not been cancelled as a whole.
    private(set) var firstFailure: Int?

    init(dependencies: [[Int]], failurePolicy: PipelineFailurePolicy) {
        var dependents = Array(repeating: [Int](), count: dependencies.count)
        var remaining = Array(repeating: 0, count: dependencies.count)
        for (node, nodeDependencies) in dependencies.enumerated() {
            for dependency in Set(nodeDependencies) {
                dependents[dependency].append(node)
                remaining[node] += 1
            }
        }
        self.dependents = dependents
        self.remaining = remaining
        self.phase = Array(repeating: .waiting, count: dependencies.count)
        self.markedCancelled = Array(repeating: false, count: dependencies.count)
        self.failurePolicy = failurePolicy
        self.unfinishedCount = dependencies.count
    }

    /// The nodes that can never become ready because of a cycle, or `nil` when there is none
    /// (Kahn's algorithm).
    func nodesOnCycles() -> [Int]? {
        var remaining = self.remaining
        var ready = remaining.indices.filter { remaining[$0] == 0 }
        var visited = 0
        while let node = ready.popLast() {
            visited += 1
            for dependent in dependents[node] {
                remaining[dependent] -= 1
                if remaining[dependent] == 0 { ready.append(dependent) }
            }
        }
        guard visited < remaining.count else { return nil }
        return remaining.indices.filter { remaining[$0] > 0 }
    }

    /// The nodes to launch first.
    mutating func start() -> [Int] {
        var ready: [Int] = []
        for node in phase.indices where remaining[node] == 0 && phase[node] == .waiting {
            phase[node] = .launched
            ready.append(node)
        }
        return ready
    }

    /// Records that `node` finished. Returns `nil` when it was already recorded.
    ///
    /// - Parameter reportedBy: When `node` failed, the dependents that report its failure in
    ///   their own result (chained steps taking their input from it); the others are cancelled
    ///   under ``PipelineFailurePolicy/cancelDependents``.
    mutating func finished(_ node: Int, failed: Bool, reportedBy: [Int] = []) -> Action? {
        guard phase[node] != .finished else { return nil }
        if phase[node] == .waiting {
            preconditionFailure("Internal inconsistency: node \(node) finished before it was launched")
        }
        phase[node] = .finished
        unfinishedCount -= 1
        var action = Action()
        if failed && !cancelledAll {
            if firstFailure == nil { firstFailure = node }
            switch failurePolicy {
            case .cancelAll:
                action = cancelAll()
            case .cancelDependents:
                for dependent in dependents[node] where !reportedBy.contains(dependent) {
                    markCancelled(dependent, into: &action)
                }
            }
        }
        let cancelledHere = failed ? Set(action.cancel) : []
        for dependent in dependents[node] {
            remaining[dependent] -= 1
            if remaining[dependent] == 0, phase[dependent] == .waiting {
                phase[dependent] = .launched
                // Marked cancelled by another thread, which cancels it after releasing the lock:
                // cancel it here as well, so that it is cancelled before it is queued.
                if markedCancelled[dependent] && !cancelledHere.contains(dependent) {
                    action.cancel.append(dependent)
                }
                action.launch.append(dependent)
            }
        }
        return action
    }

    /// Cancels everything unfinished, and launches every waiting node so that it finishes.
    mutating func cancelAll() -> Action {
        guard !cancelledAll else { return Action() }
        cancelledAll = true
        var action = Action()
        for node in phase.indices where phase[node] != .finished {
            markCancelled(node, into: &action)
            if phase[node] == .waiting {
                phase[node] = .launched
                action.launch.append(node)
            }
        }
        return action
    }

    private mutating func markCancelled(_ node: Int, into action: inout Action) {
        guard !markedCancelled[node], phase[node] != .finished else { return }
        markedCancelled[node] = true
        action.cancel.append(node)
    }
}
