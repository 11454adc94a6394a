import Foundation

/// The success values of operations made one per input as the inputs are pulled, with at most
/// a fixed number in flight; stops at the first failure.
///
/// Create it with `OperationQueue.values(streaming:maxInFlight:order:_:)`.
/// Back-pressure, memory and order are those of ``StreamedResults``.
///
/// ```swift
/// let rows = queue.values(streaming: lines, maxInFlight: 4) { line in
///     TaskOperation { () async throws(ImportError) -> Row in try await importer.row(from: line) }
/// }
/// for try await row in rows {   // throws ImportError, typed, when `lines` is a Sequence
///     table.append(row.value)
/// }
/// ```
///
/// - `Thrown` is the operations' `Failure` for a `Sequence` of inputs, and `any Error` for an
///   `AsyncSequence` (which may throw an error of its own).
/// - Iterate once: creating a second iterator is a programmer error (it traps).
///
/// ## Errors
/// The first operation that fails ends the sequence: iterating throws its failure (its
/// cancellation failure when it was cancelled), no further input is pulled and the operations in
/// flight are cancelled. An input sequence that throws ends it the same way, with its error.
///
/// ## Cancellation and threading
/// As ``StreamedResults``: cancelling the iterating task or leaving the loop stops the run, and
/// `next()` returns `nil` (``cancel()`` after a loop left early in `main.swift`).
public struct StreamedValues<Input: Sendable, Success: Sendable, Failure: Error, Thrown: Error>: AsyncSequence,
    Sendable
{
    /// A succeeded operation, its input and its value.
    ///
    /// ## Cancellation and threading
    /// A value, `Sendable`: the operation has finished, so nothing in it changes any more.
    public struct Element: Sendable {
        /// The input's position in the input sequence, from 0.
        public let index: Int
        /// The input the operation was made for.
        public let input: Input
        /// The operation.
        public let operation: AsyncResultOperation<Success, Failure>
        /// The operation's success value.
        public let value: Success
    }

    let run: TypedStreamRun<Input, Success, Failure>
    /// What an operation cancelled without a result reports.
    let cancellation: Failure

    /// Starts the run and returns the only iterator of this sequence.
    ///
    /// ## Cancellation and threading
    /// As ``StreamedResults/makeAsyncIterator()``: the run starts pulling at once; a second call
    /// traps.
    public func makeAsyncIterator() -> Iterator {
        run.begin()
        return Iterator(run: run, lifetime: StreamLifetime(run.run), cancellation: cancellation)
    }

    /// Stops the run, as ``StreamedResults/cancel()``.
    ///
    /// ## Cancellation and threading
    /// Thread-safe and idempotent; returns at once.
    public func cancel() {
        run.stop()
    }

    /// Delivers the elements of a ``StreamedValues``. Not `Sendable`: one task iterates.
    public struct Iterator: AsyncIteratorProtocol {
        /// The run, with the types of its entries.
        let run: TypedStreamRun<Input, Success, Failure>
        /// Stops the run when the iterator goes away.
        let lifetime: StreamLifetime
        let cancellation: Failure
        var ended = false

        /// The next value; `nil` at the end, or once the iterating task was cancelled.
        ///
        /// - Throws: The first failure, of an operation or of the input sequence; the sequence
        ///   ends then.
        public mutating func next() async throws(Thrown) -> Element? {
            try await next(isolation: nil)
        }

        /// The next value, for a caller on `actor`; see ``next()``.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(Thrown) -> Element? {
            guard !ended else { return nil }
            switch await run.next() {
            case .element(let entry):
                switch entry.typedOperation.result {
                case .success(let value):
                    return Element(
                        index: entry.index, input: entry.input, operation: entry.typedOperation, value: value)
                case .failure(let failure):
                    throw end(failure)
                case nil:
                    throw end(cancellation)
                }
            case .end(nil):
                ended = true
                return nil
            case .end(let error?):
                throw end(error)
            }
        }

        /// Ends the sequence and stops the run; returns `error` as `Thrown`.
        private mutating func end(_ error: any Error) -> Thrown {
            ended = true
            run.stop()
            // `Thrown` is `Failure` (a `Sequence` of inputs: only operations fail) or `any Error`.
            return error as! Thrown
        }
    }
}

@available(*, unavailable)
extension StreamedValues.Iterator: Sendable {}

extension StreamedValues.Element: CustomReflectable {
    /// A mirror showing the operation by its type and name, without reflecting it: Swift Testing
    /// reflects the values of a failed expectation, and an operation's own stored properties reach
    /// queues that other threads change meanwhile (Design.md, "Reflection"). Safe from any thread:
    /// it reads the operation's name.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: ["index": index, "input": input, "operation": mirroredOperation(operation), "value": value],
            displayStyle: .struct)
    }
}
