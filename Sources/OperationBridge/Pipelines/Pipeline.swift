import Foundation

/// Runs a graph of operations and async steps on a queue in linear time, cancels it as one,
/// and hands back typed results.
///
/// On Linux, `OperationQueue` rescans every pending operation whenever one finishes, so adding
/// a whole dependency graph at once costs time quadratic in its size (a 16,000-operation fan-out
/// takes about 500 times longer per operation than 16,000 independent operations). A pipeline
/// adds each operation to the queue only once its dependencies inside the pipeline have
/// finished, so the queue stays short and the cost linear.
///
/// Dependencies are the ordinary ones: `addDependency(_:)`, ``ChainedAsyncResultOperation/takeInput(from:)``
/// and ``Bridge/then(_:)->ChainedTaskOperation<Base.Success,Output,NewFailure>``. Dependencies on operations outside the pipeline
/// (queued elsewhere, or already finished) are honoured by the queue.
///
/// ```swift
/// let unfurl = UnfurlURLOperation(shortURL: link)              // a classic operation
/// let title = unfurl.bridge.then { url async throws -> String in     // an async step
///     try await fetchTitle(url)
/// }
/// let pipeline = try Pipeline([unfurl, title], on: queue)    // throws on a cycle
/// let text = try await pipeline.value(of: title)
/// ```
///
/// ## Failures
/// By default (``PipelineFailurePolicy/cancelDependents``) a failed step — a failure result, or
/// cancelled — stops the package's steps that depend on it, transitively, and the others go on.
/// A stopped step does not run: it reports the failure (``Bridge/upstreamFailure``, and
/// its result where its `Failure` can express it) and is not cancelled. Operations that are not
/// the package's (a `BlockOperation`, your own `Operation` subclass) run after their
/// dependencies whatever the outcome, as Foundation runs them; the failure passes through them to
/// the package's steps behind them. A classic chained step whose input provider failed applies
/// its own ``ChainedAsyncResultOperation/upstreamFailurePolicy`` (by default, for an error enum
/// that cannot say "the upstream failed", `main()` runs with `input == nil`).
/// ``PipelineFailurePolicy/cancelAll`` also cancels every step that does not depend on the failed
/// one, and the dependents that are not the package's.
///
/// ## Cancellation
/// ``cancel()``, or cancelling a task awaiting ``value(of:)-(AsyncResultOperation<Success,Failure>)``, ``outcome(of:)`` or
/// ``waitForCompletion()``, cancels every step that has not finished. Steps not queued yet are
/// queued cancelled so that they finish without running: nothing waiting for them hangs.
///
/// ## Threading
/// All members are thread-safe. A pipeline runs once; ``start()`` is idempotent and every
/// awaiting member starts it.
public final class Pipeline: Sendable {
    /// The pipeline's operations, without duplicates, in the order given.
    public var operations: [Operation] { run.scheduler.operations }

    let run: ScheduledRun

    /// Validates the graph. Nothing runs until ``start()`` or an awaiting member is called.
    ///
    /// - Parameters:
    ///   - operations: The steps; an operation listed twice is run once. One already pending in
    ///     `queue` is awaited, never added again; one pending in *another* queue must not be
    ///     given (Foundation traps on adding an operation to a second queue); operations already
    ///     started or finished are only observed.
    ///   - queue: The queue to run them on. Its `maxConcurrentOperationCount` applies.
    ///   - failurePolicy: What a failed step does to the others.
    /// - Throws: ``PipelineError/dependencyCycle(operations:)`` when the dependencies form a
    ///   cycle, before anything runs.
    public init(
        _ operations: [Operation],
        on queue: OperationQueue,
        failurePolicy: PipelineFailurePolicy = .cancelDependents
    ) throws(PipelineError) {
        // The scheduler leaves duplicates out itself; the pipeline's positions are its nodes, so
        // a list with duplicates is scheduled again without them (rare: a second pass then,
        // instead of a set of every operation built for every pipeline).
        var scheduler = try GraphScheduler(operations, queue: queue, failurePolicy: failurePolicy)
        if scheduler.operations.count != operations.count {
            scheduler = try GraphScheduler(scheduler.operations, queue: queue, failurePolicy: failurePolicy)
        }
        run = ScheduledRun(scheduler: scheduler, order: .completion)
    }

    /// Starts the pipeline: the steps without unfinished dependencies are queued at once, the
    /// others as their dependencies finish. Later calls do nothing.
    public func start() {
        run.start()
    }

    /// Cancels every step that has not finished. Safe at any time, from any thread.
    public func cancel() {
        run.cancel()
    }

    /// The first step that failed on its own — not stopped by another step's failure — with its
    /// index in ``operations`` and its failure; `nil` while none has. Thread-safe.
    ///
    /// The steps that did not run because of it report it as their
    /// ``Bridge/upstreamFailure`` (and in their result where their `Failure` can say
    /// so); this names where it started, whatever the error types along the way can express.
    public var firstFailure: StepFailure? {
        run.firstFailure
    }

    /// Starts the pipeline if needed and suspends until every step has finished.
    ///
    /// - Throws: `CancellationError` when the awaiting task is cancelled; the pipeline is then
    ///   cancelled too, and the call returns at once.
    ///
    /// With a time limit (``limitRunningTime(to:clock:onTimeout:)``) whose time ran out under
    /// ``TimeoutBehavior/cancelAndReturn``, it returns once the time is up — the steps were
    /// timed out, and those still running end on their own: ``isTimedOut`` says so.
    public func waitForCompletion() async throws(CancellationError) {
        if await !owning({ await run.scheduler.waitForAll() }), !run.isTimedOut { throw CancellationError() }
    }

    /// Starts the pipeline if needed and returns the result of `step` once it has finished.
    ///
    /// - Returns: The step's result — its own cancellation failure when the awaiting task was
    ///   cancelled first — or `nil` when it ended without one: cancelled, or stopped by an
    ///   upstream failure, and its `Failure` cannot express that (as
    ///   ``Foundation/OperationQueue/runForOutcome(_:within:)``; see ``Bridge/upstreamFailure``).
    ///
    /// ## Cancellation
    /// The awaiting task owns the pipeline: cancelling it cancels the pipeline.
    public func outcome<Success: Sendable, Failure>(
        of step: AsyncResultOperation<Success, Failure>
    ) async -> Result<Success, Failure>? {
        await owning {
            _ = await OperationWaiter.waitForFinish(
                of: step, until: .outcome, onTaskCancellation: .cancelOperation, timeout: run.waitTimeout())
            return step.result
        }
    }

    /// Starts the pipeline if needed and returns the success value of `step` once its outcome
    /// is final.
    ///
    /// - Throws: The step's typed failure — for a step that an upstream failure kept from running,
    ///   the ``UpstreamFailedError``-based failure that names the root cause (see
    ///   ``UpstreamFailureRepresentable``); `Failure.cancellation` when it ended cancelled.
    ///
    /// ## Cancellation
    /// The awaiting task owns the pipeline: cancelling it cancels the pipeline, and the task
    /// gets the step's own cancellation failure.
    public func value<Success: Sendable, Failure: CancellationRepresentable>(
        of step: AsyncResultOperation<Success, Failure>
    ) async throws(Failure) -> Success {
        try await value(of: step, mapping: OwnFailure<Failure>.self)
    }

    /// The success value of a step whose `Failure` is `any Error`; see ``value(of:)-(AsyncResultOperation<Success,Failure>)``.
    ///
    /// - Throws: The step's failure; the ``UpstreamFailedError`` when an upstream failure kept it
    ///   from running; `CancellationError` when it ended cancelled.
    public func value<Success: Sendable>(of step: AsyncResultOperation<Success, any Error>) async throws -> Success {
        try await value(of: step, mapping: UntypedFailure.self)
    }

    /// Starts the pipeline if needed and returns the success value of `step` once its outcome is
    /// final; throws a typed ``OperationFailure``. For every `Failure`, and the way to await steps
    /// whose `Failure` can express neither cancellation nor an upstream failure.
    ///
    /// - Throws: ``OperationFailure/failed(_:)`` with the step's failure — a step whose `Failure`
    ///   can express cancellation reports its cancellation this way too —,
    ///   ``OperationFailure/cancelled`` when it ended cancelled without a result, or
    ///   ``OperationFailure/upstreamFailed(_:)`` naming the step where the failure started.
    ///
    /// ## Cancellation
    /// The awaiting task owns the pipeline: cancelling it cancels the pipeline, and the call
    /// answers the step's own cancellation as above.
    public func outcomeValue<Success: Sendable, Failure>(
        of step: AsyncResultOperation<Success, Failure>
    ) async throws(OperationFailure<Failure>) -> Success {
        try await value(of: step, mapping: WrappedFailure<Failure>.self)
    }

    /// Not available: `Failure` can express neither cancellation nor an upstream failure. Use
    /// ``outcomeValue(of:)`` or ``outcome(of:)``.
    @available(
        *, unavailable,
        message:
            "Failure cannot express cancellation: use 'try await pipeline.outcomeValue(of: step)' (throws OperationFailure<Failure>) or 'await pipeline.outcome(of: step)'"
    )
    public func value<Success: Sendable, Failure>(
        of step: AsyncResultOperation<Success, Failure>
    ) async throws(Failure) -> Success {
        fatalError("unavailable")
    }

    /// The value of a step that cannot fail; `nil` when it ended without one (cancelled, or kept
    /// from running by an upstream failure). See ``value(of:)-(AsyncResultOperation<Success,Failure>)``.
    public func value<Success: Sendable>(of step: AsyncResultOperation<Success, Never>) async -> Success? {
        try? await value(of: step, mapping: WrappedFailure<Never>.self)
    }

    private func value<Success: Sendable, Failure, Mapping: FailureMapping>(
        of step: AsyncResultOperation<Success, Failure>,
        mapping: Mapping.Type
    ) async throws(Mapping.Thrown) -> Success where Mapping.Failure == Failure {
        // `withTaskCancellationHandler` is untyped-rethrowing; carry the typed error out in a Result.
        let result = await owning { () async -> Result<Success, Mapping.Thrown> in
            do throws(Mapping.Thrown) {
                return .success(
                    try await step.awaitValue(
                        onTaskCancellation: .cancelOperation, mapping: mapping, timeout: run.waitTimeout()))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Starts the pipeline if needed and runs `body` with the awaiting task owning the pipeline:
    /// cancelling the task cancels it.
    private func owning<Value>(_ body: () async -> Value) async -> Value {
        start()
        let watchdog = StuckAwaitWatchdog.watch(self)
        defer { watchdog?.cancel() }
        return await withTaskCancellationHandler(operation: body) { cancel() }
    }

    /// The steps as they finish, as an `AsyncSequence` (completion order). Iterating starts the
    /// pipeline.
    ///
    /// Iterate once (a second iterator is a programmer error and traps). Cancelling the iterating
    /// task cancels the pipeline, and so does leaving the loop early when its iterator is
    /// destroyed — not in top-level code (`main.swift`), where Swift never destroys it: call
    /// ``cancel()`` there. ``cancel()`` ends the loop (steps that finish afterwards are not
    /// delivered).
    public var finishedSteps: FinishedSteps { FinishedSteps(run: run) }

    /// The steps of a ``Pipeline`` as they finish.
    public struct FinishedSteps: AsyncSequence, Sendable {
        /// A finished step.
        public struct Element: Sendable {
            /// The step's position in the pipeline's ``Pipeline/operations``.
            public let index: Int
            /// The step.
            public let operation: Operation
            /// Whether it failed: a failure result, cancelled, or stopped by an upstream failure.
            public let failed: Bool
        }

        let run: ScheduledRun

        /// Cancels the pipeline and ends the iteration; the same as ``Pipeline/cancel()``.
        public func cancel() {
            run.cancel()
        }

        /// Starts the pipeline and returns the only iterator of this sequence.
        public func makeAsyncIterator() -> Iterator {
            precondition(run.attachConsumer(), "Pipeline.finishedSteps can be iterated only once")
            run.start()
            return Iterator(lifetime: IterationLifetime(run))
        }

        /// Delivers the finished steps. Not `Sendable`: one task iterates.
        public struct Iterator: AsyncIteratorProtocol {
            let lifetime: IterationLifetime

            /// The next finished step; `nil` at the end or when the iterating task was cancelled.
            public mutating func next() async -> Element? {
                await next(isolation: nil)
            }

            /// The next finished step, running on the caller's actor; see ``next()``.
            public mutating func next(isolation actor: isolated (any Actor)?) async -> Element? {
                guard let position = await lifetime.next() else { return nil }
                let operation = lifetime.run.scheduler.operations[position]
                return Element(index: position, operation: operation, failed: operation.stepFailed)
            }
        }
    }
}

@available(*, unavailable)
extension Pipeline.FinishedSteps.Iterator: Sendable {}

extension Pipeline.FinishedSteps.Element: CustomReflectable {
    /// A mirror showing the operation by its type and name, without reflecting it: Swift Testing
    /// reflects the values of a failed expectation, and an operation's own stored properties reach
    /// queues that other threads change meanwhile (Design.md, "Reflection"). Safe from any thread:
    /// it reads the operation's name.
    public var customMirror: Mirror {
        Mirror(
            self, children: ["index": index, "operation": mirroredOperation(operation), "failed": failed],
            displayStyle: .struct)
    }
}

extension Pipeline: CustomReflectable {
    /// A mirror of the pipeline's steps by type and name, and of its first failure, not of its
    /// stored properties: those reach its queue and, through Foundation's, other operations that
    /// threads free meanwhile, and Swift Testing reflects the values of a failed expectation
    /// (Design.md, "Reflection"). Thread-safe.
    public var customMirror: Mirror {
        Mirror(
            self, children: ["operations": operations.map(mirroredOperation), "firstFailure": firstFailure as Any],
            displayStyle: .class)
    }
}
