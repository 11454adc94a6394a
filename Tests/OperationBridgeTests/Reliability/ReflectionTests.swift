import Foundation
import Testing

@testable import OperationBridge

/// Swift Testing reflects the error every `#expect(throws:)` catches, and the values of every
/// failed expectation; `dump(_:)` does the same. Reflecting an operation reads Foundation's
/// internals without their locks: a group's mirror reaches the children queue the package
/// shares, whose list of pending operations other tests change and free meanwhile. A CI run
/// crashed that way (AddressSanitizer, `#expect(throws: GroupOperationError.self)`). The
/// package's errors and values that hold operations name them instead (Design.md, "Reflection").
@Suite struct ReflectionTests {
    /// The paths at which `subject`'s mirror reaches an `Operation` or an `OperationQueue`,
    /// walking it as `dump` does: children and superclass mirrors (Swift Testing walks only the
    /// children, so this is stricter), each object once. The
    /// walk does not go into what it finds (except `subject` itself): that is the reflection this
    /// suite guards against. A walk into the shared queue crashed this very test once, and a walk
    /// into a queued operation's superclass crashes at once, at Foundation's `DispatchWorkItem` (Design.md,
    /// "Reflection").
    static func operationsReached(from subject: Any) -> [String] {
        var seen = Set<ObjectIdentifier>()
        var reached: [String] = []
        func walk(_ value: Any, _ path: String, depth: Int) {
            guard depth < 16 else { return }
            if type(of: value) is AnyClass {
                let object = value as AnyObject
                guard seen.insert(ObjectIdentifier(object)).inserted else { return }
                if depth > 0, object is Operation || object is OperationQueue {
                    reached.append("\(path): \(type(of: object))")
                    return
                }
            }
            var mirror: Mirror? = Mirror(reflecting: value)
            while let current = mirror {
                for child in current.children { walk(child.value, "\(path).\(child.label ?? "_")", depth: depth + 1) }
                mirror = current.superclassMirror
            }
        }
        walk(subject, "", depth: 0)
        return reached
    }

    @Test("The errors that carry operations name them and reach none")
    func errorsNameTheirOperations() async throws {
        let first = BlockOperation {}
        let second = BlockOperation {}
        first.name = "first"
        first.addDependency(second)
        second.addDependency(first)
        defer {
            first.removeDependency(second)
            second.removeDependency(first)
        }
        // Caught by hand, not with `#expect(throws:)`: that would reflect the errors before the
        // checks below, and crash rather than fail if they reached the shared queue.
        func caught<E: Error>(_ type: E.Type, _ body: () throws -> Void) -> E? {
            do {
                try body()
            } catch {
                return error as? E
            }
            return nil
        }
        let pipelineError = caught(PipelineError.self) { _ = try Pipeline([first, second], on: OperationQueue()) }
        let group = try GroupOperation<Void, any Error>([BlockOperation {}])
        let groupError = caught(GroupOperationError.self) { try group.addChild(group) }
        let finishedGroup = try GroupOperation<Void, any Error>([])
        try await OperationQueue().run(finishedGroup)
        let finished = caught(GroupOperationError.self) { try finishedGroup.addChild(BlockOperation {}) }
        for error in [pipelineError as Any?, groupError as Any?, finished as Any?] {
            let error = try #require(error)
            #expect(Self.operationsReached(from: error).isEmpty)
        }
        let names = Mirror(reflecting: try #require(pipelineError)).children.first?.value as? [String]
        #expect(Set(names ?? []) == ["BlockOperation (first)", "BlockOperation"])
        let groupNames = Mirror(reflecting: try #require(groupError)).children.first?.value as? [String]
        #expect(groupNames == ["\(type(of: group))"])
    }

    @Test("The values that hold an operation name it and reach none")
    func valuesNameTheirOperations() async throws {
        let queue = OperationQueue()
        var values: [Any] = []
        let failing = TaskOperation { () async throws(PlainError) -> Int in throw .boom(1) }
        failing.name = "failing"
        let pipeline = try Pipeline([failing], on: queue)
        for await step in pipeline.finishedSteps { values.append(step) }
        values.append(try #require(pipeline.firstFailure))
        let group = try GroupOperation<Void, any Error>([BlockOperation {}])
        let events = group.childEvents
        try await queue.run(group)
        for await event in events { values.append(event) }  // a BlockOperation: `finished` only
        for await element in try queue.results(of: [TaskOperation { 1 }]) { values.append(element) }
        let throwing: [AsyncResultOperation<Int, any Error>] = [TaskOperation { () async throws -> Int in 2 }]
        for try await element in try queue.values(of: throwing) { values.append(element) }
        for await element in queue.results(streaming: 0..<1, maxInFlight: 1, { n in TaskOperation { n } }) {
            values.append(element)
        }
        let streamed = queue.values(streaming: 0..<1, maxInFlight: 1) { n -> AsyncResultOperation<Int, any Error> in
            TaskOperation { () async throws -> Int in n }
        }
        for try await element in streamed { values.append(element) }

        let kinds = values.map { "\(type(of: $0))" }
        #expect(
            kinds == ["Element", "StepFailure", "GroupChildEvent", "Element", "Element", "Element", "Element"],
            "\(kinds)")
        for value in values {
            #expect(Self.operationsReached(from: value).isEmpty, "\(type(of: value))")
            let operation = Mirror(reflecting: value).children.first { $0.label == "operation" }?.value
            #expect(operation is String, "\(type(of: value))")
        }
        let failure = Mirror(reflecting: try #require(pipeline.firstFailure))
        #expect(failure.children.map(\.label) == ["index", "operation", "reason"])
        #expect(
            failure.children.first { $0.label == "operation" }?.value as? String
                == "TaskOperation<Int, PlainError> (failing)")
    }

    @Test(
        "The package's final operation classes and a pipeline mirror their public state, pending, running and finished")
    func objectsMirrorTheirState() async throws {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let gate = Gate()
        let started = Gate()
        let blocker = TaskOperation { () async -> Int in
            started.open()
            await gate.wait()
            return 0
        }
        blocker.name = "blocker"
        queue.addOperation(blocker)
        await started.wait()
        // Pending behind `blocker` on a busy queue: each one's queue holds it in its list.
        let task = TaskOperation { 1 }
        let chained = ChainedTaskOperation(input: 2) { (input: Int) async -> Int in input }
        let group = try GroupOperation<Void, any Error>([BlockOperation {}])
        let retrying = RetryingOperation(maxAttempts: 2) { (_: Int) async throws(PlainError) -> Int in 3 }
        let repeating = RepeatingOperation(maxIterations: 2, until: { _ in true }) {
            (_: Int) async throws(PlainError) -> Int in 4
        }
        let step = TaskOperation { 5 }
        let pipeline = try Pipeline([step], on: queue)
        let objects: [Any] = [blocker, task, chained, group, retrying, repeating, pipeline]
        for operation in [task, chained, group, retrying, repeating] as [Operation] { queue.addOperation(operation) }
        for object in objects { #expect(Self.operationsReached(from: object).isEmpty, "\(type(of: object))") }
        let running = Mirror(reflecting: blocker)
        #expect(running.children.map(\.label) == ["name", "isExecuting", "isFinished", "isCancelled", "result"])
        #expect(running.children.first?.value as? String == "blocker")
        #expect(running.children.dropFirst().first?.value as? Bool == true)
        #expect(running.superclassMirror == nil)

        gate.open()
        try await pipeline.waitForCompletion()
        for operation in [task, chained, group, retrying, repeating] as [Operation] {
            try await operation.bridge.waitForCompletion()
        }
        for object in objects { #expect(Self.operationsReached(from: object).isEmpty, "\(type(of: object))") }
        let finished = Mirror(reflecting: chained)
        #expect(
            finished.children.map(\.label) == ["name", "isExecuting", "isFinished", "isCancelled", "result", "input"])
        #expect(finished.children.first { $0.label == "input" }?.value as? Int? == 2)
        #expect(finished.children.first { $0.label == "isFinished" }?.value as? Bool == true)
        let children = Mirror(reflecting: group).children.first { $0.label == "children" }?.value
        #expect(children as? [String] == ["BlockOperation"])
        let steps = Mirror(reflecting: pipeline).children.first { $0.label == "operations" }?.value
        #expect(steps as? [String] == ["TaskOperation<Int, Never>"])
    }
}
