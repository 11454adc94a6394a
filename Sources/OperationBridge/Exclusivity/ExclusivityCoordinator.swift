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
/// Safety: the lines and every request's `state` are only touched while holding `lock`; grants
/// are delivered after the lock is released.
final class ExclusivityCoordinator: @unchecked Sendable {
    /// The coordinator every key of the process goes through.
    static let shared = ExclusivityCoordinator()

    private let lock = NSLock()
    private var lines: [ExclusivityKey: ExclusivityLine] = [:]

    /// Grants `request` its keys at once when every key is free and nobody waits for any of
    /// them. Returns whether it did; otherwise nothing changed.
    func tryAcquire(_ request: ExclusivityRequest) -> Bool {
        lock.withCriticalSection { grantAtOnceLocked(request) }
    }

    /// Asks for `request`'s keys. Returns `true` when they were granted at once (`onGrant` is then
    /// never called); otherwise `onGrant` is called once they are, on the thread that released
    /// the last of them — unless the request is withdrawn first. `onGrant` returns whether the
    /// holder still wants them; when it returns `false`, they are released at once.
    func request(_ request: ExclusivityRequest, onGrant: @escaping @Sendable () -> Bool) -> Bool {
        lock.withCriticalSection {
            if grantAtOnceLocked(request) { return true }
            precondition(request.state == .new, "Internal inconsistency: an exclusivity request was made twice")
            request.state = .waiting
            request.onGrant = onGrant
            for key in request.keys { line(for: key).waiters.append(request) }
            return false
        }
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
            () -> (Bool, [(request: ExclusivityRequest, onGrant: @Sendable () -> Bool)]) in
            switch request.state {
            case .new, .withdrawn:
                return (false, [])
            case .holding:
                if onlyIfWaiting { return (false, []) }
                request.state = .withdrawn
                for key in request.keys { lines[key]?.holder = nil }
                return (false, grantWaitersLocked(of: request.keys))
            case .waiting:
                request.state = .withdrawn
                request.onGrant = nil
                for key in request.keys { lines[key]?.remove(request) }
                return (true, grantWaitersLocked(of: request.keys))
            }
        }
        deliver(grants)
        return wasWaiting
    }

    /// Calls the holders that were granted their keys; releases the keys of those that no longer
    /// want them, which may grant others.
    private func deliver(_ grants: [(request: ExclusivityRequest, onGrant: @Sendable () -> Bool)]) {
        for grant in grants where !grant.onGrant() {
            withdraw(grant.request)
        }
    }

    private func line(for key: ExclusivityKey) -> ExclusivityLine {
        if let line = lines[key] { return line }
        let line = ExclusivityLine()
        lines[key] = line
        return line
    }

    /// Caller holds `lock`.
    private func grantAtOnceLocked(_ request: ExclusivityRequest) -> Bool {
        guard request.state == .new else { return false }
        for key in request.keys {
            if let line = lines[key], line.holder != nil || line.first != nil { return false }
        }
        for key in request.keys { line(for: key).holder = request }
        request.state = .holding
        return true
    }

    /// Grants every request that is first in line for each of its keys, all of them free, among
    /// the lines of `keys` (those just freed or shortened). A grant frees nothing, so no other
    /// line needs a look. Drops the lines left empty. Caller holds `lock`.
    private func grantWaitersLocked(
        of keys: [ExclusivityKey]
    ) -> [(request: ExclusivityRequest, onGrant: @Sendable () -> Bool)] {
        var grants: [(request: ExclusivityRequest, onGrant: @Sendable () -> Bool)] = []
        for key in keys {
            guard let line = lines[key] else { continue }
            guard line.holder == nil else { continue }
            guard let first = line.first else {
                lines[key] = nil
                continue
            }
            let grantable = first.keys.allSatisfy { lines[$0]?.holder == nil && lines[$0]?.first === first }
            guard grantable, let onGrant = first.onGrant else { continue }
            for key in first.keys {
                lines[key]?.remove(first)
                lines[key]?.holder = first
            }
            first.state = .holding
            first.onGrant = nil
            grants.append((first, onGrant))
        }
        return grants
    }
}

/// A key's holder and its line of waiters. Guarded by the coordinator's lock.
private final class ExclusivityLine {
    var holder: ExclusivityRequest?
    /// Waiting requests in arrival order; `head` is the first one still waiting.
    var waiters: [ExclusivityRequest] = []
    var head = 0

    var first: ExclusivityRequest? { head < waiters.count ? waiters[head] : nil }

    func remove(_ request: ExclusivityRequest) {
        if first === request {
            head += 1
            // Compact once the consumed prefix dominates, so a long-lived key stays small.
            if head > 32 && head * 2 > waiters.count {
                waiters.removeFirst(head)
                head = 0
            }
        } else if let index = waiters[head...].firstIndex(where: { $0 === request }) {
            waiters.remove(at: index)
        }
    }
}

/// One holder's request for a set of keys. Compared by identity.
///
/// Safety: `state` and `onGrant` are only touched while holding the coordinator's lock.
final class ExclusivityRequest: @unchecked Sendable {
    enum State {
        /// Not asked yet.
        case new
        /// In line for its keys.
        case waiting
        /// Holding its keys.
        case holding
        /// Released or withdrawn. Terminal.
        case withdrawn
    }

    /// The keys, without duplicates.
    let keys: [ExclusivityKey]
    var state = State.new
    /// Tells the holder of the grant, while it waits.
    var onGrant: (@Sendable () -> Bool)?

    init(_ keys: [ExclusivityKey]) {
        if keys.count < 2 {
            self.keys = keys
        } else {
            var seen = Set<ExclusivityKey>()
            self.keys = keys.filter { seen.insert($0).inserted }
        }
    }
}
