import Foundation
import OperationBridge
import Testing

@Suite("Group operations")
struct GroupOperationTests {
    @Test("Collecting: every child's result, in order, awaited like any operation")
    func collecting() async throws {
        let children = (1...5).map { ProbeResultOperation<PlainError>(.inMain(.success($0 * 10))) }
        let group = try GroupOperation(collecting: children)
        let values = try await OperationQueue().runForOutcomeValue(group)
        #expect(values == [10, 20, 30, 40, 50])
        #expect(children.allSatisfy { $0.isFinished })
    }

    @Test("makingResult builds the result from children of different types, after all have finished")
    func makingResult() async throws {
        let number = ProbeResultOperation<PlainError>(.inMain(.success(4)))
        let text = TaskOperation { () async throws(PlainError) -> String in "four" }
        let group = try GroupOperation([number, text]) { () throws(PlainError) -> String in
            "\(try number.result!.get()) is \(try text.result!.get())"
        }
        #expect(try await OperationQueue().runForOutcomeValue(group) == "4 is four")
    }

    @Test("The first failure fails the group with the child's typed failure, and names the child")
    func firstFailureTyped() async throws {
        let fine = ProbeResultOperation<PlainError>(.inMain(.success(1)))
        let failing = ProbeResultOperation<PlainError>(.inMain(.failure(.boom(2))))
        let dependent = ProbeResultOperation<PlainError>(.inMain(.success(3)))
        dependent.addDependency(failing)
        let group = try GroupOperation(collecting: [fine, failing, dependent])
        let outcome = await OperationQueue().runForOutcome(group)
        #expect(outcome?.failureValue == .boom(2))
        let first = try #require(group.firstFailure)
        #expect(first.index == 1 && first.operation === failing)
        // A classic result operation (its `PlainError` cannot say "the upstream failed") runs
        // after the failed child, as Foundation runs it: its own code decides.
        #expect(dependent.mainCalls.value == 1)
        #expect(dependent.result == .success(3))
        #expect(fine.mainCalls.value == 1)
    }

    @Test("A failure of another type reaches the group as an UpstreamFailedError naming the child")
    func firstFailureOtherType() async throws {
        let block = BlockOperation {}
        block.name = "glue"
        block.cancel()
        let group = try GroupOperation<Void, any Error>([block])
        await #expect {
            try await OperationQueue().run(group)
        } throws: { error in
            guard let upstream = error as? UpstreamFailedError, case .cancelled = upstream.reason else { return false }
            return upstream.upstreamName == "glue"
        }
        #expect(group.bridge.upstreamFailure?.upstreamName == "glue")
    }

    @Test("cancelAll: a failure cancels the other children; cancelDependents lets them go on")
    func failurePolicies() async throws {
        for policy in [PipelineFailurePolicy.cancelAll, .cancelDependents] {
            let other = NeverEndingOperation()  // ends only when cancelled
            let failing = ProbeResultOperation<PlainError>(.inMain(.failure(.boom(0))))
            let group = try GroupOperation<Void, any Error>([other, failing], failurePolicy: policy)
            let queue = OperationQueue()
            queue.addOperation(group)
            // Until the group has recorded the failure: an await of `failing` may return before
            // the group hears of its finish (awaiters are resumed first), and `other` cancelled
            // meanwhile would be recorded as the first failure (CI83, under AddressSanitizer).
            for await event in group.childEvents where event.operation === failing && event.event == .finished {
                break
            }
            if policy == .cancelDependents {
                await other.started.wait()
                #expect(!other.isCancelled && !group.isFinished)
                other.cancel()  // ends it: the group finishes
            }
            _ = await queue.runForOutcome(group)
            #expect(other.isCancelled)
            #expect(group.firstFailure?.operation === failing)
        }
    }

    @Test("Cancelling the group cancels its children, and it finishes only after every child has")
    func cancellation() async throws {
        let stubborn = ManualResultOperation<Int, CancellationError>()  // finishes when the test says
        let other = NeverEndingOperation()
        let group = try GroupOperation(collecting: [stubborn, other])
        let queue = OperationQueue()
        queue.addOperation(group)
        await stubborn.started.wait()
        await other.started.wait()
        group.cancel()
        await stubborn.cancelRequested.wait()
        try await other.bridge.waitForCompletion()
        #expect(!group.isFinished)  // the stubborn child still runs
        stubborn.finish()
        try await group.bridge.waitForCompletion()
        #expect(group.isCancelled && stubborn.isCancelled && other.isCancelled)
        #expect(group.result?.failureValue is CancellationError)
    }

    @Test("A group cancelled before it starts: its children finish cancelled, never run, and so does it")
    func cancelledBeforeStart() async throws {
        let child = ProbeResultOperation<PlainError>(.inMain(.success(1)))
        let observer = BlockOperation {}
        observer.addDependency(child)  // someone else waits for the child
        let group = try GroupOperation(collecting: [child])
        group.cancel()
        let queue = OperationQueue()
        // Through the package: the cancelled child finishes on another thread meanwhile, and
        // Linux's queue can forget a `BlockOperation` added with a plain `addOperation(_:)` then.
        try await queue.runUntilFinished(observer)
        #expect(child.isCancelled && child.mainCalls.value == 0)
        queue.addOperation(group)
        try await group.bridge.waitForCompletion()
        #expect(group.isCancelled)
    }

    @Test("Groups nest, chain with then, run in a pipeline, and the classic aggregate is a one-liner")
    func composition() async throws {
        let inner = try GroupOperation(
            collecting: (1...3).map { ProbeResultOperation<PlainError>(.inMain(.success($0))) })
        let outer = try GroupOperation([inner, ProbeResultOperation<PlainError>(.inMain(.success(4)))]) {
            () throws(PlainError) -> Int in
            try inner.result!.get().reduce(0, +)
        }
        let doubled = outer.bridge.then { (sum: Int) throws(PlainError) -> Int in sum * 2 }
        let pipeline = try Pipeline([outer, doubled], on: OperationQueue())
        #expect(try await pipeline.outcomeValue(of: doubled) == 12)

        let downloads = (0..<4).map { _ in BlockOperation {} }
        let allDone = try GroupOperation<Void, any Error>(downloads)
        let told = LockedBox<Bool?>(nil)
        let delivered = Gate()
        allDone.bridge.whenFinished(on: .dispatchQueue(.global())) { result in
            told.withLock { $0 = (try? result?.get()) != nil }
            delivered.open()
        }
        OperationQueue().addOperation(allDone)
        await delivered.wait()
        #expect(told.current == true)
    }

    @Test("maxConcurrentChildren limits how many children run at once; a width-one queue never waits for itself")
    func width() async throws {
        let level = HighWaterMark()
        let children = (0..<12).map { _ in
            TaskOperation { () async -> Int in
                level.enter()
                await Task.yield()
                level.leave()
                return 1
            }
        }
        let group = try GroupOperation(collecting: children, maxConcurrentChildren: 2)
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let nested = try GroupOperation<Void, Never>([group])
        _ = await queue.run(nested)
        #expect(level.maximum <= 2)
        let collected = try #require(group.result).get()
        #expect(collected.count == 12)
    }

    @Test("childEvents reports the children's events and ends with the group's children")
    func childEvents() async throws {
        let block = BlockOperation {}
        let probe = ProbeOperation()
        let group = try GroupOperation<Void, any Error>([probe, block])
        let events = group.childEvents
        try await OperationQueue().run(group)
        var seen: [String] = []
        for await event in events { seen.append("\(event.index):\(event.event)") }
        #expect(seen.filter { $0.hasPrefix("0:") } == ["0:started", "0:finished"])
        #expect(seen.filter { $0.hasPrefix("1:") } == ["1:finished"])
        var late = 0
        for await _ in group.childEvents { late += 1 }
        #expect(late == 3)
    }

    @Test("A cycle among the children throws before anything runs; an empty group succeeds")
    func cycleAndEmpty() async throws {
        let a = ProbeOperation()
        let b = ProbeOperation()
        a.addDependency(b)
        b.addDependency(a)
        #expect(throws: PipelineError.self) { try GroupOperation<Void, any Error>([a, b]) }
        b.removeDependency(a)
        let empty = try GroupOperation<Void, Never>([])
        #expect(await OperationQueue().run(empty) != nil)
    }

    @Test(
        "Randomized: nested random graphs, failures and cancellation at random points; every child finishes before its group"
    )
    func randomizedGraphs() async throws {
        var generator = Stress.generator(for: "GroupOperationTests.randomizedGraphs")
        let queue = OperationQueue()
        for _ in 0..<Stress.iterations(300) {
            let violations = LockedBox(0)
            let group = try Self.randomGroup(depth: 2, using: &generator, violations: violations)
            let cancelAt = Int.random(in: 0...3, using: &generator)
            queue.addOperation(group)
            if cancelAt == 0 { group.cancel() }
            if cancelAt == 1 { await Task.yield(); group.cancel() }
            try await group.bridge.waitForCompletion()
            #expect(violations.current == 0)
        }
    }

    /// A group of random children — probes that succeed or fail, nested groups — with random
    /// dependencies among them; each group checks, as it finishes, that its children have.
    private static func randomGroup(
        depth: Int,
        using generator: inout SeededGenerator,
        violations: LockedBox<Int>
    ) throws -> GroupOperation<Void, any Error> {
        var children: [Operation] = []
        for _ in 0..<Int.random(in: 0...6, using: &generator) {
            let child: Operation
            if depth > 0 && Int.random(in: 0..<4, using: &generator) == 0 {
                child = try randomGroup(depth: depth - 1, using: &generator, violations: violations)
            } else if Int.random(in: 0..<5, using: &generator) == 0 {
                child = ProbeResultOperation<PlainError>(.inMain(.failure(.boom(0))))
            } else {
                child = ProbeResultOperation<PlainError>(.inMain(.success(1)))
            }
            if let earlier = children.randomElement(using: &generator), Bool.random(using: &generator) {
                child.addDependency(earlier)
            }
            children.append(child)
        }
        let policy: PipelineFailurePolicy = Bool.random(using: &generator) ? .cancelAll : .cancelDependents
        let group = try GroupOperation<Void, any Error>(children, failurePolicy: policy)
        group.bridge.whenFinished(on: .dispatchQueue(.global())) {}
        group.bridge.observeLifecycle(on: .dispatchQueue(.global())) { [children] event in
            if event == .finished, !children.allSatisfy(\.isFinished) { violations.withLock { $0 += 1 } }
        }
        return group
    }
}
