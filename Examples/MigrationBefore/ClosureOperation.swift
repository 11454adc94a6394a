// A closure-style operation, the kind many codebases grew next to the base classes: the work is
// a closure with a completion handler, the input comes from a provider closure, and callers
// hook in with `onStart` and `whenFinished`. Migration.md, step 3, replaces it.
import Foundation

/// The error of a ``ClosureOperation`` whose input provider returned `nil`.
struct MissingInputError: Error {}

// Before
/// Runs `work` on the value its input provider returns, reporting progress through callbacks.
final class ClosureOperation<Input, Output>: AsyncResultOperation<Output, any Error>, @unchecked Sendable {
    typealias Work = (_ input: Input, _ completion: @escaping @Sendable (Result<Output, any Error>) -> Void) -> Void

    var onStart: (() -> Void)?
    var whenFinished: ((Result<Output, any Error>) -> Void)?
    private var inputProvider: (() -> Input?)?
    private let work: Work

    init(work: @escaping Work) {
        self.work = work
    }

    func setInputProvider(_ provider: @escaping () -> Input?) {
        inputProvider = provider
    }

    override func main() {
        onStart?()
        guard let input = inputProvider?() else {
            return complete(.failure(MissingInputError()))
        }
        work(input) { [self] result in
            complete(result)
        }
    }

    private func complete(_ result: Result<Output, any Error>) {
        whenFinished?(result)
        finish(with: result)
    }
}
