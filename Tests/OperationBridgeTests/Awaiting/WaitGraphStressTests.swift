import Foundation
import OperationBridge
import Testing

/// An operation that finishes as soon as it runs.
private final class QuickStep: AsyncOperation, @unchecked Sendable {
    override func main() { finish() }
}

/// Wait graphs taken over and over while random graphs of operations run — with dependencies,
/// exclusivity keys, pauses, slots — through a queue or a pipeline: every snapshot is well formed,
/// reading never changes what runs (everything finishes), and the last one is empty.
@Suite(.timeLimit(Stress.timeLimit(minutes: 5)))
struct WaitGraphStressTests {
    @Test("Snapshots taken while random graphs run are well formed and change nothing")
    func snapshotsWhileRunning() async throws {
        var random = Stress.generator(for: "WaitGraphStressTests")
        for round in 0..<Stress.iterations(1_000) {
            let queue = OperationQueue()
            queue.name = "stress"
            queue.maxConcurrentOperationCount = Int.random(in: 1...3, using: &random)
            let count = Int.random(in: 2...8, using: &random)
            var operations: [Operation] = []
            var paused: [QuickStep] = []
            for index in 0..<count {
                let operation: Operation
                if Bool.random(using: &random) {
                    let step = QuickStep()
                    if Int.random(in: 0..<3, using: &random) == 0 { step.bridge.addCondition(.mutuallyExclusive("k")) }
                    if Int.random(in: 0..<4, using: &random) == 0 {
                        step.bridge.pause()
                        paused.append(step)
                    }
                    operation = step
                } else {
                    operation = BlockOperation {}
                }
                if index % 2 == 0 { operation.name = "op \(index)" }
                for earlier in operations where Int.random(in: 0..<3, using: &random) == 0 {
                    operation.addDependency(earlier)
                }
                operations.append(operation)
            }
            let pipeline = Bool.random(using: &random) ? try Pipeline(operations, on: queue) : nil
            if let pipeline {
                pipeline.start()
            } else {
                queue.addOperationsWithoutWaiting(operations)
            }
            var snapshots = 0
            while !operations.allSatisfy(\.isFinished) {
                let graph = pipeline?.waitGraph ?? queue.waitGraph
                try check(graph, round: round)
                snapshots += 1
                if snapshots == 3 { for step in paused { step.bridge.resume() } }
                await Task.yield()
            }
            for step in paused { step.bridge.resume() }  // finished before the third snapshot
            if let pipeline {
                try await pipeline.waitForCompletion()
                #expect(pipeline.waitGraph.text.hasSuffix("Nothing is pending or running."), "round \(round)")
            }
            try await queue.waitForAllOperations()
            #expect(queue.waitGraph.text.hasSuffix("Nothing is pending or running."), "round \(round)")
        }
    }

    /// The text has its heading and sections; every DOT edge joins nodes the DOT declares.
    private func check(_ graph: WaitGraph, round: Int) throws {
        #expect(graph.text.hasPrefix("Wait graph of "), "round \(round)")
        #expect(graph.text.hasSuffix("Nothing is pending or running.") || graph.text.contains("\nWaiting chains:\n- "))
        #expect(graph.dot.hasPrefix("digraph WaitGraph {\n") && graph.dot.hasSuffix("}\n"), "round \(round)")
        var declared = Set<Substring>()
        for line in graph.dot.split(separator: "\n") {
            let words = line.split(separator: " ")
            guard let first = words.first else { continue }
            if words.count > 1, words[1] == "->" {
                #expect(declared.contains(first) && declared.contains(words[2]), "round \(round): \(line)")
            } else if first.first == "n" || first.first == "q" || first.first == "t" {
                declared.insert(first)
            }
        }
    }
}
