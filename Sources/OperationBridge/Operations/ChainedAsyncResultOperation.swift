import Foundation

/// A result operation that takes its input from an upstream operation it depends on.
///
/// Two ways to connect the input, both resolved when the operation starts (after its
/// dependencies have finished):
/// - **Typed:** ``takeInput(from:)`` (or ``init(inputFrom:)``) names one upstream
///   ``AsyncResultOperation`` whose `Success` is `Input`, checked by the compiler, and adds the
///   dependency.
/// - **Classic:** `addDependency(_:)` on any operation adopting
///   ``ChainedOperationOutputProviding``; the first dependency whose `output` is an `Input`
///   provides it.
///
/// An input passed to ``init(input:)`` wins over both.
///
/// ```swift
/// let unfurl = UnfurlOperation(shortURL: link)                // AsyncResultOperation<URL, …>
/// let fetchTitle = FetchTitleOperation()                      // Chained…<URL, String, …>
/// fetchTitle.takeInput(from: unfurl)
/// queue.addOperation(unfurl)
/// queue.addOperation(fetchTitle)
/// let title = try await fetchTitle.bridge.value
/// ```
///
/// ## When the upstream failed
/// If the upstream the input would come from failed or was cancelled, ``upstreamFailurePolicy``
/// decides, and its default follows what `Failure` can express:
/// - `Failure` can say "the upstream failed" (it adopts ``UpstreamFailureRepresentable``, or is
///   `any Error`): the operation does not run ``AsyncOperation/main()``; it finishes with a
///   failure built from ``UpstreamFailedError`` (``UpstreamFailurePolicy/fail``).
/// - Otherwise — classic code, with its own error enum: ``AsyncOperation/main()`` runs with
///   `input == nil`, as with the hand-copied class, and the subclass reports its own failure
///   (``UpstreamFailurePolicy/runWithoutInput``). It always ends with a result of its own, and
///   is not cancelled.
///
/// Set ``upstreamFailurePolicy`` to choose the other behaviour. With no upstream at all,
/// `main()` runs with `input == nil`.
///
/// ```swift
/// enum TitleError: Error { case canceled, missingInputURL }   // says nothing of upstreams
/// final class FetchTitleOperation: ChainedAsyncResultOperation<URL, String, TitleError>, … {
///     override func main() {
///         guard let input else { return finish(with: .failure(.missingInputURL)) }
///         …
///     }
/// }
/// // After a failed unfurl: main() runs, result == .failure(.missingInputURL).
/// ```
///
/// ## Cancellation and threading
/// As for ``AsyncResultOperation``. A cancelled operation does not resolve its input.
/// ``input`` is readable from any thread.
open class ChainedAsyncResultOperation<Input, Output, Failure: Error>:
    AsyncResultOperation<Output, Failure>, @unchecked Sendable
{
    // Safety: guarded by the inherited `lock`. The policy comes first: one byte, it fits in the
    // tail of the result slot's layout (Design.md, "Memory per operation").

    /// `nil` until set: the default then follows `Failure` (``defaultUpstreamFailurePolicy``).
    private var storedPolicy: UpstreamFailurePolicy?
    /// The input, or the upstream it is to come from.
    private var source: InputSource

    /// Where the input comes from, in one field: an input given at creation wins over an
    /// upstream, and a resolved input replaces it (the upstream stays a dependency). Side by side,
    /// an optional input and an existential upstream took 25 bytes and more; this takes the
    /// input's size and a byte, at least a word and a byte (Design.md, "Memory per operation").
    private enum InputSource {
        /// No input, and no upstream named yet: the classic dependency scan provides it.
        case none
        /// The upstream named by ``takeInput(from:)``, until the input is resolved: a result
        /// operation, whose `chainedInput(as:)` answers.
        case upstream(AsyncOperation)
        /// The input given at creation, or resolved when the operation started.
        case value(Input)
    }

    /// Creates an operation with a fixed input, or one taken from an upstream when `nil`.
    public init(input: Input? = nil) {
        source = input.map(InputSource.value) ?? .none
        super.init()
    }

    /// Creates an operation that takes its input from `upstream` (see ``takeInput(from:)``).
    public convenience init<UpstreamFailure: Error>(inputFrom upstream: AsyncResultOperation<Input, UpstreamFailure>) {
        self.init(input: nil)
        takeInput(from: upstream)
    }

    /// The input: the one given at creation, or the upstream's output once the operation has
    /// started. Thread-safe.
    public var input: Input? {
        lock.withCriticalSection {
            guard case .value(let input) = source else { return nil }
            return input
        }
    }

    /// What to do when the upstream failed or was cancelled. Set it before the operation
    /// starts. Thread-safe.
    ///
    /// Until set, it reads the default, which follows what `Failure` can express (see
    /// ``UpstreamFailurePolicy``): ``UpstreamFailurePolicy/fail`` when `Failure` adopts
    /// ``UpstreamFailureRepresentable`` or is `any Error`, ``UpstreamFailurePolicy/runWithoutInput``
    /// — the classic behaviour — otherwise.
    public var upstreamFailurePolicy: UpstreamFailurePolicy {
        get { lock.withCriticalSection { storedPolicy } ?? defaultUpstreamFailurePolicy }
        set { lock.withCriticalSection { storedPolicy = newValue } }
    }

    /// The policy until one is set: the classic behaviour unless `Failure` can say "the upstream
    /// failed". ``ChainedTaskOperation``, whose closure cannot run without its input, skips.
    var defaultUpstreamFailurePolicy: UpstreamFailurePolicy {
        .classicDefault(for: Failure.self)
    }

    /// Takes the input from `upstream`'s success value, and makes this operation depend on it.
    ///
    /// The types are checked by the compiler. Call it before the operation is queued: called once
    /// the operation has started, it traps with a message naming the operation (a programmer
    /// error: the input was resolved already, and would silently be missing). A later
    /// call replaces the upstream (the earlier dependency stays). An input given at creation
    /// still wins. `upstream` stays in `dependencies` after this operation has finished, as
    /// Foundation keeps dependencies; releasing a long chain frees it one operation at a time,
    /// never recursively (Design.md, "Releasing long chains").
    public func takeInput<UpstreamFailure: Error>(from upstream: AsyncResultOperation<Input, UpstreamFailure>) {
        // The upstream replaced is released after the lock: it may be the last reference to it.
        let (replaced, started) = lock.withCriticalSection { () -> (AsyncOperation?, Bool) in
            if lifecycle.hasStarted { return (nil, true) }
            switch source {
            // An input given at creation wins: the upstream is only a dependency.
            case .value: return (nil, false)
            case .none: source = .upstream(upstream)
            case .upstream(let replaced):
                source = .upstream(upstream)
                return (replaced, false)
            }
            return (nil, false)
        }
        withExtendedLifetime(replaced) {}
        if started {
            // `fatalError`, not `preconditionFailure`: the message must survive release builds.
            let name = self.name.map { " '\($0)'" } ?? ""
            fatalError(
                "takeInput(from:) on \(type(of: self))\(name) came too late: it has started, and resolved its input "
                    + "already. Call takeInput(from:) before adding the operation to a queue.")
        }
        addDependency(upstream)
    }

    /// The upstream named by ``takeInput(from:)``, if any. Thread-safe.
    var typedInputUpstream: AnyObject? {
        lock.withCriticalSection {
            guard case .upstream(let upstream) = source else { return nil }
            return upstream
        }
    }

    override func takeLinkForRelease() -> AnyObject? {
        lock.withCriticalSection {
            guard case .upstream(let upstream) = source else { return nil }
            source = .none
            return upstream
        }
    }

    override func prepareToRun() -> Bool {
        guard case .unavailable(let error) = resolveInput() else { return true }
        if upstreamFailurePolicy == .runWithoutInput {
            // Kept for the dependents: a failure of this step follows the one upstream.
            recordMissingInputCause(error)
            return true
        }
        finishWithoutRunning(reporting: error, onlyIfPending: false)
        return false
    }

    /// Resolves and stores the input. Returns how it went.
    private func resolveInput() -> ChainedInput<Input> {
        let resolution: ChainedInput<Input>
        switch lock.withCriticalSection({ source }) {
        case .value(let existing): return .value(existing)
        case .upstream(let typed): resolution = typed.chainedInput(as: Input.self)
        case .none: resolution = Self.scan(dependencies)
        }
        if case .value(let value) = resolution {
            // The upstream replaced is released after the lock (it stays a dependency).
            let replaced = lock.withCriticalSection { exchange(&source, with: .value(value)) }
            withExtendedLifetime(replaced) {}
        }
        return resolution
    }

    /// The classic scan: the first dependency providing an `Input` wins; failing that, the
    /// first package result operation of the right type that failed or was cancelled.
    private static func scan(_ dependencies: [Operation]) -> ChainedInput<Input> {
        var firstUnavailable: UpstreamFailedError?
        for dependency in dependencies {
            if let provider = dependency as? any ChainedInputProviding {
                switch provider.chainedInput(as: Input.self) {
                case .value(let value): return .value(value)
                case .unavailable(let error): firstUnavailable = firstUnavailable ?? error
                case .notProvided: continue
                }
            } else if let provider = dependency as? any ChainedOperationOutputProviding,
                let value = provider.output as? Input
            {
                return .value(value)
            }
        }
        return firstUnavailable.map(ChainedInput.unavailable) ?? .notProvided
    }
}
