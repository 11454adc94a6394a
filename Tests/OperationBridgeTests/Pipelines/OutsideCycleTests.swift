import Foundation
import OperationBridge
import Testing

/// A dependency cycle that passes through an operation outside the set could never finish:
/// pipelines and results sequences report it before anything runs, instead of hanging.
@Suite(.timeLimit(Stress.timeLimit(minutes: 1)))
struct OutsideCycleTests {
    @Test("A cycle through an operation outside the pipeline is a dependencyCycle error")
    func cycleThroughAnOutsideOperation() throws {
        let step = GatedResultOperation<Int, StepError>(.success(1))
        let outside = BlockOperation {}
        step.addDependency(outside)
        outside.addDependency(step)  // step → outside → step
        #expect {
            try Pipeline([step], on: OperationQueue())
        } throws: { error in
            guard case PipelineError.dependencyCycle(let operations) = error else { return false }
            return operations.contains { $0 === step } && operations.contains { $0 === outside }
        }
        #expect(throws: PipelineError.self) { try OperationQueue().results(of: [step]) }
        // Break the cycle: Foundation keeps unretained pointers between them.
        outside.removeDependency(step)
        step.removeDependency(outside)
    }

    @Test("A longer cycle through several outside operations and back into the set")
    func longCycleBackIntoTheSet() throws {
        let first = GatedResultOperation<Int, StepError>(.success(1))
        let second = GatedResultOperation<Int, StepError>(.success(2))
        second.addDependency(first)
        let x = BlockOperation {}
        let y = BlockOperation {}
        first.addDependency(x)
        x.addDependency(y)
        y.addDependency(second)  // first → x → y → second → first
        #expect(throws: PipelineError.self) { try Pipeline([first, second], on: OperationQueue()) }
        y.removeDependency(second)
        x.removeDependency(y)
        first.removeDependency(x)
    }

    @Test("Outside dependencies without a cycle, finished ones and cancelled ones are accepted")
    func noCycleIsAccepted() async throws {
        let queue = OperationQueue()
        let outside = BlockOperation {}
        let finished = BlockOperation {}
        finished.start()
        let cancelledCycle = BlockOperation {}
        let step = GatedResultOperation<Int, StepError>(.success(1))
        step.addDependency(outside)
        step.addDependency(finished)
        // A cancelled operation waits for nothing: a "cycle" through it is not one.
        cancelledCycle.addDependency(step)
        step.addDependency(cancelledCycle)
        cancelledCycle.cancel()
        let pipeline = try Pipeline([step], on: queue)
        queue.addOperation(outside)
        queue.addOperation(cancelledCycle)
        #expect(try await pipeline.value(of: step) == 1)
    }
}
