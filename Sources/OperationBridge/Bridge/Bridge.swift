import Foundation

/// The package's capabilities on an operation, reached through its ``BridgeCompatible/bridge``
/// property: `operation.bridge.value`, `operation.bridge.pause()`,
/// `operation.bridge.whenFinished { … }`.
///
/// `AsyncOperation`, `AsyncResultOperation` and `ChainedAsyncResultOperation` are classes teams
/// have subclassed for years, and their subclasses declare members of their own — a resumable
/// download has `pause()`, `resume()` and `isPaused`; an operation with a deadline has
/// `isTimedOut`. So that adding the package takes none of those names, the classes keep only
/// their classic members (`finish()`, `finish(with:)`, `cancel(with:)`, `result`, `input`,
/// `onResult`, `init(input:)`) and everything the package adds hangs off one property, as
/// Kingfisher's `kf` and RxSwift's `rx` do for the classes their users extend:
///
/// ```swift
/// final class DownloadOperation: AsyncResultOperation<Data, DownloadError>, @unchecked Sendable {
///     private(set) var isPaused = false       // the subclass's own: no clash
///     func pause() { isPaused = true }
/// }
///
/// let download = DownloadOperation()
/// download.pause()                            // the subclass's own method
/// download.bridge.pause()                     // the package's: held back, no queue slot
/// let data = try await download.bridge.value  // throws(DownloadError)
/// ```
///
/// Which members a `Bridge` has depends on what `Base` is: awaiting a finish
/// (``waitForCompletion()``), ``pendingDiagnostics`` and ``waitGraph`` for any `Operation`;
/// conditions, pauses, delays, time limits, progress and observers for the package's operations;
/// `value`, `outcome` and `then` for result operations (``AsyncResultOperationProtocol``).
///
/// A `Bridge` only holds its operation: make one whenever you need it (it costs a reference), and
/// keep the operation, not the bridge. Every member is safe from any thread; each states its own
/// cancellation semantics.
public struct Bridge<Base: Operation>: Sendable {
    /// The operation the capabilities act on.
    public let base: Base

    /// The capabilities of `base`; `base.bridge` is the usual way to get them.
    public init(_ base: Base) {
        self.base = base
    }
}

/// The types that have a ``bridge`` property: every `Operation`.
///
/// `Operation` adopts it, so every operation — Foundation's, the package's, your subclasses — has
/// `bridge`. Do not adopt it yourself: it exists to give `bridge` its static type.
public protocol BridgeCompatible: AnyObject {}

extension BridgeCompatible where Self: Operation {
    /// The package's capabilities on this operation (see ``Bridge``).
    ///
    /// ```swift
    /// let url = try await unfurl.bridge.value
    /// try await legacyBlockOperation.bridge.waitForCompletion()
    /// ```
    ///
    /// Safe from any thread; it only wraps the operation.
    public var bridge: Bridge<Self> { Bridge(self) }
}

extension Operation: BridgeCompatible {}

/// The result operations: `AsyncResultOperation` and its subclasses (`ChainedAsyncResultOperation`,
/// ``TaskOperation``, ``GroupOperation``, …), whose ``Bridge`` has `value`, `outcome`, `then` and
/// the result observers.
///
/// `AsyncResultOperation` adopts it, with its `Success` and `Failure`. It has no members, so it
/// puts no name on your subclasses. Do not adopt it yourself: a `Bridge` member used on a type
/// that adopts it without being an `AsyncResultOperation<Success, Failure>` stops the program
/// with a message saying so.
public protocol AsyncResultOperationProtocol: AsyncOperation {
    /// The value a successful run produces.
    associatedtype Success
    /// The error a failed run produces.
    associatedtype Failure: Error
}

extension AsyncResultOperation: AsyncResultOperationProtocol {}

extension Bridge where Base: AsyncResultOperationProtocol {
    /// `base` as its `AsyncResultOperation` class, on which the members work (`awaitValue`,
    /// `awaitOutcome`, …). A constraint cannot say "a subclass of `AsyncResultOperation<S, F>`",
    /// so the protocol names `S` and `F` and this cast gets the class back; only
    /// `AsyncResultOperation` adopts the protocol, and the optimizer folds the cast away where
    /// `Base` is known.
    @inlinable
    var resultOperation: AsyncResultOperation<Base.Success, Base.Failure> {
        guard let operation = base as? AsyncResultOperation<Base.Success, Base.Failure> else {
            preconditionFailure(
                "\(Base.self) adopts AsyncResultOperationProtocol but is not an "
                    + "AsyncResultOperation<\(Base.Success.self), \(Base.Failure.self)>: only AsyncResultOperation adopts it"
            )
        }
        return operation
    }
}
