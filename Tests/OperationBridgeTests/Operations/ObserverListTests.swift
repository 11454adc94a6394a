import Foundation
import Testing

@testable import OperationBridge

/// The observer list keeps the counter that names observers and waiters in its own buffer, not
/// in the lifecycle state machine (Design.md, "Memory per operation"). These tests pin what that
/// must not change: an identifier is never handed out twice while the list lives — also once
/// every entry is gone, and across the counter's wrap-around while an entry still uses it — and
/// a copy of the list is a value.
@Suite(.timeLimit(Stress.timeLimit(minutes: 1)))
struct ObserverListTests {
    typealias List = LifecycleStateMachine.ObserverList

    private func entry(_ id: LifecycleStateMachine.ObserverID) -> List.Entry {
        (id, .cancelledBeforeInstall)
    }

    @Test("Identifiers are not reused once the entries that had them are removed")
    func identifiersOutliveTheirEntries() {
        var list = List()
        var seen: Set<LifecycleStateMachine.ObserverID> = []
        for _ in 0..<100 {
            let id = list.reserveID()
            #expect(seen.insert(id).inserted, "identifier \(id) handed out twice")
            list.append(entry(id))
            if Bool.random() { _ = list.remove(at: list.firstIndex(of: id)!) }
            if Bool.random() { list.removeAll { _ in true } }
        }
        #expect(seen.count == 100)
    }

    @Test("The first identifier is reserved without a buffer of the list's own, and never handed out again")
    func theFirstIdentifierNeedsNoBuffer() {
        // Two lists that each reserved their first identifier share one unchanging buffer.
        var first = List()
        var second = List()
        let firstID = first.reserveID()
        #expect(second.reserveID() == firstID)
        // Each goes on from there on its own: the next identifiers differ from the first.
        let next = first.reserveID()
        #expect(next != firstID)
        second.append(entry(firstID))
        let secondNext = second.reserveID()
        #expect(secondNext != firstID && secondNext == next)
        #expect(first.count == 0 && second.count == 1)
        // A third list still starts from the shared state, unchanged by the two.
        var third = List()
        #expect(third.reserveID() == firstID)
        third.removeAll { _ in true }
        #expect(third.reserveID() == next)
    }

    @Test("After the counter wraps, identifiers still in use are skipped")
    func wrapAroundSkipsIdentifiersInUse() {
        // Identifiers 0, 1 and 2 as a fresh counter hands them out.
        var fresh = List()
        let (zero, one, two) = (fresh.reserveID(), fresh.reserveID(), fresh.reserveID())
        // A list about to wrap, whose long-lived entries use 0 and 1.
        var list = List(nextID: UInt32.max)
        list.append(entry(zero))
        list.append(entry(one))
        let last = list.reserveID()
        #expect(last != zero && last != one)
        // Wrapped: 0 and 1 are in use, so the counter goes on to 2.
        #expect(list.reserveID() == two)
        // An entry removed frees its identifier for the next time round only.
        _ = list.remove(at: list.firstIndex(of: zero)!)
        let next = list.reserveID()
        #expect(next != zero && next != one && next != two)
    }

    @Test("A copy is a value: changing it leaves the original as it was")
    func copiesAreValues() {
        var original = List()
        let first = original.reserveID()
        original.append(entry(first))
        let second = original.reserveID()
        original.append(entry(second))
        var copy = original
        _ = copy.remove(at: 0)
        let third = copy.reserveID()
        copy.append(entry(third))
        copy.removeAll { $0.id == second }
        #expect(original.map(\.id) == [first, second])
        #expect(copy.count == 1)
        // Each goes on counting from where the copy was made, independently.
        #expect(original.reserveID() == third)
    }

    @Test("Entries keep their order through removals and growth")
    func entriesKeepTheirOrder() {
        var list = List()
        var expected: [LifecycleStateMachine.ObserverID] = []
        for round in 0..<200 {
            let id = list.reserveID()
            list.append(entry(id))
            expected.append(id)
            if round % 3 == 0 {
                let index = Int.random(in: 0..<expected.count)
                #expect(list.remove(at: index).id == expected.remove(at: index))
            }
        }
        list.removeAll { $0.id.hashValue % 2 == 0 }
        expected.removeAll { $0.hashValue % 2 == 0 }
        #expect(list.map(\.id) == expected)
        #expect(list.count == expected.count)
    }
}
