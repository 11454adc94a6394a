/// An error type with a value that stands for "the operation was cancelled".
///
/// When a result operation is cancelled, its result becomes a cancellation failure — if its
/// `Failure` type can express one. That is the case when `Failure` is `CancellationError`, a
/// type `CancellationError` converts to (such as `any Error`), or a type that adopts this
/// protocol:
///
/// ```swift
/// enum DownloadError: Error, CancellationRepresentable {
///     case offline
///     case cancelled
///     static var cancellation: DownloadError { .cancelled }
/// }
/// ```
///
/// Operations whose `Failure` cannot express cancellation end cancelled *without* a result;
/// the non-throwing awaiting APIs then answer `nil`.
public protocol CancellationRepresentable: Error {
    /// The failure a cancelled operation reports.
    static var cancellation: Self { get }
}

extension CancellationError: CancellationRepresentable {
    /// A new `CancellationError`.
    public static var cancellation: CancellationError { CancellationError() }
}

/// Conversions of the package's failure values into a caller's `Failure` type.
enum FailureConversion {
    /// The cancellation failure of `Failure`, or `nil` when `Failure` cannot express one.
    static func cancellation<Failure: Error>(as _: Failure.Type = Failure.self) -> Failure? {
        if let representable = Failure.self as? any CancellationRepresentable.Type {
            return representable.cancellation as? Failure
        }
        return CancellationError() as? Failure
    }

    /// The timeout failure of `Failure` — `Failure.timeout` (``TimeoutRepresentable``), or an
    /// ``OperationTimeoutError`` for a supertype such as `any Error` — or `nil` when `Failure`
    /// cannot express a timeout.
    static func timeout<Failure: Error>(as _: Failure.Type = Failure.self) -> Failure? {
        if let representable = Failure.self as? any TimeoutRepresentable.Type {
            return representable.timeout as? Failure
        }
        return OperationTimeoutError() as? Failure
    }

    /// Whether `Failure` can express cancellation.
    static func canExpressCancellation<Failure: Error>(_: Failure.Type) -> Bool {
        cancellation(as: Failure.self) != nil
    }

    /// Whether `Failure` can say "the upstream failed": it adopts
    /// ``UpstreamFailureRepresentable``, or an ``UpstreamFailedError`` converts to it (it is
    /// `UpstreamFailedError` or a supertype such as `any Error`). The cancellation failure does
    /// not count: it would read as a cancellation.
    static func canExpressUpstreamFailure<Failure: Error>(_: Failure.Type) -> Bool {
        if Failure.self is any UpstreamFailureRepresentable.Type { return true }
        return UpstreamFailedError(upstreamType: "", reason: .noInput) as? Failure != nil
    }

    /// `error` as a `Failure`: through ``UpstreamFailureRepresentable``, a plain cast, or — when
    /// neither works — the cancellation failure. `nil` when `Failure` can express none of them.
    static func upstreamFailure<Failure: Error>(
        _ error: UpstreamFailedError,
        as _: Failure.Type = Failure.self
    ) -> Failure? {
        if let representable = Failure.self as? any UpstreamFailureRepresentable.Type {
            return representable.upstreamFailed(error) as? Failure
        }
        if let failure = error as? Failure { return failure }
        return cancellation(as: Failure.self)
    }
}
