/// The closure of an operation made to report progress (``TaskOperation/init(totalUnitCount:_:)``,
/// `addTask(totalUnitCount:)`, `then(totalUnitCount:)`), boxed with the progress it reports on.
///
/// The operation keeps the box as its body and finds its progress there
/// (`AsyncOperation.bodyProgress`): for a `TaskOperation`, one allocation besides the progress.
/// A `then` step's closure takes its input as well, and is kept wrapped in a closure that
/// captures the progress: one more. Kept in the rarely used state instead, the handle cost that
/// state too, a capturing closure, and a weak reference (Design.md, "Progress").
final class ReportingBody<Body: Sendable>: Sendable {
    /// The operation's progress, which the closure receives.
    let progress: OperationProgress
    /// The closure: for a `TaskOperation`, one taking the progress as its input.
    let body: Body

    init(progress: OperationProgress, body: Body) {
        self.progress = progress
        self.body = body
    }
}
