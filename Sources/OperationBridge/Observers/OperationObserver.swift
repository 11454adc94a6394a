import Foundation

/// An observer told of the moments that come *before* a transition of one of the package's
/// operations — it is about to run its work, it is about to finish (its outcome final) — and of
/// the children a ``GroupOperation`` takes on: ProcedureKit's `ProcedureObserver`, typed.
///
/// ```swift
/// struct UploadLog: OperationObserver {
///     func willExecute(_ upload: UploadOperation) { print("uploading \(upload.file)") }
///     func willFinish(_ upload: UploadOperation) { print("upload ends with \(String(describing: upload.result))") }
/// }
/// upload.bridge.addObserver(UploadLog())
/// ```
///
/// `Observed` is the class of the operation observed, so ``willFinish(_:)`` reads a result
/// operation's `result` with its own `Success` and `Failure`. An observer for operations of any
/// class is generic over it (`struct Log<Observed: AsyncOperation>: OperationObserver`). Every
/// method has an empty default implementation: implement those you need.
///
/// The moments *after* a transition — started, cancelled, finished — are ``OperationEvent``s,
/// delivered on a target of your choice by ``Bridge/observeLifecycle(on:_:)``.
///
/// ## Cancellation and threading
/// The methods are called synchronously, on the thread that makes the transition, never under a
/// lock of the package's: that is what lets them run *before* it. Keep them short; they must
/// not wait for the operation itself (it is not finished) nor block on a queue it needs. They
/// may call the operation's members (cancelling it from ``willExecute(_:)`` is fine: the work
/// sees `isCancelled`). Observing cancels nothing; the operation holds its observers until it
/// finishes.
public protocol OperationObserver<Observed>: Sendable {
    /// The class of the operations observed.
    associatedtype Observed: AsyncOperation

    /// The operation is executing and its work is about to run: called on the thread that
    /// started it, right before its `main()`. Not called when it finishes without running its
    /// work (cancelled, or stopped by an upstream failure or a condition).
    func willExecute(_ operation: Observed)

    /// The operation is about to finish: its outcome is final — a result operation's `result` is
    /// readable and will not change, a cancellation is recorded — but `isFinished` is still
    /// `false`, its dependents have not started, and no awaiter of its finish has resumed and no
    /// ``Bridge/whenFinished(on:_:)-(_,()->Void)`` handler has run. Called on the thread that
    /// finishes it, for every finish, also without running.
    ///
    /// An operation decided before it started (cancelled, or given its result early) answers the
    /// awaits of its result at once, before it finishes (see <doc:AwaitingOperations>); this
    /// method is still called before its finish.
    func willFinish(_ operation: Observed)

    /// A child joined the group (``GroupOperation/addChild(_:)``): called on the thread that
    /// added it, once it is scheduled (it may already run). An observer added to a group is first
    /// told of the children the group has then, in order. Other operations have no children.
    func didAddChild(_ child: Operation, to group: Observed)
}

extension OperationObserver {
    /// Does nothing.
    public func willExecute(_ operation: Observed) {}
    /// Does nothing.
    public func willFinish(_ operation: Observed) {}
    /// Does nothing.
    public func didAddChild(_ child: Operation, to group: Observed) {}
}

/// An ``OperationObserver`` with its `Observed` type erased, as an operation keeps it.
struct ErasedOperationObserver: Sendable {
    let willExecute: @Sendable (AsyncOperation) -> Void
    let willFinish: @Sendable (AsyncOperation) -> Void
    let didAddChild: @Sendable (Operation, AsyncOperation) -> Void

    /// Erases `observer`, which is only ever called with operations of class `O.Observed` (it is
    /// registered on such an operation's `bridge`).
    init<O: OperationObserver>(_ observer: O) {
        willExecute = { observer.willExecute(unsafeDowncast($0, to: O.Observed.self)) }
        willFinish = { observer.willFinish(unsafeDowncast($0, to: O.Observed.self)) }
        didAddChild = { observer.didAddChild($0, to: unsafeDowncast($1, to: O.Observed.self)) }
    }
}

extension Bridge where Base: AsyncOperation {
    /// Registers `observer`, to be told of the operation's ``OperationObserver`` moments from now
    /// on: register it before the operation starts to hear of ``OperationObserver/willExecute(_:)``.
    ///
    /// ```swift
    /// download.bridge.addObserver(DownloadLog())
    /// ```
    ///
    /// Registered on a group, it is told at once — on this thread — of the group's children so
    /// far (``OperationObserver/didAddChild(_:to:)``), then of each child added later, each once.
    /// Registered on a finished operation, it is told of nothing more and not kept.
    ///
    /// ## Cancellation and threading
    /// Safe from any thread. The observer's methods run synchronously on the threads that make the
    /// transitions (see ``OperationObserver``); the operation keeps it until it finishes.
    public func addObserver<O: OperationObserver>(_ observer: O) where O.Observed == Base {
        base.addOperationObserver(ErasedOperationObserver(observer))
    }
}

extension AsyncOperation {
    /// Registers `observer`, and tells it of the children the operation (a group) has so far.
    func addOperationObserver(_ observer: ErasedOperationObserver) {
        let children = lock.withCriticalSection { () -> [Operation] in
            if !lifecycle.isFinishingOrFinished { rareState().operationObservers.append(observer) }
            return childrenLocked
        }
        for child in children { observer.didAddChild(child, self) }
    }
}
