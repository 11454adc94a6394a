import Foundation

// The queue-side awaits that took `timeout:`/`deadline:`/`clock:`/`onTimeout:` before `TimeLimit`
// existed. Each old form stays as an unavailable overload whose message names its replacement;
// they are overloads of the package's own `run` family, so they take no name from anyone.
//
// The members the package used to add to `AsyncOperation`, `AsyncResultOperation` and
// `Operation` (`pause()`, `isPaused`, `value`, `whenFinished(_:)`, …) have no such stubs: they
// moved behind `bridge` (see `Bridge`), and an unavailable member would still occupy its name on
// the class — a subclass that gets its own `pause()` from a protocol extension would fail to
// conform ("unavailable instance method 'pause()' was used to satisfy a requirement"). Migration.md
// lists each old name with its replacement.

extension OperationQueue {
    /// Unavailable: use 'run(_:within: .timeout(_:clock:onTimeout:))'.
    @available(*, unavailable, message: "use 'run(_:within: .timeout(_:clock:onTimeout:))'")
    public func run<Success, Failure, C: Clock<Duration>>(
        _ operation: AsyncResultOperation<Success, Failure>,
        timeout: Duration,
        clock: C = ContinuousClock(),
        onTimeout: TimeoutBehavior = .cancelAndReturn
    ) async throws(Failure) -> Success { fatalError("unavailable") }

    /// Unavailable: use 'run(_:within: .deadline(_:clock:onTimeout:))'.
    @available(*, unavailable, message: "use 'run(_:within: .deadline(_:clock:onTimeout:))'")
    public func run<Success, Failure, C: Clock<Duration>>(
        _ operation: AsyncResultOperation<Success, Failure>,
        deadline: C.Instant,
        clock: C = ContinuousClock(),
        onTimeout: TimeoutBehavior = .cancelAndReturn
    ) async throws(Failure) -> Success { fatalError("unavailable") }

    /// Unavailable: use 'runForOutcome(_:within: .timeout(_:clock:onTimeout:))'.
    @available(*, unavailable, message: "use 'runForOutcome(_:within: .timeout(_:clock:onTimeout:))'")
    public func runForOutcome<Success, Failure, C: Clock<Duration>>(
        _ operation: AsyncResultOperation<Success, Failure>,
        timeout: Duration,
        clock: C = ContinuousClock(),
        onTimeout: TimeoutBehavior = .cancelAndReturn
    ) async -> Result<Success, Failure>? { fatalError("unavailable") }

    /// Unavailable: use 'runForOutcome(_:within: .deadline(_:clock:onTimeout:))'.
    @available(*, unavailable, message: "use 'runForOutcome(_:within: .deadline(_:clock:onTimeout:))'")
    public func runForOutcome<Success, Failure, C: Clock<Duration>>(
        _ operation: AsyncResultOperation<Success, Failure>,
        deadline: C.Instant,
        clock: C = ContinuousClock(),
        onTimeout: TimeoutBehavior = .cancelAndReturn
    ) async -> Result<Success, Failure>? { fatalError("unavailable") }

    /// Unavailable: use 'runForOutcomeValue(_:within: .timeout(_:clock:onTimeout:))'.
    @available(*, unavailable, message: "use 'runForOutcomeValue(_:within: .timeout(_:clock:onTimeout:))'")
    public func runForOutcomeValue<Success, Failure, C: Clock<Duration>>(
        _ operation: AsyncResultOperation<Success, Failure>,
        timeout: Duration,
        clock: C = ContinuousClock(),
        onTimeout: TimeoutBehavior = .cancelAndReturn
    ) async throws(OperationFailure<Failure>) -> Success { fatalError("unavailable") }

    /// Unavailable: use 'runForOutcomeValue(_:within: .deadline(_:clock:onTimeout:))'.
    @available(*, unavailable, message: "use 'runForOutcomeValue(_:within: .deadline(_:clock:onTimeout:))'")
    public func runForOutcomeValue<Success, Failure, C: Clock<Duration>>(
        _ operation: AsyncResultOperation<Success, Failure>,
        deadline: C.Instant,
        clock: C = ContinuousClock(),
        onTimeout: TimeoutBehavior = .cancelAndReturn
    ) async throws(OperationFailure<Failure>) -> Success { fatalError("unavailable") }
}
