import Foundation
import OperationBridge
import Testing

/// Priority: awaiting an operation from a task raises the operation's quality of service to the
/// task's priority, never lowers it. The mapping between `QualityOfService` and `TaskPriority`
/// is a `switch`/comparison, never raw values (they differ between Linux and Apple platforms).
@Suite(.timeLimit(Stress.timeLimit(minutes: 1)))
struct PriorityTests {
    @Test(
        "TaskPriority from QualityOfService",
        arguments: [
            (QualityOfService.userInteractive, TaskPriority.high),
            (.userInitiated, .high),
            (.default, .medium),
            (.utility, .utility),
            (.background, .background),
        ]
    )
    func taskPriorityFromQualityOfService(qualityOfService: QualityOfService, expected: TaskPriority) {
        #expect(TaskPriority(qualityOfService) == expected)
    }

    @Test(
        "QualityOfService from TaskPriority, including priorities between the named ones",
        arguments: [
            (TaskPriority(rawValue: TaskPriority.high.rawValue + 8), QualityOfService.userInitiated),
            (.high, .userInitiated),
            (.userInitiated, .userInitiated),
            (TaskPriority(rawValue: TaskPriority.high.rawValue - 1), .default),
            (.medium, .default),
            (TaskPriority(rawValue: TaskPriority.medium.rawValue - 1), .utility),
            (.low, .utility),
            (.utility, .utility),
            (TaskPriority(rawValue: TaskPriority.low.rawValue - 1), .background),
            (.background, .background),
            (TaskPriority(rawValue: 0), .background),
        ]
    )
    func qualityOfServiceFromTaskPriority(priority: TaskPriority, expected: QualityOfService) {
        #expect(QualityOfService(priority) == expected)
    }

    @Test(
        "The mapping round-trips for every named priority and quality of service",
        arguments: [TaskPriority.high, .medium, .low, .background]
    )
    func roundTrip(priority: TaskPriority) {
        #expect(TaskPriority(QualityOfService(priority)) == priority)
    }

    struct RaiseCase: Sendable, CustomTestStringConvertible {
        let operation: QualityOfService
        let task: TaskPriority
        let expected: QualityOfService
        var testDescription: String { "\(operation.name) awaited at \(task) → \(expected.name)" }
    }

    @Test(
        "Awaiting raises the operation's quality of service to the task's priority, never lowers it",
        arguments: [
            RaiseCase(operation: .utility, task: .high, expected: .userInitiated),
            RaiseCase(operation: .background, task: .medium, expected: .default),
            RaiseCase(operation: .background, task: .low, expected: .utility),
            RaiseCase(operation: .utility, task: .low, expected: .utility),
            RaiseCase(operation: .default, task: .background, expected: .default),
            RaiseCase(operation: .userInitiated, task: .medium, expected: .userInitiated),
            RaiseCase(operation: .userInteractive, task: .high, expected: .userInteractive),
        ]
    )
    func awaitingRaisesQualityOfService(raise: RaiseCase) async {
        let operation = ManualResultOperation<Int, TransferError>()
        operation.qualityOfService = raise.operation
        let answered = OneShotSignal()
        // The test waits on a signal, not on the task's value, so that the awaiting task's
        // priority is not escalated to the test's own.
        let awaiter = Task(priority: raise.task) {
            let outcome = await operation.bridge.outcome
            answered.fire()
            return outcome
        }
        operation.start()
        await operation.started.wait()
        operation.finish(with: .success(1))

        #expect(await answered.wait())
        #expect(await awaiter.value == .success(1))
        #expect(operation.qualityOfService == raise.expected)
    }

    enum Entry: String, CaseIterable, Sendable {
        case waitForCompletion
        case runUntilFinished
    }

    @Test("A foreign operation's quality of service is raised too", arguments: Entry.allCases)
    func foreignOperationIsRaised(entry: Entry) async {
        let queue = OperationQueue()
        let hold = Hold()
        let block = hold.hold(BlockOperation {})
        block.qualityOfService = .utility
        let answered = OneShotSignal()
        // Your own `addOperation(_:)` comes before the release: added while its dependency
        // finishes on another thread, a `BlockOperation` can be forgotten by Linux's queue
        // (Design.md, "Platform facts"). The package's `runUntilFinished` may race it.
        if entry == .waitForCompletion { queue.addOperation(block) }
        let awaiter = Task(priority: .high) {
            switch entry {
            case .waitForCompletion:
                try? await block.bridge.waitForCompletion()
            case .runUntilFinished:
                try? await queue.runUntilFinished(block)
            }
            answered.fire()
        }
        hold.release()

        #expect(await answered.wait())
        await awaiter.value
        #expect(block.qualityOfService == .userInitiated)
    }
}

extension QualityOfService {
    fileprivate var name: String {
        switch self {
        case .userInteractive: "userInteractive"
        case .userInitiated: "userInitiated"
        case .default: "default"
        case .utility: "utility"
        case .background: "background"
        @unknown default: "unknown"
        }
    }
}
