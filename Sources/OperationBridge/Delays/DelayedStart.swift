import Foundation

extension Bridge where Base: AsyncOperation {
    /// Keeps the operation from starting until `delay` has passed, measured on `clock` from
    /// this call.
    ///
    /// ```swift
    /// let reminder = ReminderOperation(note)
    /// reminder.bridge.delayStart(by: .seconds(30))
    /// queue.addOperation(reminder)   // pending now; it starts in 30 s, once a slot is free
    /// ```
    ///
    /// While it waits, the operation is not ready: it stays pending in its queue without taking
    /// a slot, and no thread sleeps (a timer releases it). It starts once the delay has passed
    /// *and* its dependencies have finished *and* its queue has a free slot. A zero or negative
    /// `delay` holds nothing. A later call replaces an earlier one; called once the operation
    /// has started or finished, it does nothing.
    ///
    /// ## Cancellation and threading
    /// Cancelling the waiting operation ends the wait at once: it becomes ready, and its queue
    /// finishes it without running it, as any cancelled operation. The timer is stopped when the
    /// operation finishes. Safe from any thread. Only the operation's queue respects the delay:
    /// calling `start()` yourself starts it at once.
    ///
    /// - Parameters:
    ///   - delay: How long to wait before the operation may start.
    ///   - clock: The clock that measures it; `ContinuousClock` unless you pass another (a test
    ///     clock, for example).
    public func delayStart<C: Clock<Duration>>(by delay: Duration, clock: C = ContinuousClock()) {
        delayStart(until: clock.now.advanced(by: delay), clock: clock)
    }

    /// Keeps the operation from starting until `clock` reaches `deadline`.
    ///
    /// As ``delayStart(by:clock:)``, with an instant: a deadline that has already passed holds
    /// nothing.
    ///
    /// ## Cancellation and threading
    /// Cancelling the waiting operation ends the wait at once (its queue finishes it without
    /// running it). Safe from any thread.
    public func delayStart<C: Clock<Duration>>(until deadline: C.Instant, clock: C = ContinuousClock()) {
        guard clock.now < deadline else { return base.endReadinessHold() }  // replaces an earlier delay
        base.holdReadiness { release in DeadlineTimer.schedule(at: deadline, on: clock, release) }
    }
}

extension OperationQueue {
    /// Adds `operation` to this queue, to start once `delay` has passed (and its dependencies
    /// have finished, and a slot is free).
    ///
    /// ```swift
    /// queue.addOperation(RefreshOperation(feed), after: .seconds(5))
    /// ```
    ///
    /// The same as ``Bridge/delayStart(by:clock:)`` followed by adding the operation:
    /// it waits in the queue without a slot and without a sleeping thread. An operation that is
    /// pending in this queue already is not added again (its start is delayed where it is); one
    /// that has started or finished is left alone.
    ///
    /// ## Cancellation and threading
    /// Cancelling the operation while it waits ends the wait: the queue finishes it without
    /// running it. Safe from any thread.
    ///
    /// - Parameters:
    ///   - operation: The operation to add.
    ///   - delay: How long to wait, measured on `clock` from now; zero or negative means no wait.
    ///   - clock: The clock that measures it; `ContinuousClock` unless you pass another.
    public func addOperation<C: Clock<Duration>>(
        _ operation: AsyncOperation,
        after delay: Duration,
        clock: C = ContinuousClock()
    ) {
        operation.bridge.delayStart(by: delay, clock: clock)
        admit(operation)
    }

    /// Adds `operation` to this queue, to start once `clock` reaches `deadline` (and its
    /// dependencies have finished, and a slot is free).
    ///
    /// As ``addOperation(_:after:clock:)``, with an instant: a deadline that has passed means no
    /// wait.
    ///
    /// ## Cancellation and threading
    /// Cancelling the operation while it waits ends the wait: the queue finishes it without
    /// running it. Safe from any thread.
    public func addOperation<C: Clock<Duration>>(
        _ operation: AsyncOperation,
        at deadline: C.Instant,
        clock: C = ContinuousClock()
    ) {
        operation.bridge.delayStart(until: deadline, clock: clock)
        admit(operation)
    }

    // Disfavored: for a closure that cannot throw, the `Never` overload below must win (see `then`).
    /// Adds an operation that runs `body` once `delay` has passed, and returns it as a
    /// cancellable, awaitable handle.
    ///
    /// ```swift
    /// let retry = queue.addTask(after: .seconds(2)) { () async throws(SyncError) -> Int in
    ///     try await sync.pushPending()
    /// }
    /// ```
    ///
    /// The operation waits in the queue without a slot and without a sleeping thread (see
    /// ``Bridge/delayStart(by:clock:)``), then runs as with
    /// ``addTask(qualityOfService:_:)->TaskOperation<Success,Failure>``.
    ///
    /// ## Cancellation and threading
    /// Cancelling the returned operation while it waits ends the wait, and `body` never runs;
    /// once running, it cancels the `Task` running `body`. Safe from any thread.
    ///
    /// - Parameters:
    ///   - delay: How long to wait, measured on `clock` from now; zero or negative means no wait.
    ///   - clock: The clock that measures it; `ContinuousClock` unless you pass another.
    ///   - qualityOfService: The operation's quality of service; `nil` keeps the default.
    ///   - body: The work; see ``TaskOperation`` for cancellation and task-local semantics.
    /// - Returns: The queued operation.
    @_disfavoredOverload
    @discardableResult
    public func addTask<Success: Sendable, Failure: Error, C: Clock<Duration>>(
        after delay: Duration,
        clock: C = ContinuousClock(),
        qualityOfService: QualityOfService? = nil,
        _ body: @escaping @Sendable () async throws(Failure) -> Success
    ) -> TaskOperation<Success, Failure> {
        delayed(TaskOperation(running: .throwing(body)), by: delay, clock: clock, qualityOfService: qualityOfService)
    }

    /// Adds an operation that runs `body`, which cannot fail, once `delay` has passed; see
    /// ``addTask(after:clock:qualityOfService:_:)->TaskOperation<Success,Failure>``. Its
    /// `Failure` is `Never`: its value is `nil` when it was cancelled before `body` ran.
    ///
    /// ## Cancellation and threading
    /// Cancelling the returned operation while it waits ends the wait, and `body` never runs;
    /// once running, it cancels the `Task` running `body`. Safe from any thread.
    @discardableResult
    public func addTask<Success: Sendable, C: Clock<Duration>>(
        after delay: Duration,
        clock: C = ContinuousClock(),
        qualityOfService: QualityOfService? = nil,
        _ body: @escaping @Sendable () async -> Success
    ) -> TaskOperation<Success, Never> {
        delayed(TaskOperation(running: .nonThrowing(body)), by: delay, clock: clock, qualityOfService: qualityOfService)
    }

    private func delayed<Success, Failure, C: Clock<Duration>>(
        _ operation: TaskOperation<Success, Failure>,
        by delay: Duration,
        clock: C,
        qualityOfService: QualityOfService?
    ) -> TaskOperation<Success, Failure> {
        if let qualityOfService { operation.qualityOfService = qualityOfService }
        addOperation(operation, after: delay, clock: clock)
        return operation
    }
}
