/// What an await with a time limit does when the time is up.
///
/// Either way the operation is cancelled first. Pick the one your caller needs:
///
/// - ``cancelAndReturn`` (the default) bounds the time the await takes even when the operation
///   ignores cancellation — a legacy operation stuck in a network call, for example.
/// - ``cancelAndWait`` never lets work outlive the caller: the await returns once the cancelled
///   operation has really ended.
public enum TimeoutBehavior: Sendable, Hashable {
    /// Cancel the operation and return at once with a timeout.
    ///
    /// The operation may still be running: it ends when it notices the cancellation, and its
    /// queue slot stays taken until then. The await does not see what it reports afterwards (the
    /// package's result operations keep their cancellation failure as their result, if their
    /// `Failure` can express one: the first result wins).
    case cancelAndReturn
    /// Cancel the operation and wait until it has ended, then report the timeout.
    ///
    /// An operation that has not started is answered at once: cancelled, it finishes without
    /// running when its queue starts it. An operation that ignores cancellation keeps the await
    /// waiting for as long as it runs.
    case cancelAndWait
}

/// An error type with a value that stands for "the time was up before the operation's outcome".
///
/// Adopt it in an operation's `Failure` to await it with a time limit through `value` and `run`
/// and get your own error back:
///
/// ```swift
/// enum FetchError: Error, TimeoutRepresentable {
///     case offline
///     case cancelled
///     case timedOut
///     static var cancellation: FetchError { .cancelled }
///     static var timeout: FetchError { .timedOut }
/// }
/// ```
///
/// A type that can say "timed out" can also say "cancelled": the awaiting task may be cancelled
/// before the time is up. For other `Failure` types, ``OperationFailure/timedOut`` carries it
/// (``Bridge/outcomeValue(within:)``), and `any Error` gets an
/// ``OperationTimeoutError``.
public protocol TimeoutRepresentable: CancellationRepresentable {
    /// The failure an await reports when its time is up.
    static var timeout: Self { get }
}

/// The error an await with a time limit throws for an operation whose `Failure` is `any Error`,
/// when the time was up before the operation's outcome was final.
public struct OperationTimeoutError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A timeout error.
    public init() {}

    /// "timed out".
    public var description: String { "timed out" }
}
