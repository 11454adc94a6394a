import Foundation
import OperationBridge

/// The soak run: a million operations through every bridge, in batches, with the resident memory
/// sampled after each batch. Memory must stay flat: nothing the bridges allocate outlives its
/// operation.
struct Soak {
    let total: Int
    let batch: Int

    /// Runs the soak and prints one line per sample. Returns `false` when memory grew.
    func run() async throws -> Bool {
        print("soak: \(total) operations in batches of \(batch), resident memory after each batch")
        var samples: [Int] = []
        var done = 0
        var round = 0
        while done < total {
            let count = min(batch, total - done)
            try await oneBatch(count, kind: round % 4)
            done += count
            round += 1
            guard let resident = residentBytes() else {
                print("soak: the resident memory is unavailable on this platform")
                return false
            }
            samples.append(resident)
            print(String(format: "  %9d operations  %8.1f MiB", done, Double(resident) / 1_048_576))
        }
        // Allow for allocator noise: compare the last sample with the one after warm-up (the
        // first full cycle through the four bridges).
        let warm = samples[min(3, samples.count - 1)]
        let last = samples[samples.count - 1]
        let growth = Double(last - warm) / Double(max(warm, 1))
        let flat = growth < 0.10
        print(
            String(
                format: "soak: growth after warm-up %+.1f%% (%@)", growth * 100,
                flat ? "flat" : "GROWING: a leak?"))
        return flat
    }

    /// One batch through one of the bridges: run-and-await, results sequence, task operations,
    /// pipeline with async steps.
    private func oneBatch(_ count: Int, kind: Int) async throws {
        let queue = OperationQueue()
        switch kind {
        case 0:
            await withTaskGroup(of: Void.self) { group in
                for index in 0..<count {
                    group.addTask { _ = try? await queue.run(ValueOperation(index)) }
                }
            }
        case 1:
            let operations = (0..<count).map(ValueOperation.init)
            var delivered = 0
            for await _ in try queue.results(of: operations) { delivered += 1 }
            precondition(delivered == count)
        case 2:
            let tasks = (0..<count).map { index in queue.addTask { () async -> Int in index } }
            try await tasks.waitForCompletion()
        default:
            // Chains of 500 alternating classic operations and async steps.
            var steps: [Operation] = []
            while steps.count < count {
                var previous = ValueOperation(0)
                steps.append(previous)
                for _ in 0..<250 {
                    let next = previous.bridge.then { (value: Int) async -> Int in value + 1 }
                    let classic = ValueOperation(0)
                    classic.addDependency(next)
                    steps.append(next)
                    steps.append(classic)
                    previous = classic
                }
            }
            try await Pipeline(steps, on: queue).waitForCompletion()
        }
        try await queue.waitForAllOperations()
    }
}
