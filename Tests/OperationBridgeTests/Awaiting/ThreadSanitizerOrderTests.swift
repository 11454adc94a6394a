import Foundation
import Testing

@testable import OperationBridge

#if !canImport(Darwin)
    import Synchronization

    /// What a resumer writes before `resume` is ordered before what the awaiting task reads after
    /// the wait, as ThreadSanitizer sees it — also when the resume lands before the task reaches
    /// its suspension, where the Swift runtime records no order of its own (see
    /// `continuationResumed()`). CI61's ThreadSanitizer run reported two races of that kind once.
    ///
    /// Each test forces that path: the body of the wait does not return until the resumer has
    /// resumed, and learns so through a relaxed atomic, which orders nothing for the sanitizer.
    /// The state written is a plain stored property, as in the seed articles' subclasses. The
    /// tests check the value in every run; under `swift test --sanitize=thread` a missing order
    /// is a "data race" report, which fails the run (Linux only: the annotation is Linux's).
    ///
    /// Each test reads the written value first, before anything else runs that could take a
    /// lock the resumer also took. The first two pin the mechanism: without
    /// `continuationResumed()` after the wait, the sanitizer reports the read (checked by
    /// disabling it). The last two take the same path through the package's own waits; in the
    /// debug build something else on those paths already orders them (not identified: they
    /// pass with the annotation disabled too), so they pin that those waits stay race-free, not
    /// why.
    @Suite("ThreadSanitizer sees the order of a resume that lands before the task suspends")
    struct ThreadSanitizerOrderTests {
        @Test("A bare continuation, then continuationResumed(): the resumer's writes are ordered")
        func bareContinuation() async {
            let written = UnguardedBox()
            let resumed = RelaxedFlag()
            let value = await withUnsafeContinuation { (continuation: UnsafeContinuation<Int, Never>) in
                resumeFromAnotherThread(writing: written, resumed: resumed) { continuation.resume(returning: 1) }
            }
            continuationResumed()
            let read = written.value  // first: see the suite's note
            #expect(value == 1)
            #expect(read == 42)
        }

        @Test("The tests' own waits (resumeOrdered): the resumer's writes are ordered")
        func testSupportWait() async {
            let written = UnguardedBox()
            let resumed = RelaxedFlag()
            let value = await resumeOrdered { (continuation: CheckedContinuation<Int, Never>) in
                resumeFromAnotherThread(writing: written, resumed: resumed) { continuation.resume(returning: 1) }
            }
            let read = written.value  // first: see the suite's note
            #expect(value == 1)
            #expect(read == 42)
        }

        @Test("A completion slot fulfilled while its waiter hands over: the fulfiller's writes are ordered")
        func completionSlot() async {
            let slot = CompletionSlot<Int>()
            let written = UnguardedBox()
            let resumed = RelaxedFlag()
            let value = await slot.wait {
                Thread.detachNewThread {
                    written.value = 42
                    slot.fulfill(1)
                    resumed.set()
                }
                resumed.spinUntilSet()
            }
            let read = written.value  // first: see the suite's note
            #expect(value == 1)
            #expect(read == 42)
        }

        @Test("An operation finished while the awaiting call adds it: its main()'s writes are ordered")
        func operationFinishedDuringTheAdd() async throws {
            // The queue starts the operation on another thread, and its `addOperation(_:)`
            // returns only once the operation has finished — after the waiter was installed.
            let queue = AddReturnsAfterFinishQueue()
            let operation = WritingOperation()
            queue.operationFinished = operation.finishedAndResumed
            try await queue.runUntilFinished(operation)
            let read = operation.written  // first: see the suite's note
            #expect(read == 42)
        }
    }

    /// On a new thread: writes 42 to `written`, calls `resume`, then sets `resumed`; returns
    /// only once `resumed` is set, so a wait's body that calls it returns after the resume.
    private func resumeFromAnotherThread(
        writing written: UnguardedBox, resumed: RelaxedFlag, _ resume: @escaping @Sendable () -> Void
    ) {
        Thread.detachNewThread {
            written.value = 42
            resume()
            resumed.set()
        }
        resumed.spinUntilSet()
    }

    /// A value written on one thread and read on another with no lock: only the order under test
    /// orders the two.
    ///
    /// Safety: unguarded on purpose; the tests above write it once, before the resume, and read it
    /// after the wait.
    private final class UnguardedBox: @unchecked Sendable {
        var value = 0
    }

    /// A flag whose relaxed accesses order nothing for ThreadSanitizer: it tells a spinning
    /// thread that the resume has happened without telling the sanitizer anything.
    private final class RelaxedFlag: Sendable {
        private let flag = Atomic(false)

        func set() { flag.store(true, ordering: .relaxed) }

        func spinUntilSet() {
            while !flag.load(ordering: .relaxed) {}
        }
    }

    /// A classic subclass keeping its state in a plain stored property, written in `main()`.
    ///
    /// Safety: `written` is written in `main()` before the finish and read after the wait, the
    /// order under test.
    private final class WritingOperation: AsyncOperation, @unchecked Sendable {
        var written = 0
        let finishedAndResumed = RelaxedFlag()

        override func main() {
            written = 42
            finish()
            // `finish()` has resumed the awaiting task by now.
            finishedAndResumed.set()
        }
    }

    /// A queue whose `addOperation(_:)` returns only once the operation it adds has finished.
    ///
    /// Safety: `operationFinished` is set before the queue is used and only read after.
    private final class AddReturnsAfterFinishQueue: OperationQueue, @unchecked Sendable {
        var operationFinished: RelaxedFlag?

        override func addOperation(_ operation: Operation) {
            super.addOperation(operation)
            operationFinished?.spinUntilSet()
        }
    }
#endif
