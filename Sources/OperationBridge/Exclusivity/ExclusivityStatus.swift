import Foundation

/// What an exclusivity request waits for or holds, read at one moment (see
/// ``ExclusivityCoordinator/status(of:)``): the facts behind the key lines of
/// ``Bridge/pendingDiagnostics``, the stuck-wait report and ``WaitGraph``.
enum ExclusivityStatus {
    /// One key a waiting request names.
    struct KeyWait {
        let key: ExclusivityKey
        /// Who holds the key, or `nil` when it is free (the request then waits for those ahead).
        let holder: ExclusivityHolder?
        /// When the holder was granted it.
        let heldSince: ContinuousClock.Instant?
        /// How many requests wait ahead of this one for the key.
        let ahead: Int
    }

    /// The request holds `keys`, granted at `since`.
    case holding(keys: [ExclusivityKey], since: ContinuousClock.Instant?)
    /// The request has waited since `since`, for each of `keys`.
    case waiting(since: ContinuousClock.Instant, keys: [KeyWait])

    /// The report's lines, with how long each wait and hold has lasted at `now`.
    func lines(now: ContinuousClock.Instant) -> [String] {
        switch self {
        case .holding(let keys, let since):
            let duration = since.map { " for \(Self.seconds($0.duration(to: now)))" } ?? ""
            let names = keys.map { "'\($0)'" }.joined(separator: ", ")
            return ["holds exclusivity \(keys.count == 1 ? "key" : "keys") \(names)\(duration)"]
        case .waiting(let since, let keys):
            let waited = Self.seconds(since.duration(to: now))
            return keys.map { wait in
                let holder: String
                if let owner = wait.holder {
                    let held = wait.heldSince.map { " for \(Self.seconds($0.duration(to: now)))" } ?? ""
                    holder = "held by \(owner.description)\(held)"
                } else {
                    holder = "free"
                }
                return "waits \(waited) for exclusivity key '\(wait.key)': \(holder); \(wait.placeInLine)"
            }
        }
    }

    /// "1.25 s".
    static func seconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let value = Double(seconds) + Double(attoseconds) / 1e18
        return "\((value * 100).rounded() / 100) s"
    }
}

extension ExclusivityStatus.KeyWait {
    /// "first in line", "2 waiting ahead".
    var placeInLine: String { ahead == 0 ? "first in line" : "\(ahead) waiting ahead" }
}
