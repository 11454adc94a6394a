import Foundation

/// The failure of a chained operation whose upstream did not provide its input.
///
/// A ``ChainedAsyncResultOperation`` whose `Failure` can say so (see
/// ``UpstreamFailurePolicy``) does not run with a missing input when the operation it takes its
/// input from failed or was cancelled. It finishes with this error instead, converted to its
/// `Failure` type:
/// - `Failure` adopts ``UpstreamFailureRepresentable``: its ``UpstreamFailureRepresentable/upstreamFailed(_:)``;
/// - `Failure` is `UpstreamFailedError` or a supertype such as `any Error`: this error itself.
///
/// A step told to skip explicitly (``UpstreamFailurePolicy/fail``) whose `Failure` can say
/// neither stands in with its cancellation failure (see ``CancellationRepresentable``), and if
/// `Failure` cannot express that either, ends without a result; it is not cancelled, and
/// ``Bridge/upstreamFailure`` keeps this error either way.
public struct UpstreamFailedError: Error, CustomStringConvertible {
    /// Why the upstream provided no input.
    public enum Reason: Sendable {
        /// The upstream finished with this failure.
        case failed(any Error)
        /// The upstream was cancelled.
        case cancelled
        /// No upstream provided an input, and none was given at creation.
        case noInput
    }

    /// The upstream operation's type name, for diagnostics; for ``Reason/noInput``, the name of
    /// the input type that nothing provided.
    public let upstreamType: String
    /// The upstream operation's `name`, if it had one.
    public let upstreamName: String?
    /// Why the upstream provided no input.
    public let reason: Reason
    /// Kept as an existential: a struct cannot hold an optional of itself.
    private let storedCause: (any Error)?

    /// The failure further up the chain that led to the upstream's, when ``reason`` is a
    /// failure the upstream reported in its own `Failure` type:
    /// - the upstream did not run, stopped by this failure, and its result says so in its own
    ///   type (``UpstreamFailureRepresentable``);
    /// - the upstream ran without its input (``UpstreamFailurePolicy/runWithoutInput``) because
    ///   of this failure, and then failed on its own — a real failure, what that step reported,
    ///   but one that followed this one.
    ///
    /// ``rootFailure`` follows it where it cannot look inside the upstream's error. `nil`
    /// otherwise.
    public var causedBy: UpstreamFailedError? {
        storedCause as? UpstreamFailedError
    }

    /// Creates an error describing `upstream`'s missing output.
    ///
    /// - Parameters:
    ///   - upstreamType: The type of the upstream operation, as `String(describing:)` gives it.
    ///   - upstreamName: The upstream's `name`, if it has one.
    ///   - reason: What happened to the upstream: it failed, or was cancelled.
    ///   - causedBy: The failure further up that led to the upstream's (see ``causedBy``).
    public init(
        upstreamType: String,
        upstreamName: String? = nil,
        reason: Reason,
        causedBy: UpstreamFailedError? = nil
    ) {
        self.upstreamType = upstreamType
        self.upstreamName = upstreamName
        self.reason = reason
        self.storedCause = causedBy
    }

    /// An error naming `operation` (its type and `name`) and what happened to it — for a failure
    /// reported in the operation's own type, with the failure further up that led to it
    /// (``causedBy``): the one that stopped it, or the one it ran without its input because of.
    init(describing operation: Operation, reason: Reason) {
        var causedBy: UpstreamFailedError?
        if case .failed(let error) = reason, !(error is UpstreamFailedError),
            let operation = operation as? AsyncOperation
        {
            causedBy = operation.bridge.upstreamFailure ?? operation.missingInputCause
        }
        self.init(
            upstreamType: String(describing: type(of: operation)), upstreamName: operation.name, reason: reason,
            causedBy: causedBy)
    }

    /// The failure at the start of a chain of failed upstreams.
    ///
    /// When each step of a chain reports its upstream's failure, the error of the last step
    /// wraps the one before it, and so on. This follows ``Reason/failed(_:)`` through nested
    /// `UpstreamFailedError`s — and through errors of your own that adopt
    /// ``UpstreamFailureRepresentable`` and return the wrapped error from
    /// ``UpstreamFailureRepresentable/upstreamFailure`` — to the first error that is neither.
    /// Whatever a step's `Failure` type: a step that did not run reports the cause it was stopped
    /// with, not the value that stood in for it in its result (its cancellation failure, say);
    /// and where an error cannot be looked into, ``causedBy`` leads on — for a step that ran
    /// without its input and then failed, to the failure that left it without one.
    /// `nil` when the chain starts with a cancellation or a missing input.
    public var rootFailure: (any Error)? {
        var current = self
        while true {
            guard case .failed(let error) = current.reason else { return nil }
            if let nested = error as? UpstreamFailedError {
                current = nested
            } else if let representable = error as? any UpstreamFailureRepresentable,
                let nested = representable.upstreamFailure
            {
                current = nested
            } else if let nested = current.causedBy {
                current = nested
            } else {
                return error
            }
        }
    }

    /// A sentence naming the upstream and what happened to it.
    public var description: String {
        let name = upstreamName.map { " '\($0)'" } ?? ""
        switch reason {
        case .failed(let error):
            return "Upstream operation \(upstreamType)\(name) failed: \(error)"
        case .cancelled:
            return "Upstream operation \(upstreamType)\(name) was cancelled"
        case .noInput:
            return "No upstream operation provided an input of type \(upstreamType)"
        }
    }
}

/// An error type that can carry an ``UpstreamFailedError``, so that a chained operation whose
/// upstream failed reports it in its own `Failure` type.
///
/// ```swift
/// enum TitleError: Error, UpstreamFailureRepresentable {
///     case notHTML
///     case upstream(UpstreamFailedError)
///     static func upstreamFailed(_ error: UpstreamFailedError) -> TitleError { .upstream(error) }
/// }
/// ```
public protocol UpstreamFailureRepresentable: Error {
    /// The failure that reports `error`.
    static func upstreamFailed(_ error: UpstreamFailedError) -> Self

    /// The upstream failure this value reports, if it is one; lets
    /// ``UpstreamFailedError/rootFailure`` look through your error type. Defaults to `nil`.
    var upstreamFailure: UpstreamFailedError? { get }
}

extension UpstreamFailureRepresentable {
    /// `nil`: implement it to let ``UpstreamFailedError/rootFailure`` look through this type.
    public var upstreamFailure: UpstreamFailedError? { nil }
}

/// What a ``ChainedAsyncResultOperation`` does when the upstream it takes its input from
/// failed or was cancelled.
///
/// The default follows what the step's `Failure` can express, so that classic code keeps its
/// meaning:
/// - `Failure` can say "the upstream failed" — it adopts ``UpstreamFailureRepresentable``, or is
///   ``UpstreamFailedError`` or a supertype such as `any Error`: ``fail``.
/// - Otherwise (an error enum of your own, one adopting only ``CancellationRepresentable``,
///   `CancellationError`, `Never`): ``runWithoutInput``, as the classic hand-copied class did —
///   `main()` runs with `input == nil`, and the step reports its own failure (or recovers).
/// - A ``ChainedTaskOperation`` (what `then` makes), whose closure cannot run without its
///   input: ``fail``, whatever its `Failure`.
///
/// Set ``ChainedAsyncResultOperation/upstreamFailurePolicy`` to choose the other behaviour.
public enum UpstreamFailurePolicy: Sendable {
    /// Do not run; finish with a failure that says so (see ``UpstreamFailedError``), or — when
    /// `Failure` cannot say it — with the cancellation failure standing in for it, or without a
    /// result. The operation is not cancelled; ``Bridge/upstreamFailure`` has the cause.
    case fail
    /// Run `main()` with a `nil` input, as the classic hand-copied class did. When the step then
    /// fails, the error its dependents see keeps the failure that left it without its input
    /// (``UpstreamFailedError/causedBy``).
    case runWithoutInput

    /// The default policy of a chained step whose failure type is `failure`: ``fail`` when it
    /// can say "the upstream failed", ``runWithoutInput`` otherwise.
    static func classicDefault<Failure: Error>(for _: Failure.Type) -> UpstreamFailurePolicy {
        FailureConversion.canExpressUpstreamFailure(Failure.self) ? .fail : .runWithoutInput
    }
}
