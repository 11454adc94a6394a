import Foundation

/// Who asks for exclusivity keys, as the stuck-await report names it.
enum ExclusivityHolder: Sendable, CustomStringConvertible {
    /// An operation declaring the keys (``OperationCondition/mutuallyExclusive(_:)``). Weak: a
    /// request does not keep its operation alive.
    case operation(WeakOperation)
    /// A task in ``withExclusiveAccess(to:isolation:fileID:line:_:)-(ExclusivityKey...,_,_,_,_)``,
    /// called there.
    case task(fileID: String, line: Int)

    var description: String {
        switch self {
        case .operation(let operation): operation.object?.diagnosticName ?? "an operation (released)"
        case .task(let fileID, let line): "a task in withExclusiveAccess at \(fileID):\(line)"
        }
    }
}

/// A weak reference to an operation, to name it.
///
/// Safety: a weak reference is read and written atomically by the runtime; it never changes.
struct WeakOperation: @unchecked Sendable {
    weak var object: Operation?
}

/// The exclusivity grants the current task's code runs under — how a holder's own code is told
/// from everyone else's, so that it enters its keys again instead of waiting for itself.
///
/// Bound by ``withExclusiveAccess(to:isolation:fileID:line:_:)-(ExclusivityKey...,_,_,_,_)``
/// around its body, and by an operation holding keys around its `main()` and its async work
/// (``TaskOperation``'s body, `then`, `addTask`): a task-local value, so child tasks and `Task { }`
/// made there inherit it (they are the holder's own work), and detached tasks do not. A grant
/// that has been released is not entered again: code that outlives its holder's scope asks
/// for the keys like anyone else.
enum ExclusivityHolds {
    /// The innermost grant of the current task, linked to the enclosing ones.
    @TaskLocal static var held: HeldGrant?

    /// Enters again, for the current task's code, the grants it runs under that name some of
    /// `keys`. Returns the grants entered (to leave with ``leave(_:)``) and the keys still to ask
    /// for.
    static func reenter(_ keys: [ExclusivityKey]) -> (entered: [ExclusivityRequest], missing: [ExclusivityKey]) {
        guard var grant = held else { return ([], keys) }
        var missing = keys
        var entered: [ExclusivityRequest] = []
        while true {
            let request = grant.request
            if missing.contains(where: request.keys.contains), ExclusivityCoordinator.shared.reenter(request) {
                entered.append(request)
                missing.removeAll(where: request.keys.contains)
                if missing.isEmpty { break }
            }
            guard let outer = grant.outer else { break }
            grant = outer
        }
        return (entered, missing)
    }

    /// Ends what ``reenter(_:)`` entered.
    static func leave(_ entered: [ExclusivityRequest]) {
        for request in entered { ExclusivityCoordinator.shared.leaveReentry(request) }
    }
}

/// One grant in the chain of ``ExclusivityHolds/held``.
final class HeldGrant: Sendable {
    let request: ExclusivityRequest
    let outer: HeldGrant?

    init(_ request: ExclusivityRequest, outer: HeldGrant?) {
        self.request = request
        self.outer = outer
    }
}
