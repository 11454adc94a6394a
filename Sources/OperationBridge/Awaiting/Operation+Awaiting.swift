import Foundation

extension Operation {
    /// Suspends until the operation has finished — the async counterpart of Foundation's
    /// blocking `waitUntilFinished()`, which Swift 6 forbids in async code.
    ///
    /// Named differently from the blocking call on purpose: adding the package to a target must
    /// not change which function existing code calls (Swift 5 clients included).
    ///
    /// Works for any `Operation`: the package's, your own subclasses, `BlockOperation`. It uses
    /// neither KVO nor `completionBlock`. Never blocks a thread; raises the operation's quality
    /// of service to the awaiting task's priority. An operation that is never queued nor
    /// started is waited for until the awaiting task is cancelled.
    ///
    /// ```swift
    /// queue.addOperation(legacyImport)
    /// try await legacyImport.waitForCompletion()
    /// ```
    ///
    /// - Throws: `CancellationError` when the awaiting task is cancelled before the operation
    ///   has finished. The operation itself is not cancelled.
    public func waitForCompletion() async throws(CancellationError) {
        guard await OperationWaiter.waitForFinish(of: self, onTaskCancellation: .stopWaiting) else {
            throw CancellationError()
        }
    }
}

extension Sequence where Element: Operation {
    /// Suspends until every operation in the sequence has finished.
    ///
    /// Operations may finish in any order, and may be in different queues. Never blocks a
    /// thread.
    ///
    /// - Throws: `CancellationError` when the awaiting task is cancelled before all of them
    ///   have finished. The operations themselves are not cancelled.
    public func waitForCompletion() async throws(CancellationError) {
        for operation in self {
            try await operation.waitForCompletion()
        }
    }
}
