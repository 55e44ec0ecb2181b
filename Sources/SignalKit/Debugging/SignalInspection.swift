// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

// Debugging, part 3: the live graph of named signals.
//
// With inspection on, every signal named with `named(_:)` is a *stage*: a
// counting step in front of the named signal that reports to a process-wide
// registry. Stages are identified by name and the place they were named
// (`ticks@Market/Feed.swift:42`): every signal named at one place shares
// one stage, so a graph built per client shows as one node whose numbers
// are the sum over its clients, and a stage disappears once no signal
// named there and no subscription to one is alive.
//
// Cost model.
// * Inspection off (the default): `named(_:)` makes one relaxed atomic load
//   when the signal is built. Subscriptions and events are untouched: a
//   named signal shares its input's generator.
// * Inspection on: `named(_:)` takes the registry's lock once when the
//   signal is built and once when it is freed; each subscription to a named
//   signal allocates its counting step (4 allocations) and takes the lock
//   only to record an edge it has not just recorded; each event is one
//   relaxed atomic add on the stage's counter, shared by every subscription
//   of the stage, a coarse clock read and store, and the thread's current
//   stage set and restored around the delivery. `scripts/bench` prints the
//   figures (W17 per event, W18 per subscription, on and off).
//
// Edges ("a feeds b") come from two places:
// * how a signal was built: inspection switches operator naming on, so the
//   operators between two named signals record their inputs, and `named`
//   walks them back to the nearest named signals;
// * subscription: while a stage's subscription runs its input's generator,
//   the stage is the thread's current one, so a named signal subscribed
//   from inside it (an operator's input) is recorded as feeding it; while a
//   stage delivers an event, the current stage is the one that subscribed
//   it, so an inner signal a flattening operator subscribes on that event
//   feeds the stage downstream of the operator. Signals subscribed later
//   by a timer or another queue (`runOn`, `delay`) are seen through how
//   they were built only.

// MARK: - Public API

extension SignalKitDebug {
    /// Whether signals named with `named(_:)` report to the inspection
    /// registry read by ``inspectionSnapshot()``.
    ///
    /// Starts as `true` when the environment variable `SIGNALKIT_INSPECT` is
    /// set to anything but `0` or an empty string. Changing it affects
    /// signals named afterwards. While it is on, operators also record their
    /// names (as with ``isNamingSignals``), so that the snapshot knows which
    /// named signal feeds which.
    ///
    /// The snapshot reveals signal names and source locations: serve it only
    /// where operators reach it (see the *Inspecting a running service*
    /// article).
    public static var isInspecting: Bool {
        get { _SignalInspection.isOn }
        set { _SignalNaming.set(_SignalNaming.inspecting, newValue) }
    }

    /// Runs `body` with inspection on for signals named on the calling
    /// thread only (and operator naming, as ``withSignalNaming(_:)``); other
    /// threads are not affected unless ``isInspecting`` is on. Nests.
    public static func withInspection<R>(_ body: () throws -> R) rethrows -> R {
        _SignalInspection.enterScope()
        defer { _SignalInspection.leaveScope() }
        return try body()
    }

    /// The live graph of named signals: every stage with its counters, which
    /// stage feeds which, and the bounded boundaries' statistics. Empty while
    /// inspection has never been on.
    public static func inspectionSnapshot() -> SignalGraphSnapshot {
        let buffers = bufferStatistics()
        var snapshot = _InspectionRegistry.shared.snapshot()
        var bufferByName: [String: SignalBufferStatistics] = [:]
        for buffer in buffers { bufferByName[buffer.name] = buffer }
        for index in snapshot.stages.indices {
            snapshot.stages[index].buffer = bufferByName[snapshot.stages[index].name]
        }
        snapshot.buffers = buffers
        return snapshot
    }
}

/// A snapshot of the live graph of named signals (see
/// ``SignalKitDebug/inspectionSnapshot()``). Its JSON form (`Codable`, with
/// these property names) is what SignalKitInspector serves.
public struct SignalGraphSnapshot: Codable, Sendable, Hashable {
    /// One named stage: every signal named with the same name at the same
    /// place (`#fileID` and `#line`), and their subscriptions.
    public struct Stage: Codable, Sendable, Hashable {
        /// `name@location`: unique in a snapshot, stable while the stage lives.
        public var id: String
        /// The name given with `named(_:)`.
        public var name: String
        /// Where it was named: `Module/File.swift:42`.
        public var location: String
        /// Signals of this stage alive now (a signal lives while it is
        /// referenced, by its builder or by one of its subscriptions).
        public var signals: Int
        /// Subscriptions started and not yet disposed (a subscription is
        /// disposed when its handle is, or once its terminal event is
        /// delivered).
        public var liveSubscriptions: Int
        /// Subscriptions started since the stage appeared.
        public var subscriptions: UInt64
        /// Values sent through the stage since it appeared.
        public var values: UInt64
        /// Errors sent.
        public var errors: UInt64
        /// Completions sent.
        public var completions: UInt64
        /// Subscriptions disposed.
        public var disposals: UInt64
        /// When the stage last sent an event (value, error or completion),
        /// in seconds since 1970 (a coarse clock: a few milliseconds); nil if
        /// it never did.
        public var lastEventAt: Double?
        /// The bounded boundaries' statistics for this stage's name, if a
        /// bounded boundary buffers a signal of that name.
        public var buffer: SignalBufferStatistics?

        public init(
            id: String,
            name: String,
            location: String,
            signals: Int,
            liveSubscriptions: Int,
            subscriptions: UInt64,
            values: UInt64,
            errors: UInt64,
            completions: UInt64,
            disposals: UInt64,
            lastEventAt: Double?,
            buffer: SignalBufferStatistics?
        ) {
            self.id = id
            self.name = name
            self.location = location
            self.signals = signals
            self.liveSubscriptions = liveSubscriptions
            self.subscriptions = subscriptions
            self.values = values
            self.errors = errors
            self.completions = completions
            self.disposals = disposals
            self.lastEventAt = lastEventAt
            self.buffer = buffer
        }
    }

    /// `from` feeds `to` (stage ids).
    public struct Edge: Codable, Sendable, Hashable {
        public var from: String
        public var to: String

        public init(from: String, to: String) {
            self.from = from
            self.to = to
        }
    }

    /// When the snapshot was taken, in seconds since 1970.
    public var takenAt: Double
    /// The stages alive now, sorted by id.
    public var stages: [Stage]
    /// The edges between stages alive now, sorted.
    public var edges: [Edge]
    /// Every bounded boundary's statistics (``SignalKitDebug/bufferStatistics()``),
    /// those matching no stage included.
    public var buffers: [SignalBufferStatistics]

    public init(takenAt: Double, stages: [Stage], edges: [Edge], buffers: [SignalBufferStatistics]) {
        self.takenAt = takenAt
        self.stages = stages
        self.edges = edges
        self.buffers = buffers
    }

    /// The stage with this name (the first by id if several places use it).
    public func stage(named name: String) -> Stage? {
        stages.first { $0.name == name }
    }
}

// MARK: - Switch

enum _SignalInspection {
    /// Whether a signal named now on this thread is inspected: the
    /// process-wide bit of `_SignalNaming.flags`, or a `withInspection`
    /// scope on this thread.
    @inline(__always)
    static var isOn: Bool {
        if _SignalNaming.flags.load(ordering: .relaxed) & _SignalNaming.inspecting != 0 { return true }
        guard _SignalNaming.scopes.load(ordering: .relaxed) > 0 else { return false }
        return scopeDepth.value > 0
    }

    /// The calling thread's `withInspection` depth.
    private static let scopeDepth = _ThreadDepth(.inspectionScopeDepth)

    /// An inspection scope is a naming scope too (see `isInspecting`).
    static func enterScope() {
        scopeDepth.add(1)
        _SignalNaming.enterScope()
    }

    static func leaveScope() {
        _SignalNaming.leaveScope()
        scopeDepth.add(-1)
    }

    /// Makes `stage` the thread's current stage; returns the previous one.
    static func enter(_ stage: _InspectedStage) -> _InspectedStage? {
        // The thread's current stage is unretained: the generator's closure
        // (or the delivering sink) holds it while it is current.
        let previous = _ThreadSlot.inspectedStage.pointer.map { Unmanaged<_InspectedStage>.fromOpaque($0).takeUnretainedValue() }
        _ThreadSlot.inspectedStage.pointer = Unmanaged.passUnretained(stage).toOpaque()
        return previous
    }

    static func leave(restoring previous: _InspectedStage?) {
        _ThreadSlot.inspectedStage.pointer = previous.map { Unmanaged.passUnretained($0).toOpaque() }
    }

    /// While a stage delivers an event downstream, the thread's current
    /// stage is the one that subscribed it (nil if none did): a signal that
    /// a downstream operator subscribes then (a flattening operator's inner
    /// signal, at once or later, on any thread) feeds that stage, not the
    /// one that sent the event. Returns what `restore` puts back.
    @inline(__always)
    static func deliver(as stage: _InspectedStage?) -> UnsafeMutableRawPointer? {
        let previous = _ThreadSlot.inspectedStage.pointer
        _ThreadSlot.inspectedStage.pointer = stage.map { Unmanaged.passUnretained($0).toOpaque() }
        return previous
    }

    @inline(__always)
    static func restore(_ previous: UnsafeMutableRawPointer?) {
        _ThreadSlot.inspectedStage.pointer = previous
    }
}

// MARK: - Stages

/// One stage's counters, shared by every signal named at its place and
/// every subscription to them. Freed when the registry drops it and the
/// last signal or subscription of the stage lets go of it.
final class _InspectedStage: Sendable {
    let id: String
    let name: String
    let location: String
    let liveSubscriptions = Synchronization.Atomic<Int>(0)
    let subscriptions = Synchronization.Atomic<UInt64>(0)
    let values = Synchronization.Atomic<UInt64>(0)
    let errors = Synchronization.Atomic<UInt64>(0)
    let completions = Synchronization.Atomic<UInt64>(0)
    let disposals = Synchronization.Atomic<UInt64>(0)
    /// Nanoseconds since 1970 (coarse clock) of the last event; 0: none.
    let lastEvent = Synchronization.Atomic<UInt64>(0)
    /// Unique for the life of the process (addresses are reused).
    let serial = _InspectedStage.serials.add(1, ordering: .relaxed).newValue
    /// The serial of the stage this one was last recorded feeding: a
    /// subscription from the same downstream does not take the registry's
    /// lock again.
    let lastDownstream = Synchronization.Atomic<UInt64>(0)

    private static let serials = Synchronization.Atomic<UInt64>(0)

    init(id: String, name: String, location: SignalSourceLocation) {
        self.id = id
        self.name = name
        self.location = location.description
    }

    static func id(name: String, location: SignalSourceLocation) -> String {
        "\(name)@\(location)"
    }

    @inline(__always)
    func recordEvent(_ counter: borrowing Synchronization.Atomic<UInt64>) {
        counter.add(1, ordering: .relaxed)
        lastEvent.store(_coarseWallClockNanoseconds(), ordering: .relaxed)
    }
}

/// One signal's (or one subscription's) hold on its stage's registry
/// entry: the stage is listed while a hold on it is alive.
final class _StageHold: Sendable {
    let stage: _InspectedStage

    init(name: String, location: SignalSourceLocation, upstreams: [String]) {
        stage = _InspectionRegistry.shared.acquire(name: name, location: location, upstreams: upstreams)
    }

    deinit {
        _InspectionRegistry.shared.release(stage)
    }
}

/// The process-wide table of stages and edges.
final class _InspectionRegistry: Sendable {
    static let shared = _InspectionRegistry()

    private struct State {
        /// The stages alive, by id, with the number of holds on each.
        var stages: [String: (stage: _InspectedStage, holds: Int)] = [:]
        /// Edges by their target's id: the ids of the stages feeding it.
        var feeders: [String: Set<String>] = [:]
    }

    private let state = _LockedState(State())

    func acquire(name: String, location: SignalSourceLocation, upstreams: [String]) -> _InspectedStage {
        let id = _InspectedStage.id(name: name, location: location)
        return state.withLock { state in
            let stage: _InspectedStage
            if let entry = state.stages[id] {
                stage = entry.stage
                state.stages[id] = (stage, entry.holds + 1)
            } else {
                // Made under the lock: its initialiser only stores (nothing is released here).
                stage = _InspectedStage(id: id, name: name, location: location)
                state.stages[id] = (stage, 1)
            }
            for upstream in upstreams where upstream != id {
                state.feeders[id, default: []].insert(upstream)
            }
            return stage
        }
    }

    func release(_ stage: _InspectedStage) {
        state.withLock { state in
            guard let entry = state.stages[stage.id], entry.stage === stage else { return }
            if entry.holds > 1 {
                state.stages[stage.id] = (stage, entry.holds - 1)
                return
            }
            state.stages[stage.id] = nil
            state.feeders[stage.id] = nil
            for key in Array(state.feeders.keys) {
                state.feeders[key]?.remove(stage.id)
                if state.feeders[key]?.isEmpty == true { state.feeders[key] = nil }
            }
        }
    }

    /// Records that `upstream` feeds `downstream` (a subscription of
    /// `downstream` subscribed `upstream`).
    func addEdge(from upstream: _InspectedStage, to downstream: _InspectedStage) {
        guard upstream !== downstream,
            upstream.lastDownstream.exchange(downstream.serial, ordering: .relaxed) != downstream.serial
        else { return }
        state.withLock { state in
            guard state.stages[upstream.id] != nil, state.stages[downstream.id] != nil else { return }
            state.feeders[downstream.id, default: []].insert(upstream.id)
        }
    }

    func snapshot() -> SignalGraphSnapshot {
        let (entries, feeders) = state.withLock { state in
            (state.stages.values.map { ($0.stage, $0.holds) }, state.feeders)
        }
        var stages: [SignalGraphSnapshot.Stage] = []
        stages.reserveCapacity(entries.count)
        var ids = Set<String>()
        for (stage, holds) in entries {
            ids.insert(stage.id)
            let last = stage.lastEvent.load(ordering: .relaxed)
            stages.append(
                SignalGraphSnapshot.Stage(
                    id: stage.id,
                    name: stage.name,
                    location: stage.location,
                    signals: holds,
                    liveSubscriptions: stage.liveSubscriptions.load(ordering: .relaxed),
                    subscriptions: stage.subscriptions.load(ordering: .relaxed),
                    values: stage.values.load(ordering: .relaxed),
                    errors: stage.errors.load(ordering: .relaxed),
                    completions: stage.completions.load(ordering: .relaxed),
                    disposals: stage.disposals.load(ordering: .relaxed),
                    lastEventAt: last == 0 ? nil : Double(last) / 1e9,
                    buffer: nil
                ))
        }
        stages.sort { $0.id < $1.id }
        var edges: [SignalGraphSnapshot.Edge] = []
        for (to, froms) in feeders where ids.contains(to) {
            for from in froms where ids.contains(from) {
                edges.append(SignalGraphSnapshot.Edge(from: from, to: to))
            }
        }
        edges.sort { ($0.from, $0.to) < ($1.from, $1.to) }
        return SignalGraphSnapshot(takenAt: _wallClockSeconds(), stages: stages, edges: edges, buffers: [])
    }
}

// MARK: - The counting stage

extension Signal {
    /// `self` named, behind a counting step that reports to the stage of
    /// `name` at `location` (inspection on).
    func _inspected(_ name: String, location: SignalSourceLocation) -> Signal<T, E> {
        let hold = _StageHold(name: name, location: location, upstreams: _namedUpstreamIDs())
        let input = self
        let counted = Signal { subscriber in
            let stage = hold.stage
            stage.subscriptions.add(1, ordering: .relaxed)
            stage.liveSubscriptions.add(1, ordering: .relaxed)
            let outer = _SignalInspection.enter(stage)
            if let outer { _InspectionRegistry.shared.addEdge(from: stage, to: outer) }
            let upstream = input._start(_InspectingSink(downstream: subscriber, hold: hold, subscribedBy: outer))
            _SignalInspection.leave(restoring: outer)
            return ActionDisposable {
                upstream.dispose()
                stage.disposals.add(1, ordering: .relaxed)
                stage.liveSubscriptions.subtract(1, ordering: .relaxed)
                withExtendedLifetime(hold) {}
            }
        }
        return counted._named(name, location: location)
    }

    /// The ids of the nearest named signals this one was built from (as far
    /// as operators recorded their inputs, which they do while naming or
    /// inspection is on).
    private func _namedUpstreamIDs() -> [String] {
        var ids: [String] = []
        var pending: [any _SignalDescribable] = [self]
        var visited = 0
        // Bounded: a graph built from a million operators is cut short, not walked.
        while let signal = pending.popLast(), visited < 10_000 {
            visited += 1
            guard let info = signal._debugInfo else { continue }
            switch info.kind {
            case .named(let name, let location):
                ids.append(_InspectedStage.id(name: name, location: location))
            case .unary(_, _, let input):
                pending.append(input)
            case .combining(_, _, let inputs):
                pending.append(contentsOf: inputs)
            }
        }
        return ids
    }
}

/// Counts the events of one subscription to a stage, then forwards them.
struct _InspectingSink<T, E>: _InlineSink {
    typealias Input = T
    typealias Failure = E

    let downstream: Subscriber<T, E>
    var downstreamSubscription: _SubscriptionBase? { downstream._subscriptionBase }
    let hold: _StageHold
    /// The stage whose subscription subscribed this one, if any (see
    /// `_SignalInspection.deliver(as:)`).
    let subscribedBy: _InspectedStage?

    func putNext(_ value: T, from _: _SubscriptionBase) {
        hold.stage.recordEvent(hold.stage.values)
        let previous = _SignalInspection.deliver(as: subscribedBy)
        downstream.putNext(value)
        _SignalInspection.restore(previous)
    }

    func putError(_ error: E) {
        hold.stage.recordEvent(hold.stage.errors)
        let previous = _SignalInspection.deliver(as: subscribedBy)
        downstream.putError(error)
        _SignalInspection.restore(previous)
    }

    func putCompletion() {
        hold.stage.recordEvent(hold.stage.completions)
        let previous = _SignalInspection.deliver(as: subscribedBy)
        downstream.putCompletion()
        _SignalInspection.restore(previous)
    }
}
