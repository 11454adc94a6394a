import Foundation
import OperationBridge
import Testing

/// `TaskOperation` and `ChainedTaskOperation` store their closure apart from which of its forms
/// it has (throwing, not throwing, reporting progress), reinterpreted as one function type
/// (`ErasedClosure`, Design.md "Memory per operation"). These tests pin that every form comes back
/// as itself: it runs with its own calling convention — a typed failure and a non-trivial success
/// value come through intact — and the closure's captures are released with the operation, not
/// before (a release too many would crash the AddressSanitizer run). Closures capturing nothing
/// have no context at all (`nil`), and are stored the same way. CI also runs this suite in an
/// optimized build, where the reinterpretation is inlined.
@Suite(.timeLimit(Stress.timeLimit(minutes: 1)))
struct TaskBodyFormsTests {
    /// A typed failure with a payload, so that a closure called with the wrong convention could
    /// not hand it over intact.
    struct Refusal: Error, Equatable {
        let reason: String
    }

    /// Runs `make`'s operation on a queue, checks what it answers, and that what its closure
    /// captured (`probe`) is released once the operation is.
    private func check<Success: Sendable & Equatable, Failure: Error & Equatable>(
        _ expected: Result<Success, Failure>,
        _ make: (ReleaseProbe) -> AsyncResultOperation<Success, Failure>
    ) async {
        let released = Trigger()
        var operation: AsyncResultOperation<Success, Failure>? = make(ReleaseProbe { released.fire() })
        let queue = OperationQueue()
        queue.addOperation(operation!)
        try? await operation!.bridge.waitForCompletion()
        #expect(operation!.result == expected)
        #expect(!released.hasFired, "the operation still holds its closure")
        // The task that ran the closure may hold the operation a moment longer: waited for, not
        // read at once. Released twice, the probe would crash (the sanitizer runs see it).
        operation = nil
        #expect(await released.wait(), "releasing the operation releases its closure's captures")
    }

    @Test("TaskOperation: each form runs as itself, and releases its captures with the operation")
    func taskOperationForms() async {
        await check(.success("thrown? no")) { probe in
            TaskOperation { () async throws(Refusal) -> String in
                withExtendedLifetime(probe) { "thrown? no" }
            }
        }
        await check(.failure(Refusal(reason: "typed"))) { probe in
            TaskOperation { () async throws(Refusal) -> String in
                withExtendedLifetime(probe) {}
                throw Refusal(reason: "typed")
            }
        }
        await check(Result<String, Never>.success("never fails")) { probe in
            TaskOperation { () async -> String in withExtendedLifetime(probe) { "never fails" } }
        }
        await check(.failure(Refusal(reason: "reported"))) { probe in
            TaskOperation(totalUnitCount: 2) { (progress) async throws(Refusal) -> String in
                withExtendedLifetime(probe) {}
                progress.advance()
                throw Refusal(reason: "reported")
            }
        }
        await check(Result<String, Never>.success("2 of 2")) { probe in
            TaskOperation(totalUnitCount: 2) { (progress) async -> String in
                withExtendedLifetime(probe) {}
                progress.advance(by: 2)
                return "\(progress.completedUnitCount) of \(progress.totalUnitCount)"
            }
        }
    }

    @Test("ChainedTaskOperation: each form runs on its input as itself, and releases its captures with the operation")
    func chainedTaskOperationForms() async {
        await check(.success("input 3")) { probe in
            ChainedTaskOperation(input: 3) { (input: Int) async throws(Refusal) -> String in
                withExtendedLifetime(probe) { "input \(input)" }
            }
        }
        await check(.failure(Refusal(reason: "input 4"))) { probe in
            ChainedTaskOperation(input: 4) { (input: Int) async throws(Refusal) -> String in
                withExtendedLifetime(probe) {}
                throw Refusal(reason: "input \(input)")
            }
        }
        await check(Result<String, Never>.success("input 5")) { probe in
            ChainedTaskOperation(input: 5) { (input: Int) async -> String in
                withExtendedLifetime(probe) { "input \(input)" }
            }
        }
        await check(.failure(Refusal(reason: "upstream 6"))) { probe in
            let upstream = TaskOperation { () async -> Int in 6 }
            upstream.start()
            return upstream.bridge.then(totalUnitCount: 1) { (input: Int, progress) async throws(Refusal) -> String in
                withExtendedLifetime(probe) {}
                progress.advance()
                throw Refusal(reason: "upstream \(input)")
            }
        }
        await check(Result<String, Never>.success("upstream 7, 1 of 1")) { probe in
            let upstream = TaskOperation { () async -> Int in 7 }
            upstream.start()
            return upstream.bridge.then(totalUnitCount: 1) { (input: Int, progress) async -> String in
                withExtendedLifetime(probe) {}
                progress.advance()
                return "upstream \(input), \(progress.completedUnitCount) of \(progress.totalUnitCount)"
            }
        }
    }

    @Test("Closures capturing nothing (no context) run as themselves, in every form")
    func closuresCapturingNothing() async throws {
        let queue = OperationQueue()
        let results = try await [
            queue.runForOutcomeValue(TaskOperation { () async throws(Refusal) -> String in "typed" }),
            queue.run(TaskOperation { () async -> String in "never fails" }) ?? "nil",
            queue.run(TaskOperation(totalUnitCount: 1) { (progress) async -> String in "reported" }) ?? "nil",
            queue.runForOutcomeValue(
                ChainedTaskOperation(input: 2) { (input: Int) async throws(Refusal) -> String in
                    "input \(input)"
                }),
            queue.run(ChainedTaskOperation(input: 3) { (input: Int) async -> String in "input \(input)" }) ?? "nil",
        ]
        #expect(results == ["typed", "never fails", "reported", "input 2", "input 3"])
        await #expect(throws: OperationFailure<Refusal>.self) {
            try await queue.runForOutcomeValue(
                TaskOperation { () async throws(Refusal) -> Int in
                    throw Refusal(reason: "none captured")
                })
        }
    }

    @Test("A reporting operation's progress is the one its closure reports on, wherever it is read")
    func reportingOperationsKeepTheirProgress() async throws {
        let queue = OperationQueue()
        let reported = Recorder<ObjectIdentifier>()
        let operation = TaskOperation(totalUnitCount: 3) { (progress) async -> Int in
            reported.append(ObjectIdentifier(progress))
            progress.advance(by: 3)
            return 3
        }
        let before = operation.bridge.operationProgress
        queue.addOperation(operation)
        try await operation.bridge.waitForCompletion()
        #expect(reported.all == [ObjectIdentifier(before)])
        #expect(operation.bridge.operationProgress === before)
        #expect(operation.bridge.operationProgress.isFinished)
        #expect(operation.progress.completedUnitCount == operation.progress.totalUnitCount)
    }
}
