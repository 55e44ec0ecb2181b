// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Foundation
import Logging
import ServiceLifecycle
import SignalKit
import SignalKitNATS
import Synchronization

// Scaling out on NATS (`market-server --nats URL[,URL…]`): the instance that
// runs the feed publishes every tick to `ticks.<instrument>`, any number of
// relaying instances (`--nats-role relay`) serve their WebSocket clients
// from those subjects, and the instrument list is a JetStream stream every
// instance replays, then follows.

/// The subject an instrument's ticks are published to.
func tickSubject(_ instrument: Int) -> String { "ticks.\(instrument)" }

/// A connection to NATS for one instance: made (and connecting) at once,
/// closed by its lifecycle service on graceful shutdown, after every service
/// that uses it (it comes first in the service list, so it stops last).
public struct NATSLink: Service {
    public let connection: NATSConnection
    let logger: Logger

    /// Connects to `servers` (the cluster's other servers are learnt from
    /// them). Publishes made while the connection is down wait, the newest
    /// 10,000 of them: a price that old is worth little, and the feed never
    /// waits for the network.
    public init(servers: [String], name: String, logger: Logger) {
        connection = NATSConnection(
            NATSOptions(
                servers: servers,
                name: name,
                pingInterval: .seconds(2),
                connectTimeout: .seconds(1),
                reconnect: NATSReconnectPolicy(initialDelay: .milliseconds(20), maximumDelay: .milliseconds(500)),
                publishBuffer: .droppingOldest(beyond: 10_000)
            )
        )
        self.logger = logger
    }

    public func run() async throws {
        let states = connection.state.start(next: { [logger] state in
            logger.info("NATS connection", metadata: ["state": "\(state)"])
        })
        try? await gracefulShutdown()
        states.dispose()
        connection.close()
    }
}

/// Publishes a feed's ticks to NATS, one subject per instrument, as JSON,
/// as a lifecycle service (the instance that runs the feed).
struct NATSTickPublisher: Service {
    let feed: Feed
    let connection: NATSConnection
    /// Publishes that failed (a payload over the server's limit, a closed
    /// connection); each is logged.
    let failures: Counter
    let logger: Logger

    func run() async throws {
        let publishing = DisposableSet()
        for instrument in 0..<feed.instruments {
            let published = feed.ticks(of: instrument).publishJSON(to: tickSubject(instrument), on: connection)
            publishing.add(
                published.start(error: { [failures, logger] error in
                    failures.value.add(1, ordering: .relaxed)
                    logger.error("publishing ticks failed", metadata: ["instrument": "\(instrument)", "error": "\(error)"])
                })
            )
        }
        logger.info("publishing ticks to NATS", metadata: ["instruments": "\(feed.instruments)"])
        try? await gracefulShutdown()
        publishing.dispose()
    }
}

/// The ticks of the instance publishing them to NATS (a relaying instance,
/// `--nats-role relay`): one subscription per instrument its clients watch
/// (`ticks.<instrument>`), shared by all of them (`SharedInstrumentFeeds`).
///
/// Across a reconnection (a NATS server killed, a network cut) the
/// connection subscribes again on the next server and the clients' graphs
/// go on unaware; ticks published meanwhile are not replayed (core NATS
/// stores nothing, and prices only need the latest). A payload that does
/// not decode fails the instrument's subscription, which is made again
/// (counted in `failedSubscriptions`).
public final class NATSFeed: TickSource, Service {
    public let instruments: Int
    private let shared: SharedInstrumentFeeds
    private let subscriptionErrors = Counter()
    private let logger: Logger

    public init(connection: NATSConnection, instruments: Int, logger: Logger) {
        precondition(instruments > 0, "NATSFeed: at least one instrument")
        self.instruments = instruments
        self.logger = logger
        let errors = subscriptionErrors
        shared = SharedInstrumentFeeds(instruments: instruments, retryQueue: Queue(name: "market.nats-retry")) {
            instrument in
            connection.messages(tickSubject(instrument), decoding: Tick.self)
                |> doError { error in
                    errors.value.add(1, ordering: .relaxed)
                    logger.warning(
                        "tick subscription failed; resubscribing",
                        metadata: ["instrument": "\(instrument)", "error": "\(error)"])
                }
        }
    }

    /// Failed tick subscriptions so far (each is followed by a new one).
    public var failedSubscriptions: Int {
        subscriptionErrors.value.load(ordering: .relaxed)
    }

    public func ticks(of instrument: Int) -> Signal<Tick, NoError> {
        shared.ticks(of: instrument)
    }

    /// The same signal as `ticks(of:)`: it starts with the latest tick.
    public func latestTick(of instrument: Int) -> Signal<Tick, NoError> {
        ticks(of: instrument)
    }

    public func run() async throws {
        logger.info("relaying ticks from NATS", metadata: ["instruments": "\(instruments)"])
        try? await gracefulShutdown()
        shared.dispose()
    }
}

/// The instrument list every instance shares through a JetStream stream
/// (`MARKET_INSTRUMENTS`, subject `market.instruments`): each change is a
/// message (`delisted:<i>` or `listed:<i>`), and every instance replays the
/// stream from its first message, then follows it
/// (`replayThenFollow`), applying the changes in stream order. So every
/// instance holds the list as of the last change it applied, a late one
/// included: `prepare()`, which the service awaits before it serves,
/// returns once the instance has applied every change stored when it
/// started.
///
/// `list` and `delist` answer from this instance's view: `unchanged` when
/// it already holds the change, else the change is stored (the publish
/// awaits the stream's acknowledgement, retried with the same message
/// identifier across a lost leader) and applied here before the answer.
/// Two instances making the same change at once both answer `changed`; the
/// second message changes nothing anywhere.
public final class NATSInstrumentListing: SharedInstrumentList, Service {
    public static let stream = "MARKET_INSTRUMENTS"
    public static let subject = "market.instruments"

    private struct State {
        var delisted: Set<Int> = []
        /// The stream sequence of the last change applied.
        var applied: UInt64 = 0
        /// Those waiting for a sequence to be applied.
        var waiting: [(sequence: UInt64, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let jetStream: NATSJetStream
    private let replicas: Int
    private let state = Mutex(State())
    private let following = MetaDisposable()
    private let logger: Logger

    /// The list on `connection`'s JetStream; the stream, made if missing,
    /// keeps `replicas` copies (3 on a three-node cluster).
    public init(connection: NATSConnection, replicas: Int, logger: Logger) {
        jetStream = connection.jetStream()
        self.replicas = replicas
        self.logger = logger
    }

    public var delisted: Set<Int> {
        state.withLock { $0.delisted }
    }

    /// The stream sequence of the last change applied (0 before the first).
    public var epoch: Int {
        Int(state.withLock { $0.applied })
    }

    /// Makes the stream if missing (retried while the cluster elects its
    /// leaders, up to 60 s), starts following it (followed again after a
    /// failure), and returns once every change stored now has been applied.
    public func prepare() async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(60)
        var info: NATSStreamInfo
        while true {
            do {
                info = try await jetStream.createOrUpdateStream(
                    NATSStreamConfig(name: Self.stream, subjects: [Self.subject], replicas: replicas))
                break
            } catch {
                guard clock.now < deadline else { throw error }
                logger.info("instrument-list stream not ready; retrying", metadata: ["error": "\(error)"])
                try await Task.sleep(for: .milliseconds(250))
            }
        }
        // Followed again after a failure, from the change after the last
        // one applied: nothing is applied twice, nothing is skipped.
        // (`replayThenFollow` itself waits out a cluster's election.)
        let followQueue = Queue(name: "market.instrument-list-retry")
        following.set(
            (deferred { [weak self] () -> Signal<NATSJetStreamMessage, NATSError> in
                guard let self else { return .complete() }
                return self.jetStream.replayThenFollow(
                    stream: Self.stream, from: .sequence(self.state.withLock { $0.applied } + 1))
            }
                |> doError { [logger] error in
                    logger.warning("instrument-list stream failed; following it again", metadata: ["error": "\(error)"])
                }
                |> retry(0.1, maxDelay: 1.0, onQueue: followQueue))
                .start(next: { [weak self] message in self?.apply(message) })
        )
        await applied(through: info.lastSequence)
        logger.info(
            "instrument list replayed",
            metadata: ["changes": "\(info.lastSequence)", "delisted": "\(delisted.count)"])
    }

    public func delist(_ instrument: Int) async throws -> Bool {
        try await change(instrument, delisting: true)
    }

    public func list(_ instrument: Int) async throws -> Bool {
        try await change(instrument, delisting: false)
    }

    private func change(_ instrument: Int, delisting: Bool) async throws -> Bool {
        guard state.withLock({ $0.delisted.contains(instrument) != delisting }) else { return false }
        let ack = try await jetStream.publish(
            to: Self.subject, payload: Array("\(delisting ? "delisted" : "listed"):\(instrument)".utf8))
        await applied(through: ack.sequence)
        return true
    }

    /// One change, in stream order.
    private func apply(_ message: NATSJetStreamMessage) {
        let parts = message.text.split(separator: ":")
        let change: (delisted: Bool, instrument: Int)? =
            if parts.count == 2, ["delisted", "listed"].contains(parts[0]), let instrument = Int(parts[1]) {
                (parts[0] == "delisted", instrument)
            } else {
                nil
            }
        if change == nil {
            logger.warning("instrument-list change not understood", metadata: ["change": "\(message.text)"])
        }
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            // Once only, in order (a stream followed again starts after the last).
            guard message.streamSequence > state.applied else { return [] }
            if let change {
                if change.delisted {
                    state.delisted.insert(change.instrument)
                } else {
                    state.delisted.remove(change.instrument)
                }
            }
            state.applied = message.streamSequence
            let ready = state.waiting.filter { $0.sequence <= message.streamSequence }.map(\.continuation)
            state.waiting.removeAll { $0.sequence <= message.streamSequence }
            return ready
        }
        for continuation in ready { continuation.resume() }
    }

    /// Returns once the change at `sequence` (and every one before) is applied.
    private func applied(through sequence: UInt64) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                if state.applied >= sequence { return true }
                state.waiting.append((sequence, continuation))
                return false
            }
            if now { continuation.resume() }
        }
    }

    public func run() async throws {
        try? await gracefulShutdown()
        following.dispose()
        // Nothing more is applied: release the answers still waiting.
        let waiting = state.withLock { state in
            defer { state.waiting = [] }
            return state.waiting.map(\.continuation)
        }
        for continuation in waiting { continuation.resume() }
    }
}
