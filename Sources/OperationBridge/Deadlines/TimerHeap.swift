import Foundation

/// The clock a ``TimerHeap`` keeps its deadlines on, and how the heap is woken for them.
///
/// Readings are nanoseconds from an origin of the clock's own choosing, from `0` to
/// `UInt64.max / 2`, and never decrease. The heap compares deadlines with readings only: what the
/// clock counts — time asleep or not — is the clock's business, and so is waking the heap in time
/// even when the device sleeps. Production heaps use ``DispatchTimerClock``; tests use a clock
/// that jumps the way a wake from sleep does.
protocol TimerHeapClock: Sendable {
    /// The instants deadlines are given in.
    associatedtype Instant

    /// The reading at `instant`: `0` for an instant before the origin (so it is due),
    /// `UInt64.max / 2` for one too far away to express (it never comes in practice).
    func reading(at instant: Instant) -> UInt64

    /// The reading now.
    var now: UInt64 { get }

    /// Called once, by the heap's initializer: `wake` is what to call when a deadline armed with
    /// ``arm(for:now:)`` may have come. Calling it early, late or more than once is allowed — the
    /// heap reads ``now`` and runs only what is due — but calls must not overlap (the production
    /// clocks call it on one serial queue).
    func start(wake: @escaping @Sendable () -> Void)

    /// Asks for one call of `wake` once the clock reads `deadline` (at once when `now` has passed
    /// it), replacing the previous request. `now` is a recent reading. Called with the heap's lock
    /// held: it must not call back into the heap.
    func arm(for deadline: UInt64, now: UInt64)
}

/// Pending deadlines on one clock, earliest first, served by the clock's wake-up.
///
/// Deadlines are kept as readings of the heap's ``TimerHeapClock``, never translated to another
/// clock ahead of time: when the clock wakes the heap, the heap reads the clock's `now`, runs
/// what is due, and re-arms for the earliest deadline left. A wake-up that comes early (a wall
/// clock set forward, a spurious wake-up) therefore runs nothing and re-arms; one that comes after
/// a jump of the clock (a wake from sleep, for a clock that counts sleep) runs everything the jump
/// passed, at once.
///
/// Arming is a lock and a heap insertion; the clock is re-armed only when the new deadline is
/// earlier than the one it is armed for. Cancelling is the common case (most awaits end before
/// their time is up), so it costs O(1): a cancelled entry gives up its action at once and stays in
/// the heap until it reaches the top or until cancelled entries are half the heap, when the heap
/// is rebuilt without them (amortized O(1) per cancellation, and never more than twice the live
/// entries). The clock stays armed after a cancellation: a wake-up with nothing due re-arms it for
/// the new earliest deadline, or not at all.
///
/// Safety: `entries`, `cancelledCount`, `armedFor` and each entry's `action` are only touched
/// while holding `lock`; actions run, and are released, after the lock is released.
final class TimerHeap<Reference: TimerHeapClock>: @unchecked Sendable {
    /// One pending deadline.
    final class Entry: @unchecked Sendable {
        // Safety: `deadline` is immutable; `action` is guarded by the heap's lock.
        /// A reading of the heap's clock.
        let deadline: UInt64
        /// What to call when the deadline comes; `nil` once it has fired or been cancelled.
        var action: (@Sendable () -> Void)?

        init(deadline: UInt64, action: @escaping @Sendable () -> Void) {
            self.deadline = deadline
            self.action = action
        }
    }

    /// The clock deadlines are read on, which wakes the heap.
    let clock: Reference
    private let lock = NSLock()
    /// A binary min-heap by `deadline`; it may hold cancelled entries.
    private var entries: [Entry] = []
    /// How many entries of `entries` are cancelled.
    private var cancelledCount = 0
    /// The deadline the clock is armed for, if any.
    private var armedFor: UInt64?

    init(clock: Reference) {
        self.clock = clock
        clock.start { [weak self] in self?.wake() }
    }

    /// Adds a deadline: `action` runs when the clock reaches `deadline` — on the next wake-up
    /// when it has already passed.
    func schedule(at deadline: Reference.Instant, _ action: @escaping @Sendable () -> Void) -> Entry {
        let entry = Entry(deadline: clock.reading(at: deadline), action: action)
        lock.lock()
        entries.append(entry)
        siftUp(entries.count - 1)
        if entries[0] === entry, armedFor.map({ entry.deadline < $0 }) ?? true {
            arm(for: entry.deadline, now: clock.now)
        }
        lock.unlock()
        return entry
    }

    /// Cancels a deadline that has not fired. The action is not called afterwards, unless it is
    /// running already; it is released before this returns.
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

    /// The clock's wake-up: reads the clock, takes every entry that is due, re-arms for the
    /// earliest left, then calls the actions taken, earliest deadline first.
    func wake() {
        let now = clock.now
        var due: [@Sendable () -> Void] = []
        lock.lock()
        armedFor = nil
        while let first = entries.first, first.action == nil || first.deadline <= now {
            removeFirst()
            if let action = first.action {
                first.action = nil
                due.append(action)
            } else {
                cancelledCount -= 1
            }
        }
        if let first = entries.first { arm(for: first.deadline, now: now) }
        lock.unlock()
        for action in due { action() }
    }

    /// Callers hold `lock`.
    private func arm(for deadline: UInt64, now: UInt64) {
        armedFor = deadline
        clock.arm(for: deadline, now: now)
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
            guard entries[child].deadline < entries[parent].deadline else { return }
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
            if right < entries.count, entries[right].deadline < entries[left].deadline { smallest = right }
            guard entries[smallest].deadline < entries[parent].deadline else { return }
            entries.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
