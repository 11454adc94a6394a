import Dispatch
import Foundation

/// A one-shot timer: calls an action once a clock reaches a deadline, unless cancelled first.
///
/// - `ContinuousClock` and `SuspendingClock` deadlines share one `DispatchSourceTimer`
///   (``TimerHeap``): arming and cancelling cost a lock and a heap update, no task and no
///   sleeping thread, so that an await with a time limit stays cheap, and a cancelled timer
///   leaves nothing behind.
/// - Any other clock (a test clock, for example) gets a task sleeping with
///   `clock.sleep(until:tolerance:)`, cancelled with the timer: the clock decides when it wakes.
///
/// The action runs on a private dispatch queue or in that task; it must not block.
struct DeadlineTimer: Sendable {
    private enum Kind: Sendable {
        case heap(TimerHeap.Entry)
        case task(Task<Void, Never>)
    }

    private let kind: Kind

    /// Arms a timer that calls `action` when `clock` reaches `deadline` — at once (on another
    /// thread) when it has already passed.
    static func schedule<C: Clock>(
        at deadline: C.Instant,
        on clock: C,
        _ action: @escaping @Sendable () -> Void
    ) -> DeadlineTimer where C.Duration == Duration {
        if clock is ContinuousClock || clock is SuspendingClock {
            let delay = clock.now.duration(to: deadline)
            return DeadlineTimer(kind: .heap(TimerHeap.shared.schedule(after: delay, action)))
        }
        let task = Task {
            do {
                try await clock.sleep(until: deadline, tolerance: nil)
            } catch {
                return  // cancelled
            }
            action()
        }
        return DeadlineTimer(kind: .task(task))
    }

    /// Stops the timer. The action is not called afterwards, unless it is already running.
    func cancel() {
        switch kind {
        case .heap(let entry): TimerHeap.shared.cancel(entry)
        case .task(let task): task.cancel()
        }
    }
}

/// The pending deadlines of the dispatch-backed clocks, earliest first, served by one
/// `DispatchSourceTimer` armed for the earliest.
///
/// Cancelling is the common case (most awaits end before their time is up), so it costs O(1):
/// a cancelled entry gives up its action at once and stays in the heap until it reaches the top
/// or until cancelled entries are half the heap, when the heap is rebuilt without them
/// (amortized O(1) per cancellation, and never more than twice the live entries).
///
/// Safety: `entries`, `cancelledCount`, `armedFor` and each entry's `action` are only touched
/// while holding `lock`; actions run on `queue`, and are released, after the lock is released.
final class TimerHeap: @unchecked Sendable {
    static let shared = TimerHeap()

    /// One pending deadline.
    final class Entry: @unchecked Sendable {
        // Safety: `uptime` is immutable; `action` is guarded by the heap's lock.
        let uptime: UInt64
        /// What to call when the deadline comes; `nil` once it has fired or been cancelled.
        var action: (@Sendable () -> Void)?

        init(uptime: UInt64, action: @escaping @Sendable () -> Void) {
            self.uptime = uptime
            self.action = action
        }
    }

    private let lock = NSLock()
    /// A binary min-heap by `uptime`; it may hold cancelled entries.
    private var entries: [Entry] = []
    /// How many entries of `entries` are cancelled.
    private var cancelledCount = 0
    /// The uptime the source is armed for, if any.
    private var armedFor: UInt64?
    private let queue = DispatchQueue(label: "OperationBridge.DeadlineTimer")
    private let source: any DispatchSourceTimer

    private init() {
        source = DispatchSource.makeTimerSource(queue: queue)
        source.setEventHandler { [unowned self] in fire() }
        source.activate()
    }

    /// Adds a deadline `delay` from now (clamped to the range dispatch can express).
    func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> Entry {
        let now = DispatchTime.now().uptimeNanoseconds
        let entry = Entry(uptime: Self.uptime(now, plus: delay), action: action)
        lock.lock()
        entries.append(entry)
        siftUp(entries.count - 1)
        if entries[0] === entry { arm(for: entry.uptime) }
        lock.unlock()
        return entry
    }

    /// Cancels a deadline that has not fired. The source stays armed: a wake-up with nothing due
    /// re-arms it for the new earliest deadline.
    func cancel(_ entry: Entry) {
        lock.lock()
        let action = entry.action
        if action != nil {
            entry.action = nil
            cancelledCount += 1
            if cancelledCount > entries.count / 2 { removeCancelled() }
        }
        lock.unlock()
        // The action (and what it holds) is released here, outside the lock.
        withExtendedLifetime(action) {}
    }

    /// Runs on `queue`: takes every entry that is due, re-arms, then calls their actions.
    private func fire() {
        let now = DispatchTime.now().uptimeNanoseconds
        var due: [@Sendable () -> Void] = []
        lock.lock()
        armedFor = nil
        while let first = entries.first, first.action == nil || first.uptime <= now {
            removeFirst()
            if let action = first.action {
                first.action = nil
                due.append(action)
            } else {
                cancelledCount -= 1
            }
        }
        if let first = entries.first { arm(for: first.uptime) }
        lock.unlock()
        for action in due { action() }
    }

    /// Callers hold `lock`.
    private func arm(for uptime: UInt64) {
        if let armedFor, armedFor <= uptime { return }
        armedFor = uptime
        source.schedule(deadline: DispatchTime(uptimeNanoseconds: uptime), leeway: .milliseconds(1))
    }

    /// `now` plus `delay` in nanoseconds, clamped to `0...UInt64.max / 2` (a delay too long to
    /// express never fires in practice; a negative one is due at once).
    private static func uptime(_ now: UInt64, plus delay: Duration) -> UInt64 {
        let (seconds, attoseconds) = delay.components
        if seconds < 0 || (seconds == 0 && attoseconds <= 0) { return now }
        let limit = UInt64.max / 2
        guard seconds < Int64(limit / 1_000_000_000) else { return limit }
        let nanoseconds = UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
        return min(limit, now + nanoseconds)
    }

    // MARK: The binary heap (callers hold `lock`).

    private func removeFirst() {
        let last = entries.removeLast()
        guard !entries.isEmpty else { return }
        entries[0] = last
        siftDown(0)
    }

    /// Rebuilds the heap without its cancelled entries.
    private func removeCancelled() {
        entries.removeAll { $0.action == nil }
        cancelledCount = 0
        for index in stride(from: entries.count / 2 - 1, through: 0, by: -1) { siftDown(index) }
    }

    private func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].uptime < entries[parent].uptime else { return }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    private func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < entries.count else { return }
            let right = left + 1
            var smallest = left
            if right < entries.count, entries[right].uptime < entries[left].uptime { smallest = right }
            guard entries[smallest].uptime < entries[parent].uptime else { return }
            entries.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
