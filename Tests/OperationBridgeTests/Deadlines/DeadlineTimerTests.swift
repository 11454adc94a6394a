import Foundation
import Testing

@testable import OperationBridge

/// The timer heap behind `ContinuousClock` and `SuspendingClock` deadlines, on a clock that the
/// test moves the way a device's clocks move: asleep (the clock and the wall clock go on, uptime
/// stays put), awake, or with the wall clock set. Every wake-up is one the test makes, so nothing
/// here waits for real time.
@Suite(.timeLimit(Stress.timeLimit(minutes: 2)))
struct DeadlineTimerTests {
    @Test("After a sleep that passed a deadline, the wall-clock wake-up runs it at once, not after more uptime")
    func wakeFromSleepRunsWhatTheSleepPassed() {
        let timers = SleepingTimers()
        timers.schedule(at: .seconds(30))
        timers.schedule(at: .seconds(7_200))
        #expect(timers.clock.armed == .init(uptime: .seconds(30), wall: .seconds(30)))

        timers.clock.sleep(for: .seconds(3_600))
        #expect(timers.fired.all.isEmpty)
        // Uptime has not moved, so its source is 30 s away; the wall clock's is due.
        #expect(timers.clock.armed == .init(uptime: .seconds(30), wall: .zero))
        #expect(timers.fireDueSources() == [.wall])
        #expect(timers.fired.all == [.seconds(30)])
        // Re-armed from the clock's reading: the 2 h deadline is 1 h away, on both sources.
        #expect(timers.clock.armed == .init(uptime: .seconds(3_600), wall: .seconds(3_600)))
    }

    @Test("A wake-up before the deadline — the wall clock set forward, or a spurious one — runs nothing and re-arms")
    func earlyWakeUpRunsNothingAndReArms() {
        let timers = SleepingTimers()
        timers.schedule(at: .seconds(30))

        timers.clock.setWallClock(by: .seconds(3_600))
        #expect(timers.fireDueSources() == [.wall])
        #expect(timers.fired.all.isEmpty)
        #expect(timers.clock.armed == .init(uptime: .seconds(30), wall: .seconds(30)))

        timers.clock.run(for: .seconds(10))
        timers.wakeSpuriously()
        #expect(timers.fired.all.isEmpty)
        #expect(timers.clock.armed == .init(uptime: .seconds(20), wall: .seconds(20)))

        timers.clock.run(for: .seconds(20))
        // Both sources are due; the first runs the deadline, the second finds nothing left.
        #expect(Set(timers.fireDueSources()) == [.uptime, .wall])
        #expect(timers.fired.all == [.seconds(30)])
    }

    @Test("The wall clock set backward: the uptime source still wakes the heap on time")
    func wallClockSetBackward() {
        let timers = SleepingTimers()
        timers.schedule(at: .seconds(30))
        timers.clock.setWallClock(by: .seconds(-3_600))
        timers.clock.run(for: .seconds(30))
        #expect(timers.fireDueSources() == [.uptime])
        #expect(timers.fired.all == [.seconds(30)])
    }

    @Test("Cancelled deadlines never run and let go of their action at once; a wake-up with nothing left arms nothing")
    func cancelledDeadlines() {
        let timers = SleepingTimers()
        let released = Trigger()
        let first = timers.heap.schedule(at: .seconds(10)) { [probe = DeinitProbe(released), fired = timers.fired] in
            withExtendedLifetime(probe) { fired.append(.seconds(10)) }
        }
        timers.schedule(at: .seconds(20))
        let third = timers.schedule(at: .seconds(7_200))
        timers.heap.cancel(first)
        #expect(released.hasFired)

        timers.clock.sleep(for: .seconds(3_600))
        #expect(timers.fireDueSources() == [.wall])
        #expect(timers.fired.all == [.seconds(20)])
        timers.heap.cancel(first)  // twice: nothing happens

        timers.heap.cancel(third)
        let armings = timers.clock.armings
        timers.wakeSpuriously()
        timers.clock.sleep(for: .seconds(7_200))
        timers.wakeSpuriously()
        #expect(timers.fired.all == [.seconds(20)])
        #expect(timers.clock.armings == armings)
    }

    @Test("Deadlines run earliest first, however they were added; the later ones wait, re-armed for the earliest")
    func earliestFirst() {
        let timers = SleepingTimers()
        for seconds in [40, 10, 50, 30, 20] { timers.schedule(at: .seconds(seconds)) }
        timers.clock.sleep(for: .seconds(25))
        #expect(timers.fireDueSources() == [.wall])
        #expect(timers.fired.all == [.seconds(10), .seconds(20)])
        #expect(timers.clock.armed == .init(uptime: .seconds(5), wall: .seconds(5)))
        timers.clock.run(for: .seconds(60))
        #expect(Set(timers.fireDueSources()) == [.uptime, .wall])
        #expect(timers.fired.all == [10, 20, 30, 40, 50].map { .seconds($0) })
    }

    @Test("Arming stays cheap: a later deadline leaves the sources alone, only an earlier one re-arms them")
    func armingOnlyForAnEarlierDeadline() {
        let timers = SleepingTimers()
        timers.schedule(at: .seconds(30))
        timers.schedule(at: .seconds(40))
        timers.schedule(at: .seconds(30))
        #expect(timers.clock.armings == 1)
        timers.schedule(at: .seconds(10))
        #expect(timers.clock.armings == 2)
        #expect(timers.clock.armed == .init(uptime: .seconds(10), wall: .seconds(10)))
    }

    @Test("A deadline that has already passed is armed to fire at once")
    func passedDeadline() {
        let timers = SleepingTimers()
        timers.clock.run(for: .seconds(60))
        timers.schedule(at: .seconds(30))
        #expect(timers.clock.armed == .init(uptime: .zero, wall: .zero))
        #expect(Set(timers.fireDueSources()) == [.uptime, .wall])
        #expect(timers.fired.all == [.seconds(30)])
    }

    @Test("Randomized: each deadline runs at the first wake-up once the clock passes it, in order; cancelled, never")
    func randomized() {
        var generator = Stress.generator(for: "DeadlineTimerTests.randomized")
        for _ in 0..<Stress.iterations(100) {
            let timers = SleepingTimers()
            var live: [Duration: [TimerHeap<SleepingClock>.Entry]] = [:]
            var expected: [Duration] = []
            for _ in 0..<200 {
                let now = timers.clock.reading
                let before = timers.fired.all.count
                var woken = false
                switch Int.random(in: 0..<10, using: &generator) {
                case 0..<4:
                    let deadline = now + .seconds(Int.random(in: -5...100, using: &generator))
                    live[deadline, default: []].append(timers.schedule(at: deadline))
                case 4:
                    guard let deadline = live.keys.randomElement(using: &generator) else { continue }
                    timers.heap.cancel(live[deadline]!.removeLast())
                    if live[deadline]!.isEmpty { live[deadline] = nil }
                case 5: timers.clock.sleep(for: .seconds(Int.random(in: 0...30, using: &generator)))
                case 6: timers.clock.run(for: .seconds(Int.random(in: 0...30, using: &generator)))
                // Forward only: a wall clock set backward during a sleep delays the wake-up by design.
                case 7: timers.clock.setWallClock(by: .seconds(Int.random(in: 0...30, using: &generator)))
                case 8:
                    timers.wakeSpuriously()
                    woken = true
                default: break
                }
                woken = !timers.fireDueSources().isEmpty || woken
                let reading = timers.clock.reading
                let due = live.keys.filter { $0 <= reading }.sorted()
                if woken {
                    for deadline in due {
                        expected += Array(repeating: deadline, count: live[deadline]!.count)
                        live[deadline] = nil
                    }
                }
                // Nothing the clock has passed is left behind, nothing else ran, in order. The
                // first failure ends the test: later steps would only repeat it.
                let fired = timers.fired.all
                let ran = Array(fired.dropFirst(before))
                guard woken || due.isEmpty, fired == expected, ran.sorted() == ran else {
                    #expect(woken || due.isEmpty, "a deadline passed at \(reading), and no source woke the heap")
                    #expect(fired == expected, "after a wake-up at \(reading)")
                    #expect(ran.sorted() == ran, "out of order")
                    return
                }
            }
        }
    }

    @Test("The dispatch clocks read deadlines in their own terms, clamped to what the heap can hold")
    func dispatchClockReadings() {
        let clock = DeadlineTimer.continuousHeap.clock
        let now = ContinuousClock.now
        #expect(clock.reading(at: now + .milliseconds(1_500)) - clock.reading(at: now) == 1_500_000_000)
        #expect(clock.reading(at: now - .seconds(86_400 * 365 * 100)) == 0)
        #expect(clock.reading(at: now + .seconds(Int64(1) << 40)) == UInt64.max / 2)
    }

    @Test("Real clocks: ContinuousClock and SuspendingClock deadlines fire, each on a heap of its own clock")
    func realClocksFire() async {
        #expect(DeadlineTimer.continuousHeap.clock.countsSleep)
        #expect(!DeadlineTimer.suspendingHeap.clock.countsSleep)
        let continuous = ContinuousClock()
        let suspending = SuspendingClock()
        let triggers = (0..<4).map { _ in Trigger() }
        let timers = [
            DeadlineTimer.schedule(at: continuous.now + .milliseconds(1), on: continuous) { triggers[0].fire() },
            DeadlineTimer.schedule(at: suspending.now + .milliseconds(1), on: suspending) { triggers[1].fire() },
            // Passed already: due at once.
            DeadlineTimer.schedule(at: continuous.now - .seconds(1), on: continuous) { triggers[2].fire() },
            DeadlineTimer.schedule(at: suspending.now - .seconds(1), on: suspending) { triggers[3].fire() },
        ]
        for trigger in triggers { #expect(await trigger.wait()) }
        for timer in timers { timer.cancel() }  // after firing: nothing happens
    }
}

/// A ``TimerHeap`` on a ``SleepingClock``, recording the deadlines it runs.
///
/// A class, so that calls through it keep the heap alive (the clock holds the heap weakly).
private final class SleepingTimers: Sendable {
    let clock = SleepingClock()
    let heap: TimerHeap<SleepingClock>
    let fired = Recorder<Duration>()

    init() { heap = TimerHeap(clock: clock) }

    /// Schedules a deadline whose action records it.
    @discardableResult
    func schedule(at deadline: Duration) -> TimerHeap<SleepingClock>.Entry {
        heap.schedule(at: deadline) { [fired] in fired.append(deadline) }
    }

    func fireDueSources() -> [SleepingClock.Source] { clock.fireDueSources() }

    func wakeSpuriously() { clock.wakeSpuriously() }
}

/// A ``TimerHeapClock`` modelled on ``DispatchTimerClock`` for `ContinuousClock`, with readings
/// the test moves: the clock itself, which counts sleep; uptime, which stops while the device
/// sleeps; and the wall clock, which counts sleep and can be set. Arming it records when each of
/// dispatch's two sources (uptime, wall clock) would fire, in its own time; ``fireDueSources()``
/// plays dispatch: each due source fires once, and wakes the heap.
private final class SleepingClock: TimerHeapClock, @unchecked Sendable {
    enum Source: Hashable { case uptime, wall }

    /// How far each source is from firing, in its own time; `nil` when it is not armed.
    struct Armed: Equatable {
        var uptime: Duration?
        var wall: Duration?
    }

    private struct State {
        var reading = Duration.zero
        var uptime = Duration.zero
        var wall = Duration.zero
        var uptimeSource: Duration?
        var wallSource: Duration?
        var armings = 0
        var wake: (@Sendable () -> Void)?
    }

    // Safety: the state is guarded by `Guarded`'s lock; the heap is woken after releasing it.
    private let state = Guarded(State())

    // MARK: TimerHeapClock

    func reading(at instant: Duration) -> UInt64 { Self.nanoseconds(instant) }

    var now: UInt64 { Self.nanoseconds(reading) }

    func start(wake: @escaping @Sendable () -> Void) { state.withLock { $0.wake = wake } }

    func arm(for deadline: UInt64, now: UInt64) {
        let left = Duration.nanoseconds(Int64(deadline > now ? deadline - now : 0))
        state.withLock { state in
            state.uptimeSource = state.uptime + left
            state.wallSource = state.wall + left
            state.armings += 1
        }
    }

    // MARK: What the test does

    /// The clock's reading.
    var reading: Duration { state.withLock { $0.reading } }

    /// How many times the heap armed the sources.
    var armings: Int { state.withLock { $0.armings } }

    var armed: Armed {
        state.withLock { state in
            Armed(
                uptime: state.uptimeSource.map { max(.zero, $0 - state.uptime) },
                wall: state.wallSource.map { max(.zero, $0 - state.wall) })
        }
    }

    /// The device sleeps: the clock and the wall clock go on, uptime does not.
    func sleep(for duration: Duration) {
        state.withLock { state in
            state.reading += duration
            state.wall += duration
        }
    }

    /// The device is awake: every clock goes on.
    func run(for duration: Duration) {
        state.withLock { state in
            state.reading += duration
            state.uptime += duration
            state.wall += duration
        }
    }

    /// Someone sets the wall clock.
    func setWallClock(by change: Duration) { state.withLock { $0.wall += change } }

    /// Fires each source that is due (once: they are one-shot timers), each waking the heap, and
    /// returns them.
    func fireDueSources() -> [Source] {
        let (fired, wake) = state.withLock { state -> ([Source], (@Sendable () -> Void)?) in
            var fired: [Source] = []
            if let due = state.uptimeSource, due <= state.uptime {
                state.uptimeSource = nil
                fired.append(.uptime)
            }
            if let due = state.wallSource, due <= state.wall {
                state.wallSource = nil
                fired.append(.wall)
            }
            return (fired, state.wake)
        }
        for _ in fired { wake?() }
        return fired
    }

    /// Wakes the heap with no source due.
    func wakeSpuriously() { state.withLock { $0.wake }?() }

    private static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        return UInt64(max(0, seconds * 1_000_000_000 + attoseconds / 1_000_000_000))
    }
}
