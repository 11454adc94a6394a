/// Why awaiting an operation gave no value, for operations whose `Failure` cannot say it itself.
///
/// Most legacy error enums have no `cancelled` case, and adding one to a public enum breaks every
/// exhaustive `switch` over it. For such operations `value` and `run` are not available (the
/// compiler says so and points here); ``Bridge/outcomeValue``,
/// ``Foundation/OperationQueue/runForOutcomeValue(_:within:)``, ``Pipeline/outcomeValue(of:)`` and
/// ``OperationResults/collectOutcomeValues()`` throw this wrapper instead, still typed: the
/// operation's own failure, a cancellation, the upstream failure or the failed condition that kept
/// it from running —
/// and, for awaits with a time limit (``Bridge/outcomeValue(within:)``,
/// ``Foundation/OperationQueue/runForOutcomeValue(_:within:)``), a timeout.
/// They work for every `Failure`.
///
/// ```swift
/// enum LookupError: Error { case notFound }                  // cannot express cancellation
/// do {
///     let record = try await queue.runForOutcomeValue(lookup)   // throws(OperationFailure<LookupError>)
///     show(record)
/// } catch .failed(.notFound) {
///     showEmpty()
/// } catch .cancelled {
///     // the task, or someone else, cancelled the lookup
/// } catch .upstreamFailed(let error) {
///     log(error.rootFailure as Any)                      // what failed further up
/// } catch .timedOut {
///     // only thrown by awaits with a time limit
/// }
/// ```
///
/// Operations whose `Failure` adopts ``CancellationRepresentable`` (or is `CancellationError` or
/// `any Error`) throw their own `Failure` instead; operations whose `Failure` is `Never` answer
/// an optional value.
///
/// It adopts ``CancellationRepresentable``, ``UpstreamFailureRepresentable`` and
/// ``ConditionFailureRepresentable`` itself, so it can also serve as an operation's `Failure` type.
public enum OperationFailure<Failure: Error>: Error {
    /// The operation finished with this failure.
    case failed(Failure)
    /// The operation was cancelled — by you, its queue, a pipeline, or the awaiting task that
    /// owned it — or the awaiting task stopped waiting.
    case cancelled
    /// The operation did not run because an operation it depends on failed or was cancelled;
    /// ``UpstreamFailedError/rootFailure`` is the failure at the start of the chain.
    case upstreamFailed(UpstreamFailedError)
    /// The await's time limit ran out before the operation's outcome was final; the await
    /// cancelled the operation (see ``TimeoutBehavior``). Only awaits with a time limit throw it.
    case timedOut
    /// The operation did not run because one of its conditions failed (see
    /// ``Bridge/addCondition(_:)``); the error names the condition and carries its reason. Not a
    /// cancellation. Thrown when `Failure` cannot say it itself; a `Failure` that adopts
    /// ``ConditionFailureRepresentable`` (or is `any Error`) is thrown as ``failed(_:)``.
    case conditionFailed(ConditionFailedError)
}

extension OperationFailure: ConditionFailureRepresentable {
    // The case ``conditionFailed(_:)`` is the protocol's `conditionFailed(_:)`.
}

extension OperationFailure: TimeoutRepresentable {
    /// ``timedOut``.
    public static var timeout: OperationFailure { .timedOut }
}

extension OperationFailure: CancellationRepresentable {
    /// ``cancelled``.
    public static var cancellation: OperationFailure { .cancelled }
}

extension OperationFailure: UpstreamFailureRepresentable {
    // The case ``upstreamFailed(_:)`` is the protocol's `upstreamFailed(_:)`.

    /// The wrapped error, for ``upstreamFailed(_:)``; lets ``UpstreamFailedError/rootFailure``
    /// look through this type.
    public var upstreamFailure: UpstreamFailedError? {
        guard case .upstreamFailed(let error) = self else { return nil }
        return error
    }
}

extension OperationFailure: CustomStringConvertible {
    /// The failure, "cancelled", "timed out", or the upstream or condition failure's description.
    public var description: String {
        switch self {
        case .failed(let failure): "\(failure)"
        case .cancelled: "cancelled"
        case .upstreamFailed(let error): error.description
        case .timedOut: "timed out"
        case .conditionFailed(let error): error.description
        }
    }
}

/// How an awaiting API turns an operation that ended without a value into the error it throws.
///
/// One mapping per family of `Failure` types; every awaiting API (`value`, `run`, pipelines,
/// results sequences) shares the same few, so they answer alike. Static requirements, so that
/// an await builds nothing: the compiler specializes the mapping away.
@usableFromInline
protocol FailureMapping {
    associatedtype Failure: Error
    associatedtype Thrown: Error
    /// The operation's own failure.
    static func failed(_ failure: Failure) -> Thrown
    /// Cancelled without a result, or the awaiting task gave up.
    static func cancelled() -> Thrown
    /// No result because an upstream failure kept the operation from running.
    static func upstreamFailed(_ error: UpstreamFailedError) -> Thrown
    /// A time limit ran out before the outcome was final: the await's, or the operation's own
    /// (it timed out without a result, because `Failure` cannot express a timeout).
    static func timedOut() -> Thrown
    /// No result, or a stand-in, because a failed condition kept the operation from running.
    static func conditionFailed(_ error: ConditionFailedError) -> Thrown
}

/// The operation's own typed failure; its cancellation value otherwise.
@usableFromInline
enum OwnFailure<Failure: CancellationRepresentable>: FailureMapping {
    @usableFromInline static func failed(_ failure: Failure) -> Failure { failure }
    @usableFromInline static func cancelled() -> Failure { .cancellation }
    @usableFromInline static func upstreamFailed(_ error: UpstreamFailedError) -> Failure { .cancellation }
    /// `Failure.cancellation`: `Failure` has nothing else to say (see
    /// ``ConditionFailureRepresentable``); the operation is not cancelled.
    @usableFromInline static func conditionFailed(_ error: ConditionFailedError) -> Failure {
        FailureConversion.conditionFailure(error, as: Failure.self) ?? .cancellation
    }
    /// `Failure.timeout` where `Failure` is ``TimeoutRepresentable``. Otherwise the cancellation
    /// value — the one case where a timeout is reported as a cancellation, because `Failure`
    /// has nothing else to say: the APIs that await with a time limit require
    /// ``TimeoutRepresentable`` for this mapping, and an operation's own time limit documents it.
    @usableFromInline static func timedOut() -> Failure { FailureConversion.timeout(as: Failure.self) ?? .cancellation }
}

/// The operation's failure; `CancellationError` or the ``UpstreamFailedError`` otherwise.
@usableFromInline
enum UntypedFailure: FailureMapping {
    @usableFromInline static func failed(_ failure: any Error) -> any Error { failure }
    @usableFromInline static func cancelled() -> any Error { CancellationError() }
    @usableFromInline static func upstreamFailed(_ error: UpstreamFailedError) -> any Error { error }
    @usableFromInline static func conditionFailed(_ error: ConditionFailedError) -> any Error { error }
    @usableFromInline static func timedOut() -> any Error { OperationTimeoutError() }
}

/// ``OperationFailure``.
@usableFromInline
enum WrappedFailure<Failure: Error>: FailureMapping {
    @usableFromInline static func failed(_ failure: Failure) -> OperationFailure<Failure> { .failed(failure) }
    @usableFromInline static func cancelled() -> OperationFailure<Failure> { .cancelled }
    @usableFromInline static func upstreamFailed(_ error: UpstreamFailedError) -> OperationFailure<Failure> {
        .upstreamFailed(error)
    }
    @usableFromInline static func conditionFailed(_ error: ConditionFailedError) -> OperationFailure<Failure> {
        .conditionFailed(error)
    }
    @usableFromInline static func timedOut() -> OperationFailure<Failure> { .timedOut }
}
