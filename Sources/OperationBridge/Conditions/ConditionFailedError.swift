import Foundation

/// The failure of an operation whose condition did not hold (see
/// ``Bridge/addCondition(_:)``): it finished without running.
///
/// ```swift
/// if let failure = upload.bridge.conditionFailure {
///     log("\(failure)")  // UploadOperation: condition 'signed in' failed
/// }
/// ```
///
/// ## Cancellation and threading
/// A value: safe to share. It is not a cancellation: an operation stopped by a failed condition is
/// not cancelled (`isCancelled` is `false`), whatever its `Failure` type (see
/// ``Bridge/addCondition(_:)``).
public struct ConditionFailedError: Error, CustomStringConvertible {
    /// The condition's ``OperationCondition/name``.
    public let condition: String
    /// The operation's type name.
    public let operationType: String
    /// The operation's `name`, if it had one.
    public let operationName: String?
    /// Why the condition failed, when it says more than its name (the failed dependency, for
    /// ``OperationCondition/noFailedDependencies``).
    public let reason: String?
    /// The error the condition's check threw (see
    /// ``OperationCondition/init(_:evaluate:)``); `nil` for a predicate that returned `false`.
    public let underlyingError: (any Error)?

    /// Creates an error for `condition` failing on an operation of `operationType`, because of
    /// `reason` or the error `underlyingError`, if any.
    public init(
        condition: String,
        operationType: String,
        operationName: String? = nil,
        reason: String? = nil,
        underlyingError: (any Error)? = nil
    ) {
        self.condition = condition
        self.operationType = operationType
        self.operationName = operationName
        self.reason = reason
        self.underlyingError = underlyingError
    }

    init(condition: String, operation: Operation, reason: String? = nil, underlyingError: (any Error)? = nil) {
        self.init(
            condition: condition, operationType: String(describing: type(of: operation)),
            operationName: operation.name, reason: reason, underlyingError: underlyingError)
    }

    /// A sentence naming the operation, the condition and the reason (or the error the check
    /// threw).
    public var description: String {
        let name = operationName.map { " '\($0)'" } ?? ""
        let why = reason ?? underlyingError.map { "\($0)" }
        return "\(operationType)\(name): condition '\(condition)' failed" + (why.map { ": \($0)" } ?? "")
    }
}

/// A failure type that can express a failed condition, so that a result operation whose
/// condition failed reports it in its typed result.
///
/// ```swift
/// enum UploadError: Error, ConditionFailureRepresentable {
///     case rejected(String)
///     case conditionFailed(ConditionFailedError)
///     static func conditionFailed(_ error: ConditionFailedError) -> UploadError { .conditionFailed(error) }
/// }
/// ```
///
/// The result an operation stopped by a failed condition stores, by `Failure`:
/// - adopts this protocol: ``conditionFailed(_:)``;
/// - is `ConditionFailedError` or a supertype (`any Error`): the error itself;
/// - adopts only ``CancellationRepresentable``: its cancellation value, as a stand-in (the
///   operation is still not cancelled; ``Bridge/conditionFailure`` and the awaits that throw
///   ``OperationFailure`` say what happened);
/// - can say none of these (a classic error enum, `Never`): no result.
///
/// In every case the operation is not cancelled, ``Bridge/conditionFailure`` names the condition,
/// and ``Bridge/outcomeValue`` throws ``OperationFailure/conditionFailed(_:)`` unless the result
/// says it in `Failure` itself.
///
/// ## Cancellation and threading
/// ``conditionFailed(_:)`` is called once, when the condition fails, on the task that checked
/// it, before the operation's lock is taken; it must not block.
public protocol ConditionFailureRepresentable: Error {
    /// The failure standing for `error`.
    static func conditionFailed(_ error: ConditionFailedError) -> Self
}

extension FailureConversion {
    /// `error` as a `Failure`: through ``ConditionFailureRepresentable``, a plain cast, or — when
    /// neither works — the cancellation failure, as a stand-in. `nil` when `Failure` can express
    /// none of them.
    static func conditionFailure<Failure: Error>(
        _ error: ConditionFailedError,
        as _: Failure.Type = Failure.self
    ) -> Failure? {
        expressedConditionFailure(error, as: Failure.self) ?? cancellation(as: Failure.self)
    }

    /// `error` as a `Failure` that says it: through ``ConditionFailureRepresentable`` or a plain
    /// cast; `nil` otherwise.
    static func expressedConditionFailure<Failure: Error>(
        _ error: ConditionFailedError,
        as _: Failure.Type = Failure.self
    ) -> Failure? {
        if let representable = Failure.self as? any ConditionFailureRepresentable.Type {
            return representable.conditionFailed(error) as? Failure
        }
        return error as? Failure
    }

    /// Whether `Failure` says "a condition failed" itself — adopts
    /// ``ConditionFailureRepresentable``, or is `ConditionFailedError` or a supertype — rather
    /// than through a stand-in or not at all.
    static func expressesConditionFailure<Failure: Error>(_: Failure.Type) -> Bool {
        Failure.self is any ConditionFailureRepresentable.Type
            || ConditionFailedError(condition: "", operationType: "") is Failure
    }
}
