import Foundation
import OperationBridge
import Testing

/// Collects one observer's events and lets a test wait for the finish.
final class EventLog: @unchecked Sendable {
    let events = Recorder<OperationEvent>()
    let finished = Gate()

    @Sendable func record(_ event: OperationEvent) {
        events.append(event)
        if event == .finished { finished.open() }
    }
}

actor EventStore {
    private(set) var results: [Int?] = []
    func append(_ value: Int?) { results.append(value) }
}

@Suite("Lifecycle observers")
struct LifecycleObserverTests {
    @Test("An operation that runs reports started then finished, on the dispatch queue given")
    func startedFinished() async throws {
        let log = EventLog()
        let queue = DispatchQueue(label: "observer")
        let key = DispatchSpecificKey<Bool>()
        queue.setSpecific(key: key, value: true)
        let onQueue = LockedBox(true)
        let operation = ProbeOperation()
        operation.bridge.observeLifecycle(on: .dispatchQueue(queue)) { event in
            if DispatchQueue.getSpecific(key: key) != true { onQueue.withLock { $0 = false } }
            log.record(event)
        }
        try await OperationQueue().runUntilFinished(operation)
        await log.finished.wait()
        #expect(log.events.all == [.started, .finished])
        #expect(onQueue.current)
    }

    @Test("Cancelled while running: started, cancelled, finished; before starting: cancelled, finished")
    func cancellations() async throws {
        let running = ProbeOperation(.byTest)
        let runningLog = EventLog()
        running.bridge.observeLifecycle(on: .dispatchQueue(DispatchQueue(label: "a")), runningLog.record)
        let queue = OperationQueue()
        queue.addOperation(running)
        await running.started.wait()
        running.cancel()
        running.finish()
        await runningLog.finished.wait()
        #expect(runningLog.events.all == [.started, .cancelled, .finished])

        let pending = ProbeOperation()
        let pendingLog = EventLog()
        pending.bridge.observeLifecycle(on: .queue(OperationQueue()), pendingLog.record)
        pending.cancel()
        queue.addOperation(pending)
        await pendingLog.finished.wait()
        #expect(pendingLog.events.all == [.cancelled, .finished])
    }

    @Test("Registered after the finish: every event that happened, at once, exactly once")
    func lateRegistration() async throws {
        let operation = ProbeOperation()
        try await OperationQueue().runUntilFinished(operation)
        let log = EventLog()
        operation.bridge.observeLifecycle(on: .dispatchQueue(.global()), log.record)
        await log.finished.wait()
        #expect(log.events.all == [.started, .finished])
        var iterated: [OperationEvent] = []
        for await event in operation.bridge.lifecycleEvents { iterated.append(event) }
        #expect(iterated == [.started, .finished])
    }

    @Test("whenFinished hands over the typed result, on an OperationQueue and on an actor")
    func whenFinishedTyped() async throws {
        let operation = ProbeResultOperation<PlainError>(.inMain(.success(7)))
        let onQueue = LockedBox<Result<Int, PlainError>?>(nil)
        let delivered = Gate()
        operation.bridge.whenFinished(on: .queue(OperationQueue())) { result in
            onQueue.withLock { $0 = result }
            delivered.open()
        }
        let store = EventStore()
        let stored = Gate()
        operation.bridge.whenFinished(on: .actor(store)) { result in
            Task {
                await store.append(try? result?.get())
                stored.open()
            }
        }
        _ = await OperationQueue().runForOutcome(operation)
        await delivered.wait()
        await stored.wait()
        #expect(onQueue.current == .success(7))
        #expect(await store.results == [7])
    }

    @Test("Without a target, handlers run on the main actor")
    @MainActor
    func mainActorHandlers() async throws {
        let operation = ProbeResultOperation<Never>(.inMain(.success(3)))
        var seen: [Int?] = []
        var events: [OperationEvent] = []
        let done = Gate()
        operation.bridge.observeLifecycle { event in events.append(event) }
        operation.bridge.whenFinished { result in
            if case .success(let value)? = result { seen.append(value) }
            done.open()
        }
        _ = await OperationQueue().run(operation)
        await done.wait()
        #expect(seen == [3])
        #expect(events.contains(.finished))
    }

    @Test("lifecycleEvents: an AsyncSequence that ends after the finish")
    func sequence() async throws {
        let operation = ProbeOperation(.byTest)
        let events = operation.bridge.lifecycleEvents
        let queue = OperationQueue()
        queue.addOperation(operation)
        await operation.started.wait()
        operation.finish()
        var collected: [OperationEvent] = []
        for await event in events { collected.append(event) }
        #expect(collected == [.started, .finished])
    }

    @Test(
        "Randomized: observers registered while the operation is cancelled and finished see each event once, in order")
    func randomizedRaces() async throws {
        var generator = Stress.generator(for: "LifecycleObserverTests.randomizedRaces")
        let queue = OperationQueue()
        let target = DispatchQueue(label: "observers", attributes: .concurrent)
        for _ in 0..<Stress.iterations(1_000) {
            let operation = ProbeOperation(.byTest)
            let logs = (0..<3).map { _ in EventLog() }
            let cancelEarly = Bool.random(using: &generator)
            let registerAfter = Int.random(in: 0...3, using: &generator)
            for log in logs.prefix(registerAfter) {
                operation.bridge.observeLifecycle(on: .dispatchQueue(target), log.record)
            }
            if cancelEarly { operation.cancel() }
            queue.addOperation(operation)
            async let late: Void = {
                for log in logs.dropFirst(registerAfter) {
                    operation.bridge.observeLifecycle(on: .dispatchQueue(target), log.record)
                }
            }()
            if !cancelEarly {
                await operation.started.wait()
                if Bool.random(using: &generator) { operation.cancel() }
                operation.finish()
            }
            await late
            for log in logs {
                await log.finished.wait()
                let events = log.events.all
                let expected: [[OperationEvent]] = [
                    [.started, .finished], [.started, .cancelled, .finished], [.cancelled, .finished],
                ]
                #expect(expected.contains(events), "\(events)")
            }
        }
    }
}
