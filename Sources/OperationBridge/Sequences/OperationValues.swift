import Foundation

/// The success values of a set of result operations, as a typed-throwing `AsyncSequence` that
/// stops at the first failure.
///
/// Create it with `OperationQueue.values(of:order:)`. It behaves like
/// ``OperationResults`` (same scheduling, ordering, single iteration, cancellation and memory
/// rules), except that:
/// - a failure ends the sequence: the first failure is thrown (typed), and every operation that
///   has not finished is cancelled — operations cancelled because of the failure report the
///   failure, not their cancellation, even when one of them is delivered first;
/// - an operation that ended cancelled throws the cancellation failure.
///
/// Leaving the loop early cancels the operations that have not finished when the iterator is
/// destroyed — not in top-level code (`main.swift`), where Swift never destroys it: call
/// ``cancel()`` there (see ``OperationResults``).
///
/// ```swift
/// do {
///     for try await page in try queue.values(of: downloads, order: .submission) {
///         render(page.value)
///     }
/// } catch {
///     show(error)   // the first DownloadError; the remaining downloads were cancelled
/// }
/// ```
public struct OperationValues<Success: Sendable, Failure: Error>: AsyncSequence, Sendable {
    /// A successfully finished operation and its value.
    public struct Element: Sendable {
        /// The operation's position in the array the sequence was created from.
        public let index: Int
        /// The operation.
        public let operation: AsyncResultOperation<Success, Failure>
        /// The operation's success value.
        public let value: Success
    }

    let results: OperationResults<Success, Failure>
    let cancellation: Failure

    /// Starts the operations and returns the only iterator of this sequence.
    public func makeAsyncIterator() -> Iterator {
        Iterator(base: results.makeAsyncIterator(), cancellation: cancellation)
    }

    /// Cancels every operation that has not finished and ends the iteration; see
    /// ``OperationResults/cancel()``. Leaving a loop in top-level code (`main.swift`) cancels
    /// nothing by itself: call this.
    public func cancel() {
        results.cancel()
    }

    /// The first operation that failed on its own, with its position and failure; see
    /// ``OperationResults/firstFailure``. Thread-safe.
    public var firstFailure: StepFailure? {
        results.firstFailure
    }

    /// Collects every value, in submission order.
    ///
    /// - Throws: The first failure, after cancelling the operations that have not finished;
    ///   the cancellation failure when the calling task is cancelled before all have finished.
    public func collect() async throws(Failure) -> [Success] {
        var values = [Success?](repeating: nil, count: results.operations.count)
        var count = 0
        for try await element in self {
            values[element.index] = element.value
            count += 1
        }
        // Ended early without a failure: the calling task was cancelled (a time limit throws from
        // the iteration itself).
        guard count == values.count else { throw cancellation }
        return values.map { $0! }
    }

    /// Delivers the elements of an ``OperationValues``. Not `Sendable`: one task iterates.
    public struct Iterator: AsyncIteratorProtocol {
        var base: OperationResults<Success, Failure>.Iterator
        let cancellation: Failure
        var ended = false

        /// The next value; `nil` at the end or when the iterating task was cancelled.
        ///
        /// - Throws: The first failure (then the sequence ends and the unfinished operations are
        ///   cancelled).
        public mutating func next() async throws(Failure) -> Element? {
            try await next(isolation: nil)
        }

        /// The next value, running on the caller's actor; see ``next()``.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(Failure) -> Element? {
            guard !ended else { return nil }
            guard let element = await base.next(isolation: actor) else {
                // Ended before every value: a time limit that returns at once ran out.
                guard base.lifetime.run.isTimedOut else { return nil }
                ended = true
                throw timeoutFailure
            }
            switch element.result {
            case .success(let value):
                return Element(index: element.index, operation: element.operation, value: value)
            case .failure(let error):
                end()
                throw stoppingFailure(otherwise: error)
            case nil:
                end()
                throw stoppingFailure(otherwise: element.operation.bridge.isTimedOut ? timeoutFailure : cancellation)
            }
        }

        /// `Failure.timeout`, or the cancellation failure where `Failure` cannot express a timeout.
        private var timeoutFailure: Failure {
            FailureConversion.timeout(otherwise: cancellation)
        }

        private mutating func end() {
            ended = true
            base.lifetime.run.cancel()
        }

        /// The failure that stopped the run. When an operation fails, the others are cancelled
        /// because of it; one of them may be delivered first (in submission order, or when it
        /// finishes inside `cancel()`), and must then report the failure, not its cancellation.
        private func stoppingFailure(otherwise own: Failure) -> Failure {
            base.lifetime.run.firstFailure(of: AsyncResultOperation<Success, Failure>.self) ?? own
        }
    }
}

@available(*, unavailable)
extension OperationValues.Iterator: Sendable {}

extension FailureConversion {
    /// The timeout failure of `Failure` (see ``timeout(as:)``), or `cancellation` where `Failure`
    /// cannot express a timeout.
    ///
    /// For iterators: inside a type that conforms to `AsyncIteratorProtocol` (or `AsyncSequence`),
    /// a bare `Failure` in an expression, such as `Failure.self`, names the conformance's inferred
    /// `Failure` type witness, which Apple platforms have only from macOS 15, iOS 18, tvOS 18,
    /// watchOS 11 and visionOS 2 — not the enclosing type's generic parameter, so it does not
    /// compile for the package's older deployment targets. Here `Failure` is this function's own
    /// generic parameter, inferred from `cancellation`: the same type, named outside the
    /// conformance.
    fileprivate static func timeout<Failure: Error>(otherwise cancellation: Failure) -> Failure {
        timeout(as: Failure.self) ?? cancellation
    }
}

extension OperationValues.Element: CustomReflectable {
    /// A mirror showing the operation by its type and name, without reflecting it: Swift Testing
    /// reflects the values of a failed expectation, and an operation's own stored properties reach
    /// queues that other threads change meanwhile (Design.md, "Reflection"). Safe from any thread:
    /// it reads the operation's name.
    public var customMirror: Mirror {
        Mirror(
            self, children: ["index": index, "operation": mirroredOperation(operation), "value": value],
            displayStyle: .struct)
    }
}
