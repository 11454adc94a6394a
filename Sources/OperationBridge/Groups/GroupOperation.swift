import Foundation

/// An operation that runs a graph of operations and async steps — its children — and ends with
/// a typed result built from theirs: a group of operations that is itself an operation.
///
/// ```swift
/// let downloads = urls.map { DownloadOperation($0) }  // AsyncResultOperation<Data, DownloadError>
/// let batch = try GroupOperation(collecting: downloads, maxConcurrentChildren: 4)
/// let files = try await queue.run(batch)             // [Data], in order; throws(DownloadError)
/// ```
///
/// A group is an ``AsyncResultOperation``: queue it, depend on it, chain it with `then`, nest it
/// in another group, put it in a ``Pipeline``, await it, observe it. Its children run through
/// the same scheduler as a ``Pipeline`` (linear time, whatever the graph), each one once its
/// dependencies inside the group have finished; dependencies on operations outside the group are
/// honoured as usual.
///
/// ## Children
/// The children run on a queue of the group's: the package's queue without a width limit, or —
/// with `maxConcurrentChildren` — a queue of its own with that width. They never take a slot of
/// the group's queue, so nesting groups on a queue with one slot never waits for itself. Do not
/// add a child to a queue yourself (Foundation traps on adding an operation to two queues); one
/// already started or finished is only observed.
///
/// More children join with ``addChild(_:)`` and ``addChildren(_:)`` until the group finishes —
/// while it is pending, while it runs, from a child's own work. A child reaches its group through
/// a reference it is given; capture it weakly (the group keeps its children, so a strong
/// reference would be a cycle that outlives the work):
///
/// ```swift
/// let crawl = try GroupOperation<Void, any Error>([])
/// try crawl.addChild(
///     TaskOperation { [weak crawl] () async throws -> Void in
///         for url in try await links(of: home) {
///             try crawl?.addChild(DownloadOperation(url))
///         }
///     })
/// try await queue.run(crawl)  // after every download, those added while it ran included
/// ```
///
/// The group finishes once every child — those added included — has finished; an addition that
/// races the last child's finish either joins the group (which then waits for it) or throws
/// ``GroupOperationError/finished``. An added child takes part in the failure policy, the result,
/// ``childEvents``, the progress and ``OperationObserver/didAddChild(_:to:)`` like the first ones.
///
/// ## Result
/// When every child has finished and none failed, the group's result is what `makingResult`
/// returns or throws (for ``init(collecting:failurePolicy:maxConcurrentChildren:)``, all the
/// results in order). When one failed, the group fails with the first failure: the child's own
/// failure when it has the group's `Failure` type (any failure, for `any Error`), otherwise an
/// ``UpstreamFailedError`` naming the child, converted as for a chained step (see
/// ``UpstreamFailureRepresentable``; ``Bridge/upstreamFailure`` has it either way).
/// ``firstFailure`` tells which child failed and how. The `failurePolicy` says what a failure does
/// to the other children (see ``PipelineFailurePolicy``).
///
/// ## Cancellation and threading
/// Cancelling the group — or timing it out (``Bridge/limitRunningTime(to:clock:)``) —
/// cancels (or times out) every unfinished child, and the group finishes once all of them have:
/// never before its children. A group cancelled before it starts queues its children cancelled,
/// so that they finish without running, and finishes once they have when its queue starts it.
/// All members are thread-safe.
public final class GroupOperation<Success: Sendable, Failure: Error>: AsyncResultOperation<Success, Failure>,
    ProgressReporting, @unchecked Sendable
{
    /// The children, without duplicates, in the order they joined: those given to the initializer,
    /// then those added. Thread-safe; grows until the group finishes.
    public var children: [Operation] { lock.withCriticalSection { childList } }
    /// What a failed child does to the others. Immutable.
    public let failurePolicy: PipelineFailurePolicy

    private let scheduler: GraphScheduler
    private let events: GroupEvents
    private let makeResult: @Sendable ([Operation]) throws(Failure) -> Success
    // Safety: guarded by the inherited `lock`.
    private var childrenStarted = false
    /// The children, by node of the scheduler. Guarded by the inherited `lock`.
    private var childList: [Operation]

    /// Creates a group of `children` whose result `makingResult` builds once all of them have
    /// succeeded.
    ///
    /// ```swift
    /// let profile = FetchProfileOperation(id)   // AsyncResultOperation<Profile, APIError>
    /// let avatar = FetchAvatarOperation(id)     // AsyncResultOperation<Image, APIError>
    /// let card = try GroupOperation([profile, avatar]) { () throws(APIError) -> Card in
    ///     Card(profile: try profile.result!.get(), avatar: try avatar.result!.get())
    /// }
    /// ```
    ///
    /// ## Cancellation and threading
    /// Safe from any thread; nothing runs until the group starts. `makingResult` is called once,
    /// only when every child has finished without failing, on the thread of the last one to
    /// finish — never when the group is cancelled.
    ///
    /// - Parameters:
    ///   - children: The operations — classic ones, ``TaskOperation``s, chained steps, other
    ///     groups; an operation listed twice runs once.
    ///   - failurePolicy: What a failed child does to the others; by default the children that
    ///     depend on it do not run and the others go on.
    ///   - maxConcurrentChildren: How many children may run at once; `nil` (the default) for no
    ///     limit. Less than 1 is a programmer error: it traps, with a message.
    ///   - makingResult: Builds the group's result from its children's.
    /// - Throws: ``PipelineError/dependencyCycle(operations:)`` when the children's dependencies
    ///   form a cycle.
    public convenience init(
        _ children: [Operation],
        failurePolicy: PipelineFailurePolicy = .cancelDependents,
        maxConcurrentChildren: Int? = nil,
        makingResult: @escaping @Sendable () throws(Failure) -> Success
    ) throws(PipelineError) {
        try self.init(
            children, failurePolicy: failurePolicy, maxConcurrentChildren: maxConcurrentChildren,
            makingResultFromChildren: { _ throws(Failure) in try makingResult() })
    }

    /// The designated initializer: `makingResult` is given every child, added ones included.
    init(
        _ children: [Operation],
        failurePolicy: PipelineFailurePolicy,
        maxConcurrentChildren: Int?,
        makingResultFromChildren makingResult: @escaping @Sendable ([Operation]) throws(Failure) -> Success
    ) throws(PipelineError) {
        var seen = Set<ObjectIdentifier>()
        let unique = children.filter { seen.insert(ObjectIdentifier($0)).inserted }
        let events = GroupEvents(children: unique)
        self.scheduler = try GraphScheduler(
            unique, queue: Self.childQueue(width: maxConcurrentChildren), failurePolicy: failurePolicy,
            growable: true, onFinish: events.childFinished)
        self.childList = unique
        self.failurePolicy = failurePolicy
        self.events = events
        self.makeResult = makingResult
        super.init()
        scheduler.whenAllFinished(events.allFinished)
    }

    /// A Foundation `Progress` that follows the group's ``Bridge/operationProgress`` —
    /// its children's progress, each weighing one — for `ProgressReporting` code; see
    /// ``OperationProgress/foundationProgress``. Cancelling it cancels the group. Thread-safe.
    public var progress: Progress { progressHandedOut.foundationProgress }

    /// The package's own step: a failed dependency stops it, whatever `Failure` can say.
    override var skipsAfterUpstreamFailure: Bool { true }

    override func makeOperationProgress(finished: Bool, cancelled: Bool, ran: Bool) -> OperationProgress {
        OperationProgress(children: childList, finished: finished, cancelled: cancelled)
    }

    override var childrenLocked: [Operation] { childList }

    private static func childQueue(width: Int?) -> OperationQueue {
        guard let width else { return SharedQueues.unbounded }
        guard width >= 1 else {
            // `fatalError`, not `preconditionFailure`: the message must survive release builds.
            fatalError("GroupOperation needs maxConcurrentChildren of at least 1 (or nil, for no limit), not \(width)")
        }
        let queue = OperationQueue()
        queue.name = "OperationBridge.GroupOperation"
        queue.maxConcurrentOperationCount = width
        return queue
    }

    /// The first child that failed on its own — not stopped because another child failed — with
    /// its index in ``children`` and its failure; `nil` while none has. Thread-safe.
    public var firstFailure: StepFailure? {
        scheduler.firstFailure.map { node, reason in
            StepFailure(index: node, operation: scheduler.operation(node), reason: reason)
        }
    }

    /// Adds `child` to the group: it runs like the first children, once its dependencies inside
    /// the group have finished. ProcedureKit's `addChild`.
    ///
    /// ```swift
    /// let sync = try GroupOperation<Void, any Error>([fetchIndex])
    /// fetchIndex.onResult = { [weak sync] result in
    ///     for page in (try? result.get()) ?? [] {
    ///         try? sync?.addChild(FetchPageOperation(page))
    ///     }
    /// }
    /// ```
    ///
    /// - A pending group runs the child when it starts; a running group at once (or once its
    ///   dependencies inside the group have finished, or a slot of `maxConcurrentChildren` is
    ///   free). A child may add children to its own group: the group cannot finish while it runs.
    /// - A group that is cancelled (or timed out, or stopped before it ran) but not finished yet
    ///   takes the child and cancels it at once (times it out): queued cancelled, it finishes
    ///   without running, and the group still finishes only after it. So does the failure policy:
    ///   under ``PipelineFailurePolicy/cancelAll`` after a failure, the child is cancelled; a child
    ///   that depends on a failed one is stopped with the failure (``Bridge/upstreamFailure``),
    ///   or, not the package's, runs as Foundation would and passes it on.
    /// - Once the group has finished — or every child has finished and the group is finishing —
    ///   the child is not added, nothing is done to it, and this throws
    ///   ``GroupOperationError/finished``: run it elsewhere, or drop it.
    /// - An operation that is a child already is left as it is (an operation joins once).
    ///
    /// The child joins ``children`` (with the next index), ``childEvents``, the group's progress
    /// (one unit more) and, for a group made with ``init(collecting:failurePolicy:maxConcurrentChildren:)``,
    /// its result when it is an `AsyncResultOperation` of the group's element and failure types.
    /// A group made with `makingResult` leaves the result to that closure, which runs after every
    /// child, added ones included, has finished. Observers of the group are told
    /// (``OperationObserver/didAddChild(_:to:)``).
    ///
    /// ## Cancellation and threading
    /// Safe from any thread, concurrently with the group's finish: the addition and the last
    /// child's finish are decided under one lock, so the child either joins (and the group waits
    /// for it) or the call throws — it is never lost. Returns at once.
    ///
    /// - Throws: ``GroupOperationError/finished`` as above; ``GroupOperationError/dependencyCycle(operations:)``
    ///   when the child is the group itself or its dependencies form a cycle (nothing is added).
    public func addChild(_ child: Operation) throws(GroupOperationError) {
        try addChildren([child])
    }

    /// Adds `children` to the group, in order, at once: all of them or — when the group has
    /// finished or their dependencies form a cycle — none. See ``addChild(_:)``; adding a batch
    /// whose members depend on each other costs one pass over them, however many.
    ///
    /// ## Cancellation and threading
    /// As ``addChild(_:)``.
    ///
    /// - Throws: As ``addChild(_:)``.
    public func addChildren(_ children: [Operation]) throws(GroupOperationError) {
        if children.contains(where: { $0 === self }) { throw .dependencyCycle(operations: [self]) }
        let addition: GraphScheduler.Addition
        var progressToGrow: OperationProgress?
        var observers: [ErasedOperationObserver] = []
        do {
            addition = try scheduler.add(children, timingOut: bridge.isTimedOut) { _, added in
                // Under the scheduler's lock, before any of them can run: the children list, the
                // event sequences and the observers to tell agree with the scheduler's nodes.
                (progressToGrow, observers) = lock.withCriticalSection {
                    childList.append(contentsOf: added)
                    return (rare?.progress, rare?.operationObservers ?? [])
                }
                events.add(added)
            }
        } catch {
            guard case .dependencyCycle(let operations) = error else { throw .dependencyCycle(operations: []) }
            throw .dependencyCycle(operations: operations)
        }
        guard case .added(_, let added) = addition else { throw .finished }
        progressToGrow?.addAggregated(added)
        for observer in observers {
            for child in added { observer.didAddChild(child, self) }
        }
    }

    /// The lifecycle events of the children, added ones included, as an `AsyncSequence` that ends
    /// once every child has finished and the group takes no more (it is finishing).
    ///
    /// ```swift
    /// for await event in batch.childEvents where event.event == .finished {
    ///     progress.completedUnitCount += 1
    /// }
    /// ```
    ///
    /// Each access makes a new sequence that starts with the events that have already happened.
    /// The package's operations report ``OperationEvent/started``, ``OperationEvent/cancelled``
    /// and ``OperationEvent/finished``; other operations (a `BlockOperation`, say) only
    /// ``OperationEvent/finished``. A child's events are in order; events of different children
    /// interleave as they happen.
    ///
    /// ## Cancellation and threading
    /// Cancelling the iterating task ends the iteration; nothing is cancelled. Events are buffered
    /// until read (at most three per child).
    public var childEvents: AsyncStream<GroupChildEvent> {
        events.subscribe()
    }

    /// A group started after it was stopped (cancelled, or an upstream or condition failed) stops
    /// its children — queued cancelled, they finish without running — and finishes once they have
    /// all finished: never before them.
    override func whenReadyToFinishWithoutRunning(_ finish: @escaping @Sendable () -> Void) {
        stopChildren()
        scheduler.whenAllFinished(finish)
        scheduler.closeWhenDrained()
    }

    /// Starts the children; the group finishes once all of them have.
    ///
    /// ## Cancellation and threading
    /// Called by the group's queue, on one of its threads; it returns at once (the children run
    /// on the group's own queue). Do not call it yourself.
    public override func main() {
        if claimChildrenStart() { scheduler.start() }
        scheduler.whenAllFinished { [self] in childrenFinished() }
        // From now on, the group ends once its children have: no child can join after that.
        scheduler.closeWhenDrained()
    }

    /// Cancels the group and every unfinished child (see the type's documentation).
    ///
    /// ## Cancellation and threading
    /// Safe from any thread, any number of times; the group finishes once every child has.
    public override func cancel() {
        super.cancel()
        cancelChildren()
    }

    /// Cancels the group with `error` as its result, and every unfinished child.
    ///
    /// ## Cancellation and threading
    /// As ``cancel()``: safe from any thread; the group finishes once every child has.
    public override func cancel(with error: Failure) {
        super.cancel(with: error)
        cancelChildren()
    }

    private func cancelChildren() {
        guard isCancelled else { return }
        stopChildren()
    }

    private func stopChildren() {
        scheduler.cancelAll(timingOut: bridge.isTimedOut)
        // Not started: the cancelled children are queued now, so that they finish.
        if claimChildrenStart() { scheduler.start() }
    }

    /// Whether this call is the one to start the scheduler.
    private func claimChildrenStart() -> Bool {
        lock.withCriticalSection {
            defer { childrenStarted = true }
            return !childrenStarted
        }
    }

    private func childrenFinished() {
        if let failure = scheduler.firstFailure, !isCancelled {
            let child = scheduler.operation(failure.node)
            if case .failed(let error) = failure.reason, child is any FailureReporting, let typed = error as? Failure {
                finish(with: .failure(typed))
            } else {
                finishWithoutRunning(
                    reporting: UpstreamFailedError(describing: child, reason: failure.reason), onlyIfPending: false)
            }
            return
        }
        if isCancelled { return finish() }
        do throws(Failure) {
            finish(with: .success(try makeResult(children)))
        } catch {
            finish(with: .failure(error))
        }
    }
}

extension GroupOperation {
    /// Creates a group whose result is the success values of `children`, in their order.
    ///
    /// ```swift
    /// let batch = try GroupOperation(collecting: downloads)
    /// let files: [Data] = try await queue.run(batch)
    /// ```
    ///
    /// The first failure fails the group with that child's failure (see the type's
    /// documentation). Under ``PipelineFailurePolicy/cancelAll`` it also cancels the other
    /// children, which suits a batch whose result is all or nothing. Children added later
    /// (``addChild(_:)``) that are `AsyncResultOperation<Element, Failure>`s — subclasses included —
    /// add their values after these, in the order they joined; other added children (glue) add
    /// none, but their failure fails the group all the same.
    ///
    /// ## Cancellation and threading
    /// As ``init(_:failurePolicy:maxConcurrentChildren:makingResult:)``.
    ///
    /// - Throws: ``PipelineError/dependencyCycle(operations:)`` when the children's dependencies
    ///   form a cycle.
    public convenience init<Element: Sendable>(
        collecting children: [AsyncResultOperation<Element, Failure>],
        failurePolicy: PipelineFailurePolicy = .cancelDependents,
        maxConcurrentChildren: Int? = nil
    ) throws(PipelineError) where Success == [Element] {
        let initialCount = Set(children.map(ObjectIdentifier.init)).count
        try self.init(
            children, failurePolicy: failurePolicy, maxConcurrentChildren: maxConcurrentChildren,
            makingResultFromChildren: { (all: [Operation]) throws(Failure) -> [Element] in
                // The children given, in their order (one listed twice, twice), then every child
                // added later that is a result operation of the element type, as they joined.
                let added = all.dropFirst(initialCount).compactMap { $0 as? AsyncResultOperation<Element, Failure> }
                return try (children + added).map { child throws(Failure) -> Element in
                    guard let result = child.result else {
                        preconditionFailure("Internal inconsistency: a child that did not fail has no result")
                    }
                    return try result.get()
                }
            })
    }

    /// Creates a group that succeeds when all of `children` do: the classic "all done" aggregate,
    /// for operations of any kind.
    ///
    /// ```swift
    /// let allDownloaded = try GroupOperation<Void, any Error>(downloads)
    /// allDownloaded.bridge.whenFinished(on: .queue(.main)) { result in
    ///     print((try? result?.get()) != nil ? "all downloaded" : "some failed")
    /// }
    /// queue.addOperation(allDownloaded)
    /// ```
    ///
    /// ## Cancellation and threading
    /// As ``init(_:failurePolicy:maxConcurrentChildren:makingResult:)``.
    ///
    /// - Throws: ``PipelineError/dependencyCycle(operations:)`` when the children's dependencies
    ///   form a cycle.
    public convenience init(
        _ children: [Operation],
        failurePolicy: PipelineFailurePolicy = .cancelDependents,
        maxConcurrentChildren: Int? = nil
    ) throws(PipelineError) where Success == Void {
        try self.init(children, failurePolicy: failurePolicy, maxConcurrentChildren: maxConcurrentChildren) {}
    }
}

extension GroupOperation: CustomReflectable {
    /// A mirror of the operation's public state (name, whether it is executing, finished or
    /// cancelled, its result, its children by type and name), not of its stored properties: on
    /// Linux those reach its queue and, through Foundation's, other operations that threads free
    /// meanwhile, and Swift Testing reflects the values of a failed expectation (Design.md,
    /// "Reflection"). Thread-safe.
    public var customMirror: Mirror {
        operationMirror(of: self, ["children": children.map(mirroredOperation)])
    }
}
