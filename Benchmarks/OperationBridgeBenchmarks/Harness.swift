import Foundation

/// Command-line options.
struct Options {
    var quick = false
    var json = false
    var only: String?
    /// `--isolated`: each group of scenarios in a fresh process of its own.
    var isolated = false
    /// Internal: measure memory in this (fresh) process and print bytes per operation.
    var memoryProbe: String?
    var probeCount = 0
    /// `--object-sizes`: print the object size of each memory probe's kind (Linux only).
    var objectSizes = false
    /// `--grow-pool N`: first grow Dispatch's thread pool by N threads, as earlier rows of a full
    /// run or a long-running application do (README, footnote 5).
    var growPool = 0
    /// What `--grow-pool` accepts: Dispatch on Linux starts no more than about 40 threads for
    /// blocked work items on this machine, and the pool only has to be larger than a fresh one.
    static let growPoolRange = 1...32
    /// `--soak [N]`: run N operations (default one million) through the bridges instead.
    var soak: Int?

    init(arguments: [String]) {
        var iterator = arguments.dropFirst().makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--quick": quick = true
            case "--json": json = true
            case "--only": only = iterator.next()
            case "--isolated": isolated = true
            case "--grow-pool":
                guard let count = iterator.next().flatMap(Int.init), Self.growPoolRange.contains(count) else {
                    FileHandle.standardError.write(
                        Data(
                            "--grow-pool takes a number of threads from \(Self.growPoolRange.lowerBound) to \(Self.growPoolRange.upperBound)\n"
                                .utf8))
                    exit(2)
                }
                growPool = count
            case "--soak":
                soak = 1_000_000
            case "--soak-operations":
                soak = iterator.next().flatMap(Int.init) ?? 1_000_000
            case "--object-sizes": objectSizes = true
            case "--memory-probe":
                memoryProbe = iterator.next()
                probeCount = iterator.next().flatMap(Int.init) ?? 100_000
            case "--help", "-h":
                print(
                    """
                    usage: OperationBridgeBenchmarks [--quick] [--json] [--only SUBSTRING] [--isolated] [--grow-pool N]
                           OperationBridgeBenchmarks --soak | --soak-operations N
                           OperationBridgeBenchmarks --object-sizes
                      --quick   smaller sizes and fewer rounds (seconds instead of minutes)
                      --json    print only a JSON array, one object per scenario
                      --only    run the groups of scenarios whose name contains SUBSTRING
                                (\(Scenarios.groups.joined(separator: ", ")))
                      --isolated  run each group in a fresh process of its own, so that no row
                                depends on the threads earlier rows left in the process
                      --grow-pool N  first make Dispatch start N more threads (N work items
                                blocked at once), as earlier rows of a full run do: the state
                                in which full and isolated runs disagree (README, footnote 5);
                                N from 1 to 32 (a warning when Dispatch starts fewer)
                      --soak    a million operations through every bridge, memory sampled
                                after each batch (exit status 1 if it grows)
                      --object-sizes  the instance size and glibc chunk of each kind the
                                memory rows measure (Linux)
                    """)
                exit(0)
            default:
                FileHandle.standardError.write(Data("unknown argument \(argument); see --help\n".utf8))
                exit(2)
            }
        }
    }

    /// `full` normally, `full / 8` (at least `minimum`) with `--quick`.
    func size(_ full: Int, minimum: Int = 500) -> Int {
        quick ? max(minimum, full / 8) : full
    }

    var rounds: Int { quick ? 3 : 7 }
}

/// Makes Dispatch's global pool start `count` more threads: `count` work items that block until
/// all of them run at once. Dispatch keeps the threads for a while once they are idle, as it
/// does after the earlier rows of a full run. Where Dispatch starts fewer threads than asked, the
/// items are let go after ten seconds with a warning rather than waiting for ever.
func growDispatchPool(by count: Int) {
    guard count > 0 else { return }
    let started = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    for _ in 0..<count {
        DispatchQueue.global().async {
            started.signal()
            release.wait()
        }
    }
    let deadline = DispatchTime.now() + .seconds(10)
    let running = (0..<count).prefix { _ in started.wait(timeout: deadline) == .success }.count
    if running < count {
        FileHandle.standardError.write(
            Data("warning: --grow-pool: Dispatch started \(running) of \(count) threads\n".utf8))
    }
    for _ in 0..<count { release.signal() }
}

/// The number of threads in this process (from /proc on Linux), or `nil`.
func threadCount() -> Int? {
    #if os(Linux)
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Threads:") })
        else { return nil }
        return Int(line.dropFirst("Threads:".count).trimmingCharacters(in: .whitespaces))
    #else
        return nil
    #endif
}

/// One row of the report.
struct Measurement: Codable {
    let scenario: String
    let library_seconds: Double
    let baseline_seconds: Double
    let ratio: Double
    let target: String
    let within_target: Bool?
    let unit: String
    let note: String?
}

/// Wall-clock seconds of `body`.
func seconds(_ body: () async throws -> Void) async rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try await body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/// Runs `library` and `baseline` alternately for `rounds` rounds (after one warm-up each) and
/// compares the medians.
func compare(
    _ scenario: String,
    rounds: Int,
    target: Double?,
    targetText: String? = nil,
    note: String? = nil,
    library: () async throws -> Void,
    baseline: () async throws -> Void
) async rethrows -> Measurement {
    _ = try await seconds(library)
    _ = try await seconds(baseline)
    var libraryTimes: [Double] = []
    var baselineTimes: [Double] = []
    for round in 0..<rounds {
        // Alternate which side goes first, so drift affects both alike.
        if round % 2 == 0 {
            libraryTimes.append(try await seconds(library))
            baselineTimes.append(try await seconds(baseline))
        } else {
            baselineTimes.append(try await seconds(baseline))
            libraryTimes.append(try await seconds(library))
        }
    }
    let libraryMedian = median(libraryTimes)
    let baselineMedian = median(baselineTimes)
    // The ratio is the median of the paired per-round ratios: each round runs both sides back
    // to back, so drift of the machine between rounds cancels out.
    let pairedRatios = zip(libraryTimes, baselineTimes).map { $0 / $1 }.sorted()
    let ratio = median(pairedRatios)
    let spread = "paired ratios \(format(pairedRatios.first!, digits: 2))–\(format(pairedRatios.last!, digits: 2))×"
    return Measurement(
        scenario: scenario,
        library_seconds: libraryMedian,
        baseline_seconds: baselineMedian,
        ratio: ratio,
        target: targetText ?? target.map { "≤ \(format($0, digits: 2))×" } ?? "info",
        within_target: target.map { ratio <= $0 },
        unit: "s",
        note: [note, spread].compactMap { $0 }.joined(separator: "; ")
    )
}

#if canImport(Darwin)
    /// This task's port. Not `mach_task_self_`: a global variable, which SDKs before the
    /// `nonisolated(unsafe)` annotation make an error to read in the Swift 6 language mode.
    private let machTaskSelf: mach_port_t = task_self_trap()
#endif

/// The resident set size of this process: from the Mach task information on Apple platforms,
/// from /proc on Linux; `nil` where neither is available.
func residentBytes() -> Int? {
    #if canImport(Darwin)
        var info = mach_task_basic_info()
        var count = mach_msg_type_number_t(MemoryLayout<mach_task_basic_info>.size / MemoryLayout<natural_t>.size)
        let status = withUnsafeMutablePointer(to: &info) { pointer in
            pointer.withMemoryRebound(to: integer_t.self, capacity: Int(count)) {
                task_info(machTaskSelf, task_flavor_t(MACH_TASK_BASIC_INFO), $0, &count)
            }
        }
        return status == KERN_SUCCESS ? Int(info.resident_size) : nil
    #elseif os(Linux)
        guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let fields = statm.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    #else
        return nil
    #endif
}

#if os(macOS) || os(Linux)
    /// Runs this executable again with `arguments`, in a fresh process, and returns what it
    /// printed; traps naming `purpose` when it cannot start or exits unsuccessfully.
    func runThisExecutable(_ arguments: [String], for purpose: String) -> Data {
        let process = Process()
        // The running executable itself, however it was started (`arguments[0]` may be a bare
        // name found on PATH).
        process.executableURL = Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        do {
            try process.run()
        } catch {
            fatalError("cannot start \(purpose): \(error)")
        }
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            fatalError("\(purpose) failed (exit status \(process.terminationStatus))")
        }
        return output
    }
#endif

func format(_ value: Double, digits: Int = 3) -> String {
    String(format: "%.\(digits)f", value)
}

func printTable(_ rows: [Measurement]) {
    let header = ["scenario", "library", "baseline", "ratio", "target", "ok"]
    var lines = [header]
    for row in rows {
        let library =
            row.unit == "s"
            ? format(row.library_seconds) + " s" : format(row.library_seconds, digits: 0) + " " + row.unit
        let baseline =
            row.unit == "s"
            ? format(row.baseline_seconds) + " s" : format(row.baseline_seconds, digits: 0) + " " + row.unit
        let ok = row.within_target.map { $0 ? "yes" : "NO" } ?? "-"
        lines.append([row.scenario, library, baseline, format(row.ratio, digits: 2) + "×", row.target, ok])
    }
    let widths = header.indices.map { column in lines.map { $0[column].count }.max() ?? 0 }
    for (index, line) in lines.enumerated() {
        let padded = line.indices.map { line[$0].padding(toLength: widths[$0], withPad: " ", startingAt: 0) }
        print("| " + padded.joined(separator: " | ") + " |")
        if index == 0 { print("|" + widths.map { String(repeating: "-", count: $0 + 2) }.joined(separator: "|") + "|") }
    }
    for row in rows where row.note != nil {
        print("- \(row.scenario): \(row.note!)")
    }
}

/// Runs `body(0..<count)` concurrently: every body starts at once, and the call returns when all
/// have returned. Both sides of a comparison use it.
///
/// The bodies are spread over task groups of at most 500 children, all running at once, inside
/// one outer group: the runtime keeps a group's children in a linked list that it walks to remove
/// each finished child (`swift::TaskGroup::removeChildTask`, discarding groups included), so one
/// group of 50,000 children spends most of its time there — quadratically, and differently from
/// round to round depending on the order the children finish in — and swamps what is measured.
func forEachConcurrently(_ count: Int, _ body: @escaping @Sendable (Int) async -> Void) async {
    let chunk = 500
    let chunks = stride(from: 0, to: count, by: chunk).map { $0..<min($0 + chunk, count) }
    if #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) {
        await withDiscardingTaskGroup { outer in
            for range in chunks {
                outer.addTask {
                    await withDiscardingTaskGroup { group in
                        for index in range { group.addTask { await body(index) } }
                    }
                }
            }
        }
    } else {
        await withTaskGroup(of: Void.self) { outer in
            for range in chunks {
                outer.addTask {
                    await withTaskGroup(of: Void.self) { group in
                        for index in range { group.addTask { await body(index) } }
                        await group.waitForAll()
                    }
                }
            }
            await outer.waitForAll()
        }
    }
}
