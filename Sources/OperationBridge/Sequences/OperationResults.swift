import Foundation

/// The results of a set of result operations, as an `AsyncSequence`.
///
/// Create it with ``Foundation/OperationQueue/results(of:order:)``. Iterating starts the
/// operations: each is added to the queue once its dependencies inside the set have finished
/// (so dependency graphs stay linear on Linux, see ``Pipeline``). Each element carries the
/// operation, its position in the array you passed, and its result.
///
/// ```swift
/// for await finished in try queue.results(of: downloads) {
///     print(finished.index, finished.result as Any)
/// }
/// ```
///
/// - An operation listed twice runs once and is delivered once per position.
/// - Iterate once: the sequence starts its operations when its iterator is created, and
///   creating a second iterator is a programmer error (it traps).
///
/// ## Cancellation
/// Cancelling the iterating task, or leaving the loop early (`break`, `return`, a thrown error),
/// cancels every operation that has not finished; operations not yet queued are queued
/// cancelled, so they finish without running and nobody waiting for them hangs. After the
/// iterating task is cancelled, `next()` returns `nil`.
///
/// ## Memory
/// Bounded by the number of operations: one flag and at most one buffered position each.
public struct OperationResults<Success: Sendable, Failure: Error>: AsyncSequence, Sendable {
    /// A finished operation and its result.
    public struct Element: Sendable {
        /// The operation's position in the array the sequence was created from.
        public let index: Int
        /// The operation.
        public let operation: AsyncResultOperation<Success, Failure>
        /// The operation's result; `nil` when it was cancelled and `Failure` cannot express
        /// cancellation.
        public let result: Result<Success, Failure>?
    }

    let operations: [AsyncResultOperation<Success, Failure>]
    let run: ScheduledRun

    init(
        _ operations: [AsyncResultOperation<Success, Failure>],
        queue: OperationQueue?,
        order: ResultOrder,
        failurePolicy: PipelineFailurePolicy
    ) throws(PipelineError) {
        self.operations = operations
        let scheduler = try GraphScheduler(operations, queue: queue, failurePolicy: failurePolicy)
        self.run = ScheduledRun(scheduler: scheduler, order: order)
    }

    /// Starts the operations and returns the only iterator of this sequence.
    public func makeAsyncIterator() -> Iterator {
        precondition(run.attachConsumer(), "OperationResults can be iterated only once: it starts its operations")
        run.start()
        return Iterator(operations: operations, lifetime: IterationLifetime(run))
    }

    /// Collects every result, in submission order.
    ///
    /// - Returns: One entry per operation; `nil` where an operation was cancelled without a
    ///   result. When the calling task is cancelled, the unfinished operations are cancelled
    ///   and their entries are those they end with (usually their cancellation failure).
    public func collect() async -> [Result<Success, Failure>?] {
        var results = [Result<Success, Failure>?](repeating: nil, count: operations.count)
        var delivered = [Bool](repeating: false, count: operations.count)
        for await element in self {
            results[element.index] = element.result
            delivered[element.index] = true
        }
        // Ended early (the calling task was cancelled): the unfinished operations have been
        // cancelled; report what they hold — their cancellation failure, where it can be expressed.
        for index in results.indices where !delivered[index] {
            results[index] = operations[index].result
        }
        return results
    }

    /// Whether every operation succeeded.
    ///
    /// Returns `false` at the first failure (or cancellation), cancelling the operations that
    /// have not finished — the async form of the classic "finished operation that depends on
    /// all the others".
    public func allSucceeded() async -> Bool {
        var count = 0
        for await element in self {
            guard case .success = element.result else { return false }
            count += 1
        }
        return count == operations.count
    }

    /// Delivers the elements of an ``OperationResults``. Not `Sendable`: one task iterates.
    public struct Iterator: AsyncIteratorProtocol {
        let operations: [AsyncResultOperation<Success, Failure>]
        let lifetime: IterationLifetime

        /// The next finished operation, or `nil` at the end or when the task was cancelled.
        public mutating func next() async -> Element? {
            await next(isolation: nil)
        }

        /// The next finished operation, running on the caller's actor; see ``next()``.
        public mutating func next(isolation actor: isolated (any Actor)?) async -> Element? {
            guard let position = await lifetime.next() else { return nil }
            let operation = operations[position]
            return Element(index: position, operation: operation, result: operation.result)
        }
    }
}

@available(*, unavailable)
extension OperationResults.Iterator: Sendable {}
