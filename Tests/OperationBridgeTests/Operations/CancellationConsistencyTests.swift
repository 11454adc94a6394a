import Foundation
import OperationBridge
import Testing

/// When `cancel()` races `finish(with:)` on a running operation, the result and `isCancelled`
/// must tell the same story: either the cancellation won (cancellation failure, cancelled) or
/// the completion won (its result, not cancelled).
@Suite struct CancellationConsistencyTests {
    final class Running: AsyncResultOperation<Int, CancellationError>, @unchecked Sendable {
        override func main() {}  // the test finishes it
    }

    @Test func resultAndIsCancelledAgreeWhenCancelRacesFinish() async {
        let iterations = Stress.iterations(5_000)
        var cancelWon = 0
        var finishWon = 0
        for _ in 0..<iterations {
            let operation = Running()
            operation.start()
            await withTaskGroup(of: Void.self) { group in
                group.addTask { operation.cancel() }
                group.addTask { operation.finish(with: .success(1)) }
            }
            // The finish may have lost: the work then still has to end the operation.
            if !operation.isFinished { operation.finish() }
            switch operation.result {
            case .success?:
                #expect(!operation.isCancelled)
                finishWon += 1
            case .failure?:
                #expect(operation.isCancelled)
                cancelWon += 1
            case nil:
                Issue.record("no result")
            }
            #expect(operation.isFinished)
        }
        print("CancellationConsistencyTests: cancel won \(cancelWon), finish won \(finishWon) of \(iterations)")
        #expect(cancelWon + finishWon == iterations)
    }

    @Test func cancelAfterFinishChangesNothing() {
        let operation = Running()
        operation.start()
        operation.finish(with: .success(3))
        operation.cancel()
        operation.cancel(with: CancellationError())
        #expect(!operation.isCancelled)
        #expect(operation.result.map { try? $0.get() } == 3)
    }
}
