// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// The sequential model: the same operators written the simplest way, from
// their specification (../../shared/spec/swiftsignalkit.md §2, §4), one
// thread, no locks. A stage forwards its upstream's events by its rule; its
// terminal event ends it (later upstream events are ignored) and disposes
// its upstream, as SignalKit's subscriber does after the terminal callback;
// disposal ends it too. A source delivers each event to the subscriptions
// it had when the event was sent that are still live then (a snapshot),
// and a terminal event ends the subscription it reaches.

/// A model subscription's handle.
protocol ModelSubscription: AnyObject {
    func dispose()
}

/// The model of one program: its sources, its queue and the stages.
final class Model {
    private var sources: [ModelSource]
    /// The virtual-time queue: the work `deliverOn` deferred, in order.
    private var queue: [() -> Void] = []
    /// Whether the queue is running work (`deliverOn` then delivers at once,
    /// SwiftSignalKit's inline rule).
    private var onQueue = false

    /// The shared nodes' subjects and connections, by occurrence.
    private var shared: [Int: SharedNode] = [:]

    init() {
        sources = (0..<Program.sourceCount).map { _ in ModelSource() }
    }

    func send(_ event: Event, to source: Int) {
        sources[source].send(event)
    }

    func runQueue() {
        while !queue.isEmpty {
            let work = queue.removeFirst()
            onQueue = true
            work()
            onQueue = false
        }
    }

    /// Whether every subscription any source had has ended.
    var sourcesAreIdle: Bool { sources.allSatisfy(\.isIdle) }

    /// Every subscription made, kept until `endRun()`: a stage's callbacks
    /// hold it unowned, and a stage can end, and be dropped by its parent,
    /// inside one of its own callbacks (an inner that a subject ends at
    /// once, while the outer's value is being handled).
    private var made: [ModelSubscription] = []

    /// Lets the subscriptions go (their closures and the model reference
    /// each other).
    func endRun() {
        made = []
        shared = [:]
    }

    /// Subscribes to `node`; `sink` gets its events.
    func subscribe(_ node: Node, _ sink: @escaping (Event) -> Void) -> ModelSubscription {
        let subscription = makeSubscription(node, sink)
        made.append(subscription)
        return subscription
    }

    private func makeSubscription(_ node: Node, _ sink: @escaping (Event) -> Void) -> ModelSubscription {
        switch node {
        case .source(let index):
            return sources[index].subscribe(sink)
        case .map(let upstream, let k):
            return Stage(sink) { stage in
                [
                    self.subscribe(upstream) { event in
                        if case .next(let value) = event { stage.emit(.next(value &+ k)) } else { stage.emit(event) }
                    }
                ]
            }
        case .filter(let upstream, let m):
            return Stage(sink) { stage in
                [
                    self.subscribe(upstream) { event in
                        if case .next(let value) = event, value % m == 0 { return }
                        stage.emit(event)
                    }
                ]
            }
        case .take(let upstream, let count):
            var taken = 0
            return Stage(sink) { stage in
                [
                    self.subscribe(upstream) { event in
                        guard case .next = event else { return stage.emit(event) }
                        guard count > 0 else { return }
                        taken += 1
                        stage.emit(event)
                        if taken == count { stage.emit(.completed) }
                    }
                ]
            }
        case .combineLatest(let a, let b):
            var latest: [Int?] = [nil, nil]
            var completed = [false, false]
            return Stage(sink) { stage in
                [a, b].enumerated().map { index, input in
                    self.subscribe(input) { event in
                        switch event {
                        case .next(let value):
                            latest[index] = value
                            if let first = latest[0], let second = latest[1] { stage.emit(.next(first &* 31 &+ second)) }
                        case .completed:
                            completed[index] = true
                            if completed[0] && completed[1] { stage.emit(.completed) }
                        default:
                            stage.emit(event)
                        }
                    }
                }
            }
        case .merge(let a, let b):
            var completed = 0
            return Stage(sink) { stage in
                [a, b].map { input in
                    self.subscribe(input) { event in
                        guard case .completed = event else { return stage.emit(event) }
                        completed += 1
                        if completed == 2 { stage.emit(.completed) }
                    }
                }
            }
        case .switchToLatest(let outer, let inners):
            return SwitchStage(model: self, outer: outer, inners: inners, sink: sink)
        case .restartIfError(let upstream):
            return RestartStage(model: self, upstream: upstream, sink: sink) { event in
                if case .error = event { return true }
                return false
            }
        case .flatten(let outer, let inners):
            return FlattenStage(model: self, outer: outer, inners: inners, sink: sink)
        case .queue(let outer, let inners):
            return QueueStage(model: self, outer: outer, inners: inners, sink: sink)
        case .then(let a, let b):
            return FollowStage(model: self, first: a, second: b, sink: sink) { event in
                if case .completed = event { return true }
                return false
            }
        case .catchError(let a, let b):
            return FollowStage(model: self, first: a, second: b, sink: sink) { event in
                if case .error = event { return true }
                return false
            }
        case .restart(let upstream):
            return RestartStage(model: self, upstream: upstream, sink: sink) { event in
                if case .completed = event { return true }
                return false
            }
        case .share(let upstream, let id, let kind):
            let node = shared[id] ?? SharedNode(kind: kind)
            shared[id] = node
            return Stage(sink) { stage in [node.subscribe(stage, upstream: upstream, model: self)] }
        case .deliverOn(let upstream):
            let stage = DeliverOnStage(sink)
            stage.upstreams = [
                subscribe(upstream) { event in
                    if self.onQueue {
                        stage.deliver(event)
                    } else {
                        self.queue.append { stage.deliver(event) }
                    }
                }
            ]
            if stage.ended { stage.disposeUpstreams() }
            return stage
        }
    }
}

/// A source of the model: its subscriptions, in subscription order. A
/// disposed one is marked and removed in bulk once they are half of the
/// list: with a thousand subscriptions, a search per disposal and per
/// delivery made one program take 24 s in the fuzzing build (a libFuzzer
/// timeout, not a finding).
final class ModelSource {
    final class Registration: ModelSubscription {
        let sink: (Event) -> Void
        weak var source: ModelSource?
        private(set) var isLive = true
        init(_ sink: @escaping (Event) -> Void, source: ModelSource) {
            self.sink = sink
            self.source = source
        }
        func dispose() {
            guard isLive else { return }
            isLive = false
            source?.registrationEnded()
        }
    }

    private var registrations: [Registration] = []
    private var ended = 0

    /// No subscription is live.
    var isIdle: Bool { !registrations.contains(where: \.isLive) }

    func subscribe(_ sink: @escaping (Event) -> Void) -> ModelSubscription {
        let registration = Registration(sink, source: self)
        registrations.append(registration)
        return registration
    }

    private func registrationEnded() {
        ended += 1
        if ended * 2 > registrations.count {
            registrations.removeAll { !$0.isLive }
            ended = 0
        }
    }

    func send(_ event: Event) {
        // Those registered when the event is sent and still live when it
        // reaches them.
        for registration in registrations where registration.isLive {
            // A terminal event ends the subscription it reaches.
            if event.isTerminal { registration.dispose() }
            registration.sink(event)
        }
    }
}

/// A stage with upstream subscriptions made by `subscribeUpstream`: its
/// terminal event or its disposal ends it and disposes them.
class Stage: ModelSubscription {
    private let sink: (Event) -> Void
    private(set) var ended = false
    var upstreams: [ModelSubscription] = []

    init(_ sink: @escaping (Event) -> Void, subscribeUpstream: (Stage) -> [ModelSubscription] = { _ in [] }) {
        self.sink = sink
        upstreams = subscribeUpstream(self)
        // Ended while subscribing: its upstreams are disposed now.
        if ended { disposeUpstreams() }
    }

    func emit(_ event: Event) {
        guard !ended else { return }
        if event.isTerminal {
            ended = true
            sink(event)
            disposeUpstreams()
        } else {
            sink(event)
        }
    }

    func dispose() {
        guard !ended else { return }
        ended = true
        disposeUpstreams()
    }

    func disposeUpstreams() {
        let taken = upstreams
        upstreams = []
        taken.forEach { $0.dispose() }
    }
}

/// `deliverOn`: events wait on the queue; those still waiting when the
/// stage is disposed are dropped. The upstream ends at its terminal event
/// (SignalKit disposes it then), the stage when the event is delivered.
final class DeliverOnStage: Stage {
    private var disposed = false

    func deliver(_ event: Event) {
        guard !disposed else { return }
        emit(event)
    }

    override func dispose() {
        disposed = true
        super.dispose()
    }
}

/// `mapToSignal`: each outer value starts its inner (then the previous one
/// is disposed and silenced); completes when the outer has completed and
/// no inner runs.
final class SwitchStage: Stage {
    private var current: ModelSubscription?
    private var generation = 0
    private var innerRunning = false
    private var outerCompleted = false

    init(model: Model, outer: Node, inners: [Node], sink: @escaping (Event) -> Void) {
        super.init(sink)
        let outerSubscription = model.subscribe(outer) { [unowned self] event in
            switch event {
            case .next(let value):
                guard !ended else { return }
                generation += 1
                let mine = generation
                innerRunning = true
                let previous = current
                current = model.subscribe(inners[innerIndex(for: value, count: inners.count)]) { [unowned self] event in
                    guard mine == generation else { return }
                    if case .completed = event {
                        innerRunning = false
                        if outerCompleted { emit(.completed) }
                    } else {
                        emit(event)
                    }
                }
                previous?.dispose()
                // Ended while the inner was subscribed: it is disposed now.
                if ended, let inner = current {
                    current = nil
                    inner.dispose()
                }
            case .completed:
                outerCompleted = true
                if !innerRunning { emit(.completed) }
            default:
                emit(event)
            }
        }
        upstreams = [outerSubscription]
        if ended { disposeUpstreams() }
    }

    override func disposeUpstreams() {
        let inner = current
        current = nil
        inner?.dispose()
        super.disposeUpstreams()
    }
}

/// `restartIfError` and `restart`: the upstream's error (or completion)
/// subscribes it again, with no event; everything else passes.
final class RestartStage: Stage {
    private var generation = 0
    private let restarts: (Event) -> Bool

    init(model: Model, upstream: Node, sink: @escaping (Event) -> Void, restartsOn restarts: @escaping (Event) -> Bool) {
        self.restarts = restarts
        super.init(sink)
        subscribeAgain(model: model, upstream: upstream)
    }

    private func subscribeAgain(model: Model, upstream: Node) {
        generation += 1
        let mine = generation
        let previous = upstreams
        upstreams = [
            model.subscribe(upstream) { [unowned self] event in
                guard mine == generation, !ended else { return }
                if restarts(event) {
                    subscribeAgain(model: model, upstream: upstream)
                } else {
                    emit(event)
                }
            }
        ]
        previous.forEach { $0.dispose() }
    }
}

/// `then` and `catch`: the first's completion (or error) subscribes the
/// second, whose events pass from then on; everything else of the first
/// passes.
final class FollowStage: Stage {
    init(model: Model, first: Node, second: Node, sink: @escaping (Event) -> Void, switchesOn switches: @escaping (Event) -> Bool)
    {
        super.init(sink)
        var following = false
        let firstSubscription = model.subscribe(first) { [unowned self] event in
            guard !following, !ended else { return }
            guard switches(event) else { return emit(event) }
            following = true
            let previous = upstreams
            upstreams = [model.subscribe(second) { [unowned self] event in emit(event) }]
            previous.forEach { $0.dispose() }
            // Ended while the second was subscribed: it is disposed now.
            if ended { disposeUpstreams() }
        }
        // The first may end while it is subscribed (a subject replaying its
        // terminal event): the second is then subscribed already.
        if following { firstSubscription.dispose() } else { upstreams.append(firstSubscription) }
        if ended { disposeUpstreams() }
    }
}

/// `merge` of a signal of signals: every outer value starts its inner at
/// once; completes when the outer and every inner have completed.
final class FlattenStage: Stage {
    private var inners: [ObjectIdentifier: ModelSubscription] = [:]
    private var outerCompleted = false

    init(model: Model, outer: Node, inners innerNodes: [Node], sink: @escaping (Event) -> Void) {
        super.init(sink)
        let outerSubscription = model.subscribe(outer) { [unowned self] event in
            switch event {
            case .next(let value):
                guard !ended else { return }
                let box = InnerBox()
                box.subscription = model.subscribe(innerNodes[innerIndex(for: value, count: innerNodes.count)]) {
                    [unowned self] event in
                    if case .completed = event {
                        box.completed = true
                        inners[ObjectIdentifier(box)] = nil
                        if outerCompleted && inners.isEmpty { emit(.completed) }
                    } else {
                        emit(event)
                    }
                }
                // While the inner was subscribed (a subject replaying to it),
                // it may have completed (it is not running then), or this
                // stage may have ended (it is disposed now, as SignalKit
                // disposes an inner whose subscription returns too late).
                if ended {
                    box.dispose()
                } else if !box.completed {
                    inners[ObjectIdentifier(box)] = box
                }
            case .completed:
                outerCompleted = true
                if inners.isEmpty { emit(.completed) }
            default:
                emit(event)
            }
        }
        upstreams = [outerSubscription]
        if ended { disposeUpstreams() }
    }

    override func disposeUpstreams() {
        let taken = inners.values
        inners = [:]
        taken.forEach { $0.dispose() }
        super.disposeUpstreams()
    }
}

/// An inner subscription kept by identity.
final class InnerBox: ModelSubscription {
    var subscription: ModelSubscription?
    var completed = false
    func dispose() { subscription?.dispose() }
}

/// `mapToQueue`: inners one after another, the next subscribed when the
/// running one completes; completes when the outer has completed and
/// nothing runs or waits.
final class QueueStage: Stage {
    private var waiting: [Node] = []
    private var running: ModelSubscription?
    private var isRunning = false
    private var outerCompleted = false
    private let model: Model

    init(model: Model, outer: Node, inners: [Node], sink: @escaping (Event) -> Void) {
        self.model = model
        super.init(sink)
        let outerSubscription = model.subscribe(outer) { [unowned self] event in
            switch event {
            case .next(let value):
                guard !ended else { return }
                let inner = inners[innerIndex(for: value, count: inners.count)]
                if isRunning {
                    waiting.append(inner)
                } else {
                    start(inner)
                }
            case .completed:
                outerCompleted = true
                if !isRunning { emit(.completed) }
            default:
                emit(event)
            }
        }
        upstreams = [outerSubscription]
        if ended { disposeUpstreams() }
    }

    private func start(_ inner: Node) {
        isRunning = true
        let previous = running
        // Boxed before it is subscribed: an inner that completes while it is
        // subscribed (a subject replaying its completion) starts the next
        // one, which then is `running`.
        let box = InnerBox()
        running = box
        box.subscription = model.subscribe(inner) { [unowned self] event in
            guard case .completed = event else { return emit(event) }
            guard !ended else { return }
            if waiting.isEmpty {
                isRunning = false
                if outerCompleted { emit(.completed) }
            } else {
                start(waiting.removeFirst())
            }
        }
        previous?.dispose()
        // Ended while the inner was subscribed: it is disposed now.
        if ended { box.dispose() }
    }

    override func disposeUpstreams() {
        let inner = running
        running = nil
        waiting = []
        inner?.dispose()
        super.disposeUpstreams()
    }
}

/// `multicast(subject) |> autoconnect()`: one subject per occurrence, which
/// replays what its kind keeps to each new subscriber, then forwards the
/// upstream's events to the subscribers it has (a snapshot, skipping those
/// gone meanwhile). The first subscription connects (subscribes the upstream),
/// after the subject took it; when the count of subscriptions falls to 0 the
/// connection is disposed, and it is never made again.
final class SharedNode {
    final class Handle: ModelSubscription {
        let stage: Stage
        weak var node: SharedNode?
        var gone = false
        init(stage: Stage, node: SharedNode) {
            self.stage = stage
            self.node = node
        }
        func dispose() { node?.leave(self) }
    }

    private let kind: ShareKind
    private var kept: [Int] = []
    private var terminal: Event?
    private var ended = false
    /// The subscribers, in subscription order; those gone are skipped, and
    /// dropped in bulk once they are half (removing each as it leaves is
    /// quadratic over a thousand subscriptions: a libFuzzer timeout).
    private var handles: [Handle] = []
    private var goneHandles = 0
    private var count = 0
    private var connected = false
    private var connection: ModelSubscription?

    init(kind: ShareKind) { self.kind = kind }

    func subscribe(_ stage: Stage, upstream: Node, model: Model) -> ModelSubscription {
        count += 1
        let handle = Handle(stage: stage, node: self)
        // The subject takes the subscriber: the replay, then live events.
        for value in kept { stage.emit(.next(value)) }
        if let terminal {
            stage.emit(terminal)
        } else if !ended {
            handles.append(handle)
        }
        if !connected {
            connected = true
            connection = model.subscribe(upstream) { [unowned self] event in receive(event) }
        }
        return handle
    }

    private func receive(_ event: Event) {
        guard !ended else { return }
        switch event {
        case .next(let value):
            if case .replay(let capacity) = kind, capacity > 0 {
                kept.append(value)
                if kept.count > capacity { kept.removeFirst() }
            }
        case .error, .completed:
            ended = true
            if case .replay = kind { terminal = event }
        case .started, .disposed:
            return
        }
        let snapshot = handles
        if event.isTerminal {
            handles = []
            goneHandles = 0
        }
        for handle in snapshot where !handle.gone {
            handle.stage.emit(event)
        }
    }

    fileprivate func leave(_ handle: Handle) {
        guard !handle.gone else { return }
        handle.gone = true
        goneHandles += 1
        if goneHandles * 2 > handles.count {
            handles.removeAll(where: \.gone)
            goneHandles = 0
        }
        count -= 1
        if count == 0, let connection {
            self.connection = nil
            connection.dispose()
        }
    }
}
