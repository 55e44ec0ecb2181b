// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if Metrics
public import Metrics
public import SignalKit

/// Reports SignalKit's live-object counts as swift-metrics gauges, sampled on
/// a timer.
///
/// Gauges (no dimensions):
/// * `signalkit_live_subscriptions`: subscriptions alive (SignalKit starts
///   counting them when reporting starts: ``SignalKitDebug/isTrackingLiveObjects``
///   is switched on, which costs one relaxed atomic add per subscription
///   created and destroyed);
/// * `signalkit_live_bags`: hot sources' subscriber bags alive;
/// * `signalkit_live_bag_arrays` and `signalkit_retired_bag_items`: the
///   lock-free bags' storage and reclamation backlog (a growing backlog means
///   a delivery is blocked).
///
/// And for every bounded boundary (``SignalKitDebug/bufferStatistics()``:
/// `deliverOn(_:buffer:)`, `values(buffer:)`, `start(isolation:buffer:…)`),
/// with the dimension `("signal", name)`, the buffered signal's name:
/// * counters `signalkit_buffer_drops_total`, `signalkit_buffer_overflows_total`
///   and `signalkit_buffer_blocked_sends_total` (incremented by what the
///   boundary counted since the reporter's previous record);
/// * gauges `signalkit_buffer_depth` (values waiting now, over the live
///   subscriptions), `signalkit_buffer_max_depth` and
///   `signalkit_buffer_subscriptions`.
///
/// A name's entry goes away once its last subscription has ended for
/// ``SignalKitDebug/bufferStatisticsRetention`` (60 seconds by default): the
/// reporter then forgets the name, and a later entry of that name adds its
/// counts from zero to the same counters. Record more often than the
/// retention: what an entry counted after the previous record is not added
/// once the entry has gone.
///
/// And for every dedicated-thread queue
/// (``DedicatedThreadScheduler/statisticsByName()``), with the dimension
/// `("thread", name)`:
/// * counters `signalkit_dedicated_thread_executed_total`,
///   `signalkit_dedicated_thread_spilled_total` (work that found the ring
///   full: the thread does not keep up), `signalkit_dedicated_thread_refused_total`,
///   `signalkit_dedicated_thread_parks_total` and
///   `signalkit_dedicated_thread_wakes_total`;
/// * gauges `signalkit_dedicated_thread_ring_depth`,
///   `signalkit_dedicated_thread_spill_depth` and `signalkit_dedicated_threads`
///   (threads of that name running).
///
/// ```swift
/// let reporting = SignalKitMetricsReporter.start(every: .seconds(10), on: Queue(name: "metrics"))
/// // ... at shutdown:
/// reporting.dispose()
/// ```
public enum SignalKitMetricsReporter {
    /// Records the gauges now, then every `interval` on `queue`, until the
    /// result is disposed.
    public static func start(
        every interval: Duration,
        on queue: Queue,
        factory: any MetricsFactory = MetricsSystem.factory
    ) -> any Disposable {
        SignalKitDebug.isTrackingLiveObjects = true
        let gauges = _LiveObjectGauges(factory: factory)
        let buffers = _BufferMetrics(factory: factory)
        let threads = _DedicatedThreadMetrics(factory: factory)
        gauges.record()
        buffers.record()
        threads.record()
        return SignalKit.interval(interval, queue: queue).start(next: { _ in
            gauges.record()
            buffers.record()
            threads.record()
        })
    }

    /// Records the gauges once (and the buffer counters' increments since
    /// the previous `recordNow` with the same factory kind).
    public static func recordNow(factory: any MetricsFactory = MetricsSystem.factory) {
        SignalKitDebug.isTrackingLiveObjects = true
        _LiveObjectGauges(factory: factory).record()
        _BufferMetrics.recorders.recorder(for: factory, make: _BufferMetrics.init).record()
        _DedicatedThreadMetrics.recorders.recorder(for: factory, make: _DedicatedThreadMetrics.init).record()
    }
}

/// One recorder per factory for `recordNow`, so that repeated calls add
/// increments, not totals.
final class _RecorderCache<Recorder: AnyObject & Sendable>: Sendable {
    private let recorders = _LockedState<[ObjectIdentifier: Recorder]>([:])

    /// The recorder of `factory`, made by `make` the first time. A factory
    /// that is not a class gets a recorder per call: its counters then
    /// receive the totals once.
    func recorder(for factory: any MetricsFactory, make: (any MetricsFactory) -> Recorder) -> Recorder {
        guard type(of: factory) is AnyObject.Type else { return make(factory) }
        let key = ObjectIdentifier(factory as AnyObject)
        return recorders.withLock { recorders in
            if let existing = recorders[key] { return existing }
            let recorder = make(factory)
            recorders[key] = recorder
            return recorder
        }
    }
}

/// The bounded boundaries' counters and gauges, per buffered signal name.
/// Remembers what it recorded last, so that each record adds the increments.
final class _BufferMetrics: Sendable {
    private struct Metrics {
        let drops: Counter
        let overflows: Counter
        let blockedSends: Counter
        let depth: Gauge
        let maximumDepth: Gauge
        let subscriptions: Gauge
        /// The statistics last recorded, and the serial of their entry.
        var recorded: (entry: UInt64, statistics: SignalBufferStatistics)?
    }

    private let factory: any MetricsFactory
    private let byName = _LockedState<[String: Metrics]>([:])

    init(factory: any MetricsFactory) {
        self.factory = factory
    }

    static let recorders = _RecorderCache<_BufferMetrics>()

    func record() {
        let factory = self.factory
        let current = SignalKitDebug._bufferStatisticsByEntry()
        byName.withLock { byName in
            // The names whose entry went away (see `bufferStatisticsRetention`).
            let names = Set(current.map(\.statistics.name))
            byName = byName.filter { names.contains($0.key) }
        }
        for (entry, statistics) in current {
            byName.withLock { byName in
                var metrics =
                    byName[statistics.name]
                    ?? {
                        let dimensions = [("signal", statistics.name)]
                        return Metrics(
                            drops: Counter(label: "signalkit_buffer_drops_total", dimensions: dimensions, factory: factory),
                            overflows: Counter(
                                label: "signalkit_buffer_overflows_total", dimensions: dimensions, factory: factory),
                            blockedSends: Counter(
                                label: "signalkit_buffer_blocked_sends_total", dimensions: dimensions, factory: factory),
                            depth: Gauge(label: "signalkit_buffer_depth", dimensions: dimensions, factory: factory),
                            maximumDepth: Gauge(
                                label: "signalkit_buffer_max_depth", dimensions: dimensions, factory: factory),
                            subscriptions: Gauge(
                                label: "signalkit_buffer_subscriptions", dimensions: dimensions, factory: factory),
                            recorded: nil
                        )
                    }()
                // Another entry than the one recorded: the name's entry went
                // away and this one counts from zero.
                let previous = metrics.recorded.flatMap { $0.entry == entry ? $0.statistics : nil }
                metrics.drops.increment(by: Int64(statistics.drops - (previous?.drops ?? 0)))
                metrics.overflows.increment(by: Int64(statistics.overflows - (previous?.overflows ?? 0)))
                metrics.blockedSends.increment(by: Int64(statistics.blockedSends - (previous?.blockedSends ?? 0)))
                metrics.depth.record(statistics.depth)
                metrics.maximumDepth.record(statistics.maximumDepth)
                metrics.subscriptions.record(statistics.liveSubscriptions)
                metrics.recorded = (entry, statistics)
                byName[statistics.name] = metrics
            }
        }
    }
}

/// The dedicated threads' counters and gauges, per thread name. Remembers
/// what it recorded last, so that each record adds the increments.
final class _DedicatedThreadMetrics: Sendable {
    private struct Metrics {
        let executed: Counter
        let spilled: Counter
        let refused: Counter
        let parks: Counter
        let wakes: Counter
        let ringDepth: Gauge
        let spillDepth: Gauge
        let threads: Gauge
        var recorded: DedicatedThreadScheduler.Statistics?
    }

    static let recorders = _RecorderCache<_DedicatedThreadMetrics>()

    private let factory: any MetricsFactory
    private let byName = _LockedState<[String: Metrics]>([:])

    init(factory: any MetricsFactory) {
        self.factory = factory
    }

    func record() {
        let factory = self.factory
        for named in DedicatedThreadScheduler.statisticsByName() {
            byName.withLock { byName in
                var metrics =
                    byName[named.name]
                    ?? {
                        let dimensions = [("thread", named.name)]
                        func counter(_ label: String) -> Counter {
                            Counter(label: "signalkit_dedicated_thread_\(label)", dimensions: dimensions, factory: factory)
                        }
                        func gauge(_ label: String) -> Gauge {
                            Gauge(label: label, dimensions: dimensions, factory: factory)
                        }
                        return Metrics(
                            executed: counter("executed_total"),
                            spilled: counter("spilled_total"),
                            refused: counter("refused_total"),
                            parks: counter("parks_total"),
                            wakes: counter("wakes_total"),
                            ringDepth: gauge("signalkit_dedicated_thread_ring_depth"),
                            spillDepth: gauge("signalkit_dedicated_thread_spill_depth"),
                            threads: gauge("signalkit_dedicated_threads"),
                            recorded: nil
                        )
                    }()
                let now = named.statistics
                let previous = metrics.recorded
                metrics.executed.increment(by: Int64(now.executed - (previous?.executed ?? 0)))
                metrics.spilled.increment(by: Int64(now.spilledTotal - (previous?.spilledTotal ?? 0)))
                metrics.refused.increment(by: Int64(now.refused - (previous?.refused ?? 0)))
                metrics.parks.increment(by: Int64(now.parks - (previous?.parks ?? 0)))
                metrics.wakes.increment(by: Int64(now.wakes - (previous?.wakes ?? 0)))
                metrics.ringDepth.record(now.ringDepth)
                metrics.spillDepth.record(now.spillDepth)
                metrics.threads.record(named.threads)
                metrics.recorded = now
                byName[named.name] = metrics
            }
        }
    }
}

/// The gauges, created once per reporter.
final class _LiveObjectGauges: Sendable {
    private let subscriptions: Gauge
    private let bags: Gauge
    private let bagArrays: Gauge
    private let retiredItems: Gauge

    init(factory: any MetricsFactory) {
        subscriptions = Gauge(label: "signalkit_live_subscriptions", factory: factory)
        bags = Gauge(label: "signalkit_live_bags", factory: factory)
        bagArrays = Gauge(label: "signalkit_live_bag_arrays", factory: factory)
        retiredItems = Gauge(label: "signalkit_retired_bag_items", factory: factory)
    }

    func record() {
        subscriptions.record(SignalKitDebug.liveSubscriptions)
        bags.record(SignalKitDebug.liveBags)
        bagArrays.record(SignalKitDebug.liveBagArrays)
        retiredItems.record(SignalKitDebug.retiredBagItems)
    }
}

#endif  // Metrics
