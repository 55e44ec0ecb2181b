// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// Every dedicated thread's counters, by thread name, for monitoring
// (`DedicatedThreadScheduler.statisticsByName()`, which SignalKitMetrics
// exports): the threads running now, and the totals of those that exited.

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

/// Every dedicated thread's core alive now (its thread running or exited),
/// and the final totals of the cores that are gone, by name.
///
/// A core registers at the end of its `init` and retires first thing in its
/// `deinit`, under the registry's lock, so the snapshot (which reads the
/// cores under the same lock, without retaining them) never reads a freed
/// core. A core's counters are final when it is freed (nobody can schedule on
/// it any more), so the retired totals only grow.
enum _DedicatedThreadRegistry {
    private struct State {
        var alive: [ObjectIdentifier: Unmanaged<_DedicatedThreadCore>] = [:]
        var retired: [String: DedicatedThreadScheduler.Statistics] = [:]
    }

    private static let state = _LockedState(State())

    static func register(_ core: _DedicatedThreadCore) {
        state.withLock { $0.alive[ObjectIdentifier(core)] = .passUnretained(core) }
    }

    /// Called first thing in the core's `deinit`.
    static func retire(_ core: _DedicatedThreadCore) {
        state.withLock { state in
            state.alive[ObjectIdentifier(core)] = nil
            state.retired[core.name, default: .zero].addCounts(of: core.statistics)
        }
    }

    static func snapshot() -> [DedicatedThreadScheduler.NamedStatistics] {
        state.withLock { state in
            var byName: [String: DedicatedThreadScheduler.NamedStatistics] = [:]
            for (name, totals) in state.retired {
                byName[name] = .init(name: name, threads: 0, statistics: totals)
            }
            for core in state.alive.values {
                core._withUnsafeGuaranteedRef { core in
                    var entry = byName[core.name] ?? .init(name: core.name, threads: 0, statistics: .zero)
                    let current = core.statistics
                    entry.statistics.addCounts(of: current)
                    if core.isRunning {
                        entry.threads += 1
                        entry.statistics.capacity += current.capacity
                        entry.statistics.ringDepth += current.ringDepth
                        entry.statistics.spillDepth += current.spillDepth
                    }
                    byName[core.name] = entry
                }
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
