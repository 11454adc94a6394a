import Foundation

/// The failure of a chained operation whose upstream did not provide its input.
///
/// By default (``UpstreamFailurePolicy/fail``) a ``ChainedAsyncResultOperation`` does not run
/// with a missing input when the operation it takes its input from failed or was cancelled. It
/// finishes with this error instead, converted to its `Failure` type:
/// - `Failure` adopts ``UpstreamFailureRepresentable``: its ``UpstreamFailureRepresentable/upstreamFailed(_:)``;
/// - `Failure` is `UpstreamFailedError` or a supertype such as `any Error`: this error itself;
/// - otherwise its cancellation failure (see ``CancellationRepresentable``), and if `Failure`
///   cannot express that either, the operation ends cancelled without a result.
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

    /// Creates an error describing `upstream`'s missing output.
    public init(upstreamType: String, upstreamName: String? = nil, reason: Reason) {
        self.upstreamType = upstreamType
        self.upstreamName = upstreamName
        self.reason = reason
    }

    /// An error naming `operation` (its type and `name`) and what happened to it.
    init(describing operation: Operation, reason: Reason) {
        self.init(upstreamType: String(describing: type(of: operation)), upstreamName: operation.name, reason: reason)
    }

    /// The failure at the start of a chain of failed upstreams.
    ///
    /// When each step of a chain reports its upstream's failure, the error of the last step
    /// wraps the one before it, and so on. This follows ``Reason/failed(_:)`` through nested
    /// `UpstreamFailedError`s — and through errors of your own that adopt
    /// ``UpstreamFailureRepresentable`` and return the wrapped error from
    /// ``UpstreamFailureRepresentable/upstreamFailure`` — to the first error that is neither.
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
public enum UpstreamFailurePolicy: Sendable {
    /// Do not run; finish with a failure that says so (see ``UpstreamFailedError``). The default.
    case fail
    /// Run `main()` with a `nil` input, as the classic hand-copied class did.
    case runWithoutInput
}
