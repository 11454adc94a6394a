// A progress bar for the terminal, drawn from an OperationProgress's throttled snapshots.
import Foundation
import OperationBridge

/// Whether standard output is a terminal (a person watching), rather than a file or a pipe.
let standardOutputIsTerminal = isatty(STDOUT_FILENO) == 1

/// Draws `progress` until its work has finished. In a terminal the bar fills in place, redrawn
/// at most 20 times a second however fast the work reports; otherwise only the last line is
/// printed, so that a log (or the example's CI transcript) is the same on every run.
@MainActor
func drawProgressBar(for progress: OperationProgress) async {
    var last: ProgressSnapshot?
    for await snapshot in progress.updates(every: .milliseconds(50)) {
        last = snapshot
        if standardOutputIsTerminal {
            print("\r" + barLine(snapshot), terminator: "")
            fflush(nil)  // every stream: `stdout` itself is not concurrency-safe to name
        }
    }
    guard let last else { return }
    print(standardOutputIsTerminal ? "" : barLine(last))
}

/// `  [##########··········] 50% completed (2100 of 4200 KB done)`
private func barLine(_ snapshot: ProgressSnapshot) -> String {
    let width = 30
    let filled = Int((snapshot.fractionCompleted * Double(width)).rounded(.down))
    let bar = String(repeating: "#", count: filled) + String(repeating: "·", count: width - filled)
    return "  [\(bar)] \(snapshot.localizedDescription) "
        + "(\(snapshot.completedUnitCount) of \(snapshot.totalUnitCount) KB in finished files)"
}
