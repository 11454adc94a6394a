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
/// ## Failures
/// A step that fails (a failure result, or cancelled) stops the package's steps that depend on
/// it, under ``PipelineFailurePolicy/cancelDependents``; under ``PipelineFailurePolicy/cancelAll``
/// it also cancels every step that does not depend on it, and the dependents that are not the
/// package's. A stopped step does not run and finishes with ``Bridge/upstreamFailure``
/// (and, where its `Failure` can express it, a result saying so): the root cause, passed on
/// unchanged through any number of glue operations. Operations that are not the package's keep
/// Foundation's semantics under ``PipelineFailurePolicy/cancelDependents``: they run once their
/// dependencies have finished, whatever the outcome, and their own code decides; the scheduler
/// remembers the cause they ran after, and stops the package's steps behind them with it.
/// Chained steps that take their input from the failed step are left to report it themselves
/// (their ``ChainedAsyncResultOperation/upstreamFailurePolicy`` applies).
///
/// ## Growing
/// A scheduler made `growable` (a ``GroupOperation``'s) takes more operations while it runs
/// (``add(_:timingOut:registering:)``), and counts as finished only once it is *closed*: when
/// ``closeWhenDrained()`` was asked for and every operation has finished, in one critical
/// section, so that an addition racing the last finish either joins the run or is refused —
/// never lost, never counted after the end. Other schedulers are closed from the start.
///
/// Safety: the mutable state — `machine`, `onFinish`, `drainWaiters`, `drainCallbacks`,
/// `waitersAbandoned`, `timedOut`, `added`, `nodeOf`, `closeRequested`, `closed` and `reporting` — is
/// only touched while holding `lock`; queue calls, cancellations and callbacks run after the lock
/// is released.
final class GraphScheduler: @unchecked Sendable {
    /// Called once per operation (by node index), after it has finished. May run on any thread,
    /// concurrently for different nodes.
    typealias FinishHandler = @Sendable (_ node: Int) -> Void

    /// The distinct operations, in first-seen order.
    let operations: [Operation]
    /// For each position of the input array, the node of its operation (duplicates share one).
    let nodeOfPosition: [Int]

    /// For each node created with the scheduler, the nodes that depend on it (read without the
    /// lock unless the scheduler is `growable`: an addition may give a node new dependents).
    private let dependents: [SmallList<Int>]
    /// Dependencies on operations outside the set, by dependent node.
    private let outsideDependencies: [(node: Int, dependency: Operation)]
    /// For each node, how many of its dependencies the queue has surely counted finished once the
    /// scheduler has seen them all finish: its in-set dependencies when they are all the
    /// package's operations (whose finish observers run after Foundation's bookkeeping, or say
    /// when it may still run on another thread) and it has none outside the set; otherwise 0
    /// (see `OperationQueue.enqueue(_:settledDependencies:)`).
    private let settledDependencyCount: [Int]
    /// Where ready operations are added; `nil` when the operations are only observed.
    let queue: OperationQueue?
    private let lock = OperationLock()
    // Unchecked exclusivity: `lock` guards the state below, and each finish reads several of
    // these fields (Design.md, "CPU per operation").
    @exclusivity(unchecked) private var machine: GraphStateMachine
    @exclusivity(unchecked) private var onFinish: FinishHandler?
    @exclusivity(unchecked) private var drainWaiters: [CompletionSlot<Bool>] = []
    @exclusivity(unchecked) private var drainCallbacks: [@Sendable () -> Void] = []
    @exclusivity(unchecked) private var waitersAbandoned = false
    @exclusivity(unchecked) private var timedOut = false
    /// Whether operations may be added after creation (``add(_:timingOut:registering:)``).
    private let growable: Bool
    /// The operations added after creation, as nodes `operations.count...`.
    @exclusivity(unchecked) private var added = AddedNodes()
    /// The node of each operation, for a `growable` scheduler (empty otherwise).
    @exclusivity(unchecked) private var nodeOf: [ObjectIdentifier: Int] = [:]
    /// ``closeWhenDrained()`` was called: the set closes once every operation has finished.
    @exclusivity(unchecked) private var closeRequested: Bool
    /// The set is closed: it takes no more operations, and it has finished once they all have.
    @exclusivity(unchecked) private var closed: Bool
    /// Finishes recorded whose `onFinish` report has not returned yet (counted for a growable set
    /// only).
    @exclusivity(unchecked) private var reporting = 0

    /// The operations added to a growable scheduler, with what the scheduler keeps per node.
    private struct AddedNodes {
        var operations: [Operation] = []
        var settledDependencyCount: [Int] = []
    }

    /// Builds the graph and checks it for cycles. Nothing runs yet.
    ///
    /// - Parameters:
    ///   - operations: The operations; an operation listed twice is scheduled once.
    ///   - queue: Where ready operations are added; `nil` to only observe operations that are
    ///     already queued elsewhere.
    ///   - failurePolicy: What a failed step does to the others.
    ///   - onFinish: Called for every node as it finishes — also for nodes that finish when the
    ///     set is cancelled before it starts; or given to ``start(onFinish:)``.
    /// - Throws: ``PipelineError/dependencyCycle(operations:)`` when the dependencies form a
    ///   cycle — inside the set, or through unfinished operations outside it.
    init(
        _ operations: [Operation],
        queue: OperationQueue?,
        failurePolicy: PipelineFailurePolicy,
        growable: Bool = false,
        onFinish: FinishHandler? = nil
    ) throws(PipelineError) {
        var nodeOf: [ObjectIdentifier: Int] = [:]
        nodeOf.reserveCapacity(operations.count)
        var unique: [Operation] = []
        unique.reserveCapacity(operations.count)
        var positions: [Int] = []
        positions.reserveCapacity(operations.count)
        // What the scheduler needs of each operation's type, asked once: a class cast each,
        // where the arrays below used to cast again (and look up a protocol conformance).
        var isPackageOperation: [Bool] = []
        var foreign: [Bool] = []
        var outcomeOfItsOwn: [Bool] = []
        isPackageOperation.reserveCapacity(operations.count)
        foreign.reserveCapacity(operations.count)
        outcomeOfItsOwn.reserveCapacity(operations.count)
        for operation in operations {
            // One hash lookup per operation: the slot is claimed for the next node when empty.
            let next = unique.count
            let node = Self.claim(&nodeOf[ObjectIdentifier(operation), default: -1], next)
            positions.append(node)
            if node == next {
                unique.append(operation)
                let packageOperation = operation as? AsyncOperation
                isPackageOperation.append(packageOperation != nil)
                foreign.append(!(packageOperation?.skipsAfterUpstreamFailure ?? false))
                outcomeOfItsOwn.append(packageOperation?.hasOutcomeOfItsOwn ?? false)
            }
        }
        // A small list per node: the first dependency inline, no array to allocate for a chain's
        // or a fan-out's single dependency.
        var outsideDependencies: [(node: Int, dependency: Operation)] = []
        var dependencies: [SmallList<Int>] = []
        dependencies.reserveCapacity(unique.count)
        for (node, operation) in unique.enumerated() {
            var inside = SmallList<Int>()
            for dependency in operation.dependencies {
                if let dependencyNode = nodeOf[ObjectIdentifier(dependency)] {
                    inside.append(dependencyNode)
                } else {
                    outsideDependencies.append((node, dependency))
                }
            }
            dependencies.append(inside)
        }
        let machine = GraphStateMachine(
            dependencies: dependencies,
            foreign: foreign,
            outcomeOfItsOwn: outcomeOfItsOwn,
            failurePolicy: failurePolicy,
            growable: growable)
        if let cycle = machine.nodesOnCycles() {
            throw .dependencyCycle(operations: cycle.map { unique[$0] })
        }
        if let cycle = Self.cycleThroughOutsideOperations(unique, nodeOf: nodeOf, outside: outsideDependencies) {
            throw .dependencyCycle(operations: cycle)
        }
        self.operations = unique
        self.nodeOfPosition = positions
        self.dependents = machine.dependents
        self.outsideDependencies = outsideDependencies
        var settled = dependencies.map { nodeDependencies in
            nodeDependencies.allSatisfy { isPackageOperation[$0] } ? nodeDependencies.count : 0
        }
        for (node, _) in outsideDependencies { settled[node] = 0 }
        self.settledDependencyCount = settled
        self.queue = queue
        self.machine = machine
        self.onFinish = onFinish
        self.growable = growable
        self.closeRequested = !growable
        self.closed = !growable
        if growable { self.nodeOf = nodeOf }
    }

    /// The node in `slot`, after storing `next` there when it held none (-1).
    @inline(__always)
    private static func claim(_ slot: inout Int, _ next: Int) -> Int {
        if slot < 0 { slot = next }
        return slot
    }

    /// The operation of `node`, one given at creation or added later.
    func operation(_ node: Int) -> Operation {
        if node < operations.count { return operations[node] }
        return lock.withCriticalSection { added.operations[node - operations.count] }
    }

    /// Whether every operation has finished, every finish has been reported (`onFinish`), and the
    /// set is closed — closing it now when that was asked for. Caller holds `lock`.
    private func drainedLocked() -> Bool {
        guard machine.unfinishedCount == 0 else { return false }
        if !closed && closeRequested { closed = true }
        return closed && reporting == 0
    }

    /// The waiters and callbacks to answer once the set has finished (see ``drainedLocked()``).
    private struct Drained {
        var waiters: [CompletionSlot<Bool>] = []
        var callbacks: [@Sendable () -> Void] = []

        /// Answers them. Call it without the lock.
        func answer() {
            for waiter in waiters { waiter.fulfill(true) }
            for callback in callbacks { callback() }
        }
    }

    /// The waiters and callbacks to answer now, taken, if the set has finished. Caller holds `lock`.
    private func takeDrainedLocked() -> Drained {
        guard drainedLocked() else { return Drained() }
        return Drained(waiters: takeDrainWaitersLocked(), callbacks: takeDrainCallbacksLocked())
    }

    /// Closes the set once every operation has finished — at once when they have: from then on
    /// ``whenAllFinished(_:)`` and ``waitForAll()`` answer, and ``add(_:timingOut:registering:)``
    /// refuses. Only for a `growable` scheduler; the others are closed from the start.
    func closeWhenDrained() {
        lock.withCriticalSection { () -> Drained in
            closeRequested = true
            return takeDrainedLocked()
        }.answer()
    }

    /// What ``add(_:timingOut:registering:)`` did.
    enum Addition {
        /// The operations not in the set yet joined it, as nodes from `firstNode` on.
        case added(firstNode: Int, operations: [Operation])
        /// The set is closed: nothing was added.
        case closed
    }

    /// Adds `newOperations` to a `growable` scheduler — pending or running, cancelled or not —
    /// unless it is closed. Operations already in the set are left out. An added operation that
    /// depends on one that failed is stopped (or inherits the cause) as if it had been there
    /// from the start; after ``cancelAll(timingOut:)`` (or under
    /// ``PipelineFailurePolicy/cancelAll`` after a failure) it is cancelled and queued at once,
    /// so that it finishes without running.
    ///
    /// - Parameters:
    ///   - timingOut: Cancel the added operations as timed out when the set is cancelled.
    ///   - registering: Called with the operations that joined and their first node, holding the
    ///     scheduler's lock, before any of them can be launched (so that an owner's list and
    ///     the nodes agree). It must not call back into the scheduler.
    /// - Throws: ``PipelineError/dependencyCycle(operations:)`` when the new operations'
    ///   dependencies form a cycle, among themselves or through unfinished operations; nothing
    ///   is added then.
    func add(
        _ newOperations: [Operation],
        timingOut: Bool,
        registering: (_ firstNode: Int, _ operations: [Operation]) -> Void
    ) throws(PipelineError) -> Addition {
        precondition(growable, "Internal inconsistency: operations added to a scheduler that is not growable")
        // Read outside the lock: they ask the operations themselves.
        var batchNode: [ObjectIdentifier: Int] = [:]
        var batch: [Operation] = []
        for operation in newOperations where batchNode[ObjectIdentifier(operation)] == nil {
            batchNode[ObjectIdentifier(operation)] = batch.count
            batch.append(operation)
        }
        let batchDependencies = batch.map(\.dependencies)
        var outside: [(node: Int, dependency: Operation)] = []
        let local = batchDependencies.enumerated().map { node, dependencies in
            var inside = SmallList<Int>()
            for dependency in dependencies {
                if let dependencyNode = batchNode[ObjectIdentifier(dependency)] {
                    inside.append(dependencyNode)
                } else {
                    outside.append((node, dependency))
                }
            }
            return inside
        }
        let foreign = batch.map { !(($0 as? AsyncOperation)?.skipsAfterUpstreamFailure ?? false) }
        let outcomeOfItsOwn = batch.map { ($0 as? AsyncOperation)?.hasOutcomeOfItsOwn ?? false }
        let cycleCheck = GraphStateMachine(
            dependencies: local, foreign: foreign, outcomeOfItsOwn: outcomeOfItsOwn, failurePolicy: .cancelDependents)
        if let cycle = cycleCheck.nodesOnCycles() {
            throw .dependencyCycle(operations: cycle.map { batch[$0] })
        }
        if let cycle = Self.cycleThroughOutsideOperations(batch, nodeOf: batchNode, outside: outside) {
            throw .dependencyCycle(operations: cycle)
        }
        // The finished dependencies whose failure each operation reports itself (a chained step
        // taking its input from one); unfinished ones are asked when they finish.
        let handles = batch.enumerated().map { node, operation in
            Set(
                batchDependencies[node].filter { $0.isFinished && operation.reportsFailure(ofUpstream: $0) }
                    .map(ObjectIdentifier.init))
        }
        let settledCandidates = batchDependencies.map { dependencies in
            dependencies.allSatisfy { $0 is AsyncOperation }
        }
        let outcome = lock.withCriticalSection { () -> (Addition, GraphStateMachine.Action) in
            guard !closed else { return (.closed, GraphStateMachine.Action()) }
            let firstNode = operations.count + added.operations.count
            var joined: [Int] = []  // batch positions of the operations not in the set yet
            for (position, operation) in batch.enumerated() where nodeOf[ObjectIdentifier(operation)] == nil {
                nodeOf[ObjectIdentifier(operation)] = firstNode + joined.count
                joined.append(position)
            }
            var newNodes: [GraphStateMachine.NewNode] = []
            for position in joined {
                let newOperation = batch[position]
                var inSet: [Int] = []
                var outsideCount = 0
                for dependency in batchDependencies[position] {
                    if let node = nodeOf[ObjectIdentifier(dependency)] {
                        inSet.append(node)
                    } else {
                        outsideCount += 1
                    }
                }
                let handled = inSet.filter { handles[position].contains(ObjectIdentifier(operation(lockedNode: $0))) }
                newNodes.append(
                    GraphStateMachine.NewNode(
                        dependencies: inSet, foreign: foreign[position], outcomeOfItsOwn: outcomeOfItsOwn[position],
                        handles: handled))
                added.operations.append(newOperation)
                added.settledDependencyCount.append(
                    settledCandidates[position] && outsideCount == 0 ? Set(inSet).count : 0)
            }
            let joinedOperations = joined.map { batch[$0] }
            if !joinedOperations.isEmpty { registering(firstNode, joinedOperations) }
            return (.added(firstNode: firstNode, operations: joinedOperations), machine.add(newNodes))
        }
        guard case .added(_, let joined) = outcome.0 else { return outcome.0 }
        let joinedIDs = Set(joined.map(ObjectIdentifier.init))
        for (node, dependency) in outside
        where !dependency.isFinished && joinedIDs.contains(ObjectIdentifier(batch[node])) {
            let step = batch[node]
            _ = FinishObservation.observe(dependency) { withExtendedLifetime(step) {} }
        }
        if queue != nil {
            for case let step as AsyncOperation in joined { step.expectPackageAdmission() }
        }
        perform(stops: outcome.1, timingOut: timingOut)
        launch(outcome.1.launch)
        return outcome.0
    }

    /// The operation of `node`. Caller holds `lock`.
    private func operation(lockedNode node: Int) -> Operation {
        node < operations.count ? operations[node] : added.operations[node - operations.count]
    }

    /// The dependents of `node`, with the operations of each. Only for a `growable` scheduler.
    private func dependentsSnapshot(of node: Int) -> [(node: Int, operation: Operation)] {
        lock.withCriticalSection {
            machine.dependents[node].map { ($0, operation(lockedNode: $0)) }
        }
    }

    /// The unfinished operations on or behind a cycle that passes through operations outside
    /// the set (`a` in the set depends on `x` outside it, and `x` depends on `a`), or `nil`.
    ///
    /// Follows the dependencies of unfinished outside operations as far as they reach; cancelled
    /// ones wait for nothing. Costs nothing when no step has an unfinished outside dependency.
    private static func cycleThroughOutsideOperations(
        _ steps: [Operation],
        nodeOf: [ObjectIdentifier: Int],
        outside: [(node: Int, dependency: Operation)]
    ) -> [Operation]? {
        var pending = outside.map(\.dependency).filter { !$0.isFinished }
        guard !pending.isEmpty else { return nil }
        // The graph of every unfinished operation reachable from the steps: steps first.
        var index = nodeOf
        var all = steps
        while let operation = pending.popLast() {
            let id = ObjectIdentifier(operation)
            guard index[id] == nil else { continue }
            index[id] = all.count
            all.append(operation)
            if !operation.isCancelled {
                pending.append(contentsOf: operation.dependencies.filter { !$0.isFinished })
            }
        }
        var dependencies = [SmallList<Int>](repeating: SmallList(), count: all.count)
        for (position, operation) in all.enumerated() where !operation.isFinished && !operation.isCancelled {
            for dependency in operation.dependencies where !dependency.isFinished {
                if let node = index[ObjectIdentifier(dependency)] { dependencies[position].append(node) }
            }
        }
        let cycle = GraphStateMachine(
            dependencies: dependencies, foreign: all.map { _ in false }, outcomeOfItsOwn: all.map { _ in false },
            failurePolicy: .cancelDependents
        ).nodesOnCycles()
        return cycle.map { $0.map { all[$0] } }
    }

    /// Starts scheduling. Call it once. `onFinish`, when given, replaces the handler given at
    /// creation: it is called for every node as it finishes.
    func start(onFinish: FinishHandler? = nil) {
        retainStepsUntilOutsideDependenciesFinish()
        admitStepsListedInTheQueue()
        if queue != nil {
            for case let step as AsyncOperation in operations { step.expectPackageAdmission() }
        }
        let ready = lock.withCriticalSection {
            if let onFinish { self.onFinish = onFinish }
            return machine.start()
        }
        var launches = SmallList<GraphStateMachine.Launch>()
        for node in ready { launches.append(GraphStateMachine.Launch(node: node, dependenciesFinished: true)) }
        launch(launches)
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
    ///
    /// - Parameter timingOut: Cancel the package's operations as timed out
    ///   (``AsyncOperation/timeOut()``): a time limit ran out.
    /// - Returns: Whether any operation was unfinished (and the run not cancelled already).
    ///   With `true`, ``isTimedOut`` becomes true when anything is cancelled — in the same
    ///   critical section that marks the set cancelled, before anything is: whoever sees an
    ///   operation finish, or a concurrent `cancelAll` find the set cancelled already (two timers
    ///   of one deadline firing together), sees it.
    @discardableResult
    func cancelAll(timingOut: Bool = false) -> Bool {
        let (action, cancels) = lock.withCriticalSection { () -> (GraphStateMachine.Action, Bool) in
            let action = machine.cancelAll()
            let cancels = !action.cancel.isEmpty || !action.stop.isEmpty
            if cancels && timingOut { timedOut = true }
            return (action, cancels)
        }
        perform(stops: action, timingOut: timingOut)
        launch(action.launch)
        return cancels
    }

    /// Whether ``cancelAll(timingOut:)`` with `true` cancelled unfinished operations. Thread-safe.
    var isTimedOut: Bool { lock.withCriticalSection { timedOut } }

    /// Answers every ``waitForAll()`` pending now with `false`, as if its task had been
    /// cancelled: a time limit ran out and its await returns at once. Later waits return `false`
    /// at once, until every operation has finished.
    func abandonWaiters() {
        let waiters = lock.withCriticalSection {
            waitersAbandoned = true
            return takeDrainWaitersLocked()
        }
        for waiter in waiters { waiter.fulfill(false) }
    }

    /// Calls `callback` once every operation has finished — at once when they have.
    func whenAllFinished(_ callback: @escaping @Sendable () -> Void) {
        let now = lock.withCriticalSection { () -> Bool in
            guard !drainedLocked() else { return true }
            drainCallbacks.append(callback)
            return false
        }
        if now { callback() }
    }

    /// The first step that failed on its own — not stopped because of another step's failure —
    /// before the run was cancelled as a whole, and how it failed.
    var firstFailure: (node: Int, reason: UpstreamFailedError.Reason)? {
        lock.withCriticalSection { machine.firstFailure }
    }

    /// For each node, whether it has been handed to the queue (or found started, finished or
    /// pending there), at this moment: for ``WaitGraph``.
    var launchedNodes: [Bool] {
        lock.withCriticalSection { machine.launchedNodes }
    }

    /// Suspends until every operation of the set has finished.
    ///
    /// - Returns: `false` when the awaiting task was cancelled first (nothing is cancelled).
    func waitForAll() async -> Bool {
        let slot = CompletionSlot<Bool>()
        let immediate = lock.withCriticalSection { () -> Bool? in
            if drainedLocked() { return true }
            if waitersAbandoned { return false }
            drainWaiters.append(slot)
            return nil
        }
        if let immediate { return immediate }
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

    /// Caller holds `lock`.
    private func takeDrainCallbacksLocked() -> [@Sendable () -> Void] {
        defer { drainCallbacks = [] }
        return drainCallbacks
    }

    // MARK: - Private

    private func launch(_ launches: SmallList<GraphStateMachine.Launch>) {
        for node in observeAndAdmit(launches) {
            nodeFinished(node, observed: false)
        }
    }

    /// How many operations ``observeAndAdmit(_:)`` admits at once.
    private static let admissionBatch = 256

    /// Observes the nodes' operations and admits them to the queue in batches of
    /// ``admissionBatch`` (one acquisition of Foundation's queue lock per batch, not per
    /// operation), so that the queue starts the first while the rest are being observed: a
    /// 16,000-step fan-out's first dependent started after 22–30 ms instead of 40–50 ms, the
    /// observation of the others no longer in front of it. Each is added unless it has started or
    /// is pending in a queue already. Returns the nodes whose operations had already finished
    /// (nothing was observed): the caller records them.
    private func observeAndAdmit(_ launches: SmallList<GraphStateMachine.Launch>) -> [Int] {
        if launches.count == 1, let only = launches.first {
            // A chain's next step: nothing to batch, and no array to allocate for it.
            guard let admission = observe(only) else { return [only.node] }
            // The list was looked at once, at the start.
            queue?.admit(
                admission.operation, listed: false, releasingForeignClaimOnFinish: false,
                settledDependencies: admission.settledDependencies)
            return []
        }
        var alreadyFinished: [Int] = []
        var admissions: [OperationQueue.AdmissionRequest] = []
        admissions.reserveCapacity(min(launches.count, Self.admissionBatch))
        for launch in launches {
            if let admission = observe(launch) {
                admissions.append(admission)
            } else {
                alreadyFinished.append(launch.node)
            }
            if admissions.count == Self.admissionBatch {
                // Here and below, `listed: false`: the list was looked at once, at the start.
                queue?.admit(contentsOf: admissions, listed: false, releasingForeignClaimOnFinish: false)
                admissions.removeAll(keepingCapacity: true)
            }
        }
        queue?.admit(contentsOf: admissions, listed: false, releasingForeignClaimOnFinish: false)
        return alreadyFinished
    }

    /// Observes the operation of a node to launch; returns how to admit it, or `nil` when it has
    /// finished already (nothing was observed).
    private func observe(_ launch: GraphStateMachine.Launch) -> OperationQueue.AdmissionRequest? {
        let node = launch.node
        let (operation, settled) =
            node < operations.count
            ? (operations[node], settledDependencyCount[node])
            : lock.withCriticalSection {
                (added.operations[node - operations.count], added.settledDependencyCount[node - operations.count])
            }
        // Strong: the scheduler must outlive its handle until every step has finished. The
        // observer is dropped when the operation finishes, so no cycle outlives the work. The
        // package's operations keep the scheduler and the node themselves: no closure to make.
        let observing =
            if let operation = operation as? AsyncOperation {
                operation.addFinishObserver(self, node: node)
            } else {
                FinishObservation.observe(operation, { self.nodeFinished(node, observed: true) }) != nil
            }
        guard observing else { return nil }
        return .init(operation: operation, settledDependencies: launch.dependenciesFinished ? settled : 0)
    }

    /// Records that `node` has finished: `observed` when its finish observer told so after
    /// Foundation's bookkeeping, rather than found finished when it was about to be observed, or
    /// told so while another thread may still be counting it out of its dependents (the queue
    /// thread that started it, on Linux: `AsyncOperation.isFinished`).
    func nodeFinished(_ node: Int, observed: Bool) {
        // Iterative, so that long runs of already-finished operations do not recurse. The node at
        // hand is kept apart from the others, so that the common finish allocates no list.
        var next: (node: Int, observed: Bool)? = (node, observed)
        var pending: [(node: Int, observed: Bool)] = []
        while let (node, observed) = next ?? pending.popLast() {
            next = nil
            let operation = self.operation(node)
            OperationQueue.releaseForeignClaim(on: operation)
            // Read outside the lock: they ask the operations themselves. A growable set may give
            // the node a dependent meanwhile: asked again then, so that every dependent is asked.
            var failure: FinishedFailure?
            var knownDependents = -1
            if operation.stepFailed {
                if growable {
                    let snapshot = dependentsSnapshot(of: node)
                    knownDependents = snapshot.count
                    failure = FinishedFailure(operation, dependents: snapshot)
                } else {
                    failure = FinishedFailure(
                        operation, dependents: dependents[node].map { ($0, operations[$0]) })
                }
            }
            let recorded = lock.withCriticalSection {
                () -> (action: GraphStateMachine.Action?, handler: FinishHandler?, drained: Drained)? in
                if knownDependents >= 0 && machine.dependents[node].count != knownDependents { return nil }
                let action = machine.finished(node, failure: failure, observed: observed)
                // Reported after the lock: until then a growable set (a group's, whose event
                // sequences end with it) does not count as finished, so that a finish reported on
                // another thread never comes after the end (see `reporting`). Other sets skip the
                // count, and its lock, on their hot path: nothing of theirs ends with the set.
                if action != nil && growable { reporting += 1 }
                return (action, onFinish, takeDrainedLocked())
            }
            guard let (action, handler, drained) = recorded else {
                next = (node, observed)
                continue
            }
            drained.answer()
            guard let action else { continue }
            // Report the node before stopping the others because of it: an operation that
            // finishes inside `cancel()` must not be delivered before the failure that caused it.
            handler?(node)
            if growable {
                lock.withCriticalSection { () -> Drained in
                    reporting -= 1
                    return takeDrainedLocked()
                }.answer()
            }
            perform(stops: action)
            for node in observeAndAdmit(action.launch) {
                pending.append((node, false))
            }
        }
    }

    private func perform(_ action: GraphStateMachine.Action) {
        perform(stops: action)
        launch(action.launch)
    }

    /// Cancels and stops the nodes the action names — with `timingOut`, the package's operations
    /// are cancelled as timed out.
    private func perform(stops action: GraphStateMachine.Action, timingOut: Bool = false) {
        for node in action.cancel {
            let operation = self.operation(node)
            if timingOut, let operation = operation as? AsyncOperation {
                operation.timeOut()
            } else {
                operation.cancel()
            }
        }
        for (node, cause) in action.stop {
            let operation = self.operation(node)
            if let operation = operation as? AsyncOperation {
                operation.finishWithoutRunning(reporting: cause, onlyIfPending: true)
            } else {
                operation.cancel()
            }
        }
    }
}

/// What the scheduler learns of a step that finished unsuccessfully, read from the operations
/// before it takes its lock.
struct FinishedFailure {
    /// How the step failed, when the failure is its own.
    let reason: UpstreamFailedError.Reason
    /// The error that stops its dependents when the scheduler did not stop the step itself: the
    /// cause the step already reports (it was stopped by an upstream failure of its own), or
    /// one naming the step.
    let causeForDependents: UpstreamFailedError
    /// Whether the step failed on its own, rather than because of an upstream failure.
    let isOwnFailure: Bool
    /// The dependents that report the failure themselves (chained steps taking their input
    /// from the failed step).
    let handledBy: [Int]

    init(_ operation: Operation, dependents: [(node: Int, operation: Operation)]) {
        reason = operation.failureReason
        let upstream = (operation as? AsyncOperation)?.bridge.upstreamFailure
        isOwnFailure = upstream == nil
        causeForDependents = upstream ?? UpstreamFailedError(describing: operation, reason: reason)
        handledBy = dependents.filter { $0.operation.reportsFailure(ofUpstream: operation) }.map(\.node)
    }
}

/// The bookkeeping of ``GraphScheduler``: which nodes wait for how many dependencies, which are
/// launched, which are finished, and which the scheduler cancelled or stopped, and why.
struct GraphStateMachine {
    private enum Phase {
        /// Waiting for in-set dependencies.
        case waiting
        /// Handed to the queue (or being observed); not finished yet.
        case launched
        /// Finished.
        case finished
    }

    /// What the scheduler did to a node, once, and why.
    private enum Mark {
        /// Cancelled: by ``GraphStateMachine/cancelAll()`` (no cause), or because another
        /// step's failure stopped everything (``PipelineFailurePolicy/cancelAll``): the cause its
        /// dependents report.
        case cancelled(cause: UpstreamFailedError?)
        /// Stopped because a step it depends on failed: it does not run and reports `cause`.
        case stopped(cause: UpstreamFailedError)

        var cause: UpstreamFailedError? {
            switch self {
            case .cancelled(let cause): cause
            case .stopped(let cause): cause
            }
        }
    }

    /// A node to observe and add to the queue.
    struct Launch {
        let node: Int
        /// Launched because its last in-set dependency finished (or it has none), each observed
        /// finishing through its finish observer — rather than to let a cancelled node finish
        /// while its dependencies may still run, or after a dependency was found finished.
        let dependenciesFinished: Bool
    }

    /// What the scheduler must do after the lock is released.
    struct Action {
        /// Nodes whose operations must be cancelled.
        var cancel: [Int] = []
        /// Nodes whose operations must finish without running, reporting the cause.
        var stop: [(node: Int, cause: UpstreamFailedError)] = []
        /// Nodes to observe and add to the queue: in a chain, one per finish, kept inline.
        var launch = SmallList<Launch>()
    }

    /// For each node, the nodes that depend on it.
    private(set) var dependents: [SmallList<Int>]
    /// For each node, whether its operation is not the package's: it runs whatever its
    /// dependencies' outcome, as Foundation runs it, unless a policy or ``cancelAll()`` cancels it.
    private var foreign: [Bool]
    /// For each node not the package's, the cause of the first failure among its dependencies
    /// (direct, or passed on through other such nodes): it runs anyway, and passes the cause on
    /// when it finishes.
    private var inherited: [UpstreamFailedError?]
    /// For each node, whether its operation has an outcome of its own (a result operation): one
    /// that ran after a failure and succeeded has recovered, and does not pass the cause on. A
    /// glue operation, which has no outcome, does.
    private var outcomeOfItsOwn: [Bool]
    private var remaining: [Int]
    /// For each node, whether one of its finished dependencies was found finished rather than
    /// observed finishing (see `GraphScheduler.nodeFinished(_:observed:)`).
    private var hasUnobservedFinish: [Bool]
    private var phase: [Phase]
    private var marks: [Mark?]
    private let failurePolicy: PipelineFailurePolicy
    private var cancelledAll = false
    /// Why everything was cancelled, when a failure under ``PipelineFailurePolicy/cancelAll`` did
    /// it: the cause the nodes added afterwards report.
    private var cancelledAllCause: UpstreamFailedError?
    /// ``start()`` was called: nodes added from now on are launched once ready.
    private var started = false
    /// Only when the set may grow: for each finished node, the cause it passed on to its
    /// dependents, if any — what a dependent added later inherits.
    private var passedCause: [UpstreamFailedError?]
    private let growable: Bool
    private(set) var unfinishedCount: Int
    /// The first node that failed on its own while the run had not been cancelled as a whole.
    private(set) var firstFailure: (node: Int, reason: UpstreamFailedError.Reason)?

    init(
        dependencies: [SmallList<Int>], foreign: [Bool], outcomeOfItsOwn: [Bool], failurePolicy: PipelineFailurePolicy,
        growable: Bool = false
    ) {
        var dependents = Array(repeating: SmallList<Int>(), count: dependencies.count)
        var remaining = Array(repeating: 0, count: dependencies.count)
        for (node, nodeDependencies) in dependencies.enumerated() {
            for dependency in nodeDependencies.uniqued() {
                dependents[dependency].append(node)
                remaining[node] += 1
            }
        }
        self.dependents = dependents
        self.foreign = foreign
        self.outcomeOfItsOwn = outcomeOfItsOwn
        self.inherited = Array(repeating: nil, count: dependencies.count)
        self.remaining = remaining
        self.hasUnobservedFinish = Array(repeating: false, count: dependencies.count)
        self.phase = Array(repeating: .waiting, count: dependencies.count)
        self.marks = Array(repeating: nil, count: dependencies.count)
        self.failurePolicy = failurePolicy
        self.unfinishedCount = dependencies.count
        self.growable = growable
        self.passedCause = growable ? Array(repeating: nil, count: dependencies.count) : []
    }

    /// A node added to a growable set (see `GraphScheduler.add(_:timingOut:registering:)`).
    struct NewNode {
        /// Its dependencies in the set, added nodes included.
        let dependencies: [Int]
        let foreign: Bool
        let outcomeOfItsOwn: Bool
        /// The finished dependencies whose failure it reports itself.
        let handles: [Int]
    }

    /// Adds nodes, which take the next indices. A node whose dependency has finished and passed a
    /// failure on is stopped (or inherits the cause) as if it had been there when it finished;
    /// after ``cancelAll()`` it is cancelled and launched at once; once ``start()`` was called,
    /// a node whose dependencies have all finished is launched.
    mutating func add(_ nodes: [NewNode]) -> Action {
        let first = phase.count
        for new in nodes {
            dependents.append(SmallList())
            foreign.append(new.foreign)
            outcomeOfItsOwn.append(new.outcomeOfItsOwn)
            inherited.append(nil)
            remaining.append(0)
            hasUnobservedFinish.append(false)
            phase.append(.waiting)
            marks.append(nil)
            passedCause.append(nil)
            unfinishedCount += 1
        }
        var action = Action()
        for (offset, new) in nodes.enumerated() {
            let node = first + offset
            for dependency in Set(new.dependencies) {
                dependents[dependency].append(node)
                guard phase[dependency] == .finished else {
                    remaining[node] += 1
                    continue
                }
                // Found finished, not observed finishing: the queue may not have counted it yet.
                hasUnobservedFinish[node] = true
                guard let cause = passedCause[dependency], !new.handles.contains(dependency) else { continue }
                if foreign[node] {
                    if inherited[node] == nil { inherited[node] = cause }
                } else {
                    mark(node, .stopped(cause: cause), into: &action)
                }
            }
        }
        for node in first..<phase.count {
            if cancelledAll {
                mark(node, .cancelled(cause: cancelledAllCause), into: &action)
                launchIfWaiting(node, into: &action)
            } else if started && remaining[node] == 0 && phase[node] == .waiting {
                phase[node] = .launched
                action.launch.append(Launch(node: node, dependenciesFinished: !hasUnobservedFinish[node]))
            }
        }
        return action
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

    /// For each node, whether it has left the waiting phase.
    var launchedNodes: [Bool] { phase.map { $0 != .waiting } }

    /// The nodes to launch first.
    mutating func start() -> [Int] {
        started = true
        var ready: [Int] = []
        for node in phase.indices where remaining[node] == 0 && phase[node] == .waiting {
            phase[node] = .launched
            ready.append(node)
        }
        return ready
    }

    /// Records that `node` finished — unsuccessfully when `failure` is given; `observed` when its
    /// finish observer said so. Returns `nil` when it was already recorded.
    mutating func finished(_ node: Int, failure: FinishedFailure?, observed: Bool) -> Action? {
        guard phase[node] != .finished else { return nil }
        if phase[node] == .waiting {
            preconditionFailure("Internal inconsistency: node \(node) finished before it was launched")
        }
        phase[node] = .finished
        unfinishedCount -= 1
        var action = Action()
        if let failure {
            // A step the scheduler stopped passes on the cause it was stopped with, unchanged, and
            // so does one not the package's that ran after a failure.
            let cause = marks[node]?.cause ?? inherited[node] ?? failure.causeForDependents
            let isRoot = marks[node] == nil && inherited[node] == nil && failure.isOwnFailure
            if isRoot && !cancelledAll {
                if firstFailure == nil { firstFailure = (node, failure.reason) }
                if failurePolicy == .cancelAll { cancelEverythingElse(becauseOf: node, cause: cause, into: &action) }
            }
            passOn(cause, from: node, except: failure.handledBy, into: &action)
            if growable { passedCause[node] = cause }
        } else if let cause = inherited[node], !outcomeOfItsOwn[node] {
            // A glue operation ran after a failure: the cause goes on through it. (A result
            // operation that succeeded after one has recovered: its dependents run.)
            passOn(cause, from: node, except: [], into: &action)
            if growable { passedCause[node] = cause }
        }
        // The nodes marked above, made into a set only when a dependent turns out to be marked:
        // most finishes mark nothing, and building the set cost them an allocation each.
        let (cancelledHere, stoppedHere) = (action.cancel.count, action.stop.count)
        var markedHere: Set<Int>?
        for dependent in dependents[node] {
            remaining[dependent] -= 1
            if !observed { hasUnobservedFinish[dependent] = true }
            if remaining[dependent] == 0, phase[dependent] == .waiting {
                phase[dependent] = .launched
                // Marked by another thread, which acts on it after releasing the lock: act here as
                // well (cancelling and stopping are idempotent), so that it is done before it is
                // queued.
                if let mark = marks[dependent] {
                    let marked =
                        markedHere
                        ?? Set(action.cancel.prefix(cancelledHere)).union(action.stop.prefix(stoppedHere).map(\.node))
                    markedHere = marked
                    if !marked.contains(dependent) { append(mark, for: dependent, to: &action) }
                }
                action.launch.append(Launch(node: dependent, dependenciesFinished: !hasUnobservedFinish[dependent]))
            }
        }
        return action
    }

    /// Hands `cause` to the dependents of `node`, but those in `handled` (which report it
    /// themselves): the package's steps are stopped with it; the others inherit it, and run.
    private mutating func passOn(
        _ cause: UpstreamFailedError, from node: Int, except handled: [Int], into action: inout Action
    ) {
        for dependent in dependents[node] where !handled.contains(dependent) {
            if foreign[dependent] {
                if inherited[dependent] == nil { inherited[dependent] = cause }
            } else {
                mark(dependent, .stopped(cause: cause), into: &action)
            }
        }
    }

    /// Cancels everything unfinished, and launches every waiting node so that it finishes.
    mutating func cancelAll() -> Action {
        guard !cancelledAll else { return Action() }
        cancelledAll = true
        var action = Action()
        for node in phase.indices where phase[node] != .finished {
            mark(node, .cancelled(cause: nil), into: &action)
            launchIfWaiting(node, into: &action)
        }
        return action
    }

    /// ``PipelineFailurePolicy/cancelAll``: the steps downstream of the failed `root` are stopped
    /// with `cause`; every other unfinished step is cancelled, and passes `cause` on. Waiting steps
    /// are launched at once so that they finish.
    private mutating func cancelEverythingElse(
        becauseOf root: Int, cause: UpstreamFailedError, into action: inout Action
    ) {
        cancelledAll = true
        cancelledAllCause = cause
        var downstream = Set<Int>()
        var frontier = [root]
        while let node = frontier.popLast() {
            for dependent in dependents[node] where downstream.insert(dependent).inserted {
                frontier.append(dependent)
            }
        }
        for node in phase.indices where phase[node] != .finished && node != root {
            mark(node, downstream.contains(node) ? .stopped(cause: cause) : .cancelled(cause: cause), into: &action)
            launchIfWaiting(node, into: &action)
        }
    }

    private mutating func launchIfWaiting(_ node: Int, into action: inout Action) {
        guard phase[node] == .waiting else { return }
        phase[node] = .launched
        action.launch.append(
            Launch(node: node, dependenciesFinished: remaining[node] == 0 && !hasUnobservedFinish[node]))
    }

    /// Marks `node` unless it is marked or finished already (the first mark wins).
    private mutating func mark(_ node: Int, _ mark: Mark, into action: inout Action) {
        guard marks[node] == nil, phase[node] != .finished else { return }
        marks[node] = mark
        append(mark, for: node, to: &action)
    }

    private func append(_ mark: Mark, for node: Int, to action: inout Action) {
        switch mark {
        case .cancelled: action.cancel.append(node)
        case .stopped(let cause): action.stop.append((node, cause))
        }
    }
}
