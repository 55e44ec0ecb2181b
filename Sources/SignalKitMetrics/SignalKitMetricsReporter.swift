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
        gauges.record()
        return SignalKit.interval(interval, queue: queue).start(next: { _ in gauges.record() })
    }

    /// Records the gauges once.
    public static func recordNow(factory: any MetricsFactory = MetricsSystem.factory) {
        SignalKitDebug.isTrackingLiveObjects = true
        _LiveObjectGauges(factory: factory).record()
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
