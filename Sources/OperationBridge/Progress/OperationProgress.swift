import Foundation

/// The progress of an operation — or of a group, a pipeline, a results sequence — that its work
/// reports and that async code watches.
///
/// Every ``AsyncOperation`` has one (``Bridge/operationProgress``), created on first use.
/// The work reports units on it: an `AsyncOperation` subclass from its own code, a
/// ``TaskOperation``, `addTask` or `then` closure through the handle it receives.
///
/// ```swift
/// let download = queue.addTask(totalUnitCount: 100) { progress in
///     for chunk in 0..<100 {
///         try await receive(chunk)
///         progress.advance(by: 1)
///     }
/// }
/// for await snapshot in download.bridge.operationProgress.updates() {
///     print(snapshot.localizedDescription)             // "37% completed", …, "100% completed"
/// }
/// ```
///
/// - Finishing the operation after it ran its work completes its progress (`fractionCompleted`
///   1), whatever units were reported — also when the work failed.
/// - Cancelling (or timing out) marks the progress cancelled, and the finish does not complete
///   it: it keeps the units the work reported (until the finish, reports still count). Nor does
///   a finish without running (cancelled before it started, stopped by an upstream failure or a
///   condition): the progress stays where it was, usually 0.
/// - Reports after the operation has finished are ignored.
/// - An aggregate (``init(aggregating:weight:)``, a group's, a pipeline's or a results
///   sequence's) reads its operations' progress, each weighted, whenever it is asked: reporting
///   on an operation never costs more because something aggregates it.
/// - ``foundationProgress`` is a Foundation `Progress` that follows this one, for code and UI
///   that take one (KVO, `ProgressView`, a parent `Progress`).
///
/// An operation that reports nothing counts as one unit, completed when it finishes. So does an
/// operation that is not the package's (a `BlockOperation`, a classic subclass), in an aggregate.
///
/// ## Cancellation and threading
/// Every member is thread-safe: a report is one atomic addition on Linux (a short lock on Apple
/// platforms) and allocates nothing, so a tight loop may report every unit; watchers read
/// snapshots at their own pace (``updates(every:clock:)`` throttles). Cancelling
/// ``foundationProgress`` cancels the operation; pausing and resuming it pause and resume the
/// operation (``Bridge/pause()``). Nothing here suspends or blocks, except iterating
/// ``updates(every:clock:)``.
public final class OperationProgress: @unchecked Sendable {
    // Safety: every `var` below is only touched while holding `lock`; `reported` synchronizes
    // itself (reports add to it without `lock`). Foundation's `Progress` objects (`views`) are
    // created while holding `FoundationProgressViews.lock` (see there), taken before `lock`, never
    // after; they are written by one thread at a time (`viewWriting`), inside
    // `FoundationProgressViews.writing(_:)`: on Linux that lock, on Apple platforms no lock.
    private let lock = OperationLock()
    /// Whether this is an aggregate, whose units come from `children`.
    private let isAggregate: Bool
    /// An aggregate's operations, with their weights; a group's grows as children join it
    /// (``addAggregated(_:)``).
    private var children: [Child]
    /// The units reported until the operation finishes, added to without `lock`.
    private let reported = ReportedUnits()
    /// The units completed, fixed when the operation finishes: later reports are ignored.
    private var completedAtFinish: Int64 = 0
    private var total: Int64
    private var finished: Bool
    private var cancelled: Bool
    /// Whether `finished` and `cancelled` follow an operation (set by its lifecycle) rather than,
    /// for an aggregate of its own, its operations.
    private let followsOperation: Bool
    /// The operation whose progress this is, to cancel when a Foundation view is cancelled, once
    /// the operation has handed the progress out (``Bridge/operationProgress``). Weak,
    /// and only then: a weak reference gives the operation a side table, an allocation, and
    /// slower reference counting for the rest of its life.
    private weak var owner: Operation?
    /// The operation, from when its closure starts running on this progress until it finishes
    /// (see ``workStarted(by:)``).
    private var runningOwner: Operation?
    /// Foundation `Progress` objects that follow this one: ``foundationProgress``, and those
    /// handed to a parent (an aggregate's view, a queue's `progress`). Read by every report:
    /// without the runtime's exclusivity check (Design.md, "CPU per operation").
    @exclusivity(unchecked) private var views: [Progress] = []
    private var primaryView: Progress?
    /// Who writes the views (``refreshViews()``): one thread at a time, which writes what the
    /// others asked for as well, so that no thread waits for another — and no lock of the
    /// package's is held while Foundation runs KVO observers on Apple platforms.
    private var viewWriting = ViewWriting.idle

    private enum ViewWriting {
        /// No thread is writing the views.
        case idle
        /// A thread is writing the views.
        case writing
        /// A thread is writing the views, and the state changed since it read it: it writes
        /// them again before it stops.
        case writingAgain
    }

    /// An operation's child in an aggregate, with its weight.
    private struct Child {
        let operation: Operation
        let weight: Int64
    }

    /// The progress of an operation — of a group, with `children`: the group's children, each
    /// weighing one — in the state given (`ran`: whether a finished operation had run its work).
    init(
        total: Int64 = 1, children: [Operation]? = nil, finished: Bool = false, cancelled: Bool = false,
        ran: Bool = false
    ) {
        self.isAggregate = children != nil
        self.children = children?.map { Child(operation: $0, weight: 1) } ?? []
        self.total = children.map { Int64($0.count) } ?? total
        self.finished = false
        self.cancelled = cancelled
        self.followsOperation = true
        if finished { finishLocked(cancelled: cancelled, ran: ran) }
    }

    /// An aggregate of `operations`' progress, each weighted by `weight`: its fraction is the
    /// weighted mean of theirs, and it has finished once they all have.
    ///
    /// ```swift
    /// // The download is nine tenths of the work, the unzipping one tenth.
    /// let overall = OperationProgress(aggregating: [download, unzip]) { $0 === download ? 9 : 1 }
    /// ```
    ///
    /// The package's operations count with their own progress; any other operation as one unit,
    /// completed when it finishes without being cancelled. An operation listed twice counts once;
    /// one of weight zero is left out — neither counted nor waited for.
    /// Its ``totalUnitCount`` is the sum of the weights; its ``completedUnitCount`` the weights of
    /// the operations that have completed. It is cancelled when one of them was.
    ///
    /// ## Cancellation and threading
    /// Reads the operations whenever it is asked for a snapshot; creating it takes no lock and
    /// changes nothing. Cancelling its ``foundationProgress`` cancels the operations. A negative
    /// weight traps (a programmer error).
    ///
    /// - Parameters:
    ///   - operations: The operations, in any state, queued or not.
    ///   - weight: Each operation's weight; 1 unless you pass another.
    public init<Element: Operation>(
        aggregating operations: some Sequence<Element>, weight: (Element) -> Int64 = { _ in 1 }
    ) {
        var seen = Set<ObjectIdentifier>()
        var children: [Child] = []
        for operation in operations where seen.insert(ObjectIdentifier(operation)).inserted {
            let weight = weight(operation)
            precondition(weight >= 0, "OperationProgress(aggregating:weight:): weight \(weight) is negative")
            // Weight zero: left out, also of when the aggregate has finished.
            if weight > 0 { children.append(Child(operation: operation, weight: weight)) }
        }
        self.isAggregate = true
        self.children = children
        self.total = children.reduce(0) { $0 + $1.weight }
        self.finished = false
        self.cancelled = false
        self.followsOperation = false
    }

    // MARK: - Reporting

    /// The units of work in total. Set it from the work, as soon as it is known (before, the
    /// operation counts as one unit); below zero, or zero with nothing completed, means unknown.
    /// A total of zero with units completed reads as done (fraction 1), as Foundation's `Progress`.
    ///
    /// For an aggregate, the sum of its weights; setting it traps (a programmer error: report on
    /// the operations). Setting it after the operation has finished does nothing. Thread-safe.
    public var totalUnitCount: Int64 {
        // An aggregate's `total` is the sum of its weights, set once.
        get { lock.withCriticalSection { total } }
        set { report { $0.total = newValue } }
    }

    /// The units of work completed. The work sets it, or adds to it with ``advance(by:)``.
    ///
    /// For an aggregate, the weights of its completed operations; setting it traps (a programmer
    /// error), as does setting a negative count. Setting it after the operation has finished
    /// does nothing. Thread-safe.
    public var completedUnitCount: Int64 {
        get { !isAggregate ? lock.withCriticalSection { completedLocked } : snapshot.completedUnitCount }
        set {
            if newValue < 0 { Self.negativeCount("completedUnitCount = \(newValue)") }
            report { $0.reported.store(newValue) }
        }
    }

    /// Adds `units` to ``completedUnitCount``: one atomic addition on Linux (a short lock on Apple
    /// platforms), no allocation, so the work may report every unit, however many. Does nothing
    /// once the operation has finished; traps on an aggregate and on a negative count (programmer
    /// errors: the work cannot take back what it reported). Thread-safe.
    public func advance(by units: Int64 = 1) {
        checkReportable()
        if units < 0 { Self.negativeCount("advance(by: \(units))") }
        if reported.add(units) { refreshViews() }
    }

    /// Traps: a negative count is a programmer error (the work cannot undo what it reported).
    private static func negativeCount(_ call: String) -> Never {
        // `fatalError`, not `preconditionFailure`: the message must survive release builds.
        fatalError("OperationProgress.\(call): a count of units cannot be negative.")
    }

    /// Applies a report, unless the operation has finished, and brings the Foundation views up to
    /// date.
    private func report(_ change: (OperationProgress) -> Void) {
        checkReportable()
        let hasViews = lock.withCriticalSection { () -> Bool in
            guard !finished else { return false }
            change(self)
            return !views.isEmpty
        }
        if hasViews { refreshViews() }
    }

    /// Traps on an aggregate, whose units come from its operations.
    private func checkReportable() {
        precondition(
            !isAggregate,
            "OperationProgress: an aggregate's units come from its operations; report on an operation's own progress")
    }

    /// The units completed: reported so far, or fixed at the finish. Callers hold `lock`.
    private var completedLocked: Int64 {
        finished ? completedAtFinish : reported.load()
    }

    // MARK: - Reading

    /// How much of the work is done, from 0 to 1; see ``ProgressSnapshot/fractionCompleted``.
    /// Thread-safe.
    public var fractionCompleted: Double { snapshot.fractionCompleted }

    /// Whether the work has ended; see ``ProgressSnapshot/isFinished``. Thread-safe.
    public var isFinished: Bool { snapshot.isFinished }

    /// Whether the work was cancelled; see ``ProgressSnapshot/isCancelled``. Thread-safe.
    public var isCancelled: Bool { snapshot.isCancelled }

    /// The progress now. For an aggregate, read from its operations (each one's lock, in turn,
    /// never two at once). Thread-safe.
    public var snapshot: ProgressSnapshot {
        guard isAggregate else { return lock.withCriticalSection { ownSnapshotLocked() } }
        let aggregated = lock.withCriticalSection { self.children }
        var totalWeight: Int64 = 0
        var completedWeight: Int64 = 0
        var weighted = 0.0
        var allFinished = true
        var anyCancelled = false
        for child in aggregated {
            let state = Self.state(of: child.operation)
            totalWeight += child.weight
            weighted += Double(child.weight) * state.fractionCompleted
            if state.isFinished && state.fractionCompleted >= 1 { completedWeight += child.weight }
            allFinished = allFinished && state.isFinished
            anyCancelled = anyCancelled || state.isCancelled
        }
        let (isFinished, isCancelled) = lock.withCriticalSection {
            followsOperation ? (finished, cancelled) : (allFinished, anyCancelled)
        }
        let fraction = totalWeight > 0 ? weighted / Double(totalWeight) : (allFinished ? 1 : 0)
        return ProgressSnapshot(
            completedUnitCount: completedWeight, totalUnitCount: totalWeight, fractionCompleted: fraction,
            isFinished: isFinished, isCancelled: isCancelled)
    }

    /// The snapshot of an operation's own progress (not an aggregate). Callers hold `lock`.
    private func ownSnapshotLocked() -> ProgressSnapshot {
        // A finish that completed the progress left `completed >= total >= 1`: a fraction of 1.
        let completed = completedLocked
        let fraction = ProgressSnapshot.fraction(completed: completed, total: total)
        return ProgressSnapshot(
            completedUnitCount: completed, totalUnitCount: total, fractionCompleted: fraction,
            isFinished: finished, isCancelled: cancelled)
    }

    /// The progress of `operation` as an aggregate counts it.
    private static func state(of operation: Operation) -> ProgressSnapshot {
        if let operation = operation as? AsyncOperation {
            return operation.ownProgress.snapshot
        }
        // Not the package's: one unit, completed when it finished without being cancelled.
        let (finished, cancelled) = (operation.isFinished, operation.isCancelled)
        let completed: Int64 = finished && !cancelled ? 1 : 0
        return ProgressSnapshot(
            completedUnitCount: completed, totalUnitCount: 1, fractionCompleted: Double(completed),
            isFinished: finished, isCancelled: cancelled)
    }

    // MARK: - The operation's lifecycle

    /// Ties the progress to the operation it belongs to, which hands it out: cancelling a
    /// Foundation view made from now on cancels the operation.
    func link(to operation: Operation) {
        lock.withCriticalSection {
            if owner == nil { owner = operation }
        }
    }

    /// The operation's closure starts running with this progress as its argument: until the
    /// operation finishes, a Foundation view made from it cancels the operation. Held strongly
    /// meanwhile, which is no cycle that outlives the work: the operation's task holds it until
    /// the finish anyway, and the finish lets go (``operationFinished(cancelled:ran:)``).
    func workStarted(by operation: Operation) {
        lock.withCriticalSection {
            if !finished { runningOwner = operation }
        }
    }

    /// The operation was cancelled (or timed out): marks the progress cancelled, and its
    /// Foundation views. Call it without holding the operation's lock.
    func operationCancelled() {
        let hasViews = lock.withCriticalSection { () -> Bool in
            guard !cancelled, !finished else { return false }
            cancelled = true
            return !views.isEmpty
        }
        if hasViews { refreshViews(final: true) }
    }

    /// `operation`, whose progress this is, was paused or resumed (``Bridge/pause()``,
    /// ``Bridge/resume()``): marks the Foundation views as it is now, those that say otherwise.
    /// The state is read while the views are written, so that of two calls racing, the views end
    /// as the operation does. Call it without holding the operation's lock.
    func operationPauseChanged(_ operation: AsyncOperation) {
        let views = lock.withCriticalSection { self.views }
        guard !views.isEmpty else { return }
        FoundationProgressViews.writing {
            let paused = operation.bridge.isPaused
            for view in views where view.isPaused != paused {
                if let view = view as? OperationProgressView {
                    view.mark(paused: paused)
                } else if paused {
                    view.pause()
                } else {
                    view.resume()
                }
            }
        }
    }

    /// The operation has finished: completes the progress if it ran its work (`ran`) and was not
    /// cancelled. Call it without holding the operation's lock.
    func operationFinished(cancelled wasCancelled: Bool, ran: Bool) {
        // The operation is let go of after the lock (Design.md, "Locks and the user's objects").
        let (hasViews, _) = lock.withCriticalSection { () -> (Bool, Operation?) in
            let runner = exchange(&runningOwner, with: nil)
            guard !finished else { return (false, runner) }
            finishLocked(cancelled: wasCancelled, ran: ran)
            return (!views.isEmpty, runner)
        }
        if hasViews { refreshViews(final: true) }
    }

    /// Marks the progress finished — and, for an operation's own progress, complete when the
    /// operation ran its work and was not cancelled. Callers hold `lock` (or initialize).
    private func finishLocked(cancelled wasCancelled: Bool, ran: Bool) {
        // A report racing the finish counts when it added before this read.
        var completed = reported.load()
        finished = true
        cancelled = cancelled || wasCancelled
        if !isAggregate && !cancelled && ran {
            if total <= 0 { total = max(completed, 1) }
            completed = max(completed, total)
        }
        completedAtFinish = completed
    }

    // MARK: - Foundation's Progress

    /// A Foundation `Progress` that follows this progress, for code that takes one: KVO on Apple
    /// platforms, a `ProgressView`, a parent `Progress` (`addChild(_:withPendingUnitCount:)`).
    ///
    /// Created on first use, the same object every time. From then on each report also updates
    /// it (Foundation's cost, about 0.15 µs a report): watch ``updates(every:clock:)`` instead
    /// where you can. It shows no units while the total is unknown, never more than the total,
    /// and stops moving once it has reached it (Foundation's parents would count it again). For
    /// an aggregate, it is a parent of Foundation progress objects that follow its operations,
    /// each with its weight as pending units.
    ///
    /// ## Cancellation and threading
    /// Cancelling it (`cancel()`) cancels the operation — for an aggregate, its operations —
    /// through its `cancellationHandler`, which Foundation may call on another thread: the
    /// operation is cancelled soon after `cancel()` returns, not necessarily before (cancel the
    /// operation itself where that matters). Once the operation has finished, or been released
    /// (a handle kept from an operation that never ran), it cancels nothing.
    ///
    /// Pausing it (`pause()`, or a parent's, which Foundation passes on to its descendants) is the
    /// operation's ``Bridge/pause()``, on the calling thread before `pause()` returns: a pending
    /// operation is held back — no queue slot, no start — until `resume()`, its
    /// ``Bridge/resume()``. An operation that has started goes on (the package's pause holds back
    /// starts, it never interrupts work), although the object says `isPaused`. The other way
    /// round, ``Bridge/pause()`` and ``Bridge/resume()`` mark it paused and resumed. For an
    /// aggregate, pausing it pauses its pending operations. Its `pausingHandler` and
    /// `resumingHandler` are yours to set; on Apple platforms the package sets them (to bring the
    /// operation to the object's `isPaused`), and setting your own replaces that.
    ///
    /// On Apple platforms, KVO observers of it (and of its parents, a queue's `progress`
    /// included) run synchronously on the thread that changed the progress — the one reporting,
    /// finishing or cancelling the operation, often a thread of the cooperative pool or of the
    /// operation's queue, never the main thread unless that is where the change was made — or
    /// on the thread writing this progress's views at that moment, which writes the other's
    /// change too. No lock of the package's is held while they run, so an observer may report
    /// progress, read the operation, or hop to the main thread with `DispatchQueue.main.sync`;
    /// update UI from the main thread as usual. On Apple platforms `Progress` is thread-safe. On
    /// Linux Foundation's `Progress` takes no lock at all and has no KVO: read it where the
    /// package does not write it (after the work has finished), or read ``snapshot`` instead.
    ///
    /// The package's operations write it before anyone is told they finished. In an aggregate,
    /// the unit of an operation that is not the package's is written as Foundation tells that
    /// operation's observers it finished (on Linux on the finishing thread, on Apple platforms
    /// from a private queue), in no set order among them: whatever waits for that operation (a
    /// task awaiting it, its group or pipeline) may go on just before the write. ``snapshot``
    /// reads the operations and is current at once.
    public var foundationProgress: Progress {
        FoundationProgressViews.create { moved in
            if let primaryView = lock.withCriticalSection({ primaryView }) { return primaryView }
            let view = makeView(moved: &moved)
            lock.withCriticalSection { primaryView = view }
            return view
        }
    }

    /// A new Foundation `Progress` that follows this one, to hand to a parent. Called inside
    /// `FoundationProgressViews.create(_:)`, which refreshes the views of the progress objects
    /// added to `moved` once it has let go of its lock.
    func makeView(moved: inout [OperationProgress]) -> Progress {
        let owner = lock.withCriticalSection { runningOwner ?? self.owner }
        let operation = owner as? AsyncOperation
        let view = operation.map { OperationProgressView(following: $0) } ?? Progress(parent: nil, userInfo: nil)
        if isAggregate {
            // An aggregate's `total` is the sum of its weights; a group's grows with its
            // children (``addAggregated(_:)``), which writes it again under the creation lock.
            let (aggregateTotal, aggregated) = lock.withCriticalSection { (self.total, self.children) }
            view.totalUnitCount = aggregateTotal
            for child in aggregated {
                view.addChild(Self.view(of: child.operation, moved: &moved), withPendingUnitCount: child.weight)
            }
        }
        if let owner {
            view.cancellationHandler = { [weak owner] in owner?.cancel() }
        }
        // Made while the operation is paused: the view says so (and so do its children's).
        if let view = view as? OperationProgressView, let operation, operation.bridge.isPaused {
            FoundationProgressViews.writing { view.mark(paused: true) }
        }
        // Written before anyone else can reach it (no observer yet, no other writer); then
        // listed, and written again after the creation if the state moved meanwhile.
        let initial = lock.withCriticalSection { viewStateLocked() }
        FoundationProgressViews.writing { write(initial, to: view) }
        let changed = lock.withCriticalSection { () -> Bool in
            views.append(view)
            // Before the state is read again below (see `ReportedUnits`): a report from now on
            // refreshes the views itself.
            reported.markViewsAdded()
            return viewStateLocked() != initial
        }
        if changed { moved.append(self) }
        return view
    }

    /// A Foundation `Progress` that follows `operation`. Called inside
    /// `FoundationProgressViews.create(_:)`.
    private static func view(of operation: Operation, moved: inout [OperationProgress]) -> Progress {
        if let operation = operation as? AsyncOperation {
            return operation.progressHandedOut.makeView(moved: &moved)
        }
        // Not the package's: one unit, completed when it finishes.
        let view = Progress(parent: nil, userInfo: nil)
        view.totalUnitCount = 1
        view.cancellationHandler = { [weak operation] in operation?.cancel() }
        let complete: @Sendable () -> Void = {
            // Asked before this closure takes the lock: `isCancelled` may be a subclass's
            // override. (Called at once, for an operation that has finished already, the caller
            // holds the lock: the override then runs inside it, as `isFinished` does in
            // `FinishObservation.observe`.) One write, which only moves forward.
            let cancelled = operation.isCancelled
            FoundationProgressViews.writing {
                if cancelled { view.cancel() } else { view.completedUnitCount = 1 }
            }
        }
        if FinishObservation.observe(operation, complete) == nil { complete() }
        return view
    }

    /// Operations joined the aggregate (children added to a running group), each weighing one: the
    /// total grows by their number, and the Foundation views made so far get a view of each.
    func addAggregated(_ operations: [Operation]) {
        guard isAggregate, !operations.isEmpty else { return }
        FoundationProgressViews.create { moved in
            let views = lock.withCriticalSection { () -> [Progress] in
                children.append(contentsOf: operations.map { Child(operation: $0, weight: 1) })
                total += Int64(operations.count)
                return self.views
            }
            for view in views {
                view.totalUnitCount += Int64(operations.count)
                for operation in operations {
                    view.addChild(Self.view(of: operation, moved: &moved), withPendingUnitCount: 1)
                }
            }
        }
    }

    /// A view was made while the state moved: writes the views again (see
    /// ``FoundationProgressViews/create(_:)``) — through the one writer, like a report: nothing
    /// here has to be visible before the call returns (a `final` write, beside the writer, could
    /// land after the writer's last pass with an older count, which left the view behind for
    /// good before it refreshed again).
    fileprivate func viewsMissedAChange() {
        refreshViews()
    }

    /// Writes the current state to every view, or leaves it to the thread writing them now.
    ///
    /// One thread writes at a time, and never waits: a thread that finds another writing marks
    /// the state as changed and returns, and the writer writes again before it stops. So KVO
    /// observers run on the thread that changed the progress, or on the one writing at that
    /// moment, with no lock of the package's held on Apple platforms. `final` (the finish, a
    /// cancellation) also writes at once even when another thread is writing: a complete or
    /// cancelled view stays so, so a stale write of the other thread cannot undo it, and whoever
    /// is told of the finish after this call sees it; the counts it wrote may be older than the
    /// writer's, so it then refreshes the views once more as a report does.
    private func refreshViews(final: Bool = false) {
        let claimed = lock.withCriticalSection { () -> Bool in
            guard viewWriting == .idle else {
                viewWriting = .writingAgain
                return false
            }
            viewWriting = .writing
            return true
        }
        if !claimed {
            if final {
                writeViews(claimingTheWriter: false)
                // Written beside the writer, this pass's count may be older than the writer's
                // last one and land after it: once more through the writer, so that the last
                // write to each view is the newest state.
                refreshViews()
            }
            return
        }
        while true {
            writeViews(claimingTheWriter: true)
            let again = lock.withCriticalSection { () -> Bool in
                guard viewWriting == .writingAgain else {
                    viewWriting = .idle
                    return false
                }
                return true
            }
            if !again { return }
        }
    }

    /// Writes the current state to every view: one read for every view, so each shows the same
    /// state. `claimingTheWriter`: the caller is the view writer, and this pass covers every
    /// change made until the read (see ``refreshViews(final:)``).
    private func writeViews(claimingTheWriter: Bool) {
        let (views, state) = lock.withCriticalSection { () -> ([Progress], ViewState) in
            if claimingTheWriter { viewWriting = .writing }
            return (self.views, viewStateLocked())
        }
        FoundationProgressViews.writing { for view in views { write(state, to: view) } }
    }

    /// What a Foundation view shows.
    private struct ViewState: Equatable {
        let completed: Int64
        let total: Int64
        let cancelled: Bool
    }

    /// The state the views show. Callers hold `lock`.
    private func viewStateLocked() -> ViewState {
        ViewState(completed: completedLocked, total: total, cancelled: cancelled)
    }

    /// Writes `state` (read with ``viewStateLocked()`` after `view` was added to `views`) to
    /// `view`. Callers are inside `FoundationProgressViews.writing(_:)`, and do not hold `lock`.
    private func write(_ state: ViewState, to view: Progress) {
        // Foundation's parents (on Linux) count a child each time it is written complete, and
        // take a child with no total and a count as complete: so a view shows no count while the
        // total is unknown, never more than the total, and stops moving once complete. A total
        // that goes back to unknown is written -1, not 0: Linux's Foundation traps when a total
        // goes from a positive value to 0.
        let viewComplete = view.totalUnitCount > 0 && view.completedUnitCount >= view.totalUnitCount
        if !isAggregate && !viewComplete {
            let total = state.total > 0 ? state.total : (view.totalUnitCount > 0 ? -1 : view.totalUnitCount)
            let completed = total > 0 ? min(max(state.completed, 0), total) : 0
            if view.totalUnitCount != total { view.totalUnitCount = total }
            if view.completedUnitCount != completed { view.completedUnitCount = completed }
        }
        // After the counts: Foundation calls the cancellation handler, which cancels the operation.
        if state.cancelled && !view.isCancelled { view.cancel() }
    }
}

/// How the package serializes its Foundation `Progress` objects.
///
/// Foundation's `Progress` on Linux has no locking at all: a write updates the object and then
/// its parents with plain stores, so two threads updating children of one parent corrupt it.
/// On Apple platforms `Progress` is thread-safe, and a write runs the KVO observers of the object
/// and its parents synchronously, on the writing thread: an observer that hops to the main thread
/// synchronously (`DispatchQueue.main.sync`) would deadlock against a main thread waiting for a
/// lock the writer holds. So:
///
/// - ``lock`` is held while views are created (``create(_:)``: no observer can be attached to an
///   object not yet handed out) and, on Linux only, while they are written (Linux has no KVO, so
///   no observer runs inside it). Recursive: a creation may run a subclass's `isCancelled`.
/// - ``writing(_:)`` wraps every write to a view that may be observed: on Linux it takes
///   ``lock``; on Apple platforms it takes nothing, and each progress lets one thread at a time
///   write its views (`OperationProgress.refreshViews(final:)`), without waiting.
enum FoundationProgressViews {
    static let lock = NSRecursiveLock()

    /// Runs `body`, which makes new views, holding ``lock``; then, without it, brings up to date
    /// the views of the progress objects `body` added to its argument (their state moved while
    /// their new view was being made).
    static func create<Result>(_ body: (inout [OperationProgress]) -> Result) -> Result {
        var moved: [OperationProgress] = []
        let result = lock.withCriticalSection { body(&moved) }
        for progress in moved { progress.viewsMissedAChange() }
        return result
    }

    /// Runs `body`, which writes Foundation `Progress` objects that may be observed.
    static func writing<Result>(_ body: () -> Result) -> Result {
        #if canImport(Darwin)
            body()
        #else
            lock.withCriticalSection(body)
        #endif
    }
}
