import Foundation

/// A moment in the life of one of the package's operations, as its observers see it (see
/// ``Bridge/observeLifecycle(on:_:)``).
///
/// An operation that runs reports ``started`` then ``finished``; one cancelled while it runs
/// reports ``started``, ``cancelled``, ``finished``; one cancelled before it starts (or kept from
/// running by a failed condition or upstream) reports ``cancelled`` if it was cancelled, then
/// ``finished`` — never ``started``. Each event is reported once, in this order.
///
/// These are the moments *after* a transition. The moments before one — the work is about to run,
/// the operation is about to finish with its result, a group took a child — are told to an
/// ``OperationObserver``, synchronously; this enum stays as it is, so that `switch` statements
/// over it keep compiling.
///
/// ## Cancellation and threading
/// A value: safe to share. Where and when an observer receives it, the API that delivers it says.
public enum OperationEvent: Hashable, Sendable {
    /// The operation began executing: its work runs.
    case started
    /// The operation was cancelled (a time limit's cancellation included; see
    /// ``Bridge/isTimedOut``) before its outcome was decided.
    case cancelled
    /// The operation finished. Its outcome (`result`, `isCancelled`…) is final.
    case finished
}
