import Foundation

/// A Foundation `Progress` that follows the progress of one of the package's operations
/// (``OperationProgress/foundationProgress`` and the views handed to parents): pausing or
/// resuming it pauses or resumes the operation (``Bridge/pause()``, ``Bridge/resume()``), and
/// the operation's pause and resume mark it paused or resumed.
///
/// The overrides act on the caller's thread, before `pause()`/`resume()` return — also when
/// Foundation calls them on a descendant of a progress being paused, as Linux's Foundation does.
/// On Apple platforms the pausing and resuming handlers also bring the operation to the view's
/// state, for a pause that reaches the view without calling its `pause()`.
///
/// Safety: `operation` is written only in `init`, before the view is handed out; a weak
/// reference is read atomically. Foundation's state is Foundation's (see
/// ``FoundationProgressViews``).
final class OperationProgressView: Progress, @unchecked Sendable {
    private weak var operation: AsyncOperation?

    /// A view that pauses and resumes `operation`.
    init(following operation: AsyncOperation) {
        self.operation = operation
        super.init(parent: nil, userInfo: nil)
        #if canImport(Darwin)
            let follow: @Sendable () -> Void = { [weak self] in self?.bringOperationToViewState() }
            pausingHandler = follow
            resumingHandler = follow
        #endif
    }

    /// Pauses the view, as Foundation does (its descendants too), then the operation, when it has
    /// not started (see ``Bridge/pause()``).
    override func pause() {
        FoundationProgressViews.writing { super.pause() }
        operation?.bridge.pause()
    }

    /// Resumes the view, as Foundation does (its descendants too), then the operation.
    override func resume() {
        FoundationProgressViews.writing { super.resume() }
        operation?.bridge.resume()
    }

    /// Marks the view paused or resumed, as Foundation does (its descendants too), without acting
    /// on the operation: the operation was paused or resumed. Callers are inside
    /// `FoundationProgressViews.writing(_:)`.
    func mark(paused: Bool) {
        if paused { super.pause() } else { super.resume() }
    }

    #if canImport(Darwin)
        /// Pauses or resumes the operation as the view now says: its handlers, for a pause that
        /// reached the view from an ancestor without calling its `pause()`.
        private func bringOperationToViewState() {
            guard let operation else { return }
            if isPaused { operation.bridge.pause() } else { operation.bridge.resume() }
        }
    #endif
}
