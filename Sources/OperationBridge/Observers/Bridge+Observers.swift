import Foundation

extension Bridge where Base: AsyncOperation {
    /// Calls `handler` with each lifecycle event of the operation — ``OperationEvent/started``,
    /// ``OperationEvent/cancelled``, ``OperationEvent/finished`` — on `target`.
    ///
    /// ```swift
    /// fetch.bridge.observeLifecycle(on: .dispatchQueue(logQueue)) { event in
    ///     log("fetch \(event)")
    /// }
    /// ```
    ///
    /// Register at any time: events that have already happened are reported at once (all of
    /// them, in order, when the operation has finished). Each event is reported once per
    /// registration; calls never overlap and follow the order of the events.
    ///
    /// ## Cancellation and threading
    /// Observing keeps nothing running and cancels nothing; the operation holds `handler` until it
    /// finishes. `handler` runs on `target`, never on the thread that caused the event, and never
    /// under a lock: it may call the operation's members.
    public func observeLifecycle(
        on target: DeliveryTarget,
        _ handler: @escaping @Sendable (OperationEvent) -> Void
    ) {
        base.addLifecycleObserver(.mailbox(EventMailbox(target: target, handler: handler)))
    }

    /// Calls `handler` with each lifecycle event of the operation on the main actor; see
    /// ``observeLifecycle(on:_:)``.
    ///
    /// ## Cancellation and threading
    /// As ``observeLifecycle(on:_:)``; `handler` is isolated to the main actor.
    public func observeLifecycle(_ handler: @escaping @MainActor @Sendable (OperationEvent) -> Void) {
        observeLifecycle(on: .actor(MainActor.shared)) { event in
            MainActor.assumeIsolated { handler(event) }
        }
    }

    /// Calls `handler` once the operation has finished, on `target` — at once when it has.
    ///
    /// ```swift
    /// cleanup.bridge.whenFinished(on: .queue(.main)) { print("cleaned up") }
    /// ```
    ///
    /// ## Cancellation and threading
    /// Called exactly once, also for an operation that was cancelled or never ran; observing
    /// cancels nothing. `handler` runs on `target`, never under a lock.
    public func whenFinished(on target: DeliveryTarget, _ handler: @escaping @Sendable () -> Void) {
        observeLifecycle(on: target) { event in
            if event == .finished { handler() }
        }
    }

    /// Calls `handler` on the main actor once the operation has finished; see
    /// ``whenFinished(on:_:)-(_,()->Void)``.
    ///
    /// ## Cancellation and threading
    /// As ``whenFinished(on:_:)-(_,()->Void)``; `handler` is isolated to the main actor.
    public func whenFinished(_ handler: @escaping @MainActor @Sendable () -> Void) {
        whenFinished(on: .actor(MainActor.shared)) {
            MainActor.assumeIsolated { handler() }
        }
    }

    /// The operation's lifecycle events as an `AsyncSequence`, ending after
    /// ``OperationEvent/finished``.
    ///
    /// ```swift
    /// for await event in upload.bridge.lifecycleEvents {
    ///     status = "\(event)"
    /// }
    /// ```
    ///
    /// Each access makes a new sequence that starts with the events that have already happened.
    /// Events are buffered until they are read (three at most).
    ///
    /// ## Cancellation and threading
    /// Cancelling the iterating task ends the iteration; the operation is not cancelled. Iterate
    /// from any task or actor.
    public var lifecycleEvents: AsyncStream<OperationEvent> {
        let (events, continuation) = AsyncStream.makeStream(of: OperationEvent.self)
        base.addLifecycleObserver(
            .immediate { event in
                continuation.yield(event)
                if event == .finished { continuation.finish() }
            })
        return events
    }

    /// Registers `observer`, telling it first of the events that have already happened.
}

extension AsyncOperation {
    func addLifecycleObserver(_ observer: LifecycleObserver) {
        lock.withCriticalSection {
            if lifecycle.didExecute { observer.post(.started) }
            if lifecycle.isCancellationRecorded { observer.post(.cancelled) }
            if lifecycle.isFinished {
                observer.post(.finished)
            } else {
                rareState().lifecycleObservers.append(observer)
            }
        }
    }
}

extension Bridge where Base: AsyncResultOperationProtocol, Base.Success: Sendable {
    /// Calls `handler` with the operation's result once it has finished, on `target` — at once
    /// when it has. AsyncOpKit's `whenFinished`, on the target of your choice.
    ///
    /// ```swift
    /// download.bridge.whenFinished(on: .queue(.main)) { result in
    ///     switch result {
    ///     case .success(let data)?: show(data)
    ///     case .failure(let error)?: report(error)
    ///     case nil: break  // cancelled, and `Failure` cannot say so
    ///     }
    /// }
    /// ```
    ///
    /// The result is `nil` when the operation ended without one (see ``AsyncResultOperation/result``).
    ///
    /// ## Cancellation and threading
    /// Called exactly once, also for an operation that was cancelled or never ran; observing
    /// cancels nothing. `handler` runs on `target`, never under a lock.
    public func whenFinished(
        on target: DeliveryTarget,
        _ handler: @escaping @Sendable (Result<Base.Success, Base.Failure>?) -> Void
    ) {
        let operation = resultOperation
        whenFinished(on: target) { handler(operation.result) }
    }

    /// Calls `handler` on the main actor with the operation's result once it has finished; see
    /// ``whenFinished(on:_:)-(_,(Result<Base.Success,Base.Failure>?)->Void)``.
    ///
    /// ## Cancellation and threading
    /// As the variant with a target; `handler` is isolated to the main actor.
    public func whenFinished(_ handler: @escaping @MainActor @Sendable (Result<Base.Success, Base.Failure>?) -> Void) {
        whenFinished(on: .actor(MainActor.shared)) { result in
            MainActor.assumeIsolated { handler(result) }
        }
    }
}
