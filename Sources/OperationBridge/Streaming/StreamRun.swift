import Foundation

/// A pulled input of a ``StreamRun``: its position and its operation. The run's bookkeeping
/// sees only this non-generic part, so that it runs without generic-metadata lookups (the
/// run is not specialized for its clients' types: the public streaming APIs are not
/// inlinable). ``TypedStreamEntry`` adds the input and the operation's types.
///
/// Immutable once made; `Operation` is thread-safe.
class StreamEntry: @unchecked Sendable {
    let index: Int
    let operation: Operation

    init(index: Int, operation: Operation) {
        self.index = index
        self.operation = operation
    }
}

/// A ``StreamEntry`` with its input and its typed operation, as the sequences deliver them.
///
/// Safety: immutable; the input is `Sendable` and the operation thread-safe.
final class TypedStreamEntry<Input: Sendable, Success: Sendable, Failure: Error>: StreamEntry, @unchecked Sendable {
    let input: Input

    init(index: Int, input: Input, operation: AsyncResultOperation<Success, Failure>) {
        self.input = input
        super.init(index: index, operation: operation)
    }

    /// The operation, with its types: the one the entry was made with.
    var typedOperation: AsyncResultOperation<Success, Failure> {
        unsafeDowncast(operation, to: AsyncResultOperation<Success, Failure>.self)
    }
}

/// A ``StreamRun`` with the types of the entries it hands out. Its initializer is the only place
/// that makes a run, with a driver that makes `TypedStreamEntry<Input, Success, Failure>`s from
/// the same generic parameters: so the downcast in ``next()`` holds by construction.
struct TypedStreamRun<Input: Sendable, Success: Sendable, Failure: Error>: Sendable {
    let run: StreamRun

    /// What the consumer gets next, typed.
    enum Event {
        case element(TypedStreamEntry<Input, Success, Failure>)
        /// The end: the inputs ended (with their error, if any), or the run was stopped (`nil`).
        case end((any Error)?)
    }

    /// A run that, once begun, pulls `inputs`, makes an operation of each with `makeOperation`
    /// and admits it to `queue`. Traps on a `maxInFlight` or reorder window below 1.
    init<Inputs: AsyncSequence & Sendable>(
        pulling inputs: Inputs,
        into queue: OperationQueue,
        maxInFlight: Int,
        order: StreamOrder,
        stopsAtFirstFailure: Bool,
        making makeOperation: @escaping @Sendable (Input) async -> AsyncResultOperation<Success, Failure>
    ) where Inputs.Element == Input {
        run = StreamRun(maxInFlight: maxInFlight, order: order, stopsAtFirstFailure: stopsAtFirstFailure) { run in
            run.drive(pulling: inputs, into: queue, making: makeOperation)
        }
    }

    /// Starts the run, for its one iterator; see ``StreamRun/begin()``.
    func begin() { run.begin() }

    /// Stops the run; see ``StreamRun/stop()``.
    func stop() { run.stop() }

    /// The next finished operation in the run's order, or the end; see ``StreamRun/next()``.
    func next() async -> Event {
        switch await run.next() {
        case .element(let entry):
            .element(unsafeDowncast(entry, to: TypedStreamEntry<Input, Success, Failure>.self))
        case .end(let error):
            .end(error)
        }
    }
}

/// The engine behind ``StreamedResults`` and ``StreamedValues``: pulls inputs on a task of its
/// own, makes an operation for each, admits it to the queue, and hands the finished ones to the
/// one consumer — holding at most `capacity` inputs between the pull and the delivery, and at
/// most `maxInFlight` unfinished operations.
///
/// An input takes a *place* before it is pulled and gives it back when its result is delivered
/// (or the input sequence ended instead): so the pull waits for a free place, and memory is
/// bounded by the places whatever the input length. In completion order the places are
/// `maxInFlight`; in input order `maxInFlight + reorderWindow`, and a running operation also
/// needs one of `maxInFlight` running slots.
///
/// Not generic: only its driver (``drive(pulling:into:making:)``), which makes the entries,
/// ``TypedStreamRun`` and the sequences' iterators know the input and result types.
///
/// Safety: every stored `var` is only touched while holding `lock`; continuations are resumed and
/// operations cancelled after the lock is released.
final class StreamRun: @unchecked Sendable {
    /// What the consumer gets next.
    enum Event: Sendable {
        case element(StreamEntry)
        /// The end: the inputs ended (with their error, if any), or the run was stopped (`nil`).
        case end((any Error)?)
    }

    private let lock = OperationLock()
    private let maxInFlight: Int
    private let capacity: Int
    private let inputOrder: Bool
    /// Whether the run stops at the first failure (the values variant): an input failure ends
    /// it at once, cancelling what runs, and a failed operation stops the pulling — rather than
    /// delivering everything (the results variant).
    private let stopsAtFirstFailure: Bool

    /// Inputs pulled (or being pulled) whose result is not delivered yet.
    private var taken = 0
    /// Unfinished operations, by input index. (The collections below skip the runtime's
    /// exclusivity checks: `lock` guards them, Design.md "CPU per operation".)
    @exclusivity(unchecked) private var running: [Int: StreamEntry] = [:]
    /// Finished, undelivered: in completion order, a FIFO (`readyHead` is its first); in input
    /// order, by index until `nextIndex` is there.
    /// Delivered entries are set to `nil` as they are taken, so that dropping the buffer's
    /// slots never releases the last reference to an entry under the lock (an input's or an
    /// operation's `deinit` is the user's code, and may call back into the run).
    @exclusivity(unchecked) private var ready: [StreamEntry?] = []
    private var readyHead = 0
    @exclusivity(unchecked) private var waitingForOrder: [Int: StreamEntry] = [:]
    private var nextIndex = 0
    /// Set when the inputs have ended: `.some(nil)` cleanly, `.some(error)` with their error.
    private var inputEnd: (any Error)??
    private var isStopped = false
    /// No further input is pulled: an operation failed in a run that stops at the first failure.
    private var pullingEnded = false
    /// The error the consumer is still to be told of, once stopped (an input failure).
    private var stopError: (any Error)?
    private var consumer: UnsafeContinuation<Event, Never>?
    private var producer: UnsafeContinuation<Bool, Never>?
    private var driver: Task<Void, Never>?
    /// Starts the driver task for this run (see ``begin()``).
    private let startDriver: @Sendable (StreamRun) -> Task<Void, Never>
    private var hasBegun = false

    /// A run whose driver task `startDriver` starts (see ``TypedStreamRun``, the one place that
    /// makes runs). Traps on a `maxInFlight` or reorder window below 1.
    fileprivate init(
        maxInFlight: Int, order: StreamOrder, stopsAtFirstFailure: Bool,
        startDriver: @escaping @Sendable (StreamRun) -> Task<Void, Never>
    ) {
        guard maxInFlight >= 1 else {
            fatalError("maxInFlight must be at least 1 to stream results; it was \(maxInFlight).")
        }
        self.maxInFlight = maxInFlight
        self.stopsAtFirstFailure = stopsAtFirstFailure
        switch order.kind {
        case .completion:
            capacity = maxInFlight
            inputOrder = false
        case .input(let window):
            let window = window ?? maxInFlight
            guard window >= 1 else {
                fatalError("A reorder window must be at least 1 to stream results in input order; it was \(window).")
            }
            capacity = maxInFlight + window
            inputOrder = true
        }
        self.startDriver = startDriver
    }

    // MARK: The driver

    /// Starts the run, for its one iterator: nothing happens when it was stopped already. A
    /// second call is a programmer error: it traps.
    func begin() {
        let (isFirst, wasStopped) = lock.withCriticalSection {
            defer { hasBegun = true }
            return (!hasBegun, isStopped)
        }
        guard isFirst else {
            fatalError("A streamed results sequence can be iterated once: its iterator pulls the inputs.")
        }
        guard !wasStopped else { return }
        let task = startDriver(self)
        let stopped = lock.withCriticalSection {
            if !isStopped { driver = task }
            return isStopped
        }
        if stopped { task.cancel() }
    }

    /// Pulls `inputs` on a detached task — never on the iterating task's actor (the main actor,
    /// say): each input becomes an operation made by `makeOperation` and admitted to `queue`.
    fileprivate func drive<Inputs: AsyncSequence & Sendable, Success: Sendable, Failure: Error>(
        pulling inputs: Inputs,
        into queue: OperationQueue,
        making makeOperation: @escaping @Sendable (Inputs.Element) async -> AsyncResultOperation<Success, Failure>
    ) -> Task<Void, Never> where Inputs.Element: Sendable {
        Task.detached { [self] in
            var iterator = inputs.makeAsyncIterator()
            var index = 0
            while await takePlace() {
                let input: Inputs.Element?
                do {
                    input = try await iterator.next()
                } catch {
                    inputsEnded(with: error)
                    return
                }
                guard let input else {
                    inputsEnded(with: nil)
                    return
                }
                let operation = await makeOperation(input)
                launch(TypedStreamEntry(index: index, input: input, operation: operation), on: queue)
                index += 1
            }
        }
    }

    /// Waits for a free place and takes it; `false` once the run has stopped.
    private func takePlace() async -> Bool {
        let answer = await withUnsafeContinuation { continuation in
            let answer = lock.withCriticalSection { () -> Bool? in
                let answer = takePlaceLocked()
                if answer == nil { producer = continuation }
                return answer
            }
            if let answer { continuation.resume(returning: answer) }
        }
        continuationResumed()
        return answer
    }

    /// Takes a free place: `true`; `false` once the run has stopped; `nil` when none is free.
    private func takePlaceLocked() -> Bool? {
        if isStopped { return false }
        guard !pullingEnded, taken < capacity, running.count < maxInFlight else { return nil }
        taken += 1
        return true
    }

    private func launch(_ entry: StreamEntry, on queue: OperationQueue) {
        let stopped = lock.withCriticalSection {
            if !isStopped { running[entry.index] = entry }
            return isStopped
        }
        if stopped {
            // Queued cancelled, as the batch APIs do: it finishes without running, so nobody
            // who holds it waits for ever.
            entry.operation.cancel()
            queue.admit(entry.operation)
            return
        }
        guard FinishObservation.observe(entry.operation, { self.finished(entry) }) != nil else {
            finished(entry)
            return
        }
        queue.admit(entry.operation)
    }

    private func inputsEnded(with error: (any Error)?) {
        let endsNow = lock.withCriticalSection { () -> Bool in
            taken -= 1
            if error != nil && stopsAtFirstFailure { return true }
            inputEnd = .some(error)
            return false
        }
        if endsNow {
            stop(reporting: error)
        } else {
            deliver()
        }
    }

    // MARK: Finishing and delivering

    private func finished(_ entry: StreamEntry) {
        // Read outside the lock: it asks the operation.
        let failed = stopsAtFirstFailure && entry.operation.stepFailed
        // Filed and handed on in one critical section: the queue's threads finish operations
        // side by side, and a second lock taken per finish was where they queued up.
        let wakes = lock.withCriticalSection { () -> Wakes? in
            guard running.removeValue(forKey: entry.index) != nil else { return nil }
            if failed { pullingEnded = true }
            if inputOrder {
                waitingForOrder[entry.index] = entry
            } else {
                ready.append(entry)
            }
            return wakesLocked()
        }
        wakes?.resume()
    }

    /// Hands the consumer what it waits for, and the producer a place, when there are.
    private func deliver() {
        lock.withCriticalSection { wakesLocked() }.resume()
    }

    /// The consumer and the producer to wake, with what they are told; taken off the run.
    private func wakesLocked() -> Wakes {
        var wakes = Wakes()
        if let waiting = consumer, let event = nextEventLocked() {
            consumer = nil
            wakes.consumer = (waiting, event)
        }
        wakes.producer = producerToWakeLocked()
        return wakes
    }

    /// The producer, taken off the run, when it waits and a place is free for it (taken for it).
    private func producerToWakeLocked() -> UnsafeContinuation<Bool, Never>? {
        guard let waiting = producer, takePlaceLocked() == true else { return nil }
        producer = nil
        return waiting
    }

    /// Whom a change of the run wakes, resumed after its lock is released.
    private struct Wakes {
        var consumer: (UnsafeContinuation<Event, Never>, Event)?
        var producer: UnsafeContinuation<Bool, Never>?

        func resume() {
            if let (consumer, event) = consumer { consumer.resume(returning: event) }
            producer?.resume(returning: true)
        }
    }

    /// The next event for the consumer, if one is decided; takes it off the buffers.
    private func nextEventLocked() -> Event? {
        if isStopped {
            defer { stopError = nil }
            return .end(stopError)
        }
        if let entry = takeDeliverableLocked() {
            taken -= 1
            return .element(entry)
        }
        if let inputEnd, taken == 0 {
            isStopped = true
            return .end(inputEnd)
        }
        return nil
    }

    private func takeDeliverableLocked() -> StreamEntry? {
        if inputOrder {
            guard let entry = waitingForOrder.removeValue(forKey: nextIndex) else { return nil }
            nextIndex += 1
            return entry
        }
        guard readyHead < ready.count else { return nil }
        let entry = ready[readyHead].take()
        readyHead += 1
        if readyHead * 2 >= ready.count {
            ready.removeFirst(readyHead)
            readyHead = 0
        }
        return entry
    }

    // MARK: The consumer

    /// The next finished operation in the run's order, or the end. Cancelling the calling task
    /// stops the run: it returns `.end(nil)`.
    func next() async -> Event {
        let event = await withTaskCancellationHandler {
            await withUnsafeContinuation { continuation in
                // A place given back wakes the producer in the same critical section.
                let wakes = lock.withCriticalSection { () -> Wakes in
                    guard let event = nextEventLocked() else {
                        consumer = continuation
                        return Wakes()
                    }
                    return Wakes(consumer: (continuation, event), producer: producerToWakeLocked())
                }
                wakes.resume()
            }
        } onCancel: {
            stop()
        }
        continuationResumed()
        return event
    }

    /// Stops the run: no further input is pulled, the unfinished operations are cancelled, and
    /// the consumer's wait ends. Idempotent.
    func stop() {
        stop(reporting: nil)
    }

    /// Stops the run; the consumer is told `error` at its next (or current) wait.
    private func stop(reporting error: (any Error)?) {
        // Everything the run held is moved out under the lock and released after it: an
        // entry's input or operation may run the user's `deinit`, which may call back in.
        let held = lock.withCriticalSection { () -> Held? in
            guard !isStopped else { return nil }
            isStopped = true
            // Told now to a waiting consumer, or kept for its next call.
            if consumer == nil { stopError = error }
            defer {
                consumer = nil
                producer = nil
                driver = nil
                running = [:]
                ready = []
                readyHead = 0
                waitingForOrder = [:]
            }
            return Held(
                consumer: consumer, producer: producer, driver: driver, running: running, ready: ready,
                waitingForOrder: waitingForOrder)
        }
        guard let held else { return }
        held.driver?.cancel()
        held.producer?.resume(returning: false)
        for entry in held.running.values { entry.operation.cancel() }
        held.consumer?.resume(returning: .end(error))
    }

    /// What a stopped run let go of, to release outside its lock.
    private struct Held {
        let consumer: UnsafeContinuation<Event, Never>?
        let producer: UnsafeContinuation<Bool, Never>?
        let driver: Task<Void, Never>?
        let running: [Int: StreamEntry]
        let ready: [StreamEntry?]
        let waitingForOrder: [Int: StreamEntry]
    }
}
