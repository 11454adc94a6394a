import Foundation

/// The hand-off between a ``GraphScheduler`` (which reports finished operations from any
/// thread) and the single task iterating a results sequence.
///
/// Memory is bounded by the number of positions: one flag each, and at most one queue entry
/// each in completion order.
///
/// Safety: all state is guarded by `lock`; the waiting continuation is resumed after the lock
/// is released.
final class FinishedPositions: @unchecked Sendable {
    private let lock = OperationLock()
    private let order: ResultOrder
    private let total: Int
    /// Completion order: finished positions not yet delivered, oldest at `head`. (`ready` and
    /// `finished` skip the runtime's exclusivity checks: the lock guards them, Design.md
    /// "CPU per operation".)
    @exclusivity(unchecked) private var ready: [Int] = []
    private var head = 0
    /// Submission order: which positions have finished, and the next one to deliver.
    @exclusivity(unchecked) private var finished: [Bool]
    private var nextInOrder = 0
    private var delivered = 0
    private var terminated = false
    private var waiter: UnsafeContinuation<Int?, Never>?

    init(count: Int, order: ResultOrder) {
        self.order = order
        self.total = count
        self.finished = order == .submission ? Array(repeating: false, count: count) : []
        if order == .completion { ready.reserveCapacity(count) }
    }

    /// Whether every position has been delivered to the consumer.
    var allDelivered: Bool {
        lock.withCriticalSection { delivered == total }
    }

    /// Records that the operation at `position` (and, if it was listed more than once, at
    /// `laterPositions`) finished.
    func finish(_ position: Int, and laterPositions: [Int]) {
        let (waiter, position) = lock.withCriticalSection { () -> (UnsafeContinuation<Int?, Never>?, Int?) in
            record(position)
            for later in laterPositions { record(later) }
            guard let waiter = self.waiter, let position = takeLocked() else { return (nil, nil) }
            self.waiter = nil
            return (waiter, position)
        }
        waiter?.resume(returning: position)
    }

    /// Caller holds `lock`.
    private func record(_ position: Int) {
        switch order {
        case .completion: ready.append(position)
        case .submission: finished[position] = true
        }
    }

    /// Ends iteration: a suspended ``next()`` returns `nil`, and so does every later call.
    func terminate() {
        let waiter = lock.withCriticalSection {
            terminated = true
            defer { self.waiter = nil }
            return self.waiter
        }
        waiter?.resume(returning: nil)
    }

    /// The next position to deliver, suspending until one is available; `nil` at the end.
    /// One caller at a time.
    func next() async -> Int? {
        switch takeOrTerminal() {
        case .value(let position): return position
        case .end: return nil
        case .wait: break
        }
        let position = await withTaskCancellationHandler {
            await withUnsafeContinuation { continuation in
                let immediate = lock.withCriticalSection { () -> Int?? in
                    if terminated || delivered == total { return .some(nil) }
                    if let position = takeLocked() { return .some(position) }
                    waiter = continuation
                    return nil
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            terminate()
        }
        continuationResumed()
        return position
    }

    private enum Poll {
        case value(Int)
        case end
        case wait
    }

    private func takeOrTerminal() -> Poll {
        lock.withCriticalSection {
            if terminated || delivered == total { return .end }
            if let position = takeLocked() { return .value(position) }
            return .wait
        }
    }

    /// Caller holds `lock`.
    private func takeLocked() -> Int? {
        switch order {
        case .completion:
            guard head < ready.count else { return nil }
            let position = ready[head]
            head += 1
            if head == ready.count {
                ready.removeAll(keepingCapacity: true)
                head = 0
            }
            delivered += 1
            return position
        case .submission:
            guard nextInOrder < total, finished[nextInOrder] else { return nil }
            nextInOrder += 1
            delivered += 1
            return nextInOrder - 1
        }
    }
}
