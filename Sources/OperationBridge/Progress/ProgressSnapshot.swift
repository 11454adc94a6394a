import Foundation

/// What an ``OperationProgress`` said at one moment: a value, safe to hand to any actor.
///
/// ```swift
/// for await snapshot in download.bridge.operationProgress.updates() {
///     progressBar.value = snapshot.fractionCompleted
///     statusLabel.text = snapshot.localizedDescription   // "42% completed"
/// }
/// ```
///
/// The unit counts follow Foundation's `Progress`: for an operation, the units its work reported;
/// for an aggregate (a group, a pipeline, a results sequence), the summed weights of the
/// operations that have completed, while ``fractionCompleted`` also counts the partial progress
/// of those still running.
///
/// ## Cancellation and threading
/// A value type: reading it takes no lock and never changes. ``isCancelled`` says the work was
/// cancelled; the snapshot itself cancels nothing.
public struct ProgressSnapshot: Sendable, Hashable, CustomStringConvertible {
    /// The units of work completed.
    public let completedUnitCount: Int64
    /// The units of work in total; zero or less while unknown (see ``fractionCompleted`` for zero).
    public let totalUnitCount: Int64
    /// How much of the work is done, from 0 to 1. `1` once an operation has run its work and
    /// finished without being cancelled, whatever units it reported. As for Foundation's
    /// `Progress`: `0` while the total is below zero or nothing is completed, and `1` for a total
    /// of zero with units completed (zero of zero is indeterminate, one of zero is done).
    public let fractionCompleted: Double
    /// Whether the work has ended: the operation has finished (cancelled or not), or every
    /// operation of an aggregate has. The last snapshot of ``OperationProgress/updates(every:clock:)``.
    public let isFinished: Bool
    /// Whether the work was cancelled (or timed out): the operation, or for an aggregate that is
    /// not an operation, one of its operations. A cancelled progress keeps the fraction it had.
    public let isCancelled: Bool

    /// Whether the amount of work is unknown, as for Foundation's `Progress`: a total or a
    /// completed count below zero, or both zero. Never once finished.
    public var isIndeterminate: Bool {
        !isFinished
            && (totalUnitCount < 0 || completedUnitCount < 0 || (totalUnitCount == 0 && completedUnitCount == 0))
    }

    /// The fraction of an operation's own units, as Foundation's `Progress` computes it, kept
    /// within 0 and 1 (Foundation reports more than 1 for more units than the total).
    static func fraction(completed: Int64, total: Int64) -> Double {
        if total > 0 { return min(max(Double(completed) / Double(total), 0), 1) }
        return total == 0 && completed > 0 ? 1 : 0
    }

    /// The fraction as a percentage, in the words of Foundation's default description on Apple
    /// platforms: `"42% completed"`. Always English (Foundation on Linux returns an empty
    /// description; the package writes its own on every platform, so output is the same).
    public var localizedDescription: String {
        "\(Int((fractionCompleted * 100).rounded(.down)))% completed"
    }

    /// The description, the units and the state, for logs: `"42% completed (42 of 100)"`.
    public var description: String {
        var text = "\(localizedDescription) (\(completedUnitCount) of \(totalUnitCount))"
        if isCancelled { text += ", cancelled" }
        if isFinished { text += ", finished" }
        return text
    }
}
