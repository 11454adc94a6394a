/// The closure of an operation made to report progress (``TaskOperation/init(totalUnitCount:_:)``,
/// `addTask(totalUnitCount:)`, `then(totalUnitCount:)`), boxed with the progress it reports on.
///
/// The operation keeps a closure that returns the box, as its body's `reporting` case, and finds
/// its progress there (`AsyncOperation.bodyProgress`): the body then takes two words, as its
/// other forms do (`ErasedClosure`). A pending reporting `TaskOperation` measured 16 bytes less
/// than with the box as an enum case (the closure, whose only capture is the box, added nothing
/// measurable). A struct returned by the closure instead of the box made the package's
/// unspecialized generic code copy it through its runtime metadata on every read of the
/// progress: a group whose progress was watched ran about a tenth slower. A `then` step's closure takes its input as well, and is kept wrapped in a closure that
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
