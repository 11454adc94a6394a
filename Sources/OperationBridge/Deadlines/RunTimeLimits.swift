import Foundation

extension Pipeline {
    /// Limits the time the whole pipeline may take: once it has run for `limit`, measured on
    /// `clock` from ``start()``, every step that has not finished times out.
    ///
    /// ```swift
    /// let pipeline = try Pipeline([fetch, parse, store], on: queue)
    /// pipeline.limitRunningTime(to: .seconds(30))
    /// let saved = try await pipeline.value(of: store)   // throws store's timeout failure after 30 s
    /// ```
    ///
    /// The steps time out as with ``Bridge/limitRunningTime(to:clock:)``: running ones
    /// are cancelled and report a timeout (``Bridge/isTimedOut``), the others finish
    /// without running, timed out. What the pipeline's awaits do then, `onTimeout` says:
    /// - ``TimeoutBehavior/cancelAndReturn`` (the default): they return at once —
    ///   ``value(of:)-(AsyncResultOperation<Success,Failure>)`` throws the step's timeout failure
    ///   (`Failure.timeout`, an ``OperationTimeoutError``, ``OperationFailure/timedOut``),
    ///   ``waitForCompletion()`` returns, ``finishedSteps`` ends — even when a step ignores
    ///   cancellation; such a step keeps its queue slot until it really ends.
    /// - ``TimeoutBehavior/cancelAndWait``: they wait until the timed-out steps have ended —
    ///   ``value(of:)-(AsyncResultOperation<Success,Failure>)`` until the awaited step has (a step
    ///   that had not started ends at once, even while a step it depends on still runs),
    ///   ``waitForCompletion()`` and ``finishedSteps`` until every step has.
    ///
    /// Call it before the pipeline starts; called later, the limit counts from the call. Once a
    /// limit is armed, later calls do nothing. A zero or negative `limit` times the pipeline out
    /// as soon as it starts. A step that has finished, or a pipeline cancelled before the time is
    /// up, is not timed out.
    ///
    /// ## Cancellation and threading
    /// The timer is stopped once every step has finished: none outlives the pipeline. Safe from
    /// any thread.
    ///
    /// - Parameters:
    ///   - limit: How long the pipeline may run.
    ///   - clock: The clock that measures it; `ContinuousClock` unless you pass another.
    ///   - onTimeout: What the pipeline's awaits do when the time is up.
    public func limitRunningTime<C: Clock<Duration>>(
        to limit: Duration,
        clock: C = ContinuousClock(),
        onTimeout: TimeoutBehavior = .cancelAndReturn
    ) {
        run.limitRunningTime(to: limit, clock: clock, behavior: onTimeout)
    }

    /// Limits the time the pipeline may take to an instant of `clock`; see
    /// ``limitRunningTime(to:clock:onTimeout:)``. A deadline that has passed times the pipeline
    /// out as soon as it starts.
    ///
    /// ## Cancellation and threading
    /// The timer is stopped once every step has finished. Safe from any thread.
    public func limitRunningTime<C: Clock<Duration>>(
        until deadline: C.Instant,
        clock: C = ContinuousClock(),
        onTimeout: TimeoutBehavior = .cancelAndReturn
    ) {
        run.limitRunningTime(until: deadline, clock: clock, behavior: onTimeout)
    }

    /// `true` once the pipeline's time limit ran out while steps were unfinished (they were
    /// timed out). Thread-safe.
    public var isTimedOut: Bool { run.isTimedOut }
}

extension OperationResults {
    /// Limits the time the whole sequence may take: once it has run for `limit`, measured on
    /// `clock` from the start of the iteration, every operation that has not finished times out.
    ///
    /// ```swift
    /// let results = try queue.results(of: downloads)
    /// results.limitRunningTime(to: .seconds(30))
    /// for await finished in results { show(finished.result) }   // ends at 30 s at the latest
    /// ```
    ///
    /// The operations time out as with ``Bridge/limitRunningTime(to:clock:)``. With
    /// ``TimeoutBehavior/cancelAndReturn`` (the default) the iteration ends at once — operations
    /// that ignore cancellation keep their queue slots until they end, undelivered — and
    /// `collectValues` throws the timeout; with ``TimeoutBehavior/cancelAndWait`` the timed-out
    /// operations are delivered as they end. ``isTimedOut`` tells.
    ///
    /// Call it before iterating; called later, the limit counts from the call. Once a limit is
    /// armed, later calls do nothing. A zero or negative `limit` times out at the start.
    ///
    /// ## Cancellation and threading
    /// The timer is stopped once every operation has finished. Safe from any thread.
    public func limitRunningTime<C: Clock<Duration>>(
        to limit: Duration,
        clock: C = ContinuousClock(),
        onTimeout: TimeoutBehavior = .cancelAndReturn
    ) {
        run.limitRunningTime(to: limit, clock: clock, behavior: onTimeout)
    }

    /// Limits the time the sequence may take to an instant of `clock`; see
    /// ``limitRunningTime(to:clock:onTimeout:)``.
    ///
    /// ## Cancellation and threading
    /// The timer is stopped once every operation has finished. Safe from any thread.
    public func limitRunningTime<C: Clock<Duration>>(
        until deadline: C.Instant,
        clock: C = ContinuousClock(),
        onTimeout: TimeoutBehavior = .cancelAndReturn
    ) {
        run.limitRunningTime(until: deadline, clock: clock, behavior: onTimeout)
    }

    /// `true` once the sequence's time limit ran out while operations were unfinished.
    /// Thread-safe.
    public var isTimedOut: Bool { run.isTimedOut }
}

extension OperationValues {
    /// Limits the time the whole sequence may take; see
    /// ``OperationResults/limitRunningTime(to:clock:onTimeout:)``. When the time is up the
    /// iteration throws `Failure.timeout` — at once with ``TimeoutBehavior/cancelAndReturn``,
    /// when the first timed-out operation is delivered with ``TimeoutBehavior/cancelAndWait``
    /// (a `Failure` that cannot express a timeout gets its cancellation failure).
    ///
    /// ## Cancellation and threading
    /// The timer is stopped once every operation has finished. Safe from any thread.
    public func limitRunningTime<C: Clock<Duration>>(
        to limit: Duration,
        clock: C = ContinuousClock(),
        onTimeout: TimeoutBehavior = .cancelAndReturn
    ) {
        results.limitRunningTime(to: limit, clock: clock, onTimeout: onTimeout)
    }

    /// Limits the time the sequence may take to an instant of `clock`; see
    /// ``limitRunningTime(to:clock:onTimeout:)``.
    ///
    /// ## Cancellation and threading
    /// The timer is stopped once every operation has finished. Safe from any thread.
    public func limitRunningTime<C: Clock<Duration>>(
        until deadline: C.Instant,
        clock: C = ContinuousClock(),
        onTimeout: TimeoutBehavior = .cancelAndReturn
    ) {
        results.limitRunningTime(until: deadline, clock: clock, onTimeout: onTimeout)
    }

    /// `true` once the sequence's time limit ran out while operations were unfinished.
    /// Thread-safe.
    public var isTimedOut: Bool { results.isTimedOut }
}
