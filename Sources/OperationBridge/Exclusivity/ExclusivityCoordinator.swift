import Foundation

/// Grants exclusivity keys — to operations about to run and to tasks — one holder per key at a
/// time, first come, first served.
///
/// A request names all the keys its holder needs and is granted them all at once, never some:
/// a holder never waits for a key while holding another, so two holders that name the same keys
/// in different orders cannot deadlock. Each key keeps its waiters in arrival order, and a
/// request is granted only when it is first in line for every key it names — so a steady stream
/// of newcomers never overtakes an earlier waiter.
///
/// Safety: the state machine is only touched while holding `lock`; grants are delivered after
/// the lock is released.
final class ExclusivityCoordinator: @unchecked Sendable {
    /// The coordinator every key of the process goes through.
    static let shared = ExclusivityCoordinator()

    private let lock = NSLock()
    private var machine = ExclusivityStateMachine()

    /// Asks for `keys`. Returns `true` when they were granted at once (`onGrant` is then never
    /// called); otherwise `onGrant` is called once they are, on the thread that released the last
    /// of them — unless the request is withdrawn first. `onGrant` returns whether the holder still
    /// wants them; when it returns `false`, they are released at once.
    func request(_ request: ExclusivityRequest, onGrant: @escaping @Sendable () -> Bool) -> Bool {
        lock.withCriticalSection { machine.enqueue(request, onGrant: onGrant) }
    }

    /// Gives up `request`: releases its keys when it holds them, leaves the lines when it waits.
    /// Does nothing when it was withdrawn already. Grants the next waiters.
    ///
    /// - Parameter onlyIfWaiting: Leave a request that holds its keys alone: its grant may be on
    ///   its way to the holder, who releases them itself.
    /// - Returns: Whether the request was still waiting (it was never granted).
    @discardableResult
    func withdraw(_ request: ExclusivityRequest, onlyIfWaiting: Bool = false) -> Bool {
        let (wasWaiting, grants) = lock.withCriticalSection {
            machine.withdraw(request, onlyIfWaiting: onlyIfWaiting)
        }
        deliver(grants)
        return wasWaiting
    }

    /// Calls the holders that were granted their keys; releases the keys of those that no longer
    /// want them, and grants the next ones.
    private func deliver(_ grants: [(request: ExclusivityRequest, onGrant: @Sendable () -> Bool)]) {
        var pending = grants
        while let grant = pending.popLast() {
            if grant.onGrant() { continue }
            let (_, next) = lock.withCriticalSection { machine.withdraw(grant.request) }
            pending.append(contentsOf: next)
        }
    }
}

/// One holder's request for a set of keys. Compared by identity.
final class ExclusivityRequest: Sendable {
    /// The keys, without duplicates.
    let keys: [ExclusivityKey]

    init(_ keys: some Sequence<ExclusivityKey>) {
        var seen = Set<ExclusivityKey>()
        self.keys = keys.filter { seen.insert($0).inserted }
    }
}

/// The bookkeeping of ``ExclusivityCoordinator``: who holds each key, who waits for it in which
/// order.
struct ExclusivityStateMachine {
    typealias Grant = (request: ExclusivityRequest, onGrant: @Sendable () -> Bool)

    /// A key's holder and its line of waiters.
    private struct Line {
        var holder: ObjectIdentifier?
        /// Waiting requests in arrival order; `head` is the first one still waiting.
        var waiters: [ObjectIdentifier] = []
        var head = 0

        var first: ObjectIdentifier? { head < waiters.count ? waiters[head] : nil }

        mutating func remove(_ id: ObjectIdentifier) {
            if first == id {
                head += 1
                // Compact once the consumed prefix dominates, so a long-lived key stays small.
                if head > 32 && head * 2 > waiters.count {
                    waiters.removeFirst(head)
                    head = 0
                }
            } else if let index = waiters[head...].firstIndex(of: id) {
                waiters.remove(at: index)
            }
        }
    }

    private enum State {
        /// In line for its keys, to be told with the callback.
        case waiting(ExclusivityRequest, onGrant: @Sendable () -> Bool)
        /// Holding its keys.
        case holding(ExclusivityRequest)
    }

    private var lines: [ExclusivityKey: Line] = [:]
    private var requests: [ObjectIdentifier: State] = [:]

    /// Grants the request at once when every key is free and nobody waits for any of them;
    /// otherwise puts it in line for each. Returns whether it was granted.
    mutating func enqueue(_ request: ExclusivityRequest, onGrant: @escaping @Sendable () -> Bool) -> Bool {
        let id = ObjectIdentifier(request)
        precondition(requests[id] == nil, "Internal inconsistency: an exclusivity request was made twice")
        let free = request.keys.allSatisfy { key in
            guard let line = lines[key] else { return true }
            return line.holder == nil && line.first == nil
        }
        if free {
            for key in request.keys { lines[key, default: Line()].holder = id }
            requests[id] = .holding(request)
            return true
        }
        for key in request.keys { lines[key, default: Line()].waiters.append(id) }
        requests[id] = .waiting(request, onGrant: onGrant)
        return false
    }

    /// Releases or withdraws `request` (with `onlyIfWaiting`, only withdraws it), and returns
    /// whether it was waiting and the requests granted because of it.
    mutating func withdraw(
        _ request: ExclusivityRequest,
        onlyIfWaiting: Bool = false
    ) -> (wasWaiting: Bool, grants: [Grant]) {
        let id = ObjectIdentifier(request)
        guard let state = requests[id] else { return (false, []) }
        if onlyIfWaiting, case .holding = state { return (false, []) }
        requests[id] = nil
        let wasWaiting: Bool
        switch state {
        case .waiting:
            wasWaiting = true
            for key in request.keys { lines[key]?.remove(id) }
        case .holding:
            wasWaiting = false
            for key in request.keys { lines[key]?.holder = nil }
        }
        return (wasWaiting, grantWaiters(of: request.keys))
    }

    /// Grants every request that is first in line for each of its keys, all of them free, among
    /// the lines of `keys` (those just freed or shortened). A grant frees nothing, so no other
    /// line needs a look.
    private mutating func grantWaiters(of keys: [ExclusivityKey]) -> [Grant] {
        var grants: [Grant] = []
        var candidates = keys
        while let key = candidates.popLast() {
            guard let line = lines[key] else { continue }
            guard line.holder == nil, let first = line.first else {
                if line.holder == nil && line.first == nil { lines[key] = nil }
                continue
            }
            guard case .waiting(let request, let onGrant) = requests[first] else {
                preconditionFailure("Internal inconsistency: a waiter in line is not waiting")
            }
            let grantable = request.keys.allSatisfy { lines[$0]?.holder == nil && lines[$0]?.first == first }
            guard grantable else { continue }
            for key in request.keys {
                lines[key]?.remove(first)
                lines[key]?.holder = first
            }
            requests[first] = .holding(request)
            grants.append((request, onGrant))
        }
        return grants
    }
}
