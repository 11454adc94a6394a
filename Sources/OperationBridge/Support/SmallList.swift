/// A list that keeps its first element inline and the others in an array, which it allocates only
/// for a second element.
///
/// The graph scheduler keeps one per node (its dependents) and one per scheduling step (the
/// nodes to launch): in a chain every node has one dependent and every finish launches one node,
/// and an array each cost an allocation and a release per node (Design.md, "Performance").
struct SmallList<Element>: Sequence {
    private var head: Element?
    private var tail: [Element] = []

    init() {}

    init(_ element: Element) {
        head = element
    }

    var count: Int { head == nil ? 0 : 1 + tail.count }

    var isEmpty: Bool { head == nil }

    /// The first element, if any.
    var first: Element? { head }

    mutating func append(_ element: Element) {
        if head == nil {
            head = element
        } else {
            tail.append(element)
        }
    }

    func makeIterator() -> Iterator {
        Iterator(head: head, tail: tail)
    }

    struct Iterator: IteratorProtocol {
        fileprivate var head: Element?
        fileprivate let tail: [Element]
        fileprivate var index = 0

        fileprivate init(head: Element?, tail: [Element]) {
            self.head = head
            self.tail = tail
        }

        mutating func next() -> Element? {
            if let element = head {
                head = nil
                return element
            }
            guard index < tail.count else { return nil }
            defer { index += 1 }
            return tail[index]
        }
    }
}

extension SmallList where Element: Hashable {
    /// The list without repeated elements, in first-seen order; the list itself (nothing to
    /// allocate) when it has fewer than two.
    func uniqued() -> SmallList {
        guard !tail.isEmpty else { return self }
        var seen = Set<Element>()
        var unique = SmallList()
        for element in self where seen.insert(element).inserted { unique.append(element) }
        return unique
    }
}

extension SmallList where Element: Equatable {
    func contains(_ element: Element) -> Bool {
        if head == element { return true }
        return tail.contains(element)
    }
}
