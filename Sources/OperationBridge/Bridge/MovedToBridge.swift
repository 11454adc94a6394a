import Foundation

// The members the package used to add to the classes users subclass, now behind `bridge`
// (see `Bridge`). Each old name stays as an unavailable declaration whose message says what
// replaces it: code that calls it gets that message, while a subclass's own member of the same
// name compiles and is called as before — an unavailable declaration is not one a subclass
// member overrides or clashes with (checked by Tests/Clients' LegacySubclasses target).

extension AsyncOperation {
    /// Unavailable: moved behind the package's namespace: use 'bridge.pause()'.
    @available(*, unavailable, message: "moved behind the package's namespace: use 'bridge.pause()'")
    public func pause() { fatalError("unavailable") }

    /// Unavailable: moved behind the package's namespace: use 'bridge.resume()'.
    @available(*, unavailable, message: "moved behind the package's namespace: use 'bridge.resume()'")
    public func resume() { fatalError("unavailable") }

    /// Unavailable: moved behind the package's namespace: use 'bridge.isPaused'.
    @available(*, unavailable, message: "moved behind the package's namespace: use 'bridge.isPaused'")
    public var isPaused: Bool { fatalError("unavailable") }

    /// Unavailable: moved behind the package's namespace: use 'bridge.isTimedOut'.
    @available(*, unavailable, message: "moved behind the package's namespace: use 'bridge.isTimedOut'")
    public var isTimedOut: Bool { fatalError("unavailable") }

    /// Unavailable: moved behind the package's namespace: use 'bridge.upstreamFailure'.
    @available(*, unavailable, message: "moved behind the package's namespace: use 'bridge.upstreamFailure'")
    public var upstreamFailure: UpstreamFailedError? { fatalError("unavailable") }

    /// Unavailable: moved behind the package's namespace: use 'bridge.conditionFailure'.
    @available(*, unavailable, message: "moved behind the package's namespace: use 'bridge.conditionFailure'")
    public var conditionFailure: ConditionFailedError? { fatalError("unavailable") }

    /// Unavailable: moved behind the package's namespace: use 'bridge.operationProgress'.
    @available(*, unavailable, message: "moved behind the package's namespace: use 'bridge.operationProgress'")
    public var operationProgress: OperationProgress { fatalError("unavailable") }

    /// Unavailable: moved behind the package's namespace: use 'bridge.lifecycleEvents'.
    @available(*, unavailable, message: "moved behind the package's namespace: use 'bridge.lifecycleEvents'")
    public var lifecycleEvents: AsyncStream<OperationEvent> { fatalError("unavailable") }

    /// Unavailable: moved behind the package's namespace: use 'bridge.addCondition(_:)'.
    @available(*, unavailable, message: "moved behind the package's namespace: use 'bridge.addCondition(_:)'")
    public func addCondition(_ condition: OperationCondition) { fatalError("unavailable") }

    /// Unavailable: moved behind the package's namespace: use 'bridge.limitRunningTime(to:clock:)'.
    @available(
        *, unavailable, message: "moved behind the package's namespace: use 'bridge.limitRunningTime(to:clock:)'"
    )
    public func limitRunningTime<C: Clock<Duration>>(to limit: Duration, clock: C = ContinuousClock()) {
        fatalError("unavailable")
    }

    /// Unavailable: moved behind the package's namespace: use 'bridge.delayStart(by:clock:)'.
    @available(*, unavailable, message: "moved behind the package's namespace: use 'bridge.delayStart(by:clock:)'")
    public func delayStart<C: Clock<Duration>>(by delay: Duration, clock: C = ContinuousClock()) {
        fatalError("unavailable")
    }

    /// Unavailable: moved behind the package's namespace: use 'bridge.delayStart(until:clock:)'.
    @available(*, unavailable, message: "moved behind the package's namespace: use 'bridge.delayStart(until:clock:)'")
    public func delayStart<C: Clock<Duration>>(until deadline: C.Instant, clock: C = ContinuousClock()) {
        fatalError("unavailable")
    }

    /// Unavailable: moved behind the package's namespace: use 'bridge.observeLifecycle(on:_:)'.
    @available(*, unavailable, message: "moved behind the package's namespace: use 'bridge.observeLifecycle(on:_:)'")
    public func observeLifecycle(on target: DeliveryTarget, _ handler: @escaping @Sendable (OperationEvent) -> Void) {
        fatalError("unavailable")
    }

    /// Unavailable: moved behind the package's namespace: use 'bridge.observeLifecycle(_:)'.
    @available(*, unavailable, message: "moved behind the package's namespace: use 'bridge.observeLifecycle(_:)'")
    public func observeLifecycle(_ handler: @escaping @MainActor @Sendable (OperationEvent) -> Void) {
        fatalError("unavailable")
    }

    /// Unavailable: moved behind the package's namespace: use 'bridge.whenFinished(on:_:)'.
    @available(*, unavailable, message: "moved behind the package's namespace: use 'bridge.whenFinished(on:_:)'")
    public func whenFinished(on target: DeliveryTarget, _ handler: @escaping @Sendable () -> Void) {
        fatalError("unavailable")
    }

    /// Unavailable: moved behind the package's namespace: use 'bridge.whenFinished(_:)'.
    @available(*, unavailable, message: "moved behind the package's namespace: use 'bridge.whenFinished(_:)'")
    public func whenFinished(_ handler: @escaping @MainActor @Sendable () -> Void) { fatalError("unavailable") }
}

extension AsyncResultOperation where Success: Sendable {
    /// Unavailable: moved behind the package's namespace: use 'bridge.value'.
    @available(*, unavailable, message: "moved behind the package's namespace: use 'bridge.value'")
    public var value: Success { fatalError("unavailable") }

    /// Unavailable: moved behind the package's namespace: use 'bridge.outcome'.
    @available(*, unavailable, message: "moved behind the package's namespace: use 'bridge.outcome'")
    public var outcome: Result<Success, Failure>? { fatalError("unavailable") }

    /// Unavailable: moved behind the package's namespace: use 'bridge.outcomeValue'.
    @available(*, unavailable, message: "moved behind the package's namespace: use 'bridge.outcomeValue'")
    public var outcomeValue: Success { fatalError("unavailable") }

    /// Unavailable: moved behind the package's namespace: use 'bridge.whenFinished(on:_:)'.
    @available(*, unavailable, message: "moved behind the package's namespace: use 'bridge.whenFinished(on:_:)'")
    public func whenFinished(
        on target: DeliveryTarget,
        _ handler: @escaping @Sendable (Result<Success, Failure>?) -> Void
    ) { fatalError("unavailable") }

    /// Unavailable: moved behind the package's namespace: use 'bridge.whenFinished(_:)'.
    @available(*, unavailable, message: "moved behind the package's namespace: use 'bridge.whenFinished(_:)'")
    public func whenFinished(_ handler: @escaping @MainActor @Sendable (Result<Success, Failure>?) -> Void) {
        fatalError("unavailable")
    }

    /// Unavailable: moved behind the package's namespace: use 'bridge.then(_:)'.
    @available(*, unavailable, message: "moved behind the package's namespace: use 'bridge.then(_:)'")
    public func then<Output: Sendable, NewFailure: Error>(
        _ body: @escaping @Sendable (Success) async throws(NewFailure) -> Output
    ) -> ChainedTaskOperation<Success, Output, NewFailure> { fatalError("unavailable") }

    /// Unavailable: moved behind the package's namespace: use 'bridge.then(totalUnitCount:_:)'.
    @available(*, unavailable, message: "moved behind the package's namespace: use 'bridge.then(totalUnitCount:_:)'")
    public func then<Output: Sendable, NewFailure: Error>(
        totalUnitCount: Int64,
        _ body: @escaping @Sendable (Success, OperationProgress) async throws(NewFailure) -> Output
    ) -> ChainedTaskOperation<Success, Output, NewFailure> { fatalError("unavailable") }
}

extension AsyncResultOperation where Success: Sendable {
    /// Unavailable: use 'bridge.value(within: .timeout(_:clock:onTimeout:))'.
    @available(*, unavailable, message: "use 'bridge.value(within: .timeout(_:clock:onTimeout:))'")
    public func value<C: Clock<Duration>>(
        timeout: Duration, clock: C = ContinuousClock(), onTimeout: TimeoutBehavior = .cancelAndReturn
    ) -> Success {
        fatalError("unavailable")
    }

    /// Unavailable: use 'bridge.value(within: .deadline(_:clock:onTimeout:))'.
    @available(*, unavailable, message: "use 'bridge.value(within: .deadline(_:clock:onTimeout:))'")
    public func value<C: Clock<Duration>>(
        deadline: C.Instant, clock: C = ContinuousClock(), onTimeout: TimeoutBehavior = .cancelAndReturn
    ) -> Success {
        fatalError("unavailable")
    }

    /// Unavailable: use 'bridge.outcome(within: .timeout(_:clock:onTimeout:))'.
    @available(*, unavailable, message: "use 'bridge.outcome(within: .timeout(_:clock:onTimeout:))'")
    public func outcome<C: Clock<Duration>>(
        timeout: Duration, clock: C = ContinuousClock(), onTimeout: TimeoutBehavior = .cancelAndReturn
    ) -> Success {
        fatalError("unavailable")
    }

    /// Unavailable: use 'bridge.outcomeValue(within: .timeout(_:clock:onTimeout:))'.
    @available(*, unavailable, message: "use 'bridge.outcomeValue(within: .timeout(_:clock:onTimeout:))'")
    public func outcomeValue<C: Clock<Duration>>(
        timeout: Duration, clock: C = ContinuousClock(), onTimeout: TimeoutBehavior = .cancelAndReturn
    ) -> Success {
        fatalError("unavailable")
    }
}

extension AsyncResultOperation where Success: Sendable {
    /// Unavailable: use 'bridge.outcome(within: .deadline(_:clock:onTimeout:))'.
    @available(*, unavailable, message: "use 'bridge.outcome(within: .deadline(_:clock:onTimeout:))'")
    public func outcome<C: Clock<Duration>>(
        deadline: C.Instant, clock: C = ContinuousClock(), onTimeout: TimeoutBehavior = .cancelAndReturn
    ) -> Success {
        fatalError("unavailable")
    }

    /// Unavailable: use 'bridge.outcomeValue(within: .deadline(_:clock:onTimeout:))'.
    @available(*, unavailable, message: "use 'bridge.outcomeValue(within: .deadline(_:clock:onTimeout:))'")
    public func outcomeValue<C: Clock<Duration>>(
        deadline: C.Instant, clock: C = ContinuousClock(), onTimeout: TimeoutBehavior = .cancelAndReturn
    ) -> Success {
        fatalError("unavailable")
    }
}

extension Operation {
    /// Unavailable: moved behind the package's namespace: use 'bridge.waitForCompletion()'.
    @available(*, unavailable, message: "moved behind the package's namespace: use 'bridge.waitForCompletion()'")
    public func waitForCompletion() async throws(CancellationError) { fatalError("unavailable") }

    /// Unavailable: moved behind the package's namespace: use 'bridge.pendingDiagnostics'.
    @available(*, unavailable, message: "moved behind the package's namespace: use 'bridge.pendingDiagnostics'")
    public var pendingDiagnostics: String { fatalError("unavailable") }
}

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
