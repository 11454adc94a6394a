import Testing

@testable import OperationBridge

/// The graph scheduler's per-node lists: the first element inline, the others in an array.
@Suite
struct SmallListTests {
    @Test("Elements come back in the order appended, the first one kept inline", arguments: [0, 1, 2, 5, 100])
    func keepsOrderAndCount(count: Int) {
        var list = SmallList<Int>()
        for element in 0..<count { list.append(element * 3) }
        #expect(list.count == count)
        #expect(list.isEmpty == (count == 0))
        #expect(list.first == (count == 0 ? nil : 0))
        #expect(Array(list) == (0..<count).map { $0 * 3 })
        #expect(list.contains(3 * (count - 1)) == (count > 0))
        #expect(!list.contains(-1))
    }

    @Test func uniquedKeepsTheFirstOccurrences() {
        var list = SmallList(7)
        for element in [3, 7, 3, 9, 7] { list.append(element) }
        #expect(Array(list.uniqued()) == [7, 3, 9])
        #expect(Array(SmallList(4).uniqued()) == [4])
        #expect(SmallList<Int>().uniqued().isEmpty)
    }

    @Test func aLaunchListWithOneElementIsTheFastPath() {
        // The scheduler's single-launch path reads `first` when `count == 1`.
        var launches = SmallList<GraphStateMachine.Launch>()
        launches.append(GraphStateMachine.Launch(node: 4, dependenciesFinished: true))
        #expect(launches.count == 1)
        #expect(launches.first?.node == 4)
        launches.append(GraphStateMachine.Launch(node: 5, dependenciesFinished: false))
        #expect(launches.map(\.node) == [4, 5])
    }
}
