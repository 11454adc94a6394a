import Foundation
import Testing

@testable import OperationBridge

/// The run-and-await calls add the operation they own to the queue once their wait is
/// registered, as a hand-written continuation does (Design.md, "Performance"): these tests pin
/// that order, and what it must not change — a task cancelled before the call still cancels the
/// operation before any queue can start it, no operation is lost, and no admission claim or
/// blocked slot is left behind.
@Suite(.timeLimit(Stress.timeLimit(minutes: 1)))
struct AdmissionOrderTests {
    /// Records, as each of the package's operations is added, how many waiters it has.
    final class RecordingQueue: OperationQueue, @unchecked Sendable {
        let waitersAtAdd = LockedBox<[Int]>([])

        override func addOperation(_ operation: Operation) {
            if let operation = operation as? AsyncOperation {
                let waiters = operation.installedWaiterCount
                waitersAtAdd.withLock { $0.append(waiters) }
            }
            super.addOperation(operation)
        }
    }

    /// Counts how often its work ran.
    final class CountingOperation: AsyncResultOperation<Int, TransferError>, @unchecked Sendable {
        let runs = LockedBox(0)
        override func main() {
            runs.withLock { $0 += 1 }
            finish(with: .success(1))
        }
    }

    @Test("run, runForOutcome and runForOutcomeValue register their wait before they add the operation")
    func waitRegisteredBeforeTheAdd() async throws {
        let queue = RecordingQueue()
        #expect(try await queue.run(CountingOperation()) == 1)
        #expect(await queue.runForOutcome(CountingOperation()) == .success(1))
        #expect(try await queue.runForOutcomeValue(CountingOperation()) == 1)
        #expect(await queue.run(TaskOperation { 2 }) == 2)
        #expect(queue.waitersAtAdd.current == [1, 1, 1, 1])
    }

    @Test("A task cancelled before run: the operation is added cancelled, never runs, and finishes")
    func cancelledTaskBeforeRun() async throws {
        let queue = OperationQueue()
        let operation = CountingOperation()
        let caller = Task {
            cancelCurrentTask()
            return await queue.runForOutcome(operation)
        }
        #expect(await caller.value == .failure(.cancelled))
        // Handed to the queue all the same, which finishes it without running it.
        try await operation.bridge.waitForCompletion()
        #expect(operation.isCancelled)
        #expect(operation.runs.current == 0)
    }

    @Test("A task cancelled before runUntilFinished: the BlockOperation never runs, finishes, and is not left claimed")
    func cancelledTaskBeforeRunUntilFinished() async throws {
        let queue = OperationQueue()
        let ran = LockedBox(false)
        let operation = BlockOperation { ran.withLock { $0 = true } }
        let caller = Task {
            cancelCurrentTask()
            try await queue.runUntilFinished(operation)
        }
        await #expect(throws: CancellationError.self) { try await caller.value }
        try await operation.bridge.waitForCompletion()
        #expect(operation.isCancelled)
        #expect(!ran.current)
        await waitUntil { !ForeignAdmissions.shared.isClaimed(operation) }
    }

    @Test("runUntilFinished of BlockOperations leaves no admission claim behind")
    func runUntilFinishedReleasesItsClaims() async throws {
        let queue = OperationQueue()
        for _ in 0..<200 {
            let operation = BlockOperation {}
            try await queue.runUntilFinished(operation)
            await waitUntil { !ForeignAdmissions.shared.isClaimed(operation) }
        }
    }

    /// An operation whose `isFinished` answers `false` until it has been asked `falseAnswers`
    /// times: it stands for one, pending in a queue the package cannot name, that finishes
    /// between the package's first look and its claim.
    final class FinishingWhileAdmitted: Operation, @unchecked Sendable {
        private let answers = LockedBox(0)
        private let falseAnswers: Int
        init(falseAnswers: Int) {
            self.falseAnswers = falseAnswers
            super.init()
        }
        override var isFinished: Bool {
            answers.withLock { asked in
                asked += 1
                return asked > falseAnswers
            }
        }
        override var isExecuting: Bool { false }
    }

    @Test("An operation that finishes while it is admitted is not left claimed")
    func claimOfAnOperationFinishedDuringAdmission() {
        // Asked once before the claim (not started), then found finished after it.
        let operation = FinishingWhileAdmitted(falseAnswers: 1)
        OperationQueue().admit(observed: operation)
        #expect(!ForeignAdmissions.shared.isClaimed(operation))
    }

    #if EXIT_TESTS
        /// An exit test, so that a regression fails instead of trapping the whole test process.
        @Test("A holder whose awaited operation has finished, but who has not left yet, is not counted")
        func finishedAwaitDoesNotCountAsBlocked() async {
            await #expect(processExitsWith: .success) {
                let queue = OperationQueue()
                queue.maxConcurrentOperationCount = 2
                let (firstSlot, secondSlot) = (heldSlot(of: queue), heldSlot(of: queue))
                let first = BlockOperation {}
                let firstHolder = QueueSlots.$held.withValue(firstSlot) {
                    QueueSlots.enter(awaiting: first, in: queue)
                }
                precondition(firstHolder != nil)
                // Its operation finishes; its task has not resumed to leave yet.
                first.start()
                // The other slot's work awaits work pending in the queue: two holders for two
                // slots, but the queue is moving. (Both unfinished, this traps: see below.)
                let secondHolder = QueueSlots.$held.withValue(secondSlot) {
                    QueueSlots.enter(awaiting: BlockOperation {}, in: queue)
                }
                precondition(secondHolder != nil)
                QueueSlots.leave(firstHolder)
                QueueSlots.leave(secondHolder)
            }
        }

        /// `run` awaits an operation pending in another queue where it is: no slot of the queue
        /// `run` was called on is waited for, so work holding that queue's only slot is not blocked.
        @Test("Work holding a width-1 queue's slot may run an operation the package queued elsewhere")
        func runOfAnOperationPendingElsewhereCountsThere() async {
            await #expect(processExitsWith: .success) {
                let serial = OperationQueue()
                serial.maxConcurrentOperationCount = 1
                let other = OperationQueue()
                other.maxConcurrentOperationCount = 1
                let gate = Gate()
                other.addTask { await gate.wait() }
                let elsewhere = other.addTask { () async -> Int in 5 }
                let outer = serial.addTask { () async -> Int in await serial.run(elsewhere) ?? -1 }
                // The outer work's wait is registered while `elsewhere` still waits for `other`.
                while elsewhere.installedWaiterCount == 0 { await Task.yield() }
                gate.open()
                let value = await outer.bridge.value
                precondition(value == 5, "got \(String(describing: value))")
            }
        }

        @Test("Two holders of a width-2 queue awaiting unfinished operations trap")
        func twoUnfinishedAwaitsTrap() async {
            await #expect(processExitsWith: .failure) {
                let queue = OperationQueue()
                queue.maxConcurrentOperationCount = 2
                for slot in [heldSlot(of: queue), heldSlot(of: queue)] {
                    _ = QueueSlots.$held.withValue(slot) { QueueSlots.enter(awaiting: BlockOperation {}, in: queue) }
                }
            }
        }

        @Test("One holder awaiting as many unfinished operations as the queue is wide is not a deadlock")
        func oneHolderManyAwaits() async {
            await #expect(processExitsWith: .success) {
                let queue = OperationQueue()
                queue.maxConcurrentOperationCount = 2
                QueueSlots.$held.withValue(heldSlot(of: queue)) {
                    let awaits = (0..<3).map { _ in QueueSlots.enter(awaiting: BlockOperation {}, in: queue) }
                    awaits.forEach(QueueSlots.leave)
                }
            }
        }
    #endif
}

/// A slot of `queue` held by a fresh operation's work, for the tests of `QueueSlots`. The holder
/// is kept alive for the process (exit tests end it), so that no later one reuses its identifier.
private func heldSlot(of queue: OperationQueue) -> QueueSlots.HeldSlot {
    let holder = BlockOperation {}
    HeldSlotHolders.keep(holder)
    return QueueSlots.HeldSlot(queue: ObjectIdentifier(queue), holder: ObjectIdentifier(holder))
}

/// Keeps the holders of ``heldSlot(of:)`` alive.
private enum HeldSlotHolders {
    private static let kept = LockedBox<[Operation]>([])
    static func keep(_ holder: Operation) { kept.withLock { $0.append(holder) } }
}

/// Suspends until `condition` holds, yielding in between: for state that settles right after an
/// await returns (a claim released by the finishing thread after it resumed the awaiter).
private func waitUntil(_ condition: () -> Bool) async {
    while !condition() { await Task.yield() }
}
