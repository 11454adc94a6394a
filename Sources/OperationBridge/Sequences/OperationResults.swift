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
/// Cancelling the iterating task cancels every operation that has not finished; operations not
/// yet queued are queued cancelled, so they finish without running and nobody waiting for them
/// hangs. After the iterating task is cancelled, `next()` returns `nil`.
///
/// Leaving the loop early (`break`, `return`, a thrown error) cancels them too, when the loop's
/// iterator is destroyed: at the end of a loop in a function, method or closure. **In top-level
/// code (`main.swift`) Swift never destroys the iterator**, so leaving a loop there cancels
/// nothing: call ``cancel()`` after the loop, or move the loop into a function.
///
/// ```swift
/// let results = try queue.results(of: downloads)
/// for await finished in results {
///     if case .failure? = finished.result { break }
/// }
/// results.cancel()   // needed in main.swift; harmless anywhere
/// ```
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

    /// Cancels every operation that has not finished and ends the iteration: a suspended or later
    /// `next()` returns `nil`.
    ///
    /// Operations not queued yet are queued cancelled, so that they finish without running. Safe
    /// at any time, from any thread, any number of times, also before iterating (the operations
    /// are then cancelled as soon as they are started) and after the end.
    public func cancel() {
        run.cancel()
    }

    /// The first operation that failed on its own — not stopped by another's failure — with its
    /// position and failure, once it has finished; `nil` while none has. Thread-safe.
    ///
    /// Operations that did not run because of it report it as their
    /// ``Bridge/upstreamFailure``; this names where it started, whatever `Failure` can
    /// express.
    public var firstFailure: StepFailure? {
        run.firstFailure
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

    /// Every success value, in submission order; at the first failure, cancels the operations that
    /// have not finished and throws it through ``OperationFailure``. For every `Failure`; where
    /// `Failure` can express cancellation, ``collectValues()-6j213`` throws it directly.
    ///
    /// The failure thrown is the first one delivered; when that operation only reports an
    /// upstream failure, the failure where it started (see ``firstFailure``) when it is of this
    /// sequence's type.
    ///
    /// - Throws: ``OperationFailure/failed(_:)`` (an operation whose `Failure` can express
    ///   cancellation reports its cancellation this way too), ``OperationFailure/cancelled`` (an
    ///   operation ended cancelled without a result, or the calling task was cancelled), or
    ///   ``OperationFailure/upstreamFailed(_:)``.
    public func collectOutcomeValues() async throws(OperationFailure<Failure>) -> [Success] {
        try await collectValues(mapping: WrappedFailure<Failure>.self)
    }

    /// Not available: `Failure` can express neither cancellation nor an upstream failure. Use
    /// ``collectOutcomeValues()`` or ``collect()``.
    @available(
        *, unavailable,
        message:
            "Failure cannot express cancellation: use 'try await results.collectOutcomeValues()' (throws OperationFailure<Failure>) or 'await results.collect()'"
    )
    public func collectValues() async throws(Failure) -> [Success] {
        fatalError("unavailable")
    }

    func collectValues<Mapping: FailureMapping>(
        mapping: Mapping.Type
    ) async throws(Mapping.Thrown) -> [Success] where Mapping.Failure == Failure {
        var values = [Success?](repeating: nil, count: operations.count)
        var delivered = 0
        for await element in self {
            guard case .success(let value) = element.result else {
                cancel()
                if let condition = element.operation.conditionFailureWithoutOwnResult {
                    throw mapping.conditionFailed(condition)
                }
                let (result, cause) = stoppingOutcome(of: element.operation)
                if case .failure(let error)? = result { throw mapping.failed(error) }
                if let cause { throw mapping.upstreamFailed(cause) }
                throw element.operation.bridge.isTimedOut ? mapping.timedOut() : mapping.cancelled()
            }
            values[element.index] = value
            delivered += 1
        }
        guard delivered == values.count else { throw run.isTimedOut ? mapping.timedOut() : mapping.cancelled() }
        return values.map { $0! }
    }

    /// What stopped the run at `operation`: its own outcome, or — when it only reports an upstream
    /// failure — the outcome of the operation where the failure started, if it is one of these.
    func stoppingOutcome(
        of operation: AsyncResultOperation<Success, Failure>
    ) -> (result: Result<Success, Failure>?, cause: UpstreamFailedError?) {
        let cause = operation.bridge.upstreamFailure
        if cause != nil, let error = run.firstFailure(of: AsyncResultOperation<Success, Failure>.self) {
            return (.failure(error), nil)
        }
        return (operation.result, cause)
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

extension OperationResults where Failure: CancellationRepresentable {
    /// Every success value, in submission order; at the first failure, cancels the operations that
    /// have not finished and throws it, typed.
    ///
    /// - Throws: The first failure; `Failure.cancellation` when an operation ended cancelled or
    ///   the calling task was cancelled.
    public func collectValues() async throws(Failure) -> [Success] {
        try await collectValues(mapping: OwnFailure<Failure>.self)
    }
}

extension OperationResults where Failure == any Error {
    /// Every success value, in submission order; at the first failure, cancels the operations that
    /// have not finished and throws it.
    ///
    /// - Throws: The first failure; `CancellationError` when an operation ended cancelled without
    ///   a result or the calling task was cancelled.
    public func collectValues() async throws -> [Success] {
        try await collectValues(mapping: UntypedFailure.self)
    }
}

extension OperationResults.Element: CustomReflectable {
    /// A mirror showing the operation by its type and name, without reflecting it: Swift Testing
    /// reflects the values of a failed expectation, and an operation's own stored properties reach
    /// queues that other threads change meanwhile (Design.md, "Reflection"). Safe from any thread:
    /// it reads the operation's name.
    public var customMirror: Mirror {
        Mirror(
            self, children: ["index": index, "operation": mirroredOperation(operation), "result": result as Any],
            displayStyle: .struct)
    }
}
