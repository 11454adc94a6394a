import Foundation

/// The results of operations made one per input as the inputs are pulled, with at most a fixed
/// number in flight: an `AsyncSequence` with back-pressure.
///
/// Create it with `OperationQueue.results(streaming:maxInFlight:order:_:)`.
/// Iterating starts the run: a task of the run's own pulls an input only when a place is free,
/// makes its operation and adds it to the queue; each element carries the input's position, the
/// input, the operation and its result.
///
/// ```swift
/// let pages = queue.results(streaming: 1...10_000, maxInFlight: 8) { number in
///     TaskOperation { () async throws -> Page in try await api.page(number) }
/// }
/// for await page in pages {
///     store(page.input, page.result)
/// }
/// ```
///
/// - Iterate once: creating a second iterator is a programmer error (it traps).
/// - `InputFailure` is `Never` for a `Sequence` of inputs (iterate with `for await`) and
///   `any Error` for an `AsyncSequence` (`for try await`).
///
/// ## Back-pressure and memory
/// An input takes a place when it is pulled and gives it back when its result is delivered: so
/// at most `maxInFlight` operations (plus, in input order, the reorder window) exist at once,
/// whatever the number of inputs, and a consumer that is slow to ask for the next result slows
/// the pulling down rather than letting results pile up.
///
/// ## Errors
/// When the input sequence throws, no further input is pulled; the operations already in flight
/// finish and are delivered, and then iterating throws that error.
///
/// ## Cancellation and threading
/// Cancelling the iterating task, or leaving the loop (the iterator is destroyed), stops the run:
/// no further input is pulled and the unfinished operations are cancelled; `next()` then returns
/// `nil`. In top-level code (`main.swift`) Swift never destroys a loop's iterator: call
/// ``cancel()`` after a loop you leave early there. The inputs are pulled and the operations
/// made on a detached task, never on the iterating task's actor; the operations run on the queue.
public struct StreamedResults<Input: Sendable, Success: Sendable, Failure: Error, InputFailure: Error>: AsyncSequence,
    Sendable
{
    /// A finished operation, its input and its result.
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
        /// The operation's result; `nil` when it was cancelled and `Failure` cannot express
        /// cancellation.
        public let result: Result<Success, Failure>?
    }

    let run: TypedStreamRun<Input, Success, Failure>

    /// Starts the run and returns the only iterator of this sequence.
    ///
    /// ## Cancellation and threading
    /// The run's own task starts pulling inputs at once. A second call traps (a programmer
    /// error); after ``cancel()``, the iterator returns `nil` and nothing is pulled.
    public func makeAsyncIterator() -> Iterator {
        run.begin()
        return Iterator(run: run, lifetime: StreamLifetime(run.run))
    }

    /// Stops the run: no further input is pulled and the unfinished operations are cancelled.
    /// Needed only after leaving a loop early in top-level code; harmless anywhere, and before
    /// iterating (nothing is pulled then).
    ///
    /// ## Cancellation and threading
    /// Thread-safe and idempotent; returns at once, without waiting for the cancelled operations.
    public func cancel() {
        run.stop()
    }

    /// Delivers the elements of a ``StreamedResults``. Not `Sendable`: one task iterates.
    public struct Iterator: AsyncIteratorProtocol {
        /// The run, with the types of its entries.
        let run: TypedStreamRun<Input, Success, Failure>
        /// Stops the run when the iterator goes away.
        let lifetime: StreamLifetime

        /// The next finished operation; `nil` at the end, or once the iterating task was cancelled.
        ///
        /// - Throws: The input sequence's error, after the operations in flight were delivered.
        public mutating func next() async throws(InputFailure) -> Element? {
            try await next(isolation: nil)
        }

        /// The next finished operation, for a caller on `actor`; see ``next()``.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(InputFailure) -> Element? {
            switch await run.next() {
            case .element(let entry):
                return Element(
                    index: entry.index, input: entry.input, operation: entry.typedOperation,
                    result: entry.typedOperation.result)
            case .end(nil):
                return nil
            case .end(let error?):
                // Only an `AsyncSequence` of inputs throws, and its results have `InputFailure == any Error`.
                throw error as! InputFailure
            }
        }
    }
}

@available(*, unavailable)
extension StreamedResults.Iterator: Sendable {}

/// Stops a ``StreamRun`` when its iterator goes away before the end (a loop left early).
final class StreamLifetime: Sendable {
    let run: StreamRun

    init(_ run: StreamRun) {
        self.run = run
    }

    deinit {
        run.stop()
    }
}

/// A `Sequence` of inputs as an `AsyncSequence` that never throws, for the stream's driver.
struct SequenceInputs<Base: Sequence & Sendable>: AsyncSequence, Sendable where Base.Element: Sendable {
    let base: Base

    func makeAsyncIterator() -> Iterator {
        Iterator(base: base.makeIterator())
    }

    struct Iterator: AsyncIteratorProtocol {
        var base: Base.Iterator

        mutating func next() async -> Base.Element? {
            base.next()
        }
    }
}

extension StreamedResults.Element: CustomReflectable {
    /// A mirror showing the operation by its type and name, without reflecting it: Swift Testing
    /// reflects the values of a failed expectation, and an operation's own stored properties reach
    /// queues that other threads change meanwhile (Design.md, "Reflection"). Safe from any thread:
    /// it reads the operation's name.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "index": index, "input": input, "operation": mirroredOperation(operation), "result": result as Any,
            ],
            displayStyle: .struct)
    }
}
