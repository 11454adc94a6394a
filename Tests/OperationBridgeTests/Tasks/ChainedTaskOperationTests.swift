import Foundation
import OperationBridge
import Testing

// A three-step mixed chain, as in an operation codebase migrating piece by piece:
// a classic result operation → an async step (`then`) → a classic chained operation.

private enum LookupError: Error, Equatable, CancellationRepresentable {
    case notFound(String)
    case cancelled

    static var cancellation: LookupError { .cancelled }
}

private enum NumberParsingError: Error, CancellationRepresentable, UpstreamFailureRepresentable {
    case notANumber(String)
    case cancelled
    case upstream(UpstreamFailedError)

    static var cancellation: NumberParsingError { .cancelled }
    static func upstreamFailed(_ error: UpstreamFailedError) -> NumberParsingError { .upstream(error) }
}

private enum RenderingError: Error, CancellationRepresentable, UpstreamFailureRepresentable {
    case tooLarge(Int)
    case cancelled
    case upstream(UpstreamFailedError)

    static var cancellation: RenderingError { .cancelled }
    static func upstreamFailed(_ error: UpstreamFailedError) -> RenderingError { .upstream(error) }
}

/// Step 1, classic: looks a key up and finishes on another thread.
private final class LookupOperation: AsyncResultOperation<String, LookupError>, @unchecked Sendable {
    let key: String
    let table: [String: String]

    init(key: String, table: [String: String]) {
        self.key = key
        self.table = table
        super.init()
    }

    override func main() {
        DispatchQueue.global().async { [self] in
            finish(with: table[key].map { .success($0) } ?? .failure(.notFound(key)))
        }
    }
}

/// Step 3, classic: a chained operation that renders its input.
private final class RenderOperation: ChainedAsyncResultOperation<Int, String, RenderingError>, @unchecked Sendable {
    let mainRuns = Guarded(0)

    override func main() {
        mainRuns.withLock { $0 += 1 }
        guard let input else { return finish(with: .failure(.tooLarge(-1))) }
        finish(with: input > 1_000 ? .failure(.tooLarge(input)) : .success("<\(input)>"))
    }
}

/// Where the mixed chain fails, if anywhere.
enum MixedChainScenario: String, CaseIterable, Sendable, CustomStringConvertible {
    case succeeds
    case firstStepFails
    case middleStepFails
    case lastStepFails

    var description: String { rawValue }

    var lookupValue: String? {
        switch self {
        case .succeeds: "21"
        case .firstStepFails: nil
        case .middleStepFails: "twenty-one"
        case .lastStepFails: "2100"
        }
    }
}

@Suite(.timeLimit(Stress.timeLimit(minutes: 1)))
struct ChainedTaskOperationTests {
    // MARK: - The mixed chain

    @Test(arguments: MixedChainScenario.allCases)
    func aMixedChainKeepsTypedErrors(scenario: MixedChainScenario) async throws {
        let queue = OperationQueue()
        let lookup = LookupOperation(key: "answer", table: scenario.lookupValue.map { ["answer": $0] } ?? [:])
        let parsingRuns = Guarded(0)
        let parse = lookup.bridge.then { (text: String) async throws(NumberParsingError) -> Int in
            parsingRuns.withLock { $0 += 1 }
            guard let number = Int(text) else { throw .notANumber(text) }
            return number * 2
        }
        let render = RenderOperation()
        render.takeInput(from: parse)
        // Queued in reverse: the dependencies, not the order, decide.
        queue.addOperation(render)
        queue.addOperation(parse)
        queue.addOperation(lookup)

        let rendered: Result<String, RenderingError>
        do {
            rendered = .success(try await render.bridge.value)
        } catch {
            let typed: RenderingError = error  // `value` throws `RenderingError`, not `any Error`
            rendered = .failure(typed)
        }
        try await [lookup, parse, render].waitForCompletion()

        switch scenario {
        case .succeeds:
            #expect(try rendered.get() == "<42>")
            #expect(parsingRuns.current == 1)
            #expect(render.mainRuns.current == 1)

        case .firstStepFails:
            // The async step does not run; it reports the lookup's failure in its own type…
            #expect(parsingRuns.current == 0)
            guard case .failure(.upstream(let parseUpstream))? = parse.result,
                case .failed(let lookupFailure) = parseUpstream.reason
            else {
                Issue.record("parse should report its upstream's failure, got \(String(describing: parse.result))")
                return
            }
            #expect(lookupFailure as? LookupError == .notFound("answer"))
            #expect(parseUpstream.upstreamType.contains("LookupOperation"))
            // …and the last step reports that one, so the chain of causes is kept.
            #expect(render.mainRuns.current == 0)
            guard case .failure(.upstream(let renderUpstream)) = rendered,
                case .failed(let parseFailure) = renderUpstream.reason,
                case .upstream(let nested)? = parseFailure as? NumberParsingError
            else {
                Issue.record("render should report parse's failure, got \(rendered)")
                return
            }
            #expect(nested.description == parseUpstream.description)
            #expect(renderUpstream.upstreamType.contains("ChainedTaskOperation"))
            #expect(renderUpstream.description.contains("LookupOperation"))

        case .middleStepFails:
            #expect(parsingRuns.current == 1)
            #expect(render.mainRuns.current == 0)
            guard case .failure(.upstream(let upstream)) = rendered,
                case .failed(let parseFailure) = upstream.reason,
                case .notANumber(let text)? = parseFailure as? NumberParsingError
            else {
                Issue.record("render should name the middle step's failure, got \(rendered)")
                return
            }
            #expect(text == "twenty-one")
            #expect(upstream.upstreamType.contains("ChainedTaskOperation"))
            #expect(upstream.description.contains("twenty-one"))

        case .lastStepFails:
            #expect(parsingRuns.current == 1)
            #expect(render.mainRuns.current == 1)
            guard case .failure(.tooLarge(4_200)) = rendered else {
                Issue.record("render should fail on its own, got \(rendered)")
                return
            }
        }
    }

    @Test func aMixedChainRunsThroughAPipeline() async throws {
        let queue = OperationQueue()
        let lookup = LookupOperation(key: "answer", table: ["answer": "21"])
        let parse = lookup.bridge.then { (text: String) async throws(NumberParsingError) -> Int in
            guard let number = Int(text) else { throw .notANumber(text) }
            return number * 2
        }
        let render = RenderOperation()
        render.takeInput(from: parse)
        let pipeline = try Pipeline([render, parse, lookup], on: queue)
        #expect(try await pipeline.value(of: render) == "<42>")
    }

    // MARK: - then

    @Test func thenReceivesTheUpstreamValue() async throws {
        let queue = OperationQueue()
        let upstream = ControlledOperation<Int, StepError>(.success(20))
        let doubled = upstream.bridge.then { (value: Int) async throws(StepError) -> Int in value * 2 }
        let described = doubled.bridge.then { (value: Int) async -> String in "value: \(value)" }
        #expect(doubled.dependencies.contains(upstream))
        #expect(described.dependencies.contains(doubled))
        queue.addOperation(described)
        queue.addOperation(doubled)
        queue.addOperation(upstream)
        #expect(try await doubled.bridge.value == 40)
        #expect(await described.bridge.outcome == .success("value: 40"))
        #expect(doubled.input == 20)
    }

    @Test func thenAfterAFailureReportsAnUpstreamFailedErrorWithoutRunning() async throws {
        let queue = OperationQueue()
        let upstream = ControlledOperation<Int, StepError>(.failure(.planned(3)))
        let ran = Guarded(false)
        let step = upstream.bridge.then { (value: Int) async throws -> Int in
            ran.set(true)
            return value
        }
        queue.addOperation(upstream)
        queue.addOperation(step)
        do {
            _ = try await step.bridge.value
            Issue.record("the step should have failed")
        } catch let error as UpstreamFailedError {
            // `any Error` can hold the `UpstreamFailedError` itself.
            guard case .failed(let cause) = error.reason else {
                Issue.record("unexpected reason \(error.reason)")
                return
            }
            #expect(cause as? StepError == .planned(3))
            #expect(error.upstreamType.contains("ControlledOperation"))
        }
        #expect(!ran.current)
    }

    @Test func thenAfterACancelledUpstreamSaysItWasCancelled() async throws {
        let queue = OperationQueue()
        let upstream = ControlledOperation<Int, StepError>(.success(1))
        let step = upstream.bridge.then { (value: Int) async throws(StepError) -> Int in value }
        upstream.cancel()
        queue.addOperation(upstream)
        queue.addOperation(step)
        guard case .failure(.upstream(let error))? = await step.bridge.outcome, case .cancelled = error.reason else {
            Issue.record("expected an upstream cancellation, got \(String(describing: step.result))")
            return
        }
        #expect(!step.isCancelled)
    }

    /// `Never` can express neither the upstream failure nor cancellation: no result, but the
    /// cause is kept, and the step does not read as cancelled.
    @Test func aFailureTypeThatCannotSayItEndsWithoutAResultAndKeepsTheCause() async throws {
        let queue = OperationQueue()
        let upstream = ControlledOperation<Int, StepError>(.failure(.planned(1)))
        let ran = Guarded(false)
        let step = upstream.bridge.then { (value: Int) async -> Int in
            ran.set(true)
            return value
        }
        queue.addOperation(upstream)
        queue.addOperation(step)
        try await step.bridge.waitForCompletion()
        #expect(step.result == nil)
        #expect(!step.isCancelled)
        #expect(step.bridge.upstreamFailure?.rootFailure as? StepError == .planned(1))
        #expect(!ran.current)
    }

    @Test func aFixedInputNeedsNoUpstream() async throws {
        let step = ChainedTaskOperation<Int, Int, StepError>(input: 5) { (value: Int) async throws(StepError) -> Int in
            value + 1
        }
        OperationQueue().addOperation(step)
        #expect(try await step.bridge.value == 6)
    }

    @Test func noInputAtAllIsReported() async throws {
        let ran = Guarded(false)
        let step = ChainedTaskOperation<Int, Int, StepError> { (value: Int) async throws(StepError) -> Int in
            ran.set(true)
            return value
        }
        OperationQueue().addOperation(step)
        guard case .failure(.upstream(let error))? = await step.bridge.outcome, case .noInput = error.reason else {
            Issue.record("expected a missing-input failure, got \(String(describing: step.result))")
            return
        }
        #expect(!ran.current)
    }

    @Test func aClassicChainedOperationTakesItsInputFromAnAsyncStep() async throws {
        let queue = OperationQueue()
        let source = TaskOperation { () async throws(StepError) -> Int in 40 }
        let adding = AddingOperation(adding: 2)
        adding.takeInput(from: source)
        queue.addOperation(adding)
        queue.addOperation(source)
        #expect(try await adding.bridge.value == 42)
    }

    // MARK: - Finishing only when the closure has returned

    @Test func aDependentOfAThenStepWaitsForItsClosureEvenAfterCancel() async throws {
        let queue = OperationQueue()
        let entered = Gate()
        let release = Gate()
        let cancelReached = Gate()
        let log = Recorder<String>()
        let upstream = ControlledOperation<Int, StepError>(.success(1))
        let step = upstream.bridge.then { (value: Int) async throws(StepError) -> Int in
            entered.open()
            // Ignores cancellation. `cancelReached` tells the test when the cancellation reached
            // the task: one that comes while the closure is still being started reaches it a
            // moment later (TaskOperation, "Where the closure runs"; CI21 resumed the closure first).
            await withTaskCancellationHandler {
                await release.wait()
            } onCancel: {
                cancelReached.open()
            }
            log.append("closure returns, cancelled: \(Task.isCancelled)")
            return value
        }
        let dependent = BlockOperation { log.append("dependent runs") }
        dependent.addDependency(step)
        queue.addOperation(dependent)
        queue.addOperation(step)
        queue.addOperation(upstream)

        await entered.wait()
        step.cancel()
        #expect(step.isExecuting && !step.isFinished)
        #expect(!dependent.isExecuting && !dependent.isFinished)
        await cancelReached.wait()
        release.open()
        try await dependent.bridge.waitForCompletion()
        #expect(log.all == ["closure returns, cancelled: true", "dependent runs"])
        #expect(step.result == .failure(.cancelled))
    }

    @Test func cancellationReachesTheClosureOfAThenStep() async {
        let queue = OperationQueue()
        let entered = Gate()
        let seen = Recorder<Bool>()
        let upstream = ControlledOperation<Int, StepError>(.success(1))
        let step = upstream.bridge.then { (_: Int) async -> Bool in
            entered.open()
            await suspendUntilCancelled()
            seen.append(Task.isCancelled)
            return Task.isCancelled
        }
        queue.addOperation(upstream)
        queue.addOperation(step)
        await entered.wait()
        step.cancel()
        // `Never` cannot express cancellation: the step ends cancelled without a result.
        #expect(await step.bridge.outcome == nil)
        #expect(seen.all == [true])
    }

    @Test func aThenStepCancelledBeforeStartNeverRuns() async throws {
        let queue = OperationQueue()
        let upstream = ControlledOperation<Int, StepError>(.success(1))
        let ran = Guarded(false)
        let step = upstream.bridge.then { (value: Int) async throws(StepError) -> Int in
            ran.set(true)
            return value
        }
        step.cancel()
        queue.addOperation(upstream)
        queue.addOperation(step)
        #expect(await step.bridge.outcome == .failure(.cancelled))
        try await upstream.bridge.waitForCompletion()
        #expect(!ran.current)
        // Keep the cancelled step alive until its upstream has finished: on Linux the upstream
        // refers to it through an unretained pointer.
        withExtendedLifetime(step) {}
    }

    // MARK: - Memory

    @Test func aChainAndItsClosuresAreReleasedAfterCompletion() async {
        let queue = OperationQueue()
        let released = (0..<2).map { _ in Trigger() }
        var weakOperations: [WeakBox<Operation>] = []
        do {
            let upstream = TaskOperation { [probe = DeinitProbe(released[0])] () async throws(StepError) -> Int in
                withExtendedLifetime(probe) { 1 }
            }
            let step = upstream.bridge.then {
                [probe = DeinitProbe(released[1])] (value: Int) async throws(StepError) -> Int in
                withExtendedLifetime(probe) { value + 1 }
            }
            weakOperations = [WeakBox(upstream), WeakBox(step)]
            queue.addOperation(upstream)
            queue.addOperation(step)
            #expect(await step.bridge.outcome == .success(2))
        }
        for trigger in released { #expect(await trigger.wait()) }
        #expect(weakOperations.allSatisfy { $0.object == nil })
    }
}
