import Foundation

/// How long a ``RetryingOperation`` waits between a failed attempt and the next one — or a
/// ``RepeatingOperation`` between two iterations (its delay after `n` iterations is the one
/// given after `n` failed attempts).
///
/// ```swift
/// .constant(.seconds(1))                                            // 1 s, 1 s, 1 s, …
/// .exponential(initial: .milliseconds(100), maximum: .seconds(5))   // 0.1 s, 0.2 s, 0.4 s, … at most 5 s
/// .exponential(initial: .milliseconds(100), maximum: .seconds(5)).jittered()   // each one shortened at random
/// ```
///
/// The wait is a sleep on the retrying operation's clock: no thread is blocked, and cancelling
/// the operation ends the wait at once. Zero or negative delays mean no wait.
///
/// A value: every member is safe to use from any thread, and none waits or can be cancelled
/// itself — the retrying operation does the waiting.
public struct Backoff: Sendable, Hashable {
    private enum Growth: Sendable, Hashable {
        case constant(Duration)
        case exponential(initial: Duration, multiplier: Double, maximum: Duration)
    }

    private let growth: Growth
    /// The largest share of a delay that jitter may take away, in `0...1`; zero without jitter.
    private let jitter: Double
    /// The seed of the jitter's generator; `nil` for the system's random numbers.
    let seed: UInt64?

    private init(growth: Growth, jitter: Double = 0, seed: UInt64? = nil) {
        self.growth = growth
        self.jitter = jitter
        self.seed = seed
    }

    /// Retry at once. A value, safe from any thread.
    public static let none = Backoff(growth: .constant(.zero))

    /// The same delay before every retry. A value, safe from any thread.
    ///
    /// - Parameter delay: The wait; zero or negative means none.
    public static func constant(_ delay: Duration) -> Backoff {
        Backoff(growth: .constant(delay))
    }

    /// A delay that starts at `initial` and is multiplied by `multiplier` after every failed
    /// attempt, never longer than `maximum`. A value, safe from any thread.
    ///
    /// - Parameters:
    ///   - initial: The wait before the first retry; zero or negative means none.
    ///   - multiplier: The growth per retry; at least 1 (it traps otherwise, with a message).
    ///   - maximum: The cap.
    public static func exponential(initial: Duration, multiplier: Double = 2, maximum: Duration) -> Backoff {
        guard multiplier.isFinite, multiplier >= 1 else {
            fatalError("Backoff.exponential: the multiplier must be a finite number of at least 1, not \(multiplier)")
        }
        return Backoff(growth: .exponential(initial: initial, multiplier: multiplier, maximum: maximum))
    }

    /// This backoff with every delay shortened by a random share of at most `fraction` — so that
    /// many clients retrying at once spread out instead of retrying in step.
    ///
    /// `fraction` 1 is "full jitter" (a delay anywhere between zero and the computed one); 0 is
    /// no jitter. Pass a `seed` in tests: the same seed gives the same delays. A value, safe from
    /// any thread.
    ///
    /// - Parameters:
    ///   - fraction: The largest share taken away, in `0...1` (it traps otherwise, with a message).
    ///   - seed: A seed for the random numbers; `nil` (the default) uses the system's generator.
    public func jittered(by fraction: Double = 0.5, seed: UInt64? = nil) -> Backoff {
        guard fraction >= 0, fraction <= 1 else {
            fatalError("Backoff.jittered(by:): the fraction must be between 0 and 1, not \(fraction)")
        }
        return Backoff(growth: growth, jitter: fraction, seed: seed)
    }

    /// The wait after `failedAttempts` attempts have failed, before the next one.
    ///
    /// Thread-safe (a value). With jitter, each call draws from `generator` — not from the
    /// ``jittered(by:seed:)`` seed, which seeds the generator of each ``RetryingOperation`` that
    /// uses this backoff (pass a generator seeded the same way to reproduce its waits).
    ///
    /// - Parameters:
    ///   - failedAttempts: How many attempts have failed so far (1 before the first retry).
    ///   - generator: Where the jitter's random numbers come from.
    public func delay<Generator: RandomNumberGenerator>(
        afterFailedAttempts failedAttempts: Int,
        using generator: inout Generator
    ) -> Duration {
        let computed = max(.zero, undisturbedDelay(afterFailedAttempts: failedAttempts))
        guard jitter > 0, computed > .zero else { return computed }
        return computed * (1 - jitter * Double.random(in: 0..<1, using: &generator))
    }

    /// The delay without jitter.
    private func undisturbedDelay(afterFailedAttempts failedAttempts: Int) -> Duration {
        switch growth {
        case .constant(let delay):
            return delay
        case .exponential(let initial, let multiplier, let maximum):
            guard initial < maximum else { return maximum }
            // Computed in seconds and capped before converting back, so that no power overflows;
            // rounded to whole nanoseconds, so that 10 ms × 3³ is 270 ms, not a hair more.
            let seconds = initial.seconds * pow(multiplier, Double(max(0, failedAttempts - 1)))
            guard seconds < maximum.seconds else { return maximum }
            let nanoseconds = (seconds * 1e9).rounded()
            return nanoseconds < 9e18 ? .nanoseconds(Int64(nanoseconds)) : .seconds(seconds)
        }
    }

    /// The random numbers a retrying operation draws its jitter from: seeded when a seed was
    /// given, the system's otherwise.
    func makeGenerator() -> any RandomNumberGenerator {
        if let seed { return SplitMix64(seed: seed) }
        return SystemRandomNumberGenerator()
    }
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    fileprivate var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) * 1e-18
    }
}

/// A small seedable generator (SplitMix64), for reproducible jitter.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
