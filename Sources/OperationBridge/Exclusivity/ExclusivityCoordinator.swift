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
/// A holder's own code may enter its grant again (``reenter(_:)``, see ``ExclusivityHolds``):
/// the keys are then released once the holder *and* every re-entry have let go of them, so a
/// re-entry never runs while another holder has the key.
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
                // Entered again by the holder's own code, still running: the last one out releases.
                guard request.reentries == 0 else {
                    request.ownerReleased = true
                    return (false, [])
                }
                return (false, releaseLocked(request))
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

    /// Enters `request`'s grant again, for code that runs on behalf of its holder (see
    /// ``ExclusivityHolds``). Returns whether it did: `false` once the keys were released (or were
    /// never granted) — the caller must then ask for them like anyone else. Each successful call
    /// is paired with one ``leaveReentry(_:)``.
    func reenter(_ request: ExclusivityRequest) -> Bool {
        lock.withCriticalSection {
            guard request.state == .holding else { return false }
            request.reentries += 1
            return true
        }
    }

    /// Ends one ``reenter(_:)``; releases the keys when the holder let go of them meanwhile and
    /// this was the last re-entry. Grants the next waiters.
    func leaveReentry(_ request: ExclusivityRequest) {
        let grants = lock.withCriticalSection { () -> [(request: ExclusivityRequest, onGrant: @Sendable () -> Bool)] in
            guard request.state == .holding, request.reentries > 0 else {
                preconditionFailure("Internal inconsistency: an exclusivity re-entry left twice")
            }
            request.reentries -= 1
            guard request.reentries == 0, request.ownerReleased else { return [] }
            return releaseLocked(request)
        }
        deliver(grants)
    }

    /// Releases the keys `request` holds; returns the grants to deliver. Caller holds `lock`.
    private func releaseLocked(
        _ request: ExclusivityRequest
    ) -> [(request: ExclusivityRequest, onGrant: @Sendable () -> Bool)] {
        request.state = .withdrawn
        for key in request.keys { lines[key]?.holder = nil }
        return grantWaitersLocked(of: request.keys)
    }

    /// What `request` waits for or holds, read in one critical section: for the stuck-await
    /// report, ``Bridge/pendingDiagnostics`` and ``WaitGraph``. `nil` when it was not asked yet,
    /// or was released or withdrawn.
    func status(of request: ExclusivityRequest) -> ExclusivityStatus? {
        lock.withCriticalSection {
            switch request.state {
            case .new, .withdrawn:
                return nil
            case .holding:
                return .holding(keys: request.keys, since: request.grantedAt)
            case .waiting:
                let keys = request.keys.map { key in
                    let line = lines[key]
                    return ExclusivityStatus.KeyWait(
                        key: key, holder: line?.holder?.holder, heldSince: line?.holder?.grantedAt,
                        ahead: line?.count(before: request) ?? 0)
                }
                return .waiting(since: request.requestedAt, keys: keys)
            }
        }
    }

    /// What `request` waits for, one line per key it names: who holds the key and since when, and
    /// how many wait ahead of it — or what it holds, once granted (unless `onlyIfWaiting`). For
    /// the stuck-await report.
    func describe(_ request: ExclusivityRequest, onlyIfWaiting: Bool = false) -> [String] {
        guard let status = status(of: request) else { return [] }
        if onlyIfWaiting, case .holding = status { return [] }
        return status.lines(now: .now)
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
        request.grantedAt = .now
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
            first.grantedAt = .now
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

    /// How many requests wait ahead of `request` (all of them when it does not wait here).
    func count(before request: ExclusivityRequest) -> Int {
        let index = waiters[head...].firstIndex { $0 === request } ?? waiters.count
        return index - head
    }

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
/// Safety: `state`, `onGrant`, `grantedAt`, `reentries` and `ownerReleased` are only touched
/// while holding the coordinator's lock; the rest is immutable.
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
    /// Who asks, for the stuck-await report.
    let holder: ExclusivityHolder
    /// When it was made, and when its keys were granted.
    let requestedAt = ContinuousClock.now
    var grantedAt: ContinuousClock.Instant?
    /// How many re-entries by the holder's own code are running (see
    /// ``ExclusivityCoordinator/reenter(_:)``).
    var reentries = 0
    /// Whether the holder let go of the keys while re-entries were running: the last one releases.
    var ownerReleased = false

    init(_ keys: [ExclusivityKey], holder: ExclusivityHolder) {
        self.holder = holder
        if keys.count < 2 {
            self.keys = keys
        } else {
            var seen = Set<ExclusivityKey>()
            self.keys = keys.filter { seen.insert($0).inserted }
        }
    }
}
