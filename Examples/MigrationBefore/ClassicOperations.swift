// The base classes as many codebases hand-copied them from the classic operation articles,
// changed only where Swift 6 insists (`@unchecked Sendable` on every `Operation` subclass,
// `any Error`). Migration.md, step 1, deletes this file in favour of `import OperationBridge`.
import Foundation

// Before
/// An `Operation` whose work ends when `finish()` is called, not when `main()` returns.
class AsyncOperation: Operation, @unchecked Sendable {
    private let lockQueue = DispatchQueue(label: "com.example.asyncoperation", attributes: .concurrent)

    override var isAsynchronous: Bool {
        true
    }

    private var _isExecuting: Bool = false
    override private(set) var isExecuting: Bool {
        get {
            lockQueue.sync { () -> Bool in
                _isExecuting
            }
        }
        set {
            willChangeValue(forKey: "isExecuting")
            lockQueue.sync(flags: [.barrier]) {
                _isExecuting = newValue
            }
            didChangeValue(forKey: "isExecuting")
        }
    }

    private var _isFinished: Bool = false
    override private(set) var isFinished: Bool {
        get {
            lockQueue.sync { () -> Bool in
                _isFinished
            }
        }
        set {
            willChangeValue(forKey: "isFinished")
            lockQueue.sync(flags: [.barrier]) {
                _isFinished = newValue
            }
            didChangeValue(forKey: "isFinished")
        }
    }

    override func start() {
        guard !isCancelled else {
            finish()
            return
        }

        isFinished = false
        isExecuting = true
        main()
    }

    override func main() {
        fatalError("Subclasses must implement `main` without overriding super.")
    }

    func finish() {
        isExecuting = false
        isFinished = true
    }
}

// Before
/// An ``AsyncOperation`` that ends with a `Result`.
class AsyncResultOperation<Success, Failure: Error>: AsyncOperation, @unchecked Sendable {
    private(set) var result: Result<Success, Failure>? {
        didSet {
            guard let result else { return }
            onResult?(result)
        }
    }

    var onResult: ((_ result: Result<Success, Failure>) -> Void)?

    final override func finish() {
        guard !isCancelled else { return super.finish() }
        fatalError("Make use of finish(with:) instead to ensure a result")
    }

    func finish(with result: Result<Success, Failure>) {
        self.result = result
        super.finish()
    }

    override func cancel() {
        fatalError("Make use of cancel(with:) instead to ensure a result")
    }

    func cancel(with error: Failure) {
        self.result = .failure(error)
        super.cancel()
    }
}

// Before
/// An operation whose output a ``ChainedAsyncResultOperation`` can take as its input.
protocol ChainedOperationOutputProviding {
    var output: Any? { get }
}

extension AsyncResultOperation: ChainedOperationOutputProviding {
    var output: Any? {
        try? result?.get()
    }
}

/// A result operation that takes its input from the first dependency providing one.
class ChainedAsyncResultOperation<Input, Output, Failure: Error>: AsyncResultOperation<Output, Failure>,
    @unchecked Sendable
{
    private(set) var input: Input?

    init(input: Input? = nil) {
        self.input = input
    }

    override func start() {
        if input == nil {
            updateInputFromDependencies()
        }
        super.start()
    }

    private func updateInputFromDependencies() {
        guard input == nil else { return }
        input =
            dependencies.compactMap { dependency in
                dependency as? any ChainedOperationOutputProviding
            }.first?.output as? Input
    }
}
