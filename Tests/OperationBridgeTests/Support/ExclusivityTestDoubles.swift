import Foundation
import OperationBridge

/// An operation that records when it holds its keys: it enters `holders` for each key as it
/// starts, waits at `gate` (if any) and leaves as it finishes.
final class KeyHolderOperation: AsyncOperation, @unchecked Sendable {
    let label: String
    let keys: [ExclusivityKey]
    let holders: KeyHolders
    let gate: Gate?
    let started = Gate()

    init(_ label: String, keys: [ExclusivityKey], holders: KeyHolders, gate: Gate? = nil) {
        self.label = label
        self.keys = keys
        self.holders = holders
        self.gate = gate
        super.init()
        for key in keys { bridge.addCondition(.mutuallyExclusive(key)) }
    }

    override func main() {
        holders.enter(label, keys)
        started.open()
        guard let gate else {
            holders.leave(keys)
            return finish()
        }
        Task {
            await gate.wait()
            self.holders.leave(self.keys)
            self.finish()
        }
    }
}

/// Who holds which key: records the order of entries and any overlap of two holders of a key.
///
/// Safety: state is only touched while holding `lock`.
final class KeyHolders: @unchecked Sendable {
    private let lock = NSLock()
    private var holding: [ExclusivityKey: Int] = [:]
    private var entries: [String] = []
    private var overlaps = 0

    init() {}

    func enter(_ label: String, _ keys: [ExclusivityKey]) {
        lock.withLock {
            entries.append(label)
            for key in keys {
                holding[key, default: 0] += 1
                if holding[key]! > 1 { overlaps += 1 }
            }
        }
    }

    func leave(_ keys: [ExclusivityKey]) {
        lock.withLock {
            for key in keys { holding[key, default: 0] -= 1 }
        }
    }

    /// The labels, in the order their holders entered.
    var order: [String] { lock.withLock { entries } }
    /// How many times a holder entered while another held one of its keys.
    var overlapCount: Int { lock.withLock { overlaps } }
}

extension ExclusivityKey {
    /// A key no other test uses (keys are process-wide, and tests run in parallel).
    static func unique(_ name: String = "key") -> ExclusivityKey {
        ExclusivityKey("\(name)-\(UUID().uuidString)")
    }
}

extension KeyHolders {
    /// Starts an operation labelled "holder" that holds `key` on `queue` until the returned gate
    /// opens, and returns once it holds it.
    func startHolder(of key: ExclusivityKey, on queue: OperationQueue) async -> Gate {
        let gate = Gate()
        let holder = KeyHolderOperation("holder", keys: [key], holders: self, gate: gate)
        queue.addOperation(holder)
        await holder.started.wait()
        return gate
    }
}
