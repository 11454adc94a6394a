import Foundation
import OperationBridge

// The hand-written code each scenario is compared with: what a team writes without the package.

/// A plain synchronous operation that reports its value through a callback.
final class CallbackOperation: Operation, @unchecked Sendable {
    // Written before the operation is queued and read by the queue's thread afterwards.
    nonisolated(unsafe) var onResult: (@Sendable (Int) -> Void)?
    let value: Int

    init(_ value: Int) {
        self.value = value
    }

    override func main() {
        onResult?(value)
    }
}

/// Awaits a ``CallbackOperation`` by hand: a checked continuation resumed from the callback.
func handWrittenRun(_ operation: CallbackOperation, on queue: OperationQueue) async -> Int {
    await withCheckedContinuation { continuation in
        operation.onResult = { continuation.resume(returning: $0) }
        queue.addOperation(operation)
    }
}

/// The classic hand-copied result operation from the well-known articles — what teams await by
/// hand today: state behind a concurrent `DispatchQueue` (barrier writes), KVO-style
/// notifications, and an `onResult` callback that a hand-written continuation hooks into.
final class ClassicResultOperation: Operation, @unchecked Sendable {
    private let lockQueue = DispatchQueue(label: "classic.result.operation", attributes: .concurrent)
    private var _isExecuting = false
    private var _isFinished = false
    private var _result: Int?
    // Written before the operation is queued, read by the queue's thread afterwards.
    nonisolated(unsafe) var onResult: (@Sendable (Int) -> Void)?
    let value: Int

    init(_ value: Int) {
        self.value = value
    }

    override var isAsynchronous: Bool { true }

    override private(set) var isExecuting: Bool {
        get { lockQueue.sync { _isExecuting } }
        set {
            willChangeValue(forKey: "isExecuting")
            lockQueue.sync(flags: .barrier) { _isExecuting = newValue }
            didChangeValue(forKey: "isExecuting")
        }
    }

    override private(set) var isFinished: Bool {
        get { lockQueue.sync { _isFinished } }
        set {
            willChangeValue(forKey: "isFinished")
            lockQueue.sync(flags: .barrier) { _isFinished = newValue }
            didChangeValue(forKey: "isFinished")
        }
    }

    override func start() {
        guard !isCancelled else {
            finish()
            return
        }
        isFinished = false
        isExecuting = true
        main()
    }

    override func main() {
        finish(with: value)
    }

    func finish(with result: Int) {
        lockQueue.sync(flags: .barrier) { _result = result }
        onResult?(result)
        finish()
    }

    func finish() {
        isExecuting = false
        isFinished = true
    }
}

/// Awaits a ``ClassicResultOperation`` by hand: a checked continuation resumed from `onResult`.
func handWrittenRun(_ operation: ClassicResultOperation, on queue: OperationQueue) async -> Int {
    await withCheckedContinuation { continuation in
        operation.onResult = { continuation.resume(returning: $0) }
        queue.addOperation(operation)
    }
}

/// The classic hand-written "Task inside an Operation": KVO-style state under a lock, a `Task`
/// started in `start()`, finished when the closure returns.
final class HandWrittenTaskOperation: Operation, @unchecked Sendable {
    private let lock = NSLock()
    private var executing = false
    private var finished = false
    private let body: @Sendable () async -> Void

    init(_ body: @escaping @Sendable () async -> Void) {
        self.body = body
    }

    override var isAsynchronous: Bool { true }
    override var isExecuting: Bool { lock.withLock { executing } }
    override var isFinished: Bool { lock.withLock { finished } }

    override func start() {
        if isCancelled {
            markFinished()
            return
        }
        willChangeValue(forKey: "isExecuting")
        lock.withLock { executing = true }
        didChangeValue(forKey: "isExecuting")
        Task { [self] in
            await body()
            markFinished()
        }
    }

    private func markFinished() {
        willChangeValue(forKey: "isExecuting")
        willChangeValue(forKey: "isFinished")
        lock.withLock {
            executing = false
            finished = true
        }
        didChangeValue(forKey: "isExecuting")
        didChangeValue(forKey: "isFinished")
    }
}

/// The library-side operation for await scenarios: a result operation finishing in `main()`.
final class ValueOperation: AsyncResultOperation<Int, CancellationError>, @unchecked Sendable {
    let value: Int

    init(_ value: Int) {
        self.value = value
    }

    override func main() {
        finish(with: .success(value))
    }
}

/// A chained result operation as most classic subclasses are: it doubles its input, given at
/// creation here (an upstream would give it when the step starts). For the memory probes.
final class DoublingOperation: ChainedAsyncResultOperation<Int, Int, CancellationError>, @unchecked Sendable {
    override func main() {
        finish(with: .success((input ?? 0) * 2))
    }
}

/// The step used in graph scenarios: the smallest package operation, finishing in `main()`.
final class Step: AsyncOperation, @unchecked Sendable {
    override func main() {
        finish()
    }
}

/// A chain written by hand with Foundation dependencies, without the package: `count`
/// `BlockOperation`s, each depending on the one before it, made up front (as the chain row
/// makes its steps); each adds the next to `queue` as it runs, and the queue starts that one
/// once its dependency has finished. What any chain of dependent operations costs on an
/// `OperationQueue`: ``runHandWrittenChain(_:on:)`` plus Foundation's dependency bookkeeping per
/// step.
func runHandWrittenDependencyChain(_ count: Int, on queue: OperationQueue) async {
    let countdown = Countdown(count)
    var operations = dependencyChain(count) { BlockOperation() }
    for index in 0..<count {
        // Unretained: `operations` keeps every step alive until the chain has run, and a strong
        // capture would make a cycle with the next step's dependency on this one.
        let next = index + 1 < count ? Unmanaged.passUnretained(operations[index + 1]) : nil
        operations[index].addExecutionBlock {
            countdown.tick()
            if let next { queue.addOperation(next.takeUnretainedValue()) }
        }
    }
    queue.addOperation(operations[0])
    await countdown.wait()
    // Every step has been added: once they have all finished, the queue holds none of them, and
    // releasing from the tail frees each step while the array still holds its dependency —
    // never the whole chain recursively from its last step.
    await queue.drain()
    while operations.popLast() != nil {}
}

/// A fan-out written by hand with Foundation dependencies, without the package: `count`
/// `BlockOperation`s, each depending on one source, made up front (as the fan-out row makes
/// them); the source's completion block adds them all with one `addOperations` call once it has
/// finished, so each is ready when added (added before, Linux's queue would rescan every pending
/// dependent at each readiness change: quadratic). What a fan-out of dependent operations costs
/// on an `OperationQueue` without the package.
func runHandWrittenDependencyFanOut(_ count: Int, on queue: OperationQueue) async {
    let countdown = Countdown(count)
    let source = BlockOperation()
    let dependents = (0..<count).map { _ in
        let dependent = BlockOperation { countdown.tick() }
        dependent.addDependency(source)
        return dependent
    }
    source.completionBlock = { queue.addOperations(dependents, waitUntilFinished: false) }
    queue.addOperation(source)
    await countdown.wait()
    await queue.drain()
    // The completion block holds the dependents, which hold the source: break the cycle.
    source.completionBlock = nil
}

/// `count` operations made by `make`, each depending on the one before it.
func dependencyChain<Link: Operation>(_ count: Int, _ make: () -> Link) -> [Link] {
    var operations: [Link] = []
    operations.reserveCapacity(count)
    for index in 0..<count {
        let link = make()
        if index > 0 { link.addDependency(operations[index - 1]) }
        operations.append(link)
    }
    return operations
}

/// Counts callbacks and resumes a waiter when `target` is reached.
final class Countdown: @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = NSLock()
    private var remaining: Int
    private var continuation: CheckedContinuation<Void, Never>?

    init(_ count: Int) {
        remaining = count
    }

    /// Counts one down; returns whether more are to come.
    @discardableResult
    func tick() -> Bool {
        let (resume, more) = lock.withLock { () -> (CheckedContinuation<Void, Never>?, Bool) in
            remaining -= 1
            guard remaining == 0 else { return (nil, remaining > 0) }
            defer { continuation = nil }
            return (continuation, false)
        }
        resume?.resume()
        return more
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            let done: Bool = lock.withLock {
                if remaining == 0 { return true }
                self.continuation = continuation
                return false
            }
            if done { continuation.resume() }
        }
    }
}

extension OperationQueue {
    /// Waits until every operation added so far has finished, through a barrier block — the
    /// same mechanism on both sides of a comparison.
    func drain() async {
        await withCheckedContinuation { continuation in
            addBarrierBlock { continuation.resume() }
        }
    }
}

/// A thread-safe running sum, to check what concurrent children computed.
final class Sum: @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = NSLock()
    private var total = 0

    func add(_ value: Int) {
        lock.withLock { total &+= value }
    }

    var value: Int { lock.withLock { total } }
}

/// The async lock a team writes by hand: a semaphore of one place.
final class HandWrittenAsyncLock: Sendable {
    private let places = HandWrittenAsyncSemaphore(places: 1)

    func withLock<Result>(_ body: () async -> Result) async -> Result {
        await places.acquire()
        defer { places.release() }
        return await body()
    }
}

/// The async semaphore a team writes by hand: a count of free places and a FIFO of continuations
/// behind an `NSLock`, each release handing its place to the first waiter.
///
/// Safety: `free` and `waiters` are only touched while holding `lock`.
final class HandWrittenAsyncSemaphore: @unchecked Sendable {
    private let lock = NSLock()
    private var free: Int
    private var waiters: [UnsafeContinuation<Void, Never>] = []

    init(places: Int) {
        free = places
    }

    /// Takes a place, waiting for one when none is free.
    func acquire() async {
        await withUnsafeContinuation { continuation in
            lock.lock()
            if free == 0 {
                waiters.append(continuation)
                lock.unlock()
            } else {
                free -= 1
                lock.unlock()
                continuation.resume()
            }
        }
    }

    /// Gives a place back: to the first waiter, if any.
    func release() {
        lock.lock()
        if waiters.isEmpty {
            free += 1
            lock.unlock()
        } else {
            let next = waiters.removeFirst()
            lock.unlock()
            next.resume()
        }
    }
}

/// Streaming by hand, without the package: a detached task adds one `BlockOperation` per input
/// once a place is free (at most `maxInFlight` inputs between the add and the loop), each block
/// hands its input to an `AsyncStream`, and the loop gives a place back for each input it takes.
/// The floor of any bounded stream through an `OperationQueue`: the producer woken, and an
/// operation added, once per input. Returns how many inputs the loop took.
func runHandWrittenStream(_ count: Int, maxInFlight: Int, on queue: OperationQueue) async -> Int {
    let places = HandWrittenAsyncSemaphore(places: maxInFlight)
    let (inputs, continuation) = AsyncStream.makeStream(of: Int.self)
    let producer = Task.detached {
        for index in 0..<count {
            await places.acquire()
            queue.addOperation { continuation.yield(index) }
        }
    }
    var taken = 0
    for await _ in inputs {
        places.release()
        taken += 1
        if taken == count { break }
    }
    await producer.value
    return taken
}

/// A chain written by hand with no dependencies at all: each `BlockOperation` adds the next one
/// to `queue` as it runs. The least a chain of `count` operations, one at a time, can cost on an
/// `OperationQueue`: one queue hand-off per step and nothing else.
func runHandWrittenChain(_ count: Int, on queue: OperationQueue) async {
    let countdown = Countdown(count)
    @Sendable func addNext() {
        queue.addOperation {
            if countdown.tick() { addNext() }
        }
    }
    addNext()
    await countdown.wait()
}

/// The serial async queue a team writes by hand, as async task-queue libraries do: each closure
/// runs in a `Task` of its own that first awaits the task before it.
///
/// Safety: `last` is only touched while holding `lock`.
final class HandWrittenSerialQueue: @unchecked Sendable {
    private let lock = NSLock()
    /// Waits for the closure enqueued last (a closure, not a second task per enqueue).
    private var last: (@Sendable () async -> Void)?

    /// Runs `body` once every closure enqueued before it has run; its task gives the result.
    @discardableResult
    func enqueue<Result: Sendable>(_ body: @escaping @Sendable () async -> Result) -> Task<Result, Never> {
        lock.lock()
        defer { lock.unlock() }
        let previous = last
        let task = Task {
            await previous?()
            return await body()
        }
        last = { _ = await task.value }
        return task
    }
}

/// Awaits an operation that is not the package's the way the peer libraries do: a completion
/// operation added to the operation's own queue, depending on it, resumes a continuation.
/// `enqueue` adds `operation` to `queue` with it (run-and-await); otherwise it is there already.
///
/// On Linux, a queue loses the wake-up of an operation whose dependency finishes while it is being
/// added (Design.md, "Platform facts"): written as the peers write it, the one-after-another row
/// hangs within a few thousand awaits. So, when the operation has finished by the time the
/// completion operation is in the queue, its readiness is announced once more — one check per
/// await, and a scheduling pass only then.
func handWrittenAwait(_ operation: Operation, on queue: OperationQueue, enqueue: Bool) async {
    await withCheckedContinuation { continuation in
        let completion = BlockOperation { continuation.resume() }
        completion.addDependency(operation)
        if enqueue {
            queue.addOperations([operation, completion], waitUntilFinished: false)
        } else {
            queue.addOperation(completion)
            if operation.isFinished {
                completion.willChangeValue(forKey: "isReady")
                completion.didChangeValue(forKey: "isReady")
            }
        }
    }
}
