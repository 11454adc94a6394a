// Leaving a results loop in top-level code: Swift never destroys the loop's iterator here, so
// leaving the loop cancels nothing by itself — the sequences' `cancel()` does, and so does the
// same loop inside a function. This program checks all three for `results(of:)`, `values(of:)`
// and `Pipeline.finishedSteps`, deterministically (no timing), and exits with status 1
// when any check fails. CI runs it: `swift run --package-path Tests/Clients TopLevelLoops`.
import Foundation
import OperationBridge

var failures = 0
@MainActor func check(_ condition: Bool, _ what: String) {
    print(condition ? "ok   \(what)" : "FAIL \(what)")
    if !condition { failures += 1 }
    fflush(nil)
}

/// Five operations for a serial queue: the first finishes at once; the others wait for an
/// operation that is never started, so they end only when cancelled (`waitForCompletion()` throws
/// then).
func makeOperations() -> [TaskOperation<Int, CancellationError>] {
    let never = BlockOperation {}
    return (0..<5).map { index in
        TaskOperation { () async throws(CancellationError) -> Int in
            if index > 0 { try await never.bridge.waitForCompletion() }
            return index
        }
    }
}

func serialQueue() -> OperationQueue {
    let queue = OperationQueue()
    queue.maxConcurrentOperationCount = 1
    return queue
}

// 1. results(of:) in top-level code: leaving the loop cancels nothing; cancel() does.
do {
    let operations = makeOperations()
    let results = try serialQueue().results(of: operations, order: .submission)
    for await _ in results { break }
    check(
        operations.dropFirst().allSatisfy { !$0.isCancelled }, "results(of:): leaving a top-level loop cancels nothing")
    results.cancel()
    check(operations.dropFirst().allSatisfy(\.isCancelled), "results(of:): cancel() cancels the rest")
    try await operations.waitForCompletion()
}

// 2. values(of:) in top-level code.
do {
    let operations = makeOperations()
    let values = try serialQueue().values(of: operations, order: .submission)
    for try await _ in values { break }
    check(
        operations.dropFirst().allSatisfy { !$0.isCancelled }, "values(of:): leaving a top-level loop cancels nothing")
    values.cancel()
    check(operations.dropFirst().allSatisfy(\.isCancelled), "values(of:): cancel() cancels the rest")
    try await operations.waitForCompletion()
}

// 3. Pipeline.finishedSteps in top-level code.
do {
    let operations = makeOperations()
    let pipeline = try Pipeline(operations, on: serialQueue())
    let steps = pipeline.finishedSteps
    for await _ in steps { break }
    check(
        operations.dropFirst().allSatisfy { !$0.isCancelled }, "finishedSteps: leaving a top-level loop cancels nothing"
    )
    steps.cancel()
    check(operations.dropFirst().allSatisfy(\.isCancelled), "finishedSteps: cancel() cancels the rest")
    try await pipeline.waitForCompletion()
}

// 4. The same loops inside a function: leaving them cancels the rest, without cancel().
func firstResult(of operations: [TaskOperation<Int, CancellationError>]) async throws -> Int? {
    for await element in try serialQueue().results(of: operations, order: .submission) {
        return try element.result?.get()
    }
    return nil
}
func firstValue(of operations: [TaskOperation<Int, CancellationError>]) async throws -> Int? {
    for try await element in try serialQueue().values(of: operations, order: .submission) {
        return element.value
    }
    return nil
}
func firstStep(of operations: [TaskOperation<Int, CancellationError>]) async throws -> Int? {
    for await step in try Pipeline(operations, on: serialQueue()).finishedSteps {
        return step.index
    }
    return nil
}
for (name, first) in [
    ("results(of:)", firstResult), ("values(of:)", firstValue), ("finishedSteps", firstStep),
] as [(String, ([TaskOperation<Int, CancellationError>]) async throws -> Int?)] {
    let operations = makeOperations()
    let answer = try await first(operations)
    check(answer == 0, "\(name) in a function: first element delivered")
    try await operations.waitForCompletion()
    check(operations.dropFirst().allSatisfy(\.isCancelled), "\(name) in a function: leaving the loop cancels the rest")
}

print(failures == 0 ? "all checks passed" : "\(failures) check(s) failed")
exit(failures == 0 ? 0 : 1)
