// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Synchronization

// The counters of bounded boundaries: one entry per signal name, shared by
// every subscription through a bounded boundary that buffers a signal of
// that name, read by `SignalKitDebug.bufferStatistics()` (and SignalKitMetrics
// and SignalKitLogging through it); and, for a buffer made with
// `SignalBuffer.counted(by:)`, the same counters once more in its probe
// (SignalBufferProbe.swift), which no name reaches.
//
// An entry lives while a subscription of its name does, and for the
// retention (`bufferStatisticsRetention`) after its last one ends; the
// registry then removes it, with its counters, at its next use (a
// subscription starting or ending, a read). Entries and removal:
// * an entry counts the subscriptions that use it (`subscriptions`): raised
//   when a subscription finds (or makes) the entry in the table, under the
//   registry's lock; lowered when the subscription ends, without it;
// * the registry removes an entry only under its lock, and only while that
//   count is zero; so a subscription never counts into a removed entry, and
//   a removed entry is never found again (the next subscription of the name
//   makes a new one, counting from zero);
// * an entry whose count falls to zero is stamped with a new generation and
//   put in a heap by the time its retention ends; a subscription that starts
//   meanwhile makes that stamp stale, so an entry that went idle, came back
//   and went idle again is removed by its last idle time only.
// Locks: the registry's lock is taken with no other lock held, or under one
// entry's `live` lock, and nothing is taken under it.

/// What the bounded boundaries of one signal name have done, read by
/// ``SignalKitDebug/bufferStatistics()``; or what the boundaries counted by
/// one ``SignalBufferProbe`` have done (``SignalBufferProbe/statistics``).
///
/// The name is the buffered signal's `description` when the boundary was
/// applied: its `named(_:)` name (name your signals to tell their boundaries
/// apart), its operator chain while naming is on, else its type. Boundaries
/// with the same name share one entry.
///
/// An entry lives while a subscription of its name is live, and for
/// ``SignalKitDebug/bufferStatisticsRetention`` (60 seconds by default) after
/// the last one ends, so that a reader polling more often than that sees
/// every name's final figures (the drops of a subscription that ended, the
/// `failing` overflow that ended it). Then the entry is removed, counters
/// and all. A subscription of the name that starts before then continues the
/// entry and its counters; one that starts after makes a new entry, counting
/// from zero. So a service that names a signal per client
/// (`named("client-\(id)")`) keeps the entries of the clients connected now
/// and of those gone within the retention, not of every client it ever had.
/// To read one subscription's figures whatever its name, count its buffer
/// with a probe (``SignalBuffer/counted(by:)``).
public struct SignalBufferStatistics: Codable, Sendable, Hashable, CustomStringConvertible {
    /// The buffered signal's name.
    public let name: String
    /// The policy of the boundary that made the entry (`droppingOldest(beyond: 100)`).
    public let policy: String
    /// Values dropped so far: by a dropping policy, by `latest` (a replaced
    /// value), by `failing` (the value that overflowed, the values waiting
    /// then and the rest of the batch being delivered), by an upstream error
    /// that goes ahead of the values waiting (`delayEvents`, `queue`), and
    /// by `blocking` (a producer woken by a disposal). The law: for a
    /// subscription that ends by its terminal event, values delivered +
    /// drops == values sent into the boundary. Values still waiting when a
    /// subscription is disposed are not drops (the consumer left).
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
    /// The counters of every bounded boundary: one entry per buffered
    /// signal's name that has a live subscription, or had one within
    /// ``bufferStatisticsRetention``; sorted by name. Unbounded boundaries
    /// keep none.
    ///
    /// Cost: one lock per entry and one per live subscription (to read its
    /// depth); the boundaries themselves pay a counter update only when
    /// they drop, overflow or block, and a lock on the table when a
    /// subscription starts and ends.
    public static func bufferStatistics() -> [SignalBufferStatistics] {
        _bufferStatisticsByEntry().map(\.statistics)
    }

    /// ``bufferStatistics()`` with each entry's serial number, unique for the
    /// life of the process: a name whose serial changed between two reads
    /// has a new entry, counting from zero (the reporters of SignalKitMetrics
    /// and SignalKitLogging add and log from there).
    package static func _bufferStatisticsByEntry() -> [(entry: UInt64, statistics: SignalBufferStatistics)] {
        _BufferRegistry.shared.entries().map { ($0.serial, $0.snapshot()) }.sorted { $0.statistics.name < $1.statistics.name }
    }

    /// How long a name's entry stays in ``bufferStatistics()`` after its
    /// last live subscription ends: 60 seconds by default.
    ///
    /// Readers that must see every name's final figures read more often than
    /// this (`SignalKitMetricsReporter` and `SignalBufferDropLogger` read at
    /// their interval). `.zero` removes an entry as soon as its last
    /// subscription ends. The table holds the names with a live subscription
    /// plus those whose last one ended within the retention: with a name per
    /// client, about (clients leaving per second × retention) entries more.
    /// A new value applies to the names whose last subscription ends after
    /// it is set.
    /// - Precondition: not negative.
    public static var bufferStatisticsRetention: Duration {
        get { _BufferRegistry.shared.retention }
        set {
            _signalKitRequire(
                newValue >= .zero,
                "SignalKitDebug.bufferStatisticsRetention: a retention cannot be negative (it is \(newValue)); "
                    + "use .zero to remove a name's entry as soon as its last subscription ends"
            )
            _BufferRegistry.shared.retention = newValue
        }
    }

    /// The retention of the names that start with `prefix`, instead of
    /// ``bufferStatisticsRetention`` (nil: the override is removed). For
    /// tests, which run beside others that read the table: the longest
    /// matching prefix wins.
    package static func _setBufferStatisticsRetention(_ retention: Duration?, forNamesWithPrefix prefix: String) {
        _BufferRegistry.shared.setRetention(retention, forNamesWithPrefix: prefix)
    }

    /// Called once per entry, on the thread that dropped, when a bounded
    /// boundary of the entry's name drops its first value (with the
    /// statistics as they are then). An entry lives while a subscription of
    /// its name does and for ``bufferStatisticsRetention`` after (see
    /// ``SignalBufferStatistics``): a name whose entry was removed reports
    /// its first drop again in its new entry. Probes
    /// (``SignalBufferProbe``) report nothing here. SignalKitLogging's drop
    /// logger installs one; nil (the default) calls nothing. Setting it
    /// affects later first drops only.
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

/// What a bounded boundary counts under, fixed when the boundary is applied:
/// the buffered signal's name, the policy the statistics show, and the
/// policy's probe.
struct _BufferAccount: Sendable {
    let name: String
    let policy: String
    let probe: SignalBufferProbe?

    /// `buffer`'s account under `name`.
    init<E>(name: String, buffer: SignalBuffer<E>) {
        self.name = name
        self.policy = buffer.description
        probe = buffer.probe
    }

    /// The counters of one subscription that starts now: its name's entry
    /// (made if the table has none) and its probe's, each counting the
    /// subscription as using it. The subscription's buffer attaches itself
    /// (`_BufferCounts.attach`) at the end of its `init`.
    func open() -> _BufferCounts {
        _BufferCounts(
            entry: _BufferRegistry.shared.open(name: name, policy: policy),
            probe: probe?.open(name: name, policy: policy)
        )
    }
}

/// The counters one subscription's buffer updates: its name's entry and its
/// probe's. Updated only on drops, overflows, blocked sends, a new maximum
/// depth and the subscription's start and end: the per-value path touches
/// none of them.
struct _BufferCounts: Sendable {
    let entry: _BufferCounters
    let probe: _BufferCounters?

    /// Makes `source` the live buffer whose depth the statistics read (once,
    /// at the end of its `init`).
    func attach(_ source: any _BufferDepthSource) {
        entry.attach(source)
        probe?.attach(source)
    }

    /// The subscription of buffer `id` ended (disposed, or its terminal
    /// event taken): it leaves the live count. Idempotent.
    func detach(_ id: ObjectIdentifier) {
        entry.detach(id)
        probe?.detach(id)
    }

    /// Counts `count` dropped values; reports the entry's first drop.
    func recordDrops(_ count: Int) {
        entry.recordDrops(count)
        probe?.recordDrops(count)
    }

    func recordOverflow() {
        entry.recordOverflow()
        probe?.recordOverflow()
    }

    func recordBlockedSend() {
        entry.recordBlockedSend()
        probe?.recordBlockedSend()
    }

    /// Raises the maximum depth to `depth` (called when a buffer reaches a
    /// new maximum of its own, so rarely).
    func recordDepth(_ depth: Int) {
        entry.recordDepth(depth)
        probe?.recordDepth(depth)
    }
}

/// The process-wide table of boundary counters, by name (see the file
/// header for how entries are removed).
final class _BufferRegistry: Sendable {
    static let shared = _BufferRegistry()

    private struct Entry {
        let counters: _BufferCounters
        /// Raised each time the entry goes idle: the heap's stamp of an
        /// earlier idle time no longer matches.
        var generation: UInt64
    }

    private struct Idle {
        let counters: _BufferCounters
        let generation: UInt64
    }

    private struct State {
        var entries: [String: Entry] = [:]
        /// The idle entries, by the time their retention ends (monotonic
        /// nanoseconds). May hold stale stamps (see `Entry.generation`).
        var idle = _DeadlineHeap<UInt64, Idle>()
        var retention: Duration = .seconds(60)
        /// Retentions by name prefix (`_setBufferStatisticsRetention`).
        var retentionByPrefix: [String: Duration] = [:]
        /// The serial number of the last entry made.
        var lastSerial: UInt64 = 0
    }

    private let state = _LockedState(State())
    let firstDropHandler = _LockedState<(@Sendable (SignalBufferStatistics) -> Void)?>(nil)

    var retention: Duration {
        get { state.withLock { $0.retention } }
        set { state.withLock { $0.retention = newValue } }
    }

    func setRetention(_ retention: Duration?, forNamesWithPrefix prefix: String) {
        state.withLock { $0.retentionByPrefix[prefix] = retention }
    }

    /// The entry for `name` (made on first use, with `policy` as the policy
    /// it shows), counting one more subscription that uses it.
    func open(name: String, policy: String) -> _BufferCounters {
        state.withLock { state in
            removeExpired(&state, now: nil)
            let counters: _BufferCounters
            if let existing = state.entries[name] {
                counters = existing.counters
            } else {
                state.lastSerial &+= 1
                counters = _BufferCounters(name: name, policy: policy, serial: state.lastSerial)
                state.entries[name] = Entry(counters: counters, generation: 0)
            }
            counters.opened()
            return counters
        }
    }

    /// The live entries and those within their retention.
    func entries() -> [_BufferCounters] {
        state.withLock { state in
            removeExpired(&state, now: nil)
            return state.entries.values.map(\.counters)
        }
    }

    /// The last subscription using `counters` ended (its count fell to zero,
    /// outside this lock): unless another one started meanwhile, the entry
    /// is removed now (no retention) or when its retention ends.
    func lastSubscriptionEnded(_ counters: _BufferCounters) {
        state.withLock { state in
            let now = _monotonicNanoseconds()
            if var entry = state.entries[counters.name], entry.counters === counters, counters.isUnused {
                let keep = Self.nanoseconds(retention(of: counters.name, in: state))
                if keep == 0 {
                    state.entries[counters.name] = nil
                } else {
                    entry.generation &+= 1
                    state.entries[counters.name] = entry
                    let (deadline, overflow) = now.addingReportingOverflow(keep)
                    state.idle.insert(
                        Idle(counters: counters, generation: entry.generation), deadline: overflow ? .max : deadline)
                }
            }
            removeExpired(&state, now: now)
        }
    }

    /// Removes the entries whose retention has ended and that nothing
    /// started to use again. Called with the lock held.
    private func removeExpired(_ state: inout State, now: UInt64?) {
        guard let earliest = state.idle.earliestDeadline else { return }
        let now = now ?? _monotonicNanoseconds()
        guard earliest <= now else { return }
        while let (_, idle) = state.idle.popFirst(notAfter: now) {
            let name = idle.counters.name
            if let entry = state.entries[name], entry.counters === idle.counters, entry.generation == idle.generation,
                idle.counters.isUnused
            {
                state.entries[name] = nil
            }
        }
    }

    /// The retention of `name`: its longest matching prefix's, else the
    /// process's.
    private func retention(of name: String, in state: State) -> Duration {
        guard !state.retentionByPrefix.isEmpty else { return state.retention }
        var best: (length: Int, retention: Duration)?
        for (prefix, retention) in state.retentionByPrefix where name.hasPrefix(prefix) {
            if prefix.utf8.count > best?.length ?? -1 { best = (prefix.utf8.count, retention) }
        }
        return best?.retention ?? state.retention
    }

    /// `duration` in nanoseconds (at least 0, at most `UInt64.max`).
    private static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0, attoseconds >= 0 else { return 0 }
        let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return .max }
        let (total, overflowed) = whole.addingReportingOverflow(UInt64(attoseconds / 1_000_000_000))
        return overflowed ? .max : total
    }
}

/// The counters of one name's entry, or of one probe. Updated only on
/// drops, overflows, blocked sends, a new maximum depth and subscription
/// start and end: the per-value path touches none of them.
final class _BufferCounters: Sendable {
    let name: String
    let policy: String
    /// An entry's serial number (from 1, unique for the life of the
    /// process); 0 for a probe's counters.
    let serial: UInt64
    /// An entry of the registry's table (which reports first drops and is
    /// removed when unused), not a probe's counters.
    private var isEntry: Bool { serial != 0 }
    private let drops = Synchronization.Atomic<UInt64>(0)
    private let overflows = Synchronization.Atomic<UInt64>(0)
    private let blockedSends = Synchronization.Atomic<UInt64>(0)
    private let maximumDepth = Synchronization.Atomic<Int>(0)
    private let reportedFirstDrop = Synchronization.Atomic<Bool>(false)
    /// The subscriptions that opened these counters and have not ended:
    /// raised by `opened` (for an entry, under the registry's lock), lowered
    /// by `detach`. An entry is removed only while it is zero.
    private let subscriptions = Synchronization.Atomic<Int>(0)
    /// The live buffers, by identity, held unowned: every buffer removes
    /// itself at the latest in its `deinit`, before anything of it is
    /// destroyed, and `snapshot` reads them under this lock, so the buffers
    /// it reads are whole. Not weak: a weak reference gives its object a
    /// side table, which moves every retain and release of the object (a
    /// hop is retained per value) to the runtime's slow path.
    private let live = _LockedState([ObjectIdentifier: _UnownedDepthSource]())

    /// An entry's counters (`serial` > 0) or a probe's (`serial` 0).
    init(name: String, policy: String, serial: UInt64) {
        self.name = name
        self.policy = policy
        self.serial = serial
    }

    /// One more subscription uses these counters (before it attaches its
    /// buffer).
    func opened() {
        subscriptions.add(1, ordering: .acquiringAndReleasing)
    }

    /// No subscription uses these counters.
    var isUnused: Bool {
        subscriptions.load(ordering: .acquiring) == 0
    }

    func attach(_ source: any _BufferDepthSource) {
        live.withLock { $0[ObjectIdentifier(source)] = _UnownedDepthSource(source: source) }
    }

    func detach(_ id: ObjectIdentifier) {
        if _BufferCounters.snapshotting === self {
            // A buffer freed inside this thread's own `snapshot` (which held
            // the last reference to it for a moment, see there): the lock is
            // this thread's already; the snapshot removes the entry.
            freedDuringSnapshot.withLock { $0.append(id) }
            return
        }
        let removed = live.withLock { $0.removeValue(forKey: id) != nil }
        if removed { subscriptionEnded() }
    }

    /// A subscription that attached its buffer ended.
    private func subscriptionEnded() {
        if subscriptions.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 && isEntry {
            _BufferRegistry.shared.lastSubscriptionEnded(self)
        }
    }

    /// The counters whose `snapshot` the current thread (or task) is taking.
    @TaskLocal private static var snapshotting: _BufferCounters?
    /// Buffers detached from inside a snapshot, on its thread.
    private let freedDuringSnapshot = _LockedState([ObjectIdentifier]())

    /// Counts `count` dropped values; an entry reports its first drop.
    func recordDrops(_ count: Int) {
        guard count > 0 else { return }
        let before = drops.add(UInt64(count), ordering: .relaxed).oldValue
        if before == 0, isEntry, !reportedFirstDrop.exchange(true, ordering: .relaxed),
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

    /// Raises the maximum depth to `depth`.
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
        // buffer's mutex: no buffer attaches or detaches with its mutex
        // held, so the two locks are always taken in this order.
        // Reading a buffer may retain it for a moment; if every other
        // reference went away meanwhile, this release frees it, here, and its
        // `deinit` detaches it: that must not wait for this lock, which this
        // thread holds (`snapshotting`, `freedDuringSnapshot`). The
        // subscriptions those buffers ended leave the count after the lock
        // is released (that may remove the entry, under the registry's lock).
        let (depth, alive, ended) = _BufferCounters.$snapshotting.withValue(self) {
            live.withLock { live in
                let depth = live.values.reduce(0) { $0 + $1.source.waitingCount }
                let freed = freedDuringSnapshot.withLock { ids -> [ObjectIdentifier] in
                    defer { ids = [] }
                    return ids
                }
                var ended = 0
                for id in freed where live.removeValue(forKey: id) != nil { ended += 1 }
                return (depth, live.count, ended)
            }
        }
        for _ in 0..<ended { subscriptionEnded() }
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
/// only under its counters' lock, while the buffer is attached (alive).
struct _UnownedDepthSource: @unchecked Sendable {
    unowned(unsafe) let source: any _BufferDepthSource
}
