// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Synchronization

// The counters of bounded boundaries: one entry per signal name, shared by
// every boundary that buffers a signal of that name, read by
// `SignalKitDebug.bufferStatistics()` (and SignalKitMetrics and
// SignalKitLogging through it).

/// What the bounded boundaries of one signal name have done, read by
/// ``SignalKitDebug/bufferStatistics()``.
///
/// The name is the buffered signal's `description` when the boundary was
/// applied: its `named(_:)` name (name your signals to tell their boundaries
/// apart), its operator chain while naming is on, else its type. Boundaries
/// with the same name share one entry. Entries are never removed: keep names
/// bounded, as metric labels.
public struct SignalBufferStatistics: Codable, Sendable, Hashable, CustomStringConvertible {
    /// The buffered signal's name.
    public let name: String
    /// The policy of the boundary that made the entry (`droppingOldest(beyond: 100)`).
    public let policy: String
    /// Values dropped so far: by a dropping policy, by `latest` (a replaced
    /// value), by `failing` (the values waiting when it overflowed), and by
    /// `blocking` (a producer woken by a disposal). Values still waiting when
    /// a subscription is disposed are not drops.
    public let drops: UInt64
    /// Subscriptions ended by a `failing` policy's overflow.
    public let overflows: UInt64
    /// Times a producer waited for room (`blocking`).
    public let blockedSends: UInt64
    /// Values waiting now, summed over the live subscriptions (the batch
    /// each consumer is delivering is not counted).
    public let depth: Int
    /// The most values that waited in one subscription's buffer at once.
    public let maximumDepth: Int
    /// Subscriptions through these boundaries now: started, and neither
    /// disposed nor terminated (a terminated subscription is disposed once
    /// its terminal event is delivered).
    public let liveSubscriptions: Int

    public init(
        name: String,
        policy: String,
        drops: UInt64,
        overflows: UInt64,
        blockedSends: UInt64,
        depth: Int,
        maximumDepth: Int,
        liveSubscriptions: Int
    ) {
        self.name = name
        self.policy = policy
        self.drops = drops
        self.overflows = overflows
        self.blockedSends = blockedSends
        self.depth = depth
        self.maximumDepth = maximumDepth
        self.liveSubscriptions = liveSubscriptions
    }

    /// `ticks [droppingOldest(beyond: 100)]: 12 dropped, 0 overflows, 0 blocked sends, depth 100 (max 100), 3 live`
    public var description: String {
        "\(name) [\(policy)]: \(drops) dropped, \(overflows) overflows, \(blockedSends) blocked sends, "
            + "depth \(depth) (max \(maximumDepth)), \(liveSubscriptions) live"
    }
}

extension SignalKitDebug {
    /// The counters of every bounded boundary (one entry per buffered
    /// signal's name, sorted by name). Unbounded boundaries keep none.
    ///
    /// Cost: one lock per entry and one per live subscription (to read its
    /// depth); the boundaries themselves pay a counter update only when
    /// they drop, overflow or block.
    public static func bufferStatistics() -> [SignalBufferStatistics] {
        _BufferRegistry.shared.entries().map { $0.snapshot() }.sorted { $0.name < $1.name }
    }

    /// Called once per name, on the thread that dropped, when a bounded
    /// boundary of that name drops its first value (with the statistics as
    /// they are then). SignalKitLogging's drop logger installs one; nil (the
    /// default) calls nothing. Setting it affects later first drops only.
    public static var firstBufferDropHandler: (@Sendable (SignalBufferStatistics) -> Void)? {
        get { _BufferRegistry.shared.firstDropHandler.withLock { $0 } }
        set { _BufferRegistry.shared.firstDropHandler.withLock { $0 = newValue } }
    }
}

/// A live buffer whose depth the statistics read.
protocol _BufferDepthSource: AnyObject, Sendable {
    /// Values waiting now.
    var waitingCount: Int { get }
}

/// The process-wide table of boundary counters, by name.
final class _BufferRegistry: Sendable {
    static let shared = _BufferRegistry()

    private let table = _LockedState([String: _BufferCounters]())
    let firstDropHandler = _LockedState<(@Sendable (SignalBufferStatistics) -> Void)?>(nil)

    /// The entry for `name`, made on first use (with `policy` as the policy
    /// it shows).
    func counters(name: String, policy: String) -> _BufferCounters {
        table.withLock { table in
            if let existing = table[name] { return existing }
            let counters = _BufferCounters(name: name, policy: policy)
            table[name] = counters
            return counters
        }
    }

    func entries() -> [_BufferCounters] {
        table.withLock { Array($0.values) }
    }
}

/// The counters of one name. Updated only on drops, overflows, blocked
/// sends and subscription start and end: the per-value path touches none of
/// them.
final class _BufferCounters: Sendable {
    let name: String
    let policy: String
    private let drops = Synchronization.Atomic<UInt64>(0)
    private let overflows = Synchronization.Atomic<UInt64>(0)
    private let blockedSends = Synchronization.Atomic<UInt64>(0)
    private let maximumDepth = Synchronization.Atomic<Int>(0)
    private let reportedFirstDrop = Synchronization.Atomic<Bool>(false)
    /// The live buffers, by identity, held unowned: every buffer removes
    /// itself at the latest in its `deinit`, before anything of it is
    /// destroyed, and `snapshot` reads them under this lock, so the buffers
    /// it reads are whole. Not weak: a weak reference gives its object a
    /// side table, which moves every retain and release of the object (a
    /// hop is retained per value) to the runtime's slow path (W12: 9 % of
    /// the time).
    private let live = _LockedState([ObjectIdentifier: _UnownedDepthSource]())

    init(name: String, policy: String) {
        self.name = name
        self.policy = policy
    }

    func register(_ source: any _BufferDepthSource) {
        live.withLock { $0[ObjectIdentifier(source)] = _UnownedDepthSource(source: source) }
    }

    func unregister(_ id: ObjectIdentifier) {
        if _BufferCounters.snapshotting === self {
            // A buffer freed inside this thread's own `snapshot` (which held
            // the last reference to it for a moment, see there): the lock is
            // this thread's already; the snapshot removes the entry.
            freedDuringSnapshot.withLock { $0.append(id) }
            return
        }
        _ = live.withLock { $0.removeValue(forKey: id) }
    }

    /// The counters whose `snapshot` the current thread (or task) is taking.
    @TaskLocal private static var snapshotting: _BufferCounters?
    /// Buffers unregistered from inside a snapshot, on its thread.
    private let freedDuringSnapshot = _LockedState([ObjectIdentifier]())

    /// Counts `count` dropped values; reports the name's first drop.
    func recordDrops(_ count: Int) {
        guard count > 0 else { return }
        let before = drops.add(UInt64(count), ordering: .relaxed).oldValue
        if before == 0, !reportedFirstDrop.exchange(true, ordering: .relaxed),
            let handler = _BufferRegistry.shared.firstDropHandler.withLock({ $0 })
        {
            handler(snapshot())
        }
    }

    func recordOverflow() {
        overflows.add(1, ordering: .relaxed)
    }

    func recordBlockedSend() {
        blockedSends.add(1, ordering: .relaxed)
    }

    /// Raises the maximum depth to `depth` (called when a buffer reaches a
    /// new maximum of its own, so rarely).
    func recordDepth(_ depth: Int) {
        var current = maximumDepth.load(ordering: .relaxed)
        while depth > current {
            let (exchanged, original) = maximumDepth.compareExchange(
                expected: current, desired: depth, ordering: .relaxed)
            if exchanged { return }
            current = original
        }
    }

    func snapshot() -> SignalBufferStatistics {
        // Under the lock (see `live`). A buffer's `waitingCount` takes the
        // buffer's mutex: no buffer registers or unregisters with its mutex
        // held, so the two locks are always taken in this order.
        // Reading a buffer may retain it for a moment; if every other
        // reference went away meanwhile, this release frees it, here, and its
        // `deinit` unregisters it: that must not wait for this lock, which
        // this thread holds (`snapshotting`, `freedDuringSnapshot`).
        let (depth, alive) = _BufferCounters.$snapshotting.withValue(self) {
            live.withLock { live in
                let depth = live.values.reduce(0) { $0 + $1.source.waitingCount }
                let freed = freedDuringSnapshot.withLock { ids -> [ObjectIdentifier] in
                    defer { ids = [] }
                    return ids
                }
                for id in freed { live.removeValue(forKey: id) }
                return (depth, live.count)
            }
        }
        return SignalBufferStatistics(
            name: name,
            policy: policy,
            drops: drops.load(ordering: .relaxed),
            overflows: overflows.load(ordering: .relaxed),
            blockedSends: blockedSends.load(ordering: .relaxed),
            depth: depth,
            maximumDepth: maximumDepth.load(ordering: .relaxed),
            liveSubscriptions: alive
        )
    }
}

/// An unowned reference to a live buffer (see `_BufferCounters.live`).
///
/// `@unchecked Sendable`: the buffer is `Sendable`; the reference is read
/// only under the registry's lock, while the buffer is registered (alive).
struct _UnownedDepthSource: @unchecked Sendable {
    unowned(unsafe) let source: any _BufferDepthSource
}
