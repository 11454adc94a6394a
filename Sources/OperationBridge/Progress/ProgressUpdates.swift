import Foundation

extension OperationProgress {
    /// The progress as an asynchronous sequence of snapshots, throttled: the current one at once,
    /// then at most one per `interval` — only when it changed — and the last one when the work has
    /// finished.
    ///
    /// ```swift
    /// @MainActor func show(_ download: TaskOperation<Data, any Error>) async {
    ///     for await snapshot in download.bridge.operationProgress.updates(every: .milliseconds(250)) {
    ///         progressBar.value = snapshot.fractionCompleted     // on the main actor
    ///     }
    ///     // the work has finished (or this task was cancelled)
    /// }
    /// ```
    ///
    /// The sequence reads the progress when it is time to, instead of being told of each report:
    /// work that reports millions of units costs its watcher nothing more, and a slow watcher
    /// never falls behind — it gets the newest snapshot, never a backlog. It ends after the
    /// snapshot whose ``ProgressSnapshot/isFinished`` is `true`, or as soon as the iterating task
    /// is cancelled. The finish is seen at the next tick: at most `interval` late.
    ///
    /// ## Cancellation and threading
    /// Iterating sleeps on `clock` between reads and runs on the caller's actor (the main actor
    /// included); cancelling the iterating task ends the sequence at once and cancels nothing
    /// else. Watching an operation that is never queued or started never ends by itself, as
    /// awaiting it would not: cancel the task. Each iterator reads independently; any number may
    /// watch one progress. `interval` must be positive (zero or less traps: a programmer error).
    ///
    /// - Parameters:
    ///   - interval: The least time between two snapshots; a tenth of a second by default.
    ///   - clock: The clock to sleep on; `ContinuousClock` unless you pass another (a test clock).
    public func updates<C: Clock<Duration>>(
        every interval: Duration = .milliseconds(100),
        clock: C = ContinuousClock()
    ) -> ProgressUpdates<C> {
        precondition(
            interval > .zero, "OperationProgress.updates(every:clock:) needs a positive interval, not \(interval)")
        return ProgressUpdates(progress: self, interval: interval, clock: clock)
    }
}

/// The snapshots of an ``OperationProgress``, throttled; see
/// ``OperationProgress/updates(every:clock:)``.
///
/// ## Cancellation and threading
/// A value: iterate it from any task, as many times as you like, each iteration reading on its
/// own. Cancelling the iterating task ends the iteration; it cancels nothing else.
public struct ProgressUpdates<C: Clock<Duration>>: AsyncSequence, Sendable {
    /// A snapshot of the progress.
    public typealias Element = ProgressSnapshot
    /// Never: the sequence ends, it does not throw.
    public typealias Failure = Never

    let progress: OperationProgress
    let interval: Duration
    let clock: C

    /// Returns an iterator that starts with the current snapshot.
    ///
    /// ## Cancellation and threading
    /// Any number of iterators, from any tasks; each reads the progress on its own, and making
    /// one reads nothing yet.
    public func makeAsyncIterator() -> Iterator {
        Iterator(progress: progress, interval: interval, clock: clock)
    }

    /// Delivers the snapshots. Not `Sendable`: one task iterates.
    public struct Iterator: AsyncIteratorProtocol {
        let progress: OperationProgress
        let interval: Duration
        let clock: C
        /// The snapshot last delivered, and when to read again.
        private var last: (snapshot: ProgressSnapshot, nextRead: C.Instant)?
        private var ended = false

        init(progress: OperationProgress, interval: Duration, clock: C) {
            self.progress = progress
            self.interval = interval
            self.clock = clock
        }

        /// The next snapshot that differs from the last one, once `interval` has passed since the
        /// last one it delivered; `nil` after the finished snapshot, or when the task was cancelled.
        public mutating func next() async -> ProgressSnapshot? {
            await next(isolation: nil)
        }

        /// The next snapshot, running on the caller's actor; see ``next()``.
        public mutating func next(isolation actor: isolated (any Actor)?) async -> ProgressSnapshot? {
            guard !ended, !Task.isCancelled else { return nil }
            guard let last else { return deliver(progress.snapshot) }
            var wakeUp = last.nextRead
            while true {
                do {
                    try await clock.sleep(until: wakeUp, tolerance: nil)
                } catch {
                    ended = true
                    return nil
                }
                let snapshot = progress.snapshot
                if snapshot != last.snapshot { return deliver(snapshot) }
                wakeUp = wakeUp.advanced(by: interval)
            }
        }

        private mutating func deliver(_ snapshot: ProgressSnapshot) -> ProgressSnapshot {
            ended = snapshot.isFinished
            // Measured from the read, so that a slow consumer is never handed a burst.
            last = (snapshot, clock.now.advanced(by: interval))
            return snapshot
        }
    }
}

@available(*, unavailable)
extension ProgressUpdates.Iterator: Sendable {}
