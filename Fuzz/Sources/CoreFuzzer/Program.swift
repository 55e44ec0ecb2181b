// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// A fuzzer input decoded into a program: a graph of operators over three
// manual sources, and a schedule of what the test does to it (start and
// dispose up to two subscriptions, send values, errors and completions
// from the sources, run the queue). Every byte string decodes to some
// program (a missing byte reads as 0), so libFuzzer's mutations always
// reach the interesting code.

/// A graph of operators (each case says what it builds, see
/// `SignalGraph.swift`; the model of each is in `Model.swift`).
indirect enum Node: Equatable, CustomStringConvertible {
    /// Source `i` (0–2): its subscriptions get what the schedule sends it.
    case source(Int)
    /// `map { $0 &+ k }`.
    case map(Node, Int)
    /// `filter { $0 % m != 0 }`.
    case filter(Node, Int)
    /// `take(n)`.
    case take(Node, Int)
    /// `combineLatest(a, b) |> map { $0 &* 31 &+ $1 }`.
    case combineLatest(Node, Node)
    /// `a |> merge(b)`.
    case merge(Node, Node)
    /// `outer |> mapToSignal { inners[$0 mod count] }`.
    case switchToLatest(Node, [Node])
    /// `restartIfError`, back to the fuzzer's error type.
    case restartIfError(Node)
    /// `deliverOn` the program's virtual-time queue.
    case deliverOn(Node)
    /// `merge(outer |> map { inners[$0 mod count] })`: every inner at once.
    case flatten(Node, [Node])
    /// `outer |> mapToQueue { inners[$0 mod count] }`: one after another.
    case queue(Node, [Node])
    /// `a |> then(b)`.
    case then(Node, Node)
    /// `a |> catch { _ in b }`.
    case catchError(Node, Node)
    /// `restart(a)`: subscribed again at each completion.
    case restart(Node)
    /// The upstream shared by every subscription of this occurrence (`id`,
    /// unique in the graph): `multicast(subject) |> autoconnect()`, whose
    /// subject is `kind`'s.
    case share(Node, id: Int, kind: ShareKind)

    var description: String {
        switch self {
        case .source(let index): "s\(index)"
        case .map(let node, let k): "\(node) |> map(+\(k))"
        case .filter(let node, let m): "\(node) |> filter(%\(m))"
        case .take(let node, let n): "\(node) |> take(\(n))"
        case .combineLatest(let a, let b): "combineLatest(\(a), \(b))"
        case .merge(let a, let b): "merge(\(a), \(b))"
        case .switchToLatest(let outer, let inners):
            "(\(outer)) |> mapToSignal[\(inners.map(\.description).joined(separator: "; "))]"
        case .restartIfError(let node): "restartIfError(\(node))"
        case .deliverOn(let node): "(\(node)) |> deliverOn(q)"
        case .flatten(let outer, let inners): "(\(outer)) |> flatten[\(inners.map(\.description).joined(separator: "; "))]"
        case .queue(let outer, let inners): "(\(outer)) |> mapToQueue[\(inners.map(\.description).joined(separator: "; "))]"
        case .then(let a, let b): "(\(a)) |> then(\(b))"
        case .catchError(let a, let b): "(\(a)) |> catch(\(b))"
        case .restart(let node): "restart(\(node))"
        case .share(let node, let id, let kind): "(\(node)) |> \(kind)#\(id)"
        }
    }
}

/// One step of the schedule.
/// The subject a shared node multicasts through.
enum ShareKind: Equatable, CustomStringConvertible {
    /// A plain `Subject` (`publish`): no replay, the terminal event not kept.
    case publish
    /// A `ReplaySubject` of this capacity (`Int.max`: unlimited).
    case replay(Int)

    var description: String {
        switch self {
        case .publish: "publish.autoconnect"
        case .replay(let capacity): "multicast(ReplaySubject(\(capacity == .max ? "∞" : "\(capacity)"))).autoconnect"
        }
    }
}

enum Action: Equatable, CustomStringConvertible {
    /// Starts subscription `slot` (0–1) if it has none.
    case start(Int)
    /// Disposes subscription `slot`'s handle.
    case dispose(Int)
    case next(source: Int, value: Int)
    case error(source: Int)
    case complete(source: Int)
    /// Runs everything waiting on the virtual-time queue.
    case runQueue

    var description: String {
        switch self {
        case .start(let slot): "start c\(slot)"
        case .dispose(let slot): "dispose c\(slot)"
        case .next(let source, let value): "s\(source).next(\(value))"
        case .error(let source): "s\(source).error"
        case .complete(let source): "s\(source).complete"
        case .runQueue: "runQueue"
        }
    }
}

/// A decoded input.
struct Program: CustomStringConvertible {
    static let sourceCount = 3
    static let slotCount = 2
    static let maximumDepth = 4
    static let maximumNodes = 14
    static let maximumActions = 64
    /// Source subscriptions after which the schedule stops (see `run`).
    static let maximumSubscriptions = 1_000
    /// Deliveries waiting on the virtual-time queue after which the
    /// schedule stops (see `run`).
    static let maximumPendingDeliveries = 1_000
    /// Events delivered to the subscriptions after which the two-thread
    /// schedule stops (see `runConcurrently`): a graph that multiplies each
    /// value (merges of a source with itself, flattens of it) delivers
    /// millions of events from a few dozen actions, a libFuzzer timeout
    /// under AddressSanitizer, not a finding. Past its first values such
    /// an input only repeats itself, so the cap is low: at 20,000 these
    /// inputs took 60–140 ms each, against a median input's 1–5 ms.
    static let maximumConcurrentDeliveries = 2_000
    /// Events logged by the subscriptions after which the one-thread
    /// schedule stops (see `run`): nested flattens of one source multiply
    /// its values the same way, and within the subscription cap a few
    /// dozen sends made 5–10 s of work and over 600 MB of logs (two
    /// inputs of a 2,400 s campaign, now in the corpus).
    static let maximumDeliveries = 20_000
    /// Inner signals the flattening nodes may start in one run (see
    /// `InnerBudget`).
    static let maximumInners = 20_000

    let graph: Node
    let actions: [Action]
    /// Two: the actions alternate between two threads started together
    /// (`deliverOn` is then a Dispatch queue), and only the invariants are
    /// checked (the interleaving is the scheduler's); one: the model too.
    let threads: Int

    var description: String {
        "threads: \(threads)\ngraph: \(graph)\nactions: \(actions.map(\.description).joined(separator: ", "))"
    }

    init(graph: Node, actions: [Action], threads: Int = 1) {
        self.graph = graph
        self.actions = actions
        self.threads = threads
    }

    /// Decodes `bytes`: the thread count (a byte's low bit), the graph, then
    /// one action per byte (two for a value).
    init(decoding bytes: UnsafeRawBufferPointer) {
        var reader = ByteReader(bytes)
        threads = reader.next() & 1 == 0 ? 1 : 2
        var budget = Self.maximumNodes
        var shares = 0
        graph = Self.node(&reader, depth: 0, budget: &budget, shares: &shares, underRestart: false)
        var actions: [Action] = []
        while !reader.isAtEnd && actions.count < Self.maximumActions {
            let byte = reader.next()
            let operand = Int(byte >> 3)
            switch byte & 7 {
            case 0: actions.append(.start(operand % Self.slotCount))
            case 1: actions.append(.dispose(operand % Self.slotCount))
            case 2, 3, 7: actions.append(.next(source: operand % Self.sourceCount, value: Int(reader.next() % 10)))
            case 4: actions.append(.error(source: operand % Self.sourceCount))
            case 5: actions.append(.complete(source: operand % Self.sourceCount))
            default: actions.append(.runQueue)
            }
        }
        self.actions = actions
    }

    /// A shared node's subscriptions outlive its upstream's (it never
    /// reconnects), so under `restart` / `restartIfError` a terminal event
    /// replayed at once would restart it for ever: `underRestart` leaves
    /// `share` out there.
    private static func node(
        _ reader: inout ByteReader, depth: Int, budget: inout Int, shares: inout Int, underRestart: Bool
    ) -> Node {
        let byte = reader.next()
        if depth >= maximumDepth || budget <= 0 {
            return .source(Int(byte) % sourceCount)
        }
        budget -= 1
        let operand = reader.next()
        func child(underRestart inner: Bool = underRestart) -> Node {
            node(&reader, depth: depth + 1, budget: &budget, shares: &shares, underRestart: inner)
        }
        func inners() -> [Node] { (0...Int(operand % 3)).map { _ in child() } }
        switch byte % 16 {
        case 0, 1: return .source(Int(operand) % sourceCount)
        case 2: return .map(child(), Int(operand % 5))
        case 3: return .filter(child(), 2 + Int(operand % 3))
        case 4: return .take(child(), Int(operand % 4))
        case 5: return .combineLatest(child(), child())
        case 6: return .merge(child(), child())
        case 7:
            let outer = child()
            return .switchToLatest(outer, inners())
        case 8: return .restartIfError(child(underRestart: true))
        case 9: return .deliverOn(child())
        case 10:
            let outer = child()
            return .flatten(outer, inners())
        case 11:
            let outer = child()
            return .queue(outer, inners())
        case 12: return .then(child(), child())
        case 13: return .catchError(child(), child())
        case 14: return .restart(child(underRestart: true))
        default:
            let upstream = child()
            guard !underRestart else { return upstream }
            shares += 1
            let kind: ShareKind = [.publish, .replay(0), .replay(1), .replay(2), .replay(.max)][Int(operand % 5)]
            return .share(upstream, id: shares, kind: kind)
        }
    }
}

/// Reads an input a byte at a time; past its end, zeros.
struct ByteReader {
    private let bytes: UnsafeRawBufferPointer
    private var index = 0

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    var isAtEnd: Bool { index >= bytes.count }

    mutating func next() -> UInt8 {
        guard index < bytes.count else { return 0 }
        defer { index += 1 }
        return bytes[index]
    }
}

/// The inner a switch stage picks for an outer value.
func innerIndex(for value: Int, count: Int) -> Int {
    Int(UInt(bitPattern: value) % UInt(count))
}

/// What a subscription saw, in both the model and SignalKit.
enum Event: Equatable, CustomStringConvertible {
    /// The schedule started the subscription (a marker in the log).
    case started
    /// The schedule disposed the subscription (a marker: nothing follows it
    /// until the next start).
    case disposed
    case next(Int)
    case error(source: Int)
    case completed

    var description: String {
        switch self {
        case .started: "started"
        case .disposed: "disposed"
        case .next(let value): "next \(value)"
        case .error(let source): "error s\(source)"
        case .completed: "completed"
        }
    }

    var isTerminal: Bool {
        switch self {
        case .error, .completed: true
        case .started, .disposed, .next: false
        }
    }
}
