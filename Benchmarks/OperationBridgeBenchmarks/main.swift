// OperationBridgeBenchmarks: every scenario of the design's performance table
// (OperationBridge.docc/Design.md), run next to its hand-written baseline in the same process
// (alternating rounds, medians compared).
//
//   swift run -c release OperationBridgeBenchmarks            # the table
//   swift run -c release OperationBridgeBenchmarks --json     # a JSON array only
//   swift run -c release OperationBridgeBenchmarks --quick    # smaller sizes, fewer rounds
//   swift run -c release OperationBridgeBenchmarks --isolated # each group in a fresh process
//   swift run -c release OperationBridgeBenchmarks --grow-pool 4 # as in a process with more threads
import Foundation

let options = Options(arguments: CommandLine.arguments)
if options.objectSizes {
    printObjectSizes()
    exit(0)
}
if let kind = options.memoryProbe {
    runMemoryProbe(kind: kind, count: options.probeCount)
    exit(0)
}
if let total = options.soak {
    let flat = try await Soak(total: total, batch: 50_000).run()
    exit(flat ? 0 : 1)
}
if let only = options.only, !Scenarios.groups.contains(where: { $0.contains(only) }) {
    FileHandle.standardError.write(
        Data("no group of scenarios matches \(only); groups: \(Scenarios.groups.joined(separator: ", "))\n".utf8))
    exit(2)
}
if !options.json {
    print(
        "OperationBridge benchmarks (\(options.quick ? "quick" : "full") run, \(options.rounds) rounds, medians"
            + (options.isolated ? ", each group in a fresh process)" : ")"))
    #if DEBUG
        print("warning: debug build; use `swift run -c release OperationBridgeBenchmarks`")
    #endif
}
growDispatchPool(by: options.isolated ? 0 : options.growPool)
let threadsAtStart = threadCount()
let rows = options.isolated ? Scenarios.runIsolated(options: options) : try await Scenarios(options: options).run()
if options.json {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    print(String(decoding: try encoder.encode(rows), as: UTF8.self))
} else {
    printTable(rows)
    // What the rows depend on (README, footnote 5); an isolated run's groups each had their own.
    if !options.isolated, let threadsAtStart, let threadsAtEnd = threadCount() {
        print("threads in this process: \(threadsAtStart) when the measurements began, \(threadsAtEnd) at the end")
    }
}
