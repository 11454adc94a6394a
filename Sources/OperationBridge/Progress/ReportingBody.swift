/// The closure of an operation made to report progress (``TaskOperation/init(totalUnitCount:_:)``,
/// `addTask(totalUnitCount:)`, `then(totalUnitCount:)`), boxed with the progress it reports on.
///
/// The operation keeps the box as its body and finds its progress there
/// (`AsyncOperation.bodyProgress`): besides the progress, one allocation. Kept in the rarely
/// used state instead, the handle cost that state too, and a closure capturing it (Design.md,
/// "Progress").
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
