// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import GRPCCore
import GRPCNIOTransportHTTP2Posix
import Logging
import ServiceLifecycle
import SignalKit
import SignalKitGRPC
import SignalKitTracing
import Synchronization

/// What one instance asks another for: one instrument's ticks.
public struct TickRequest: Sendable, Codable, Equatable {
    public var instrument: Int

    public init(instrument: Int) {
        self.instrument = instrument
    }
}

/// The gRPC method instances share (server streaming, JSON messages):
/// the instrument's latest tick, then every later one.
public let ticksMethod = RemoteSignalMethod<TickRequest, Tick>(service: "market.Market", method: "Ticks")

/// Why a call of `ticksMethod` fails on the serving side.
enum TicksCallError: Error {
    case unknownInstrument(Int, instruments: Int)
}

/// Serves `source` to other instances as `ticksMethod` on `host:port`, as a
/// lifecycle service (instance A of a two-instance deployment).
///
/// Each call is one subscription to the instrument's `latestTick(of:)`: a
/// client that (re)connects gets the current tick at once, then every later
/// one. A client that cannot keep up loses its oldest ticks beyond 1,000
/// (only the latest matters for a price). On graceful shutdown the server
/// task is cancelled, which ends the open calls (they never end by
/// themselves) and disposes their subscriptions.
///
/// Each served subscription is traced (`market.ticks.serve`): a child span
/// of the caller's, whose context the call's metadata carries.
struct TickServerService: Service {
    let source: any TickSource
    let host: String
    let port: Int
    /// The certificate chain and private key (PEM files) to serve over TLS
    /// with; nil: plaintext.
    let tls: (certificateChain: String, privateKey: String)?
    /// The calls being served, for `/stats`.
    let openCalls: Counter
    let logger: Logger

    func run() async throws {
        var service = RemoteSignalService()
        let source = self.source
        let openCalls = self.openCalls
        let status: @Sendable (TicksCallError) -> RPCError = { error in
            switch error {
            case .unknownInstrument(let instrument, let instruments):
                RPCError(code: .invalidArgument, message: "no instrument \(instrument): this instance has \(instruments)")
            }
        }
        service.serve(ticksMethod, buffer: .droppingOldest(beyond: 1_000), errorStatus: status) { request in
            guard (0..<source.instruments).contains(request.instrument) else {
                return .fail(.unknownInstrument(request.instrument, instruments: source.instruments))
            }
            return source.latestTick(of: request.instrument)
                |> mapError { (_: NoError) -> TicksCallError in }
                |> beforeStarted { openCalls.value.add(1, ordering: .relaxed) }
                |> afterDisposed { openCalls.value.subtract(1, ordering: .relaxed) }
                |> traced("market.ticks.serve", ofKind: .server)
        }
        let security: HTTP2ServerTransport.Posix.TransportSecurity =
            if let tls {
                .tls(
                    certificateChain: [.file(path: tls.certificateChain, format: .pem)],
                    privateKey: .file(path: tls.privateKey, format: .pem)
                )
            } else {
                .plaintext
            }
        let server = GRPCServer(
            transport: .http2NIOPosix(address: .ipv4(host: host, port: port), transportSecurity: security),
            services: [service]
        )
        logger.info("serving ticks over gRPC", metadata: ["address": "\(host):\(port)", "tls": "\(tls != nil)"])
        do {
            try await cancelWhenGracefulShutdown {
                try await server.serve()
            }
        } catch  where Task.isShuttingDownGracefully {
            // The cancellation that ends the open calls ends `serve()` with
            // an error (the transport's, wrapping the cancellation).
        }
        logger.info("gRPC server stopped")
    }
}

/// A counter shared by a service and `/stats`.
final class Counter: Sendable {
    let value = Synchronization.Atomic<Int>(0)
}

/// Another instance's feed, over gRPC (instance B of a two-instance
/// deployment): one call per instrument a client watches, shared by every
/// client of this instance.
///
/// Each instrument is `remoteSignal` of `ticksMethod`, traced
/// (`market.ticks.call`), resubscribed after an error with a growing delay
/// (`retry`, 50 ms more per error, at most 1 s), multicast through a
/// one-value `ReplaySubject`: the clients of an instrument share its call
/// and a new client gets the latest tick at once. An instrument's call
/// starts when its first client subscribes, in that client's context: with
/// tracing on, the client's WebSocket span, the call's span and the span of
/// the subscription A serves for it are one trace (later clients share the
/// call, which stays in the first one's trace). When the connection to A is lost (A restarts, the network drops
/// it), the calls fail with `unavailable`, the client's transport
/// reconnects and `retry` starts new calls, which begin with A's current
/// tick; the clients' graphs go on unaware. Ticks A produced meanwhile are
/// not replayed (prices only need the latest).
///
/// As a lifecycle service, `run()` runs the client's connections; on
/// graceful shutdown it disposes the calls started (which cancels them; a
/// call asked for later is disposed at once) and closes the client.
public final class RemoteFeed: TickSource, Service {
    public let instruments: Int
    private let client: GRPCClient<HTTP2ClientTransport.Posix>
    private let shared: SharedInstrumentFeeds
    private let callErrors: Counter
    private let logger: Logger

    /// A feed of the instance serving `ticksMethod` on `host:port`, which
    /// must have at least `instruments` instruments; over TLS when
    /// `trustRoots` names a PEM file of the certificates to trust (the
    /// upstream's own or its CA's). The chain is verified, the host name
    /// is not: an instance dials an address, so trust only the instances'
    /// own certificates here, not a public CA's.
    public init(host: String, port: Int, trustRoots: String? = nil, instruments: Int, logger: Logger) throws {
        precondition(instruments > 0, "RemoteFeed: at least one instrument")
        var config = HTTP2ClientTransport.Posix.Config.defaults
        // Reconnect within tens of milliseconds, never slower than 1 s.
        config.backoff = .init(initial: .milliseconds(20), max: .seconds(1), multiplier: 1.6, jitter: 0.2)
        let security: HTTP2ClientTransport.Posix.TransportSecurity =
            if let trustRoots {
                .tls { tls in
                    tls.trustRoots = .certificates([.file(path: trustRoots, format: .pem)])
                    tls.serverCertificateVerification = .noHostnameVerification
                }
            } else {
                .plaintext
            }
        let client = GRPCClient(
            transport: try .http2NIOPosix(
                target: .ipv4(address: host, port: port),
                transportSecurity: security,
                config: config
            )
        )
        self.instruments = instruments
        self.client = client
        self.logger = logger
        let callErrors = Counter()
        self.callErrors = callErrors
        shared = SharedInstrumentFeeds(instruments: instruments, retryQueue: Queue(name: "market.upstream-retry")) {
            instrument in
            client.remoteSignal(ticksMethod, request: TickRequest(instrument: instrument))
                |> traced("market.ticks.call", ofKind: .client)
                |> doError { error in
                    callErrors.value.add(1, ordering: .relaxed)
                    logger.warning(
                        "upstream call failed; resubscribing",
                        metadata: ["instrument": "\(instrument)", "status": "\(error.code)", "message": "\(error.message)"]
                    )
                }
        }
    }

    /// Failed upstream calls so far (each is followed by a new call).
    public var failedCalls: Int {
        callErrors.value.load(ordering: .relaxed)
    }

    public func ticks(of instrument: Int) -> Signal<Tick, NoError> {
        shared.ticks(of: instrument)
    }

    /// The same signal as `ticks(of:)`: it starts with the latest tick.
    public func latestTick(of instrument: Int) -> Signal<Tick, NoError> {
        ticks(of: instrument)
    }

    public func run() async throws {
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask {
                try await self.client.runConnections()
            }
            logger.info("relaying ticks over gRPC", metadata: ["instruments": "\(instruments)"])
            try? await gracefulShutdown()
            shared.dispose()
            client.beginGracefulShutdown()
        }
        logger.info("gRPC client stopped")
    }
}

/// One upstream subscription per instrument, shared by every client of this
/// instance that watches it (a relaying instance's feed: `RemoteFeed` over
/// gRPC, `NATSFeed` over NATS).
///
/// Each instrument's upstream signal is resubscribed after an error with a
/// growing delay (`retry`, 50 ms more per error, at most 1 s) and multicast
/// through a one-value `ReplaySubject`: the clients of an instrument share
/// its subscription and a new client gets the latest tick at once. An
/// instrument's subscription starts when its first client subscribes, in
/// that client's context, and lasts until `dispose()` (graceful shutdown;
/// one asked for later is disposed at once).
final class SharedInstrumentFeeds: Sendable {
    private let connections: [MulticastConnection<Tick, NoError>]
    /// The instruments whose subscription was started (by their first client).
    private let connected = Mutex<Set<Int>>([])
    /// The started subscriptions, disposed on shutdown.
    private let subscriptions = DisposableSet()

    init<E>(instruments: Int, retryQueue: Queue, upstream: (Int) -> Signal<Tick, E>) {
        connections = (0..<instruments).map { instrument in
            upstream(instrument)
                |> retry(0.05, maxDelay: 1.0, onQueue: retryQueue)
                |> multicast(ReplaySubject<Tick, NoError>(capacity: 1))
        }
    }

    /// The instrument's latest tick (once one came), then every later one;
    /// the first subscriber starts the instrument's upstream subscription.
    func ticks(of instrument: Int) -> Signal<Tick, NoError> {
        connections[instrument].signal |> beforeStarted { [self] in connect(instrument) }
    }

    /// Starts `instrument`'s subscription, the first time it is asked for.
    private func connect(_ instrument: Int) {
        guard connected.withLock({ $0.insert(instrument).inserted }) else { return }
        subscriptions.add(connections[instrument].connect())
    }

    /// Disposes every upstream subscription, now and any asked for later.
    func dispose() {
        subscriptions.dispose()
    }
}
