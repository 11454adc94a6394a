import Foundation
import OperationBridge
import Testing

/// Counts, under a lock, the inputs a streamed run has pulled (made an operation for) and the
/// results the consumer has taken, and checks at every pull that no more than `capacity` are
/// pulled and not yet delivered — the memory bound, checked deterministically. The consumer
/// counts a delivery just after the run handed it the element, and the run gives the place back
/// as it hands the element over: so one more — the element in the loop's hands — may be seen.
private final class PlaceLedger: @unchecked Sendable {
    private let lock = NSLock()
    private let capacity: Int
    private var pulled = 0
    private var delivered = 0
    private var running = 0
    private var mostPulledAhead = 0
    private var runningAtMost = 0

    init(capacity: Int) { self.capacity = capacity }

    var pulledCount: Int { lock.withLock { pulled } }

    func pull() {
        lock.withLock {
            pulled += 1
            mostPulledAhead = max(mostPulledAhead, pulled - delivered)
        }
    }

    func deliver() { lock.withLock { delivered += 1 } }

    func enterRun() {
        lock.withLock {
            running += 1; runningAtMost = max(runningAtMost, running)
        }
    }
    func leaveRun() { lock.withLock { running -= 1 } }

    var keptTheBound: Bool { lock.withLock { mostPulledAhead <= capacity + 1 } }

    /// The most operations that ran at once.
    var mostRunning: Int { lock.withLock { runningAtMost } }
}

/// An `AsyncSequence` of inputs that a test feeds by hand, and that may end with an error.
private struct InputFeed: Sendable {
    let stream: AsyncThrowingStream<Int, any Error>
    let continuation: AsyncThrowingStream<Int, any Error>.Continuation

    init() {
        (stream, continuation) = AsyncThrowingStream.makeStream()
    }
}

private struct StreamError: Error, Equatable, CancellationRepresentable {
    let input: Int
    static let cancellation = StreamError(input: -1)
}

/// An input whose release runs the user's code: its probe's callback.
private struct ReleasingInput: Sendable {
    let number: Int
    let probe: ReleaseProbe
}

/// `count` inputs made as they are pulled, so that only the run holds them.
private struct ReleasingInputs: Sequence, Sendable {
    let count: Int
    let onRelease: @Sendable () -> Void

    func makeIterator() -> AnyIterator<ReleasingInput> {
        var next = 0
        return AnyIterator {
            guard next < count else { return nil }
            defer { next += 1 }
            return ReleasingInput(number: next, probe: ReleaseProbe(onRelease: onRelease))
        }
    }
}

/// Finishes at once with its number, then counts itself finished.
private final class CountedFinishOperation: AsyncResultOperation<Int, CancellationError>, @unchecked Sendable {
    let number: Int
    let finished: @Sendable () -> Void

    init(_ number: Int, finished: @escaping @Sendable () -> Void) {
        self.number = number
        self.finished = finished
        super.init()
    }

    override func main() {
        finish(with: .success(number))
        finished()
    }
}

/// A one-permit async semaphore: `acquire()` suspends until the holder calls `release()`.
private final class AsyncPermit: @unchecked Sendable {
    // Safety: `available` and `waiters` are only touched while holding `lock`.
    private let lock = NSLock()
    private var available = true
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func acquire() async {
        await resumeOrdered { continuation in
            let granted = lock.withLock {
                if available {
                    available = false
                    return true
                }
                waiters.append(continuation)
                return false
            }
            if granted { continuation.resume() }
        }
    }

    func release() {
        let next = lock.withLock { () -> CheckedContinuation<Void, Never>? in
            if waiters.isEmpty {
                available = true
                return nil
            }
            return waiters.removeFirst()
        }
        next?.resume()
    }
}

@Suite("Streaming: unbounded inputs, bounded memory", .timeLimit(Stress.timeLimit(minutes: 2)))
struct StreamingTests {
    @Test("Every input runs once; never more than maxInFlight at once, never more pulled ahead", arguments: [1, 3, 8])
    func everyInputOnceWithinTheBound(maxInFlight: Int) async {
        let ledger = PlaceLedger(capacity: maxInFlight)
        let count = Stress.iterations(2_000)
        let results = OperationQueue().results(streaming: 0..<count, maxInFlight: maxInFlight) { n in
            ledger.pull()
            return TaskOperation { () async -> Int in
                ledger.enterRun()
                await Task.yield()
                ledger.leaveRun()
                return n * 2
            }
        }
        var seen = Set<Int>()
        for await finished in results {
            ledger.deliver()
            #expect(finished.result == .success(finished.input * 2))
            #expect(finished.index == finished.input)
            seen.insert(finished.input)
        }
        #expect(seen == Set(0..<count))
        #expect(ledger.keptTheBound)
        #expect(ledger.mostRunning <= maxInFlight)
    }

    @Test("The next input is pulled only when a place frees up")
    func pullsOnlyWhenAPlaceFreesUp() async throws {
        let gates = (0..<6).map { _ in Gate() }
        let made = (0..<6).map { _ in Gate() }
        let ledger = PlaceLedger(capacity: 2)
        let results = OperationQueue().results(streaming: 0..<6, maxInFlight: 2) { n in
            ledger.pull()
            made[n].open()
            return TaskOperation { () async -> Int in
                await gates[n].wait()
                return n
            }
        }
        var iterator = results.makeAsyncIterator()
        await made[1].wait()
        #expect(!made[2].hasOpened)  // two in flight: the third input waits
        gates[1].open()
        let first = try #require(await iterator.next())
        ledger.deliver()
        #expect(first.input == 1)
        await made[2].wait()  // the place input 1 gave back
        #expect(!made[3].hasOpened)
        for gate in gates { gate.open() }
        while await iterator.next() != nil { ledger.deliver() }
        #expect(ledger.pulledCount == 6)
        #expect(ledger.keptTheBound)
    }

    @Test("A makeOperation that waits for a limiter its operations release: no operation is held back, the stream ends")
    func aMakeOperationWaitingForItsOwnOperationsDoesNotHang() async {
        // One permit: making input n waits until the operation of input n - 1 has run. A run
        // that held made operations back while it made the next one would wait for ever.
        let permit = AsyncPermit()
        let results = OperationQueue().results(streaming: 0..<Stress.iterations(200), maxInFlight: 3) {
            n -> AsyncResultOperation<Int, Never> in
            await permit.acquire()
            return TaskOperation { () async -> Int in
                permit.release()
                return n
            }
        }
        var count = 0
        for await finished in results where finished.result == .success(finished.input) { count += 1 }
        #expect(count == Stress.iterations(200))
    }

    @Test("An AsyncSequence's operations are admitted as each is made, while the next pull waits")
    func anAsyncSequencesOperationsRunWhileTheNextPullWaits() async throws {
        let feed = InputFeed()
        let results = OperationQueue().results(streaming: feed.stream, maxInFlight: 4) { n in TaskOperation { n } }
        feed.continuation.yield(0)
        var iterator = results.makeAsyncIterator()
        // Four places are free: the second pull waits for an input that is not there yet.
        let first = try await iterator.next()
        #expect(first?.input == 0)
        feed.continuation.finish()
        #expect(try await iterator.next() == nil)
    }

    @Test("Input order: delivered in input order whatever the finishing order, within the reorder window")
    func inputOrderWithinTheWindow() async {
        var generator = Stress.generator(for: "StreamingTests.inputOrderWithinTheWindow")
        for _ in 0..<Stress.iterations(40) {
            let maxInFlight = Int.random(in: 1...4, using: &generator)
            let window = Int.random(in: 1...4, using: &generator)
            let count = Int.random(in: 0...40, using: &generator)
            let ledger = PlaceLedger(capacity: maxInFlight + window)
            let results = OperationQueue().results(
                streaming: 0..<count, maxInFlight: maxInFlight, order: .input(reorderWindow: window)
            ) { n in
                ledger.pull()
                return TaskOperation { () async -> Int in
                    ledger.enterRun()
                    for _ in 0..<(n * 7 % 5) { await Task.yield() }
                    ledger.leaveRun()
                    return n
                }
            }
            var order: [Int] = []
            for await finished in results {
                ledger.deliver()
                order.append(finished.input)
            }
            #expect(order == Array(0..<count))
            #expect(ledger.keptTheBound)
            #expect(ledger.mostRunning <= maxInFlight)
        }
    }

    @Test("Input order: a slow first input holds the stream up once the window is full")
    func aSlowFirstInputHoldsTheWindow() async throws {
        let first = Gate()
        let made = (0..<10).map { _ in Gate() }
        let results = OperationQueue().results(streaming: 0..<10, maxInFlight: 2, order: .input(reorderWindow: 3)) {
            n in
            made[n].open()
            return TaskOperation { () async -> Int in
                if n == 0 { await first.wait() }
                return n
            }
        }
        var iterator = results.makeAsyncIterator()
        let consumer = Task {
            var inputs: [Int] = []
            while let finished = await iterator.next() { inputs.append(finished.input) }
            return inputs
        }
        // Inputs 1...4 finish while 0 runs: 1 running + 4 waiting = 5 places = 2 + 3. Full.
        await made[4].wait()
        #expect(!made[5].hasOpened)
        first.open()
        #expect(await consumer.value == Array(0..<10))
    }

    @Test("A million inputs: leaving the loop early pulls only what was delivered plus the places")
    func aMillionInputsLeftEarly() async throws {
        let ledger = PlaceLedger(capacity: 4)
        let started = Recorder<AsyncResultOperation<Int, CancellationError>>()
        let results = OperationQueue().results(streaming: 0..<1_000_000, maxInFlight: 4) { n in
            ledger.pull()
            let operation = TaskOperation { () async throws(CancellationError) -> Int in n }
            started.append(operation)
            return operation
        }
        var taken = 0
        for await _ in results {
            ledger.deliver()
            taken += 1
            if taken == 1_000 { break }
        }
        #expect(ledger.pulledCount <= 1_000 + 4)
        #expect(ledger.keptTheBound)
        for operation in started.all { try await operation.bridge.waitForCompletion() }
    }

    @Test("An input whose deinit stops its stream: the run lets go of inputs outside its lock")
    func anInputsDeinitMayStopTheStream() async throws {
        // The run's lock is not reentrant: releasing the last reference to an input under it
        // would run the deinit of the probe it holds there, whose callback cancels the stream and
        // so would take the lock again (a trap).
        let stream = Guarded<StreamedResults<ReleasingInput, Int, CancellationError, Never>?>(nil)
        let released = CountdownSignal(4)
        let finished = CountdownSignal(4)
        let inputs = ReleasingInputs(count: 4) {
            stream.current?.cancel()
            released.arrive()
        }
        let results = OperationQueue().results(streaming: inputs, maxInFlight: 4) { input in
            CountedFinishOperation(input.number) { finished.arrive() }
        }
        stream.set(results)
        var first: Int?
        for await element in results {
            first = element.input.number
            // The other three wait undelivered in the run when the loop is left.
            _ = await finished.wait()
            break
        }
        _ = await released.wait()
        #expect(first != nil)
        #expect(released.remaining == 0)
        stream.set(nil)
    }

    @Test("Leaving the loop stops pulling and cancels what is in flight")
    func leavingTheLoopCancelsTheRest() async throws {
        let running = Recorder<NeverEndingOperation>()
        let made = Gate()
        let feed = InputFeed()
        for n in 0..<3 { feed.continuation.yield(n) }
        func firstOnly() async throws -> Int? {
            let results = OperationQueue().results(streaming: feed.stream, maxInFlight: 3) {
                n -> AsyncResultOperation<Int, CancellationError> in
                // Input 0 finishes once inputs 1 and 2 are running.
                if n == 0 { return ControlledOperation(.success(0), gate: made) }
                let operation = NeverEndingOperation()
                running.append(operation)
                if n == 2 { made.open() }
                return operation
            }
            for try await finished in results { return finished.input }
            return nil
        }
        #expect(try await firstOnly() == 0)
        #expect(running.all.count == 2)
        for operation in running.all {
            try await operation.bridge.waitForCompletion()
            #expect(operation.isCancelled)
        }
        feed.continuation.finish()
    }

    @Test("Cancelling the consuming task cancels what is in flight; next() returns nil")
    func cancellingTheConsumerCancelsTheRest() async throws {
        let made = Gate()
        let running = Recorder<NeverEndingOperation>()
        let results = OperationQueue().results(streaming: 0..<1_000, maxInFlight: 2) { n in
            let operation = NeverEndingOperation()
            running.append(operation)
            if n == 1 { made.open() }
            return operation
        }
        let consumer = Task {
            var count = 0
            for await _ in results { count += 1 }
            return count
        }
        await made.wait()
        consumer.cancel()
        #expect(await consumer.value == 0)
        #expect(running.all.count == 2)
        for operation in running.all {
            try await operation.bridge.waitForCompletion()
            #expect(operation.isCancelled)
        }
    }

    @Test("An input sequence that throws: the operations in flight are delivered, then the error")
    func aThrowingInputEndsTheResultsWithItsError() async {
        let feed = InputFeed()
        let release = Gate()
        let results = OperationQueue().results(streaming: feed.stream, maxInFlight: 4) { n in
            TaskOperation { () async -> Int in
                await release.wait()
                return n
            }
        }
        feed.continuation.yield(0)
        feed.continuation.yield(1)
        feed.continuation.finish(throwing: StreamError(input: 99))
        var delivered: [Int] = []
        await #expect(throws: StreamError(input: 99)) {
            release.open()
            for try await finished in results { delivered.append(finished.input) }
        }
        #expect(delivered.sorted() == [0, 1])
    }

    @Test("Values: the first failure is thrown typed, the rest in flight is cancelled, nothing more is pulled")
    func valuesStopAtTheFirstFailure() async throws {
        let ledger = PlaceLedger(capacity: 3)
        let made = Recorder<AsyncResultOperation<Int, StreamError>>()
        let thirdMade = Gate()
        let values = OperationQueue().values(streaming: 0..<100, maxInFlight: 3) {
            n -> AsyncResultOperation<Int, StreamError> in
            ledger.pull()
            let operation = TaskOperation { () async throws(StreamError) -> Int in
                // Input 2 fails once all three run; the others end only when cancelled.
                if n == 2 {
                    await thirdMade.wait()
                    throw StreamError(input: n)
                }
                _ = await OneShotSignal().wait()  // returns once cancelled
                throw .cancellation
            }
            made.append(operation)
            if n == 2 { thirdMade.open() }
            return operation
        }
        var received: [Int] = []
        do throws(StreamError) {
            for try await value in values { received.append(value.value) }
            Issue.record("no failure thrown")
        } catch {
            #expect(error == StreamError(input: 2))
        }
        #expect(received.isEmpty)
        #expect(ledger.pulledCount == 3)
        for operation in made.all {
            try await operation.bridge.waitForCompletion()
            #expect(operation.isCancelled != (operation.result == .failure(StreamError(input: 2))))
        }
    }

    @Test("Values of an AsyncSequence: an input error is thrown at once, and what runs is cancelled")
    func valuesOfAThrowingInput() async throws {
        let feed = InputFeed()
        let running = Recorder<NeverEndingOperation>()
        let made = Gate()
        let values = OperationQueue().values(streaming: feed.stream, maxInFlight: 2) { n in
            let operation = NeverEndingOperation()
            running.append(operation)
            made.open()
            return operation
        }
        feed.continuation.yield(0)
        let consumer = Task { () async throws -> [Int] in
            var seen: [Int] = []
            for try await value in values { seen.append(value.value) }
            return seen
        }
        await made.wait()
        feed.continuation.finish(throwing: StreamError(input: 7))
        await #expect(throws: StreamError(input: 7)) { try await consumer.value }
        for operation in running.all {
            try await operation.bridge.waitForCompletion()
            #expect(operation.isCancelled)
        }
    }

    @Test("Classic subclasses, and an empty input: the sequence simply ends")
    func classicSubclassesAndEmptyInputs() async {
        let results = OperationQueue().results(streaming: [Result<Int, StreamError>](), maxInFlight: 2) {
            ControlledOperation($0)
        }
        for await _ in results { Issue.record("no element expected") }
        let values = OperationQueue().values(streaming: [.success(1), .success(2)], maxInFlight: 2, order: .input) {
            (outcome: Result<Int, StreamError>) in ControlledOperation(outcome)
        }
        var collected: [Int] = []
        do throws(StreamError) {
            for try await value in values { collected.append(value.value) }
        } catch {
            Issue.record("unexpected \(error)")
        }
        #expect(collected == [1, 2])
    }

    @Test("Values of TaskOperations written inline: a typed closure picks its Failure, an untyped one any Error")
    func valuesOfInlineTaskOperations() async throws {
        let typed = OperationQueue().values(streaming: 0..<3, maxInFlight: 2) { n in
            TaskOperation { () async throws(StreamError) -> Int in
                if n == 1 { throw StreamError(input: n) }
                return n
            }
        }
        let _: StreamedValues<Int, Int, StreamError, StreamError> = typed
        await #expect(throws: StreamError(input: 1)) { for try await _ in typed {} }
        let untyped = OperationQueue().values(streaming: 0..<3, maxInFlight: 2) { n in
            TaskOperation { () async throws -> Int in n }
        }
        var sum = 0
        for try await value in untyped { sum += value.value }
        #expect(sum == 3)
    }

    @Test("cancel() before iterating: nothing is pulled; iterating ends at once")
    func cancelBeforeIterating() async {
        let ledger = PlaceLedger(capacity: 2)
        let results = OperationQueue().results(streaming: 0..<10, maxInFlight: 2) { n in
            ledger.pull()
            return TaskOperation { n }
        }
        results.cancel()
        for await _ in results { Issue.record("no element expected") }
        #expect(ledger.pulledCount == 0)
    }

    #if EXIT_TESTS
        @Test("Programmer errors trap: iterating twice, maxInFlight or a reorder window below 1")
        func programmerErrorsTrap() async {
            await #expect(processExitsWith: .failure) {
                let results = OperationQueue().results(streaming: 0..<1, maxInFlight: 1) { n in TaskOperation { n } }
                _ = results.makeAsyncIterator()
                _ = results.makeAsyncIterator()
            }
            await #expect(processExitsWith: .failure) {
                _ = OperationQueue().results(streaming: 0..<1, maxInFlight: 0) { n in TaskOperation { n } }
            }
            await #expect(processExitsWith: .failure) {
                _ = OperationQueue().results(streaming: 0..<1, maxInFlight: 1, order: .input(reorderWindow: 0)) { n in
                    TaskOperation { n }
                }
            }
        }
    #endif
}
