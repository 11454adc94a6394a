import Foundation
import OperationBridge
import Testing

/// The rows of the documentation's misuse table (Misuse.md) that no other suite shows.
@Suite struct MisuseTests {
    final class CountingOperation: AsyncResultOperation<Int, CancellationError>, @unchecked Sendable {
        let mainCalls = Recorder<Int>()
        override func main() {
            mainCalls.append(1)
            finish(with: .success(mainCalls.all.count))
        }
    }

    @Test func startingTwiceIsIgnored() {
        let operation = CountingOperation()
        operation.start()
        operation.start()
        #expect(operation.mainCalls.all.count == 1)
        #expect(operation.result.map { try? $0.get() } == 1)
    }

    @Test func finishingTwiceKeepsTheFirstResult() {
        let operation = ControlledOperation<Int, CancellationError>(.success(1), gate: Gate())
        operation.start()
        operation.finish(with: .success(2))
        operation.finish(with: .success(3))
        operation.finish()  // has a result: allowed, ignored
        #expect(operation.result.map { try? $0.get() } == 2)
        #expect(operation.isFinished)
    }

    @Test func runOnAnOperationThatAlreadyFinishedOnlyAwaitsIt() async throws {
        let queue = OperationQueue()
        let operation = CountingOperation()
        operation.start()
        #expect(try await queue.run(operation) == 1)
        #expect(operation.mainCalls.all.count == 1)
    }

    #if EXIT_TESTS
        @Test func addingAnOperationToTwoQueuesTraps() async {
            await #expect(processExitsWith: .failure) {
                let first = OperationQueue()
                first.isSuspended = true
                let second = OperationQueue()
                let operation = BlockOperation {}
                first.addOperation(operation)
                second.addOperation(operation)  // Foundation: "already in a queue cannot be enqueued"
            }
        }
    #endif

    @Test("run on an operation you already added to the queue awaits it; it is not added twice")
    func runOnAnOperationPendingInTheQueueAwaitsIt() async throws {
        let queue = OperationQueue()
        queue.isSuspended = true
        let operation = CountingOperation()
        queue.addOperation(operation)  // your own addOperation: the queue asks whether it is ready
        let answer = Task { try await queue.run(operation) }
        queue.isSuspended = false
        #expect(try await answer.value == 1)
        #expect(operation.mainCalls.all.count == 1)
    }

    @Test("run on another queue than the one the package added the operation to awaits it there")
    func runOnAnotherQueueAwaitsItWhereItIs() async throws {
        let home = OperationQueue()
        home.isSuspended = true
        let elsewhere = OperationQueue()
        let operation = home.addTask { () async throws(CancellationError) -> Int in 7 }
        let answer = Task { try await elsewhere.run(operation) }
        home.isSuspended = false
        #expect(try await answer.value == 7)
    }

    @Test func cancellingInAStormNeverTrapsAndEndsOnce() async {
        let queue = OperationQueue()
        let operations = (0..<200).map { _ in CountingOperation() }
        for operation in operations { queue.addOperation(operation) }
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    for operation in operations { operation.cancel() }
                    queue.cancelAllOperations()
                }
            }
        }
        try? await queue.waitForAllOperations()
        for operation in operations {
            #expect(operation.isFinished)
            #expect(operation.result != nil)
            #expect(operation.mainCalls.all.count <= 1)
        }
    }

    /// Overrides `isReady` without calling `super`, as some classic code does to hold an
    /// operation back: the package can no longer see that a queue asked.
    final class OwnReadiness: AsyncResultOperation<Int, CancellationError>, @unchecked Sendable {
        override var isReady: Bool { true }
        override func main() { finish(with: .success(1)) }
    }

    #if EXIT_TESTS
        @Test("run on an operation whose isReady override hides that you queued it: Foundation traps")
        func isReadyWithoutSuperHidesYourOwnQueueing() async {
            await #expect(processExitsWith: .failure) {
                let queue = OperationQueue()
                queue.isSuspended = true
                let operation = OwnReadiness()
                queue.addOperation(operation)
                _ = try? await queue.run(operation)  // added a second time: Foundation traps
            }
        }

        /// `takeInput(from:)` once the operation has started traps with its name; it used to be
        /// ignored, and the step then failed with its own missing-input error.
        @Test("takeInput(from:) after the operation started traps")
        func takeInputAfterTheStartTraps() async throws {
            await #expect(processExitsWith: .failure) {
                let step = LateInputStep()
                step.name = "late"
                step.start()
                step.takeInput(from: TaskOperation { 1 })
            }
            // Before the start it is fine, twice too: the later upstream provides the input (the
            // earlier one stays a dependency).
            let earlier = TaskOperation { 1 }
            let later = TaskOperation { 2 }
            let step = LateInputStep()
            step.takeInput(from: earlier)
            step.takeInput(from: later)
            let queue = OperationQueue()
            queue.addOperation(earlier)
            queue.addOperation(later)
            #expect(try await queue.run(step) == 3)
        }
    #endif
}

/// A classic chained step that adds 1 to its input.
private final class LateInputStep: ChainedAsyncResultOperation<Int, Int, any Error>, @unchecked Sendable {
    override func main() { finish(with: .success((input ?? -10) + 1)) }
}
