import Foundation

extension OperationQueue {
    /// Runs an operation for each input of an `AsyncSequence` on this queue, at most
    /// `maxInFlight` at a time, pulling the next input only when a place frees up; the results
    /// come as an `AsyncSequence` (see ``StreamedResults``).
    ///
    /// ```swift
    /// let imports = queue.results(streaming: file.lines, maxInFlight: 8) { line in
    ///     ImportRowOperation(line: line)          // a classic AsyncResultOperation subclass
    /// }
    /// for try await finished in imports { report(finished.index, finished.result) }
    /// ```
    ///
    /// Unlike ``results(of:order:)``, nothing is made up front: memory stays bounded by
    /// `maxInFlight` (plus the reorder window in input order) however long the input is. Each
    /// operation is admitted to this queue as ``results(of:order:)`` does (an operation already
    /// pending here is not added twice); the queue's own `maxConcurrentOperationCount` applies too.
    ///
    /// - Parameters:
    ///   - inputs: The inputs, pulled on a task of the run's own, one at a time, as places free up.
    ///   - maxInFlight: At most this many operations are unfinished at once; at least 1 (a
    ///     smaller value is a programmer error: it traps).
    ///   - order: ``StreamOrder/completion`` (the default) or ``StreamOrder/input``.
    ///   - makeOperation: Makes the operation for an input; called on the run's task, one input
    ///     at a time, in input order.
    /// - Returns: A sequence to iterate once; iterating starts the run. When `inputs` throws, the
    ///   operations in flight are delivered and then iterating throws that error.
    ///
    /// ## Cancellation and threading
    /// Cancelling the iterating task or leaving the loop stops pulling and cancels what is in
    /// flight (see ``StreamedResults`` for `main.swift`). Thread-safe.
    public func results<Inputs: AsyncSequence & Sendable, Success: Sendable, Failure: Error>(
        streaming inputs: Inputs,
        maxInFlight: Int,
        order: StreamOrder = .completion,
        _ makeOperation: @escaping @Sendable (Inputs.Element) async -> AsyncResultOperation<Success, Failure>
    ) -> StreamedResults<Inputs.Element, Success, Failure, any Error> where Inputs.Element: Sendable {
        StreamedResults(run: streamRun(inputs, maxInFlight, order, stopsAtFirstFailure: false, makeOperation))
    }

    /// Runs an operation for each input of a `Sequence` on this queue, at most `maxInFlight` at a
    /// time; see `OperationQueue.results(streaming:maxInFlight:order:_:)`. A `Sequence` cannot
    /// throw, so neither does iterating: `for await`.
    ///
    /// ```swift
    /// let checksums = queue.results(streaming: 0..<1_000_000, maxInFlight: 8, order: .input) { n in
    ///     TaskOperation { await checksum(of: n) }
    /// }
    /// for await finished in checksums where finished.index % 100_000 == 0 {
    ///     print(finished.index)
    /// }
    /// ```
    ///
    /// ## Cancellation and threading
    /// As the `AsyncSequence` variant. The sequence is iterated on the run's task.
    public func results<Inputs: Sequence & Sendable, Success: Sendable, Failure: Error>(
        streaming inputs: Inputs,
        maxInFlight: Int,
        order: StreamOrder = .completion,
        _ makeOperation: @escaping @Sendable (Inputs.Element) async -> AsyncResultOperation<Success, Failure>
    ) -> StreamedResults<Inputs.Element, Success, Failure, Never> where Inputs.Element: Sendable {
        StreamedResults(
            run: streamRun(SequenceInputs(base: inputs), maxInFlight, order, stopsAtFirstFailure: false, makeOperation))
    }

    /// The success values of an operation per input of an `AsyncSequence`, at most
    /// `maxInFlight` in flight; stops at the first failure (see ``StreamedValues``).
    ///
    /// Scheduling, back-pressure and order as in `OperationQueue.results(streaming:maxInFlight:order:_:)`.
    /// Iterating throws the first failure — an operation's `Failure`, or the input sequence's
    /// error — as `any Error`, cancels what is in flight and pulls nothing more.
    ///
    /// ## Cancellation and threading
    /// As `OperationQueue.results(streaming:maxInFlight:order:_:)`.
    public func values<Inputs: AsyncSequence & Sendable, Success: Sendable, Failure: CancellationRepresentable>(
        streaming inputs: Inputs,
        maxInFlight: Int,
        order: StreamOrder = .completion,
        _ makeOperation: @escaping @Sendable (Inputs.Element) async -> AsyncResultOperation<Success, Failure>
    ) -> StreamedValues<Inputs.Element, Success, Failure, any Error> where Inputs.Element: Sendable {
        StreamedValues(
            run: streamRun(inputs, maxInFlight, order, stopsAtFirstFailure: true, makeOperation),
            cancellation: .cancellation)
    }

    /// The success values of an operation per input of a `Sequence`, at most `maxInFlight` in
    /// flight; iterating throws the first failure, typed: the operations' `Failure`.
    ///
    /// ## Cancellation and threading
    /// As `OperationQueue.results(streaming:maxInFlight:order:_:)`.
    public func values<Inputs: Sequence & Sendable, Success: Sendable, Failure: CancellationRepresentable>(
        streaming inputs: Inputs,
        maxInFlight: Int,
        order: StreamOrder = .completion,
        _ makeOperation: @escaping @Sendable (Inputs.Element) async -> AsyncResultOperation<Success, Failure>
    ) -> StreamedValues<Inputs.Element, Success, Failure, Failure> where Inputs.Element: Sendable {
        StreamedValues(
            run: streamRun(SequenceInputs(base: inputs), maxInFlight, order, stopsAtFirstFailure: true, makeOperation),
            cancellation: .cancellation)
    }

    // Disfavored: a closure throwing a specific error type must pick the typed variant.
    /// The success values of operations whose `Failure` is `any Error`, one per input of an
    /// `AsyncSequence`; see `OperationQueue.values(streaming:maxInFlight:order:_:)`.
    ///
    /// ## Cancellation and threading
    /// As `OperationQueue.results(streaming:maxInFlight:order:_:)`.
    @_disfavoredOverload
    public func values<Inputs: AsyncSequence & Sendable, Success: Sendable>(
        streaming inputs: Inputs,
        maxInFlight: Int,
        order: StreamOrder = .completion,
        _ makeOperation: @escaping @Sendable (Inputs.Element) async -> AsyncResultOperation<Success, any Error>
    ) -> StreamedValues<Inputs.Element, Success, any Error, any Error> where Inputs.Element: Sendable {
        StreamedValues(
            run: streamRun(inputs, maxInFlight, order, stopsAtFirstFailure: true, makeOperation),
            cancellation: CancellationError())
    }

    // Disfavored: a closure throwing a specific error type must pick the typed variant.
    /// The success values of operations whose `Failure` is `any Error`, one per input of a
    /// `Sequence`; see `OperationQueue.values(streaming:maxInFlight:order:_:)`.
    ///
    /// ## Cancellation and threading
    /// As `OperationQueue.results(streaming:maxInFlight:order:_:)`.
    @_disfavoredOverload
    public func values<Inputs: Sequence & Sendable, Success: Sendable>(
        streaming inputs: Inputs,
        maxInFlight: Int,
        order: StreamOrder = .completion,
        _ makeOperation: @escaping @Sendable (Inputs.Element) async -> AsyncResultOperation<Success, any Error>
    ) -> StreamedValues<Inputs.Element, Success, any Error, any Error> where Inputs.Element: Sendable {
        StreamedValues(
            run: streamRun(SequenceInputs(base: inputs), maxInFlight, order, stopsAtFirstFailure: true, makeOperation),
            cancellation: CancellationError())
    }

    /// A prepared run of `inputs` on this queue; traps on a `maxInFlight` or window below 1.
    private func streamRun<Inputs: AsyncSequence & Sendable, Success: Sendable, Failure: Error>(
        _ inputs: Inputs,
        _ maxInFlight: Int,
        _ order: StreamOrder,
        stopsAtFirstFailure: Bool,
        _ makeOperation: @escaping @Sendable (Inputs.Element) async -> AsyncResultOperation<Success, Failure>
    ) -> TypedStreamRun<Inputs.Element, Success, Failure> where Inputs.Element: Sendable {
        TypedStreamRun(
            pulling: inputs, into: self, maxInFlight: maxInFlight, order: order,
            stopsAtFirstFailure: stopsAtFirstFailure, making: makeOperation)
    }
}
