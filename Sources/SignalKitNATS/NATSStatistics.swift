// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if NATS
public import Metrics
public import SignalKit
import Synchronization

/// What a ``NATSConnection`` has counted since it was made
/// (``NATSConnection/statistics``).
public struct NATSStatistics: Sendable, Hashable {
    /// Messages received on the connection's subscriptions (subjects and the
    /// request inbox).
    public var messagesIn = 0
    /// Their payload bytes.
    public var bytesIn = 0
    /// Messages published (written to a server, including those that waited
    /// for a connection).
    public var messagesOut = 0
    /// Their payload bytes.
    public var bytesOut = 0
    /// Sessions established (the first connection and every reconnection).
    public var connections = 0
    /// Sessions established after the first.
    public var reconnects: Int { max(connections - 1, 0) }
    /// Publishes dropped by the publish buffer's policy, or too large for the
    /// server they waited for.
    public var droppedPublishes = 0
    /// Publishes waiting for a connection now.
    public var pendingPublishes = 0
    /// Subscriptions live on the server now (subjects and the inbox).
    public var subscriptions = 0
    /// Messages the connection's JetStream consumers delivered again
    /// (``NATSJetStreamMessage/deliveryCount`` above 1) to a subscriber.
    public var redeliveries = 0
    /// Stream messages delivered to the subscribers of the connection's
    /// JetStream consumers and not answered yet (`ack`, `nak`, `term`; an
    /// automatic acknowledgement answers after `next` returns). A message
    /// delivered again counts once; a disposed subscription's unanswered
    /// messages stop counting (the server delivers them again after their
    /// ack wait). Ordered reads
    /// (``NATSJetStream/replayThenFollow(stream:subject:from:buffer:pullExpiry:)``)
    /// take no acknowledgements and count in neither.
    public var pendingAcknowledgements = 0

    public init() {}
}

extension NATSConnection {
    /// Records the connection's ``statistics`` in swift-metrics now, then
    /// every `interval` on `queue`, until the result is disposed, with the
    /// dimension `("connection", name)` (``NATSOptions/name``, or `"nats"`):
    /// * counters `signalkit_nats_messages_in_total`,
    ///   `signalkit_nats_bytes_in_total`, `signalkit_nats_messages_out_total`,
    ///   `signalkit_nats_bytes_out_total`, `signalkit_nats_reconnects_total`,
    ///   `signalkit_nats_dropped_publishes_total` and
    ///   `signalkit_nats_redeliveries_total` (each record adds what was
    ///   counted since the previous one);
    /// * gauges `signalkit_nats_pending_publishes`,
    ///   `signalkit_nats_subscriptions` and
    ///   `signalkit_nats_pending_acknowledgements`.
    ///
    /// With no metrics backend bootstrapped (`MetricsSystem.bootstrap`) the
    /// records go nowhere.
    ///
    /// ```swift
    /// let reporting = nats.reportMetrics(every: .seconds(10), on: Queue(name: "metrics"))
    /// ```
    public func reportMetrics(
        every interval: Duration,
        on queue: Queue,
        factory: any MetricsFactory = MetricsSystem.factory
    ) -> any Disposable {
        let recorder = _NATSMetrics(connection: self, factory: factory)
        recorder.record()
        return SignalKit.interval(interval, queue: queue).start(next: { _ in recorder.record() })
    }
}

/// One connection's counters and gauges; remembers what it recorded last, so
/// that each record adds the increments.
final class _NATSMetrics: Sendable {
    private let connection: NATSConnection
    private let messagesIn: Counter
    private let bytesIn: Counter
    private let messagesOut: Counter
    private let bytesOut: Counter
    private let reconnects: Counter
    private let droppedPublishes: Counter
    private let redeliveries: Counter
    private let pendingPublishes: Gauge
    private let subscriptions: Gauge
    private let pendingAcknowledgements: Gauge
    private let recorded = _LockedState(NATSStatistics())

    init(connection: NATSConnection, factory: any MetricsFactory) {
        self.connection = connection
        let dimensions = [("connection", connection.options.name ?? "nats")]
        func counter(_ label: String) -> Counter {
            Counter(label: label, dimensions: dimensions, factory: factory)
        }
        messagesIn = counter("signalkit_nats_messages_in_total")
        bytesIn = counter("signalkit_nats_bytes_in_total")
        messagesOut = counter("signalkit_nats_messages_out_total")
        bytesOut = counter("signalkit_nats_bytes_out_total")
        reconnects = counter("signalkit_nats_reconnects_total")
        droppedPublishes = counter("signalkit_nats_dropped_publishes_total")
        redeliveries = counter("signalkit_nats_redeliveries_total")
        func gauge(_ label: String) -> Gauge {
            Gauge(label: label, dimensions: dimensions, factory: factory)
        }
        pendingPublishes = gauge("signalkit_nats_pending_publishes")
        subscriptions = gauge("signalkit_nats_subscriptions")
        pendingAcknowledgements = gauge("signalkit_nats_pending_acknowledgements")
    }

    func record() {
        // Read under the recorder's lock: two records at once add each
        // increment once.
        let (before, now) = recorded.withLock { recorded in
            let now = connection.statistics
            defer { recorded = now }
            return (recorded, now)
        }
        messagesIn.increment(by: Int64(now.messagesIn - before.messagesIn))
        bytesIn.increment(by: Int64(now.bytesIn - before.bytesIn))
        messagesOut.increment(by: Int64(now.messagesOut - before.messagesOut))
        bytesOut.increment(by: Int64(now.bytesOut - before.bytesOut))
        reconnects.increment(by: Int64(now.reconnects - before.reconnects))
        droppedPublishes.increment(by: Int64(now.droppedPublishes - before.droppedPublishes))
        redeliveries.increment(by: Int64(now.redeliveries - before.redeliveries))
        pendingPublishes.record(now.pendingPublishes)
        subscriptions.record(now.subscriptions)
        pendingAcknowledgements.record(now.pendingAcknowledgements)
    }
}

/// The counts of a connection's JetStream consumers, kept by their
/// subscriptions (``NATSStatistics/redeliveries``,
/// ``NATSStatistics/pendingAcknowledgements``). Relaxed atomics: each is a
/// count read on its own, ordered with nothing else.
final class _JetStreamCounts: Sendable {
    let redeliveries = Atomic(0)
    let pendingAcknowledgements = Atomic(0)
}
#endif
