// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// Every dedicated thread's counters, by thread name, for monitoring
// (`DedicatedThreadScheduler.statisticsByName()`, which SignalKitMetrics
// exports): the threads running now, and the totals of those that exited.

import Synchronization

extension DedicatedThreadScheduler {
    /// One thread name's counters: the sum over every dedicated thread of
    /// that name since the process started (so that every count only
    /// grows), and the depths of those running now.
    public struct NamedStatistics: Sendable, Hashable {
        /// The threads' name.
        public var name: String
        /// Threads of this name running now.
        public var threads: Int
        /// Their counters, summed: the depths and capacity over the running
        /// threads; `spilledTotal`, `executed`, `refused`, `parks` and
        /// `wakes` over every thread of this name since the process started
        /// (work refused after a thread exited included).
        public var statistics: Statistics
    }

    /// The counters of every dedicated thread, by name, sorted by name.
    public static func statisticsByName() -> [NamedStatistics] {
        _DedicatedThreadRegistry.snapshot()
    }
}

/// A dedicated thread's life, which only moves forward: `running` (work is
/// taken), `stopping` (the first stop request refused new work and pushed
/// the stop item; the thread runs what was scheduled before it), `exited`
/// (the thread left its loop and drained the ring; a producer that sees it
/// drains what it pushed itself).
enum _DedicatedThreadLifecycle: UInt8, AtomicRepresentable {
    case running
    case stopping
    case exited
}

/// What monitoring reads of one dedicated thread: its name, its ring's
/// counters and the core's own. The core owns it and updates it; the
/// registry holds it strongly, and never the core: a snapshot that retained
/// a core could release its last reference, and the core's `deinit` (which
/// retires it under the registry's lock) would then run inside the snapshot's
/// lock, on the same thread, and wait for ever.
final class _DedicatedThreadProbe: Sendable {
    let name: String
    let ring: _WorkRing
    /// Where the thread is in its life (see `_DedicatedThreadLifecycle`):
    /// moved on by the core, read by the core's producers and by monitoring.
    let lifecycle = Synchronization.Atomic<_DedicatedThreadLifecycle>(.running)
    let executedCount = Synchronization.Atomic<Int>(0)
    let refusedCount = Synchronization.Atomic<Int>(0)

    init(name: String, ring: _WorkRing) {
        self.name = name
        self.ring = ring
    }

    /// Whether the thread has not yet left its loop and drained.
    var isRunning: Bool { lifecycle.load(ordering: .relaxed) != .exited }

    var statistics: DedicatedThreadScheduler.Statistics {
        let counters = ring.counters
        return DedicatedThreadScheduler.Statistics(
            capacity: counters.capacity,
            ringDepth: counters.ringDepth,
            spillDepth: counters.spillDepth,
            spilledTotal: counters.spilledTotal,
            executed: executedCount.load(ordering: .relaxed),
            refused: refusedCount.load(ordering: .relaxed),
            parks: counters.parks,
            wakes: counters.wakes
        )
    }
}

/// Every dedicated thread alive now (its thread running or exited), by its
/// probe, and the final totals of those that are gone, by name.
///
/// A core registers its probe at the end of its `init` and retires it first
/// thing in its `deinit`; a core's counters are final then (nobody can
/// schedule on it any more), so the retired totals only grow.
enum _DedicatedThreadRegistry {
    private struct State {
        var alive: [ObjectIdentifier: _DedicatedThreadProbe] = [:]
        var retired: [String: DedicatedThreadScheduler.Statistics] = [:]
    }

    private static let state = _LockedState(State())

    static func register(_ probe: _DedicatedThreadProbe) {
        state.withLock { $0.alive[ObjectIdentifier(probe)] = probe }
    }

    /// Called first thing in the core's `deinit`.
    static func retire(_ probe: _DedicatedThreadProbe) {
        let released = state.withLock { state -> _DedicatedThreadProbe? in
            state.retired[probe.name, default: .zero].addCounts(of: probe.statistics)
            return state.alive.removeValue(forKey: ObjectIdentifier(probe))
        }
        // Released outside the lock (it is the core's until the core is freed).
        withExtendedLifetime(released) {}
    }

    static func snapshot() -> [DedicatedThreadScheduler.NamedStatistics] {
        state.withLock { state in
            var byName: [String: DedicatedThreadScheduler.NamedStatistics] = [:]
            for (name, totals) in state.retired {
                byName[name] = .init(name: name, threads: 0, statistics: totals)
            }
            for probe in state.alive.values {
                var entry = byName[probe.name] ?? .init(name: probe.name, threads: 0, statistics: .zero)
                let current = probe.statistics
                entry.statistics.addCounts(of: current)
                if probe.isRunning {
                    entry.threads += 1
                    entry.statistics.capacity += current.capacity
                    entry.statistics.ringDepth += current.ringDepth
                    entry.statistics.spillDepth += current.spillDepth
                }
                byName[probe.name] = entry
            }
            return byName.values.sorted { $0.name < $1.name }
        }
    }
}

extension DedicatedThreadScheduler.Statistics {
    static let zero = Self(
        capacity: 0, ringDepth: 0, spillDepth: 0, spilledTotal: 0, executed: 0, refused: 0, parks: 0, wakes: 0)
}

extension DedicatedThreadScheduler.Statistics {
    /// Adds `other`'s counts (not its depths or capacity).
    mutating func addCounts(of other: Self) {
        spilledTotal += other.spilledTotal
        executed += other.executed
        refused += other.refused
        parks += other.parks
        wakes += other.wakes
    }
}
