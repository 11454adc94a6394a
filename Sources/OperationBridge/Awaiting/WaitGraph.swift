import Foundation

/// A picture of what the operations of a queue or a pipeline wait for, at one moment: every
/// pending and running operation with its state and what it waits for — its unfinished
/// dependencies, a condition being checked, an exclusivity key and who holds it, a delayed start,
/// a pause, a free slot of its queue, a suspended queue — and the chains of waits that end at what
/// blocks them. As text to read, and as a Graphviz DOT graph to render.
///
/// ```swift
/// print(queue.waitGraph)   // the text
/// try queue.waitGraph.dot.write(to: URL(fileURLWithPath: "queue.dot"), atomically: true, encoding: .utf8)
/// // then: dot -Tsvg queue.dot -o queue.svg
/// ```
///
/// Get one from ``Foundation/OperationQueue/waitGraph`` or ``Pipeline/waitGraph`` — or from
/// ``Bridge/waitGraph`` for one operation and what it waits for in turn. It is the picture of a
/// whole queue or pipeline that ``Bridge/pendingDiagnostics`` gives of one operation, made from
/// the same facts. With `OPERATIONBRIDGE_STUCK_AWAIT_SECONDS` set, an await that lasts longer
/// prints it for the queue involved when the package knows that queue, for the operation
/// otherwise (see <doc:StuckQueues>).
///
/// ## Contents
/// The operations are those of the queue (or pipeline) that have not finished — listed in the
/// queue's (the pipeline's) order — followed by the operations outside it that they wait for,
/// found by following unfinished dependencies, the children of running groups
/// (``GroupOperation``) and the holders of exclusivity keys, in the order found. An operation is named by its `name` in quotes when it has one (`'export'`), otherwise by
/// its type and its position in the picture (`BlockOperation #3`); names given twice get their
/// position too. The same state always gives the same text and the same DOT, byte for byte, so
/// both can be compared with a checked-in copy.
///
/// In the DOT graph, an arrow goes from an operation to what it waits for; waiting arrows are red
/// and bold. Operations that block others without waiting for anything in the picture (paused,
/// delayed, checking a condition, in no queue…) are filled red, running ones green; a queue is a
/// folder — filled red when suspended — with dashed arrows to the operations holding its slots
/// when something waits for one.
///
/// ## Cancellation and threading
/// A snapshot: reading it changes nothing — it starts no condition check, asks for no key and
/// wakes no queue — and it cancels nothing. Safe from any thread, at any time. Each operation and
/// queue is read under its own lock, one after the other, so an operation that moves on while the
/// picture is taken may appear in its old state or its new one; take it when the queue is stuck,
/// which is when nothing moves. Times (how long a key has been held) are left out so that the
/// picture stays stable; ``Bridge/pendingDiagnostics`` has them.
public struct WaitGraph: Sendable, CustomStringConvertible {
    /// The picture as text: a heading, every operation with what it waits for, and the chains of
    /// waits, one line each, that end at what blocks them ("'verify' waits for 'migrate', which
    /// waits for exclusivity key 'db', held by 'export', which is running").
    public let text: String

    /// The picture as a Graphviz DOT graph: render it with `dot -Tsvg` (or `-Tpng`).
    public let dot: String

    /// The same as ``text``.
    public var description: String { text }

    init(_ builder: WaitGraphBuilder) {
        text = builder.text
        dot = builder.dot
    }
}

extension OperationQueue {
    /// A picture of what the queue's pending and running operations wait for; see ``WaitGraph``.
    ///
    /// ```swift
    /// print(queue.waitGraph)
    /// // Wait graph of queue 'migration', 1 of 1 slots in use — SATURATED, 2 pending:
    /// // …
    /// // Waiting chains:
    /// // - 'verify' waits for 'migrate', which waits for a free slot of queue 'migration' (1 of 1 in use), held by 'export', which is running
    /// ```
    ///
    /// It lists the operations of the queue that have not finished, and the operations outside it
    /// that they wait for. Steps that a ``Pipeline`` or a results sequence has not handed to the
    /// queue yet are not in its list: use ``Pipeline/waitGraph`` for a pipeline.
    ///
    /// ## Cancellation and threading
    /// A snapshot of the moment it is read; reading it changes nothing and cancels nothing. Safe
    /// from any thread (see ``WaitGraph``).
    public var waitGraph: WaitGraph {
        var builder = WaitGraphBuilder(title: "queue \(QueueFacts(self).quotedName)", mainQueue: self, scope: "queue")
        // The package's own markers (`waitForAllOperations()`'s) are no work of the user's.
        let listed = operations.filter {
            !$0.isFinished && (($0 as? AsyncOperation)?.countsTowardQueueProgress ?? true)
        }
        for operation in listed { builder.add(operation, placement: .queue(self), seed: true) }
        builder.finish(heading: "Wait graph of queue \(builder.queues[0].description)")
        return WaitGraph(builder)
    }
}

extension Bridge {
    /// A picture of what the operation waits for, and what that waits for in turn, down to what
    /// blocks it; see ``WaitGraph``.
    ///
    /// ```swift
    /// print(report.bridge.waitGraph)
    /// // - 'report' waits for 'reindex', which is paused: it becomes ready only after bridge.resume()
    /// ```
    ///
    /// The operation comes first, then the operations it waits for — unfinished dependencies,
    /// holders of its exclusivity keys, the holders of its queue's slots — found by following the
    /// waits. Its queue is the one the package knows (it added the operation there, or found it
    /// there); for the whole of a queue or pipeline, use ``Foundation/OperationQueue/waitGraph``
    /// or ``Pipeline/waitGraph``.
    ///
    /// ## Cancellation and threading
    /// A snapshot of the moment it is read; reading it changes nothing and cancels nothing. Safe
    /// from any thread (see ``WaitGraph``).
    public var waitGraph: WaitGraph { WaitGraph(operation: base) }
}

extension WaitGraph {
    /// The wait graph rooted at `operation`: it and what it waits for, transitively.
    init(operation: Operation) {
        var builder = WaitGraphBuilder(title: operation.diagnosticName, mainQueue: nil, scope: nil)
        builder.add(operation, seed: true)
        builder.finish(heading: "Wait graph of \(operation.diagnosticName)")
        self.init(builder)
    }
}

/// Gathers the ``WaitFacts`` of the operations of a picture, follows what they wait for, and
/// writes the picture out as text and as DOT.
struct WaitGraphBuilder {
    /// What an operation waits for, as the picture shows it.
    enum Wait {
        /// An unfinished dependency, by node.
        case dependency(Int)
        /// An unfinished child of a running group, by node.
        case child(Int)
        /// An exclusivity key, and who holds it.
        case key(ExclusivityKey, holder: KeyHolder, ahead: Int)
        /// Its conditions, being checked.
        case conditions([String])
        case paused
        case delayed
        /// Its pipeline has not started.
        case pipelineStart
        /// Its queue (by index) is suspended.
        case suspendedQueue(Int)
        /// A free slot of its queue (by index).
        case queueSlot(Int)
        /// Nothing: its queue (by index) starts it when it gets to it.
        case readyInQueue(Int)
        /// Its queue: none the package knows of.
        case placement(QueuePlacement)
        /// Not the package's, its dependencies finished, and its own `isReady` is `false`.
        case notReady
    }

    /// Who holds a key an operation waits for.
    enum KeyHolder {
        /// An operation, by node.
        case node(Int)
        /// A task in `withExclusiveAccess`, by index in `tasks`.
        case task(Int)
        /// An operation that has been released.
        case released
        /// Nobody: the key is free, and the operation waits for those ahead of it.
        case free
    }

    struct Node {
        let operation: Operation
        /// The operation's `name`, read once: the label, the text and the DOT agree on it.
        let name: String?
        let facts: WaitFacts
        /// One of the operations of the queue or pipeline pictured (not one found outside it).
        let isSeed: Bool
        var label = ""
        var waits: [Wait] = []
    }

    let title: String
    /// "queue" or "pipeline", for operations outside it; `nil` for the graph of one operation.
    let scope: String?
    private(set) var nodes: [Node] = []
    private var nodeIndex: [ObjectIdentifier: Int] = [:]
    private(set) var queues: [QueueFacts] = []
    private var queueIndex: [ObjectIdentifier: Int] = [:]
    /// Tasks in `withExclusiveAccess` holding keys: "File.swift:12".
    private var tasks: [String] = []
    private var heading = ""

    init(title: String, mainQueue: OperationQueue?, scope: String?) {
        self.title = title
        self.scope = scope
        if let mainQueue { _ = queue(mainQueue) }
    }

    /// Adds `operation` unless it is in the picture already; returns its node. Without a
    /// `placement`, an operation that a queue of the picture lists is in that queue; any other is
    /// where the package thinks it is.
    @discardableResult
    mutating func add(_ operation: Operation, placement: QueuePlacement? = nil, seed: Bool = false) -> Int {
        let id = ObjectIdentifier(operation)
        if let node = nodeIndex[id] { return node }
        nodeIndex[id] = nodes.count
        let placement = placement ?? queues.first { $0.listed.contains(id) }.map { .queue($0.queue) }
        nodes.append(
            Node(
                operation: operation, name: operation.name, facts: WaitFacts(operation, placement: placement),
                isSeed: seed))
        return nodes.count - 1
    }

    /// The index of `queue`, gathering its facts the first time.
    private mutating func queue(_ queue: OperationQueue) -> Int {
        if let index = queueIndex[ObjectIdentifier(queue)] { return index }
        queueIndex[ObjectIdentifier(queue)] = queues.count
        queues.append(QueueFacts(queue))
        return queues.count - 1
    }

    /// Follows what every operation waits for, adding the operations found, names them, and
    /// fixes the heading.
    mutating func finish(heading: String) {
        self.heading = heading
        var next = 0
        while next < nodes.count {
            nodes[next].waits = waits(of: next)
            next += 1
        }
        name()
    }

    private mutating func waits(of node: Int) -> [Wait] {
        let facts = nodes[node].facts
        guard facts.phase == .pending else {
            // A running group waits for its children.
            guard facts.phase != .finished, let group = nodes[node].operation as? any WaitsForChildren else {
                return []
            }
            return group.childOperations.filter { !$0.isFinished }.map { .child(add($0)) }
        }
        var waits: [Wait] = []
        // A cancelled operation is ready whatever it waits for: its queue finishes it when it starts it.
        if !facts.isCancelled {
            for dependency in facts.unfinishedDependencies { waits.append(.dependency(add(dependency))) }
            if facts.holds.isPaused { waits.append(.paused) }
            if facts.holds.isDelayed { waits.append(.delayed) }
            if waits.isEmpty {
                if facts.holds.isChecking {
                    waits.append(.conditions(facts.holds.conditions))
                } else if case .waiting(_, let keys)? = facts.exclusivity {
                    for wait in keys { waits.append(.key(wait.key, holder: keyHolder(wait.holder), ahead: wait.ahead)) }
                }
            }
        }
        guard waits.isEmpty else { return waits }
        switch facts.placement {
        case .queue(let queue):
            let index = self.queue(queue)
            let facts = queues[index]
            if facts.isSuspended { return [.suspendedQueue(index)] }
            if facts.isSaturated {
                for holder in facts.executing { add(holder, placement: .queue(queue)) }
                return [.queueSlot(index)]
            }
            let operation = nodes[node].operation
            if !(operation is AsyncOperation), !operation.isCancelled, !operation.isReady { return [.notReady] }
            return [.readyInQueue(index)]
        case .heldByPipeline(started: false):
            return [.pipelineStart]
        case .perhapsQueuedByOtherCode, .startedUnfollowed, .nowhere, .addedByThePackage, .unknown, .heldByPipeline:
            return [.placement(facts.placement)]
        }
    }

    private mutating func keyHolder(_ holder: ExclusivityHolder?) -> KeyHolder {
        switch holder {
        case nil: return .free
        case .operation(let weak)?:
            guard let operation = weak.object else { return .released }
            return .node(add(operation))
        case .task(let fileID, let line)?:
            tasks.append("\(fileID):\(line)")
            return .task(tasks.count - 1)
        }
    }

    /// Names every node: `'name'`, or the type and position; names given twice get the position.
    private mutating func name() {
        var count: [String: Int] = [:]
        for node in nodes { if let name = node.name { count[name, default: 0] += 1 } }
        for index in nodes.indices {
            let operation = nodes[index].operation
            if let name = nodes[index].name {
                nodes[index].label = count[name] == 1 ? "'\(name)'" : "'\(name)' #\(index + 1)"
            } else {
                nodes[index].label = "\(type(of: operation)) #\(index + 1)"
            }
        }
    }

    // MARK: - Edges

    /// What a wait leads to in the picture: the operations it continues with (a key's holder,
    /// the holders of a queue's slots), none when it ends there.
    private func next(after wait: Wait) -> [Int] {
        switch wait {
        case .dependency(let node), .child(let node): [node]
        case .key(_, .node(let node), _): [node]
        case .queueSlot(let queue): slotHolders(queue)
        case .key, .conditions, .paused, .delayed, .pipelineStart, .suspendedQueue, .readyInQueue, .placement,
            .notReady:
            []
        }
    }

    /// The nodes of the operations executing in queue `index`.
    private func slotHolders(_ index: Int) -> [Int] {
        queues[index].executing.compactMap { nodeIndex[ObjectIdentifier($0)] }
    }

    private func typeName(_ node: Node) -> String { "\(type(of: node.operation))" }

    // MARK: - Text

    var text: String {
        var lines = ["\(heading):"]
        guard !nodes.isEmpty else {
            lines.append("Nothing is pending or running.")
            return lines.joined(separator: "\n")
        }
        lines.append("Operations:")
        for node in nodes {
            let type = node.name == nil ? "" : " (\(typeName(node)))"
            let outside = node.isSeed ? "" : scope.map { " [outside the \($0)]" } ?? ""
            lines.append("- \(node.label)\(type)\(outside): \(node.facts.stateText)")
            if case .holding(let keys, _)? = node.facts.exclusivity, node.facts.phase != .pending {
                lines.append("    holds exclusivity \(keys.count == 1 ? "key" : "keys") \(quoted(keys))")
            }
            if node.waits.isEmpty { lines.append("    \(idlePhrase(node))") }
            for wait in node.waits { lines.append("    \(phrase(wait, continuing: nil, inChain: false))") }
        }
        lines.append("Waiting chains:")
        lines += chains().map { "- \($0)" }
        return lines.joined(separator: "\n")
    }

    /// What an operation that waits for nothing in the picture is doing.
    private func idlePhrase(_ node: Node) -> String {
        switch node.facts.phase {
        case .executing: "is running"
        case .started: "has started and is finishing"
        case .finished: "has finished"
        case .pending: "is pending"
        }
    }

    /// The wait as a verb phrase; `continuing` names the operation the chain goes on with. In a
    /// chain, a key's holder is not followed by the place in line.
    private func phrase(_ wait: Wait, continuing: Int?, inChain: Bool) -> String {
        switch wait {
        case .dependency(let node):
            return "waits for \(nodes[node].label)"
        case .child(let node):
            return "waits for its child \(nodes[node].label)"
        case .key(let key, let holder, let ahead):
            let line = ahead == 0 ? "first in line" : "\(ahead) waiting ahead"
            if inChain, case .node(let node) = holder {
                return "waits for exclusivity key '\(key)', held by \(nodes[node].label)"
            }
            switch holder {
            case .node(let node): return "waits for exclusivity key '\(key)', held by \(nodes[node].label); \(line)"
            case .task(let task):
                return
                    "waits for exclusivity key '\(key)', held by a task in withExclusiveAccess at \(tasks[task]); \(line)"
            case .released: return "waits for exclusivity key '\(key)', held by an operation (released); \(line)"
            case .free: return "waits for exclusivity key '\(key)' (free); \(line)"
            }
        case .conditions(let names):
            return "waits for its conditions to be checked: \(names.map { "'\($0)'" }.joined(separator: ", "))"
        case .paused:
            return "is paused: it becomes ready only after bridge.resume()"
        case .delayed:
            return "waits for its delayed start"
        case .pipelineStart:
            return "waits for its pipeline to start"
        case .suspendedQueue(let queue):
            return "waits for queue \(queues[queue].quotedName), which is suspended"
        case .queueSlot(let queue):
            let facts = queues[queue]
            let slots =
                "a free slot of queue \(facts.quotedName) (\(facts.executing.count) of \(facts.width ?? 0) in use)"
            guard let continuing else { return "waits for \(slots)" }
            return "waits for \(slots), held by \(nodes[continuing].label)"
        case .readyInQueue(let queue):
            return "is ready: queue \(queues[queue].quotedName) starts it when it gets to it"
        case .placement(let placement):
            switch placement {
            case .perhapsQueuedByOtherCode:
                return "was not added to a queue by the package (it may be in a queue you added it to)"
            case .startedUnfollowed: return "has started"
            case .nowhere: return "is in no queue: it starts only once it is added to one or started by hand"
            case .addedByThePackage: return "was added to a queue by the package"
            case .unknown: return "is in no queue the package knows of: if it was never added to one, nothing starts it"
            case .heldByPipeline: return "is held by its pipeline until its dependencies in the pipeline have finished"
            case .queue(let queue): return "is in queue \(QueueFacts(queue).quotedName)"
            }
        case .notReady:
            return "is not ready: its own isReady is false"
        }
    }

    /// What the node waits for, as the phrases of a chain, each with the node it goes on with.
    private func steps(of node: Int) -> [(phrase: String, next: Int?)] {
        nodes[node].waits.flatMap { wait -> [(phrase: String, next: Int?)] in
            let next = next(after: wait)
            if next.isEmpty { return [(phrase(wait, continuing: nil, inChain: true), nil)] }
            return next.map { (phrase(wait, continuing: $0, inChain: true), $0) }
        }
    }

    /// One line per path from an operation nobody in the picture waits for to what blocks it. A
    /// node whose waits lead further is spelled out once; later paths through it say "waits as
    /// shown above". Iterative, and long chains are shortened in the middle, so that a chain of
    /// thousands of steps costs neither stack nor quadratic text.
    private func chains() -> [String] {
        var waitedFor = Set<Int>()
        for node in nodes { for wait in node.waits { waitedFor.formUnion(next(after: wait)) } }
        var lines: [String] = []
        var expanded = Set<Int>()
        func walk(from top: Int) {
            // The phrases taken from `top` to the node on top of `stack`, one per node after `top`.
            var phrases: [String] = []
            var stack: [(node: Int, steps: [(phrase: String, next: Int?)], taken: Int)] = []
            var onPath = Set<Int>()
            func write(_ last: String) {
                lines.append(Self.chain(from: nodes[top].label, through: phrases, ending: last))
            }
            /// Goes on to `node`; returns whether it is to be walked further.
            func enter(_ node: Int) -> Bool {
                let steps = steps(of: node)
                if steps.isEmpty {
                    write(idlePhrase(nodes[node]))
                    return false
                }
                if expanded.contains(node) && steps.contains(where: { $0.next != nil }) {
                    write("waits as shown above")
                    return false
                }
                expanded.insert(node)
                onPath.insert(node)
                stack.append((node, steps, 0))
                return true
            }
            _ = enter(top)
            while let frame = stack.last {
                guard frame.taken < frame.steps.count else {
                    stack.removeLast()
                    onPath.remove(frame.node)
                    if !stack.isEmpty { phrases.removeLast() }  // the phrase that led to `frame.node`
                    continue
                }
                stack[stack.count - 1].taken += 1
                let (phrase, next) = frame.steps[frame.taken]
                guard let next else {
                    write(phrase)
                    continue
                }
                if onPath.contains(next) {
                    write(phrase + ", which waits for it again: a cycle")
                    continue
                }
                phrases.append(phrase)
                if !enter(next) { phrases.removeLast() }
            }
        }
        for node in nodes.indices where !waitedFor.contains(node) { walk(from: node) }
        // Cycles that nothing outside them waits for.
        for node in nodes.indices where !expanded.contains(node) && !nodes[node].waits.isEmpty { walk(from: node) }
        return lines
    }

    /// "'a' waits for 'b', which waits for …": the phrases in order, then `last`; a chain of more
    /// than 12 phrases keeps its first 6 and its last 5, and says how many it leaves out.
    private static func chain(from label: String, through phrases: [String], ending last: String) -> String {
        var shown: [String]
        if phrases.count + 1 > 12 {
            let left = phrases.count + 1 - 11
            shown = Array(phrases.prefix(6)) + ["… \(left) more waits …"] + Array(phrases.suffix(4))
        } else {
            shown = phrases
        }
        shown.append(last)
        return label + " " + shown.joined(separator: ", which ")
    }

    // MARK: - DOT

    var dot: String {
        var lines = [
            "digraph WaitGraph {",
            "  graph [label=\(Self.quote(title)), labelloc=t, rankdir=LR, bgcolor=white, pad=0.2, fontname=\"Helvetica\"];",
            "  node [shape=box, style=rounded, fontname=\"Helvetica\", fontsize=11];",
            "  edge [fontname=\"Helvetica\", fontsize=10];",
        ]
        for (index, node) in nodes.enumerated() {
            var label = [node.label]
            if node.name != nil { label.append(typeName(node)) }
            var state =
                switch node.facts.phase {
                case .pending: "pending"
                case .executing: "running"
                case .started: "finishing"
                case .finished: "finished"
                }
            if node.facts.isCancelled { state += ", cancelled" }
            if !node.isSeed, let scope { state += " (outside the \(scope))" }
            label.append(state)
            if case .holding(let keys, _)? = node.facts.exclusivity, node.facts.phase != .pending {
                label.append("holds \(keys.count == 1 ? "key" : "keys") \(quoted(keys))")
            }
            label += node.waits.compactMap(note)
            var attributes = "label=\(Self.quote(label.joined(separator: "\n")))"
            if node.facts.phase == .executing || node.facts.phase == .started {
                attributes += ", style=\"rounded,filled\", fillcolor=\"#d9f0d3\""
            } else if !node.waits.isEmpty && node.waits.allSatisfy({ next(after: $0).isEmpty && isBlock($0) }) {
                attributes += ", style=\"rounded,filled\", fillcolor=\"#f8d0cc\""
            }
            lines.append("  n\(index + 1) [\(attributes)];")
        }
        for (index, facts) in queues.enumerated() {
            let label = (["queue \(facts.quotedName)"] + facts.parts).joined(separator: "\n")
            let fill = facts.isSuspended ? ", style=filled, fillcolor=\"#f8d0cc\"" : ""
            lines.append("  q\(index + 1) [shape=folder, label=\(Self.quote(label))\(fill)];")
        }
        for (index, task) in tasks.enumerated() {
            let label = "a task in withExclusiveAccess\n\(task)"
            lines.append("  t\(index + 1) [shape=ellipse, label=\(Self.quote(label))];")
        }
        let waiting = "color=\"#d62728\", fontcolor=\"#d62728\", penwidth=2.5"
        var slotQueues: [Int] = []
        for (index, node) in nodes.enumerated() {
            for wait in node.waits {
                let from = "n\(index + 1)"
                switch wait {
                case .dependency(let to):
                    lines.append("  \(from) -> n\(to + 1) [label=\"dependency\", \(waiting)];")
                case .child(let to):
                    lines.append("  \(from) -> n\(to + 1) [label=\"child\", \(waiting)];")
                case .key(let key, .node(let to), _):
                    lines.append("  \(from) -> n\(to + 1) [label=\(Self.quote("key '\(key)'")), \(waiting)];")
                case .key(let key, .task(let task), _):
                    lines.append("  \(from) -> t\(task + 1) [label=\(Self.quote("key '\(key)'")), \(waiting)];")
                case .queueSlot(let queue):
                    lines.append("  \(from) -> q\(queue + 1) [label=\"free slot\", \(waiting)];")
                    if !slotQueues.contains(queue) { slotQueues.append(queue) }
                case .suspendedQueue(let queue):
                    lines.append("  \(from) -> q\(queue + 1) [label=\"suspended\", \(waiting)];")
                case .readyInQueue(let queue):
                    lines.append("  \(from) -> q\(queue + 1) [label=\"ready\", style=dashed];")
                case .key, .conditions, .paused, .delayed, .pipelineStart, .placement, .notReady:
                    break
                }
            }
        }
        for queue in slotQueues {
            for holder in slotHolders(queue) {
                lines.append(
                    "  q\(queue + 1) -> n\(holder + 1) [label=\"slot held by\", color=\"#777777\", style=dashed];")
            }
        }
        lines.append("}")
        return lines.joined(separator: "\n") + "\n"
    }

    /// Whether the wait, ending in the node itself, blocks it: not its queue (drawn as the
    /// blocker when suspended), nor its being about to start.
    private func isBlock(_ wait: Wait) -> Bool {
        switch wait {
        case .readyInQueue, .suspendedQueue: false
        default: true
        }
    }

    /// What the node's label says of a wait that has no arrow of its own.
    private func note(_ wait: Wait) -> String? {
        switch wait {
        case .key(let key, .released, _): "key '\(key)': holder released"
        case .key(let key, .free, let ahead): "key '\(key)': free, \(ahead) waiting ahead"
        case .conditions(let names): "checking conditions: \(names.map { "'\($0)'" }.joined(separator: ", "))"
        case .paused: "paused"
        case .delayed: "delayed start"
        case .pipelineStart: "pipeline not started"
        case .notReady: "not ready (its isReady is false)"
        case .placement(let placement):
            switch placement {
            case .perhapsQueuedByOtherCode: "not queued by the package"
            case .startedUnfollowed: "queue not followed"
            case .nowhere: "in no queue"
            case .addedByThePackage: "queued by the package"
            case .unknown: "in no queue known to the package"
            case .heldByPipeline: "held by its pipeline"
            case .queue(let queue): "queue \(QueueFacts(queue).quotedName)"
            }
        case .dependency, .child, .key, .suspendedQueue, .queueSlot, .readyInQueue: nil
        }
    }

    private func quoted(_ keys: [ExclusivityKey]) -> String {
        keys.map { "'\($0)'" }.joined(separator: ", ")
    }

    /// A DOT string literal.
    private static func quote(_ text: String) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "\\": escaped += "\\\\"
            case "\"": escaped += "\\\""
            case "\n": escaped += "\\n"
            default: escaped.append(character)
            }
        }
        return "\"\(escaped)\""
    }
}

/// An operation that, once running, waits for operations of its own: a ``GroupOperation`` and its
/// children.
protocol WaitsForChildren {
    /// The operations it waits for while it runs.
    var childOperations: [Operation] { get }
}

extension GroupOperation: WaitsForChildren {
    var childOperations: [Operation] { children }
}
