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
/// A value: safe to share. It is not a cancellation: an operation that can store it as its
/// failure is not cancelled (see ``Bridge/addCondition(_:)``).
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

    /// Creates an error for `condition` failing on an operation of `operationType`.
    public init(condition: String, operationType: String, operationName: String? = nil, reason: String? = nil) {
        self.condition = condition
        self.operationType = operationType
        self.operationName = operationName
        self.reason = reason
    }

    init(condition: String, operation: Operation, reason: String? = nil) {
        self.init(
            condition: condition, operationType: String(describing: type(of: operation)),
            operationName: operation.name, reason: reason)
    }

    /// A sentence naming the operation, the condition and the reason.
    public var description: String {
        let name = operationName.map { " '\($0)'" } ?? ""
        return "\(operationType)\(name): condition '\(condition)' failed" + (reason.map { ": \($0)" } ?? "")
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
/// Without it, an operation whose `Failure` is `ConditionFailedError` or a supertype (`any
/// Error`) stores the error itself; any other ends cancelled, with the error in
/// ``Bridge/conditionFailure``.
///
/// ## Cancellation and threading
/// ``conditionFailed(_:)`` is called once, when the condition fails, on the task that checked
/// it, before the operation's lock is taken; it must not block.
public protocol ConditionFailureRepresentable: Error {
    /// The failure standing for `error`.
    static func conditionFailed(_ error: ConditionFailedError) -> Self
}

extension FailureConversion {
    /// `error` as a `Failure`: through ``ConditionFailureRepresentable`` or a plain cast; `nil`
    /// when `Failure` can express neither.
    static func conditionFailure<Failure: Error>(
        _ error: ConditionFailedError,
        as _: Failure.Type = Failure.self
    ) -> Failure? {
        if let representable = Failure.self as? any ConditionFailureRepresentable.Type {
            return representable.conditionFailed(error) as? Failure
        }
        return error as? Failure
    }
}
