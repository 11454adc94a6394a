/// An operation whose output a ``ChainedAsyncResultOperation`` can take as its input.
///
/// Every ``AsyncResultOperation`` conforms: its output is its success value. Adopt it in other
/// operations (a `BlockOperation` subclass, say) to feed chained operations that depend on them.
/// A chained operation takes its input from the first dependency whose `output` is an `Input`.
public protocol ChainedOperationOutputProviding {
    /// The value produced for dependents, or `nil` when there is none. Must be thread-safe.
    var output: Any? { get }
}

/// What an upstream operation provides to a chained operation expecting `Input`.
enum ChainedInput<Input> {
    /// The upstream produced an input.
    case value(Input)
    /// The upstream is of the right type but failed or was cancelled.
    case unavailable(UpstreamFailedError)
    /// The upstream does not produce an `Input` (or has not produced anything).
    case notProvided
}

/// The package's result operations, which can tell a failed upstream from an unrelated one.
protocol ChainedInputProviding: AnyObject {
    func chainedInput<Input>(as type: Input.Type) -> ChainedInput<Input>
}
