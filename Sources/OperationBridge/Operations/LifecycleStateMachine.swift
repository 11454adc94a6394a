import Foundation

/// The lifecycle of an ``AsyncOperation``: pending → executing → finished, with its cancellation,
/// its awaiters, and whether a queue may hold it (it was asked `isReady`). The queue the package
/// admitted it to is kept by the operation, which hands it to the methods that need it.
///
/// The machine is a plain value: ``AsyncOperation`` keeps it under its lock, calls one
/// mutating method per event, and performs the returned action (KVO-style notifications,
/// resuming awaiters) after releasing the lock.
struct LifecycleStateMachine {
    /// A callback run once, after the operation has finished.
    typealias FinishObserver = @Sendable () -> Void
    /// A suspended task; resumed with `true` (the outcome is final) or `false` (it gave up).
    typealias Waiter = UnsafeContinuation<Bool, Never>

    /// Identifies a registered observer or waiter so it can be removed again.
    struct ObserverID: Hashable, Sendable {
        fileprivate let rawValue: UInt32
    }

    private enum State {
        /// Created, possibly queued, not started yet.
        case pending
        /// `start()` claimed the operation; `isExecuting` notifications are being sent.
        case starting
        /// `main()` runs, or work it started is in flight.
        case executing
        /// `finish()` claimed the operation; `isFinished` notifications are being sent.
        /// `wasExecuting` tells whether `isExecuting` is still `true` until they are sent.
        case finishing(wasExecuting: Bool)
        /// Done. Terminal.
        case finished
    }

    /// What waits for the operation.
    enum Observer {
        /// A callback to call once the operation has finished.
        case callback(FinishObserver)
        /// A node of a graph scheduler, which is told once the operation has finished: what the
        /// scheduler would capture in a callback, without a closure context to allocate and
        /// release for every step it launches.
        case schedulerNode(GraphScheduler, node: Int)
        /// A suspended task. With `decision`, it is also resumed as soon as the outcome is decided
        /// while the operation is pending (cancelled or finished before it started: the work will
        /// never run, so the result can no longer change).
        case waiter(Waiter, decision: Bool)
        /// A waiter cancelled before its continuation was installed: the install answers `false`.
        case cancelledBeforeInstall
    }

    /// See ``readinessQuestions``. One byte, as the `Bool` it replaced: what was asked (two bits)
    /// and, with a "not ready" answer, when (six bits of a clock ticking about every millisecond).
    private struct ReadinessQuestions {
        enum Kind: UInt8 {
            case none
            case asked
            case answeredNotReady
            /// A graph scheduler will add the operation once its dependencies in the graph have
            /// finished: until then no queue holds it, and "not ready" answers are not noted.
            case awaitingPackageAdmission
        }

        private var bits: UInt8 = 0

        /// Setting it forgets the time of a "not ready" answer.
        var kind: Kind {
            get { Kind(rawValue: bits & 0b11)! }
            set { bits = newValue.rawValue }
        }

        /// When the "not ready" answer was given: a ``tick``.
        var notReadyTick: UInt8 { bits >> 2 }

        mutating func noteNotReady(at tick: UInt8) {
            bits = Kind.answeredNotReady.rawValue | (tick << 2)
        }

        /// Six bits of the uptime in units of 2²⁰ ns (about a millisecond): wraps every 67 ms.
        static var tick: UInt8 {
            UInt8(truncatingIfNeeded: DispatchTime.now().uptimeNanoseconds >> 20) & 0b11_1111
        }
    }

    /// The machine's yes-or-no facts, one bit each.
    private struct Flags: OptionSet {
        let rawValue: UInt8
        /// `finish()` was called before the operation had been started; honoured by `start()`.
        static let finishRequested = Flags(rawValue: 1 << 0)
        /// `cancel()` won: it came before the outcome was decided.
        static let cancellationRecorded = Flags(rawValue: 1 << 1)
        /// A time limit ran out before the outcome was decided, and is cancelling the operation.
        static let timeoutRequested = Flags(rawValue: 1 << 2)
        /// The recorded cancellation came from a time limit.
        static let timedOut = Flags(rawValue: 1 << 3)
        /// The operation became executing.
        static let didExecute = Flags(rawValue: 1 << 4)
        /// Finished, and its `isFinished` notifications are still being sent.
        static let sendingFinishNotifications = Flags(rawValue: 1 << 5)
        /// Another thread read `isFinished` while they were being sent.
        static let finishReadElsewhere = Flags(rawValue: 1 << 6)

        mutating func set(_ flag: Flags, to value: Bool) {
            if value { insert(flag) } else { remove(flag) }
        }
    }

    // Stored properties in this order on purpose: the reference first, the small fields last, so
    // that the operation's lock fits in the tail of the struct (Design.md, "Memory per
    // operation"). 11 bytes in all: with the lock, two words. The counter naming observers lives
    // with them (``ObserverList``), and the flags share a byte. The queue the package admitted
    // the operation to is kept by the operation (`AsyncOperation.holdings`), which hands it to
    // the methods that need it.

    /// The observers and waiters, the waiters cancelled before they were installed, and the
    /// counter that names them.
    private var observers = ObserverList()
    private var state: State = .pending
    private var flags: Flags = []
    /// Whether someone asked the operation whether it is ready — queues do when an operation is
    /// added (see ``admit(to:listed:admitted:)``) — and whether a "not ready" answer may still be
    /// stored by the queue that read it (Linux's lost wake-up; see `AsyncOperation.isReady`).
    private var readinessQuestions = ReadinessQuestions()

    /// `finish()` was called before the operation had been started; honoured by `start()`.
    private var finishRequested: Bool {
        get { flags.contains(.finishRequested) }
        set { flags.set(.finishRequested, to: newValue) }
    }

    /// `cancel()` won: it came before the outcome was decided.
    private(set) var isCancellationRecorded: Bool {
        get { flags.contains(.cancellationRecorded) }
        set { flags.set(.cancellationRecorded, to: newValue) }
    }

    /// A time limit ran out before the outcome was decided, and is cancelling the operation
    /// (see ``requestTimeout(outcomeDecided:)``).
    private(set) var isTimeoutRequested: Bool {
        get { flags.contains(.timeoutRequested) }
        set { flags.set(.timeoutRequested, to: newValue) }
    }

    /// The recorded cancellation came from a time limit: the operation timed out.
    private(set) var isTimedOut: Bool {
        get { flags.contains(.timedOut) }
        set { flags.set(.timedOut, to: newValue) }
    }

    /// The operation became executing: its work ran, or runs.
    private(set) var didExecute: Bool {
        get { flags.contains(.didExecute) }
        set { flags.set(.didExecute, to: newValue) }
    }

    /// Another thread than the one sending the `isFinished` notifications read `isFinished`
    /// while they were being sent (see ``noteFinishedRead(bySendingThread:)``).
    private(set) var wasFinishReadElsewhere: Bool {
        get { flags.contains(.finishReadElsewhere) }
        set { flags.set(.finishReadElsewhere, to: newValue) }
    }

    // MARK: Queries

    var isExecuting: Bool {
        switch state {
        case .executing, .finishing(wasExecuting: true): true
        case .pending, .starting, .finishing(wasExecuting: false), .finished: false
        }
    }

    var isFinished: Bool {
        if case .finished = state { return true }
        return false
    }

    /// `true` once `finish()` has been claimed: later results are ignored from then on.
    var isFinishingOrFinished: Bool {
        switch state {
        case .finishing, .finished: true
        case .pending, .starting, .executing: false
        }
    }

    /// Not finishing or finished, not cancelled, and no early finish requested: nothing has
    /// decided the outcome yet (a result operation also checks that it has no result).
    var isOutcomeOpen: Bool {
        !isFinishingOrFinished && !isCancellationRecorded && !finishRequested
    }

    var hasStarted: Bool {
        if case .pending = state { return false }
        return true
    }

    /// Not started, and cancelled or finished already: it will finish without running, and its
    /// outcome can no longer change.
    var isDecidedWhilePending: Bool {
        guard case .pending = state else { return false }
        return isCancellationRecorded || finishRequested
    }

    // MARK: Events

    enum StartAction {
        /// Already started once: ignore this call.
        case ignore
        /// Send the `isExecuting` notifications, then call ``enteredExecuting()``.
        case beginExecuting
        /// The operation was cancelled, or finish was requested, before it started: send the
        /// `isFinished` notifications and call ``completeFinish()`` without running `main()`.
        case finishWithoutRunning
    }

    mutating func start() -> StartAction {
        switch state {
        case .pending:
            if isDecidedWhilePending {
                state = .finishing(wasExecuting: false)
                return .finishWithoutRunning
            }
            state = .starting
            return .beginExecuting
        case .starting, .executing, .finishing, .finished:
            return .ignore
        }
    }

    /// Completes the start transition. Returns `true` when `finish()` was requested meanwhile.
    mutating func enteredExecuting() -> Bool {
        guard case .starting = state else {
            preconditionFailure("Internal inconsistency: entered executing from \(state)")
        }
        state = .executing
        didExecute = true
        return finishRequested
    }

    /// Records a cancellation unless the outcome is already decided.
    ///
    /// - Parameters:
    ///   - outcomeDecided: A result operation already stored its result.
    ///   - timedOut: The cancellation comes from a time limit (the caller read
    ///     ``isTimeoutRequested`` before choosing the failure it stores, so the two agree).
    /// - Returns: Whether the operation counts as cancelled (now or from before), and the
    ///   waiters to resume with `true` because the outcome was decided while pending.
    mutating func recordCancellation(
        outcomeDecided: Bool,
        timedOut: Bool
    ) -> (recorded: Bool, decided: [Waiter]) {
        if isCancellationRecorded { return (true, []) }
        guard isOutcomeOpen, !outcomeDecided else { return (false, []) }
        isCancellationRecorded = true
        isTimedOut = timedOut
        // Decided only while pending: a running operation's outcome is final when it finishes
        // (its awaiters wait for the work to end, even though its result may be stored).
        guard case .pending = state else { return (true, []) }
        return (true, takeDecisionWaiters())
    }

    /// Notes that a time limit ran out, so that the cancellation that follows is recorded as a
    /// timeout. Returns `false`, changing nothing, when the outcome is already decided (a
    /// cancellation that came first stays a cancellation).
    ///
    /// - Parameter outcomeDecided: A result operation already stored its result.
    mutating func requestTimeout(outcomeDecided: Bool) -> Bool {
        guard isOutcomeOpen, !outcomeDecided else { return false }
        isTimeoutRequested = true
        return true
    }

    enum FinishClaim {
        /// Send the notifications, then call ``completeFinish()``.
        case notify(wasExecuting: Bool)
        /// Not started yet: the request is recorded and honoured when the operation starts. The
        /// waiters to resume with `true`: the outcome is decided.
        case deferredUntilStart(decided: [Waiter])
        /// Already finishing or finished: nothing to do.
        case ignore
    }

    mutating func claimFinish() -> FinishClaim {
        switch state {
        case .pending:
            finishRequested = true
            return .deferredUntilStart(decided: takeDecisionWaiters())
        case .starting:
            finishRequested = true
            return .deferredUntilStart(decided: [])
        case .executing:
            state = .finishing(wasExecuting: true)
            return .notify(wasExecuting: true)
        case .finishing, .finished:
            return .ignore
        }
    }

    /// Ends the finish transition and hands back the observers to notify outside the lock. The
    /// `isFinished` notifications that follow are being sent until
    /// ``endFinishNotifications()``.
    mutating func completeFinish() -> ObserverList {
        guard case .finishing = state else {
            preconditionFailure("Internal inconsistency: completed finish from \(state)")
        }
        state = .finished
        flags.insert(.sendingFinishNotifications)
        return exchange(&observers, with: ObserverList())
    }

    /// `isFinished` is being read; `bySendingThread` when by the thread sending the `isFinished`
    /// notifications. Read by another thread meanwhile, Linux's queue may be counting the
    /// operation out of its dependents on that thread, not inside the notifications: a queue
    /// thread that finds the operation finished right after its `start()` returned does so
    /// (Design.md, "Platform facts").
    mutating func noteFinishedRead(bySendingThread: Bool) {
        guard flags.contains(.sendingFinishNotifications), !bySendingThread else { return }
        wasFinishReadElsewhere = true
    }

    /// Whether the `isFinished` notifications are being sent (see ``completeFinish()``).
    var isSendingFinishNotifications: Bool { flags.contains(.sendingFinishNotifications) }

    /// The `isFinished` notifications have been sent.
    ///
    /// - Returns: Whether another thread read `isFinished` meanwhile: Foundation's bookkeeping of
    ///   the finish may then still be running on that thread.
    mutating func endFinishNotifications() -> Bool {
        flags.remove(.sendingFinishNotifications)
        return wasFinishReadElsewhere
    }

    // MARK: Queue admission

    /// Queues ask `isReady` when an operation is added to them (Linux's `OperationQueue` does so
    /// inside `addOperation(_:)`; Darwin's implementation is the same design). Others ask too
    /// (`addDependency(_:)` and `cancel()` on Linux, a dependency finishing): a recorded question
    /// only means "maybe queued", and the package then looks in the queue's list.
    ///
    /// - Returns: Whether a "not ready" answer is outstanding (see ``noteNotReadyAnswer()``).
    mutating func noteReadinessQueried() -> Bool {
        if readinessQuestions.kind == .none { readinessQuestions.kind = .asked }
        return readinessQuestions.kind == .answeredNotReady
    }

    /// The operation answered "not ready" because of its dependencies: the reader (a queue
    /// adding it, say) may store that answer after a dependency's finish has made it ready.
    mutating func noteNotReadyAnswer() {
        guard readinessQuestions.kind != .awaitingPackageAdmission else { return }
        readinessQuestions.noteNotReady(at: ReadinessQuestions.tick)
    }

    /// A graph scheduler will add the pending operation to its queue (see
    /// ``ReadinessQuestions/Kind/awaitingPackageAdmission``); nothing when the package has
    /// admitted it already (it was listed in the queue).
    ///
    /// - Parameter admitted: Whether the package has admitted the operation to a queue.
    mutating func expectPackageAdmission(admitted: Bool) {
        guard case .pending = state, !admitted else { return }
        readinessQuestions.kind = .awaitingPackageAdmission
    }

    /// Takes the outstanding "not ready" answer, once the operation answered "ready".
    ///
    /// - Returns: Whether there was one, given within the last two or three milliseconds, and
    ///   the operation has not started: its readiness must then be announced again, after any
    ///   stale store of that answer. A reader stores the answer a few instructions after reading
    ///   it; an older answer has been stored, and the queue has looked at the operation since
    ///   (Design.md, "Platform facts").
    mutating func takeNotReadyAnswer() -> Bool {
        guard readinessQuestions.kind == .answeredNotReady else { return false }
        let age = (ReadinessQuestions.tick &- readinessQuestions.notReadyTick) & 0b11_1111
        readinessQuestions.kind = .asked
        return age <= 2 && !hasStarted
    }

    /// What the package should do to have the operation run in `queue`.
    enum Admission {
        /// Started or finished: only await it.
        case started
        /// Pending in `queue` already: await it, never add it again.
        case pending(in: OperationQueue)
        /// Claimed for `queue`: add it now.
        case add
        /// Nobody added it through the package, but something asked whether it is ready (maybe a
        /// queue, through your own `addOperation(_:)`): look whether `queue` lists it, and ask
        /// again with `listed`.
        case lookInList
    }

    /// Pending, not admitted by the package (`admitted`), and something asked whether it is ready.
    func mayBeQueuedByOtherCode(admitted: Bool) -> Bool {
        guard case .pending = state else { return false }
        return !admitted && readinessQuestions.kind != .none
    }

    /// Decides how the package hands the operation to `queue`, claiming it when it must be added.
    ///
    /// - Parameters:
    ///   - listed: Whether `queue` lists the operation, when the caller has looked.
    ///   - admitted: The queue the package admitted the operation to, if any; set to `queue` when
    ///     the operation is claimed for it. Strong, and released when the operation's async work
    ///     starts or it finishes: a weak reference costs a side-table update per operation, and a
    ///     queue keeps its pending operations anyway (on Linux each one also retains its queue
    ///     until it finishes).
    mutating func admit(to queue: OperationQueue, listed: Bool?, admitted: inout OperationQueue?) -> Admission {
        guard case .pending = state else { return .started }
        if let admitted { return .pending(in: admitted) }
        if readinessQuestions.kind != .none && listed == nil { return .lookInList }
        admitted = queue
        guard listed != true else { return .pending(in: queue) }
        // In no queue: a "not ready" answered so far (to `addDependency(_:)`, say) was stored by
        // no queue, and the queue adding it now reads afresh. Forgotten, so that an operation
        // added once its dependencies have finished (a pipeline's step) announces nothing more.
        if readinessQuestions.kind == .answeredNotReady || readinessQuestions.kind == .awaitingPackageAdmission {
            readinessQuestions.kind = .asked
        }
        return .add
    }

    // MARK: Observers and waiters

    /// Registers `callback` to run once the operation has finished.
    ///
    /// - Returns: The observer's identifier, or `nil` when the operation has already finished
    ///   (the callback is then not stored and the caller proceeds at once).
    mutating func addObserver(_ callback: @escaping FinishObserver) -> ObserverID? {
        addObserver(.callback(callback))
    }

    /// Registers `observer` — a callback or a scheduler's node — to be told once the operation
    /// has finished, as the callback form does.
    mutating func addObserver(_ observer: Observer) -> ObserverID? {
        if case .finished = state { return nil }
        let id = reserveObserverID()
        observers.append((id, observer))
        return id
    }

    /// A fresh identifier for a waiter that will be installed with ``installWaiter(_:_:decision:)``.
    ///
    /// Identifiers are 32 bits; after 2³² of them on one operation the counter wraps, and an
    /// identifier still in use (a long-lived observer's) is skipped (see ``ObserverList``).
    mutating func reserveObserverID() -> ObserverID {
        observers.reserveID()
    }

    /// How many waiters are installed: tests check that an await registers before it adds the
    /// operation to a queue.
    var installedWaiterCount: Int {
        observers.reduce(0) { count, entry in
            if case .waiter = entry.observer { count + 1 } else { count }
        }
    }

    /// Stores a suspended task until the operation finishes (or, with `decision`, until its
    /// outcome is decided while pending).
    ///
    /// - Returns: The value to resume the continuation with at once (`true`: the outcome is
    ///   final; `false`: this wait was cancelled before it was installed), or `nil` when it was
    ///   stored.
    mutating func installWaiter(_ id: ObserverID, _ continuation: Waiter, decision: Bool) -> Bool? {
        if case .finished = state { return true }
        if let index = observers.firstIndex(of: id) {
            guard case .cancelledBeforeInstall = observers.remove(at: index).observer else {
                preconditionFailure("Internal inconsistency: waiter \(id) installed twice")
            }
            return false
        }
        if decision && isDecidedWhilePending { return true }
        observers.append((id, .waiter(continuation, decision: decision)))
        return nil
    }

    /// Cancels the wait `id`.
    ///
    /// - Returns: The continuation to resume with `false`, when it was stored. When it was not
    ///   installed yet, the cancellation is remembered for ``installWaiter(_:_:decision:)``;
    ///   when the waiter was already resumed (the operation finished, or — for a `decision`
    ///   waiter — its outcome was decided while pending), nothing happens.
    mutating func cancelWaiter(_ id: ObserverID, decision: Bool) -> Waiter? {
        if let index = observers.firstIndex(of: id) {
            switch observers[index].observer {
            case .waiter(let continuation, _):
                _ = observers.remove(at: index)
                return continuation
            case .cancelledBeforeInstall:
                // Cancelled twice (the task and a time limit) before the install: noted once.
                return nil
            case .callback, .schedulerNode:
                preconditionFailure("Internal inconsistency: observer \(id) is not a waiter")
            }
        }
        if case .finished = state { return nil }
        // Resumed with the decision already, or — not installed yet — answered it on install.
        if decision && isDecidedWhilePending { return nil }
        observers.append((id, .cancelledBeforeInstall))
        return nil
    }

    /// Removes an observer that has not run yet, and returns it (`nil` when it was already
    /// taken) — for the caller to release after the lock: a callback may hold the last
    /// reference to what it captured.
    mutating func removeObserver(_ id: ObserverID) -> Observer? {
        guard let index = observers.firstIndex(of: id) else { return nil }
        return observers.remove(at: index).observer
    }

    /// Removes and returns the waiters that want the decision.
    private mutating func takeDecisionWaiters() -> [Waiter] {
        var decided: [Waiter] = []
        observers.removeAll { entry in
            guard case .waiter(let continuation, decision: true) = entry.observer else { return false }
            decided.append(continuation)
            return true
        }
        return decided
    }
}

extension LifecycleStateMachine {
    /// The observers and waiters of an operation, the waiters cancelled before they were
    /// installed, and the counter that names them, in one allocation made with the first entry
    /// (or the second identifier reserved) — as an array of them would be, with the counter in
    /// its header. The first identifier needs no allocation: the list then points to a shared
    /// buffer that says "identifier 0 handed out" (``Storage/firstIdentifierReserved``). In the
    /// machine, the counter would take a word of every operation, awaited or not (the machine
    /// and the operation's lock fit in two words without it; Design.md, "Memory per
    /// operation"). The counter lives as long as the list: from the first identifier reserved
    /// until the operation finishes, when the list is handed out and nothing more is reserved.
    ///
    /// A value, as the array it replaces: a list whose buffer is shared is copied before it
    /// changes (the machine's owner keeps one list under its lock; ``completeFinish()`` hands it
    /// out whole).
    struct ObserverList: Sequence {
        typealias Entry = (id: ObserverID, observer: Observer)

        fileprivate struct Header {
            var count = 0
            /// How many entries the buffer holds (`ManagedBuffer.capacity` asks the allocator
            /// each time).
            var capacity = 0
            /// The next identifier. 32 bits: identifiers only need to differ among the observers
            /// of one operation alive at once.
            var nextID: UInt32 = 0
            /// `nextID` has wrapped around: identifiers in use must be skipped.
            var wrapped = false
        }

        fileprivate final class Storage: ManagedBuffer<Header, Entry> {
            deinit {
                _ = withUnsafeMutablePointers { header, entries in
                    entries.deinitialize(count: header.pointee.count)
                }
            }

            /// A new buffer for at least `minimumCapacity` entries, with `header`'s counter.
            static func make(minimumCapacity: Int, counter header: Header) -> Storage {
                let buffer = create(minimumCapacity: minimumCapacity) { buffer in
                    Header(capacity: buffer.capacity, nextID: header.nextID, wrapped: header.wrapped)
                }
                return unsafeDowncast(buffer, to: Storage.self)
            }

            /// The list of an operation that has handed out identifier 0 and holds no entry:
            /// shared by all of them and never changed (a list copies a shared buffer before it
            /// changes), so that reserving the first identifier allocates nothing. An operation
            /// awaited once allocates its buffer when the waiter is installed — not at all when
            /// it finishes first — as the array this list replaced did.
            ///
            /// Safety: `nonisolated(unsafe)` because nothing ever writes to it — every change goes
            /// through `uniqueStorage(minimumCapacity:)`, which finds it shared (this constant holds
            /// a reference) and copies it — so threads only read it and count references to it.
            nonisolated(unsafe) static let firstIdentifierReserved = make(
                minimumCapacity: 0, counter: Header(nextID: 1))
        }

        private var storage: Storage?

        /// An empty list, no identifier handed out yet.
        init() {}

        /// An empty list whose counter starts at `nextID` (tests start it close to wrapping).
        init(nextID: UInt32) {
            uniqueStorage(minimumCapacity: 0).withUnsafeMutablePointerToHeader { $0.pointee.nextID = nextID }
        }

        var count: Int { storage?.header.count ?? 0 }

        subscript(index: Int) -> Entry {
            precondition(index >= 0 && index < count, "Internal inconsistency: observer index out of range")
            return storage!.withUnsafeMutablePointerToElements { $0[index] }
        }

        /// A fresh identifier. After 2³² of them the counter wraps, and an identifier still in
        /// use (a long-lived observer's) is skipped.
        mutating func reserveID() -> ObserverID {
            guard storage != nil else {
                storage = Storage.firstIdentifierReserved
                return ObserverID(rawValue: 0)
            }
            return uniqueStorage(minimumCapacity: 0).withUnsafeMutablePointers { header, entries in
                if header.pointee.wrapped {
                    let count = header.pointee.count
                    while (0..<count).contains(where: { entries[$0].id.rawValue == header.pointee.nextID }) {
                        header.pointee.nextID &+= 1
                    }
                }
                let id = ObserverID(rawValue: header.pointee.nextID)
                header.pointee.nextID &+= 1
                if header.pointee.nextID == 0 { header.pointee.wrapped = true }
                return id
            }
        }

        /// The index of the entry named `id`, if any.
        func firstIndex(of id: ObserverID) -> Int? {
            storage?.withUnsafeMutablePointers { header, entries in
                (0..<header.pointee.count).first { entries[$0].id == id }
            }
        }

        mutating func append(_ entry: Entry) {
            uniqueStorage(minimumCapacity: count + 1).withUnsafeMutablePointers { header, entries in
                (entries + header.pointee.count).initialize(to: entry)
                header.pointee.count += 1
            }
        }

        /// Removes the entry at `index`, keeping the others in order.
        mutating func remove(at index: Int) -> Entry {
            precondition(index >= 0 && index < count, "Internal inconsistency: observer index out of range")
            return uniqueStorage(minimumCapacity: 0).withUnsafeMutablePointers { header, entries in
                let removed = (entries + index).move()
                (entries + index).moveInitialize(from: entries + index + 1, count: header.pointee.count - index - 1)
                header.pointee.count -= 1
                return removed
            }
        }

        /// Removes the entries `shouldRemove` picks, keeping the others in order.
        mutating func removeAll(where shouldRemove: (Entry) -> Bool) {
            guard count > 0 else { return }
            uniqueStorage(minimumCapacity: 0).withUnsafeMutablePointers { header, entries in
                var kept = 0
                for index in 0..<header.pointee.count {
                    let entry = (entries + index).move()
                    guard !shouldRemove(entry) else { continue }
                    (entries + kept).initialize(to: entry)
                    kept += 1
                }
                header.pointee.count = kept
            }
        }

        func makeIterator() -> Iterator {
            Iterator(list: self)
        }

        struct Iterator: IteratorProtocol {
            fileprivate let list: ObserverList
            fileprivate var index = 0

            mutating func next() -> Entry? {
                guard index < list.count else { return nil }
                defer { index += 1 }
                return list[index]
            }
        }

        /// The buffer, made unique (copied when shared) and large enough for `minimumCapacity`
        /// entries; made when there is none, with the counter at zero.
        private mutating func uniqueStorage(minimumCapacity: Int) -> Storage {
            let unique = isKnownUniquelyReferenced(&storage)
            if unique, let storage, storage.header.capacity >= minimumCapacity { return storage }
            let old = storage
            let count = old?.header.count ?? 0
            let new = Storage.make(
                minimumCapacity: Swift.max(minimumCapacity, 2 * count, 2), counter: old?.header ?? Header())
            new.header.count = count
            if let old {
                new.withUnsafeMutablePointerToElements { target in
                    old.withUnsafeMutablePointers { header, source in
                        if unique {
                            target.moveInitialize(from: source, count: count)
                            header.pointee.count = 0
                        } else {
                            target.initialize(from: source, count: count)
                        }
                    }
                }
            }
            storage = new
            return new
        }
    }
}
