import Foundation
import OperationBridge
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// An operation keeps its admitted queue, the task running its work and its rarely used state in
/// one word, and a result operation its result and `onResult` callback in one slot (Design.md,
/// "Memory per operation"). These tests pin what that must not change: cancellation reaches the
/// task wherever it is kept, the queue stays known until the work starts, and a callback set
/// after the result is neither called nor kept.
@Suite(.timeLimit(Stress.timeLimit(minutes: 1)))
struct OperationHoldingsTests {
    /// When the operation gets its rarely used state (here: its progress is asked for).
    enum RareStateMoment: String, CaseIterable, CustomTestStringConvertible {
        case never
        case whilePendingInItsQueue
        /// After `start()` has returned: the task is stored by then, and moves into the state.
        case whileItsTaskRuns

        var testDescription: String { rawValue }
    }

    @Test("Cancelling reaches the running task, wherever the operation keeps it", arguments: RareStateMoment.allCases)
    func cancellingReachesTheTask(moment: RareStateMoment) async {
        let entered = Trigger()
        let seen = Recorder<Bool>()
        let work = { @Sendable () async -> Bool in
            entered.fire()
            await suspendUntilCancelled()
            seen.append(Task.isCancelled)
            return Task.isCancelled
        }
        let operation: TaskOperation<Bool, Never>
        if moment == .whileItsTaskRuns {
            operation = TaskOperation(work)
            // Returns with the task stored; the work may not have begun (where the work does not
            // start on this thread), and the test waits for it below before it cancels.
            operation.start()
            _ = operation.progress
        } else {
            let queue = OperationQueue()
            queue.name = "holdings"
            queue.isSuspended = true
            operation = queue.addTask(work)
            if moment == .whilePendingInItsQueue { _ = operation.progress }
            // Pending, the package still knows its queue — also once it has rare state.
            #expect(operation.bridge.pendingDiagnostics.contains("queue: 'holdings', SUSPENDED"))
            queue.isSuspended = false
        }
        #expect(await entered.wait())
        operation.cancel()
        // `Never` cannot express cancellation: the operation ends without a result.
        #expect(await operation.bridge.outcome == nil)
        #expect(seen.all == [true])
        #expect(operation.isCancelled)
        #expect(operation.progress.isCancelled)
    }

    @Test("A time limit set while pending still cancels the task that runs later")
    func aTimeLimitSetWhilePendingCancelsTheTask() async {
        let queue = OperationQueue()
        queue.isSuspended = true
        let clock = TestClock()
        let entered = Trigger()
        let seen = Recorder<Bool>()
        let operation = queue.addTask { () async throws -> Int in
            entered.fire()
            await suspendUntilCancelled()
            seen.append(Task.isCancelled)
            throw CancellationError()
        }
        operation.bridge.limitRunningTime(to: .seconds(5), clock: clock)
        queue.isSuspended = false
        #expect(await entered.wait())
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(5))
        try? await operation.bridge.waitForCompletion()
        #expect(operation.bridge.isTimedOut)
        #expect(seen.all == [true])
    }

    @Test("onResult set after the result is stored is never called, and released at once outside the lock")
    func onResultSetAfterTheResultIsNeitherCalledNorKept() async throws {
        let operation = ControlledOperation<Int, CancellationError>(.success(5))
        operation.start()
        #expect(try await operation.bridge.value == 5)
        let called = Recorder<Int>()
        let released = Trigger()
        do {
            // Cancelling from the deinit would trap if the callback were released under the lock.
            let probe = ReleaseProbe(callingBack: { operation.cancel() }, then: released)
            operation.onResult = { result in
                withExtendedLifetime(probe) {}
                called.append((try? result.get()) ?? -1)
            }
        }
        #expect(released.hasFired)
        #expect(operation.onResult == nil)
        #expect(called.all.isEmpty)
        #expect(operation.result.map { try? $0.get() } == 5)
    }

    @Test func onResultReadsBackUntilItIsCalled() async throws {
        let operation = ControlledOperation<Int, CancellationError>(.success(7))
        let called = Recorder<Int>()
        operation.onResult = { result in called.append((try? result.get()) ?? -1) }
        #expect(operation.onResult != nil)
        operation.onResult?(.success(1))  // the callback itself, as set
        #expect(called.all == [1])
        operation.start()
        #expect(try await operation.bridge.value == 7)
        #expect(called.all == [1, 7])
        #expect(operation.onResult == nil, "the operation lets go of the callback when it calls it")
    }

    #if canImport(Glibc)
        /// A result operation with an `Int` of its own, as most classic subclasses have.
        final class OneFieldOperation: AsyncResultOperation<Int, CancellationError>, @unchecked Sendable {
            let value: Int
            init(_ value: Int) { self.value = value }
            override func main() { finish(with: .success(value)) }
        }

        /// A chained result operation without fields of its own, given its input.
        final class DoublingOperation: ChainedAsyncResultOperation<Int, Int, CancellationError>, @unchecked Sendable {
            override func main() { finish(with: .success((input ?? 0) * 2)) }
        }

        /// The usable bytes of the chunk glibc allocates for objects made by `make`: the object's
        /// instance size (the `InstanceSize` field of the runtime's class metadata, at byte 24
        /// without Objective-C interoperability) plus glibc's 8-byte header, rounded up to its
        /// 16-byte steps, less the header. Computed, not asked of the allocator: under a full
        /// parallel test run `malloc_usable_size` sometimes reports a larger free chunk glibc
        /// reused whole (all 64 objects of one probe were given 256-byte chunks for a 240-byte
        /// size class in one CI run).
        private func allocatedBytes(_ make: () -> AnyObject) -> Int {
            let object = make()
            let metadata = unsafeBitCast(type(of: object), to: UnsafeRawPointer.self)
            let instanceSize = Int(metadata.load(fromByteOffset: 24, as: UInt32.self))
            return ((instanceSize + 8 + 15) & ~15) - 8
        }

        @Test("Operations stay within their allocation size classes (Design.md, \"Memory per operation\")")
        func operationsStayWithinTheirSizeClasses() {
            // Relative to `BlockOperation`, whose size is Foundation's `Operation` plus two words:
            // glibc allocates in 16-byte steps, so each bound is a number of steps above it.
            let block = allocatedBytes { BlockOperation {} }
            #expect(allocatedBytes { AsyncOperation() } <= block)
            #expect(allocatedBytes { OneFieldOperation(1) } <= block + 32)
            #expect(allocatedBytes { DoublingOperation(input: 1) } <= block + 32)
            // A task operation stores its closure's form in padding after the result slot (or the
            // input), not in a tag byte after the closure (`ErasedClosure`).
            let captured = Int.random(in: 0..<10)
            #expect(allocatedBytes { TaskOperation { () async -> Int in captured } } <= block + 32)
            #expect(allocatedBytes { TaskOperation(totalUnitCount: 1) { _ async -> Int in captured } } <= block + 32)
            #expect(
                allocatedBytes { ChainedTaskOperation(input: 1) { (input: Int) async -> Int in input * 2 } }
                    <= block + 48)
        }
    #endif
}
