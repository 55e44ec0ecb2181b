// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Dispatch
import Hummingbird
import HummingbirdWebSocket
import InMemoryTracing
import Logging
import NIOCore
import ServiceLifecycle
import SignalKit
import SignalKitInspector
import SignalKitMetrics
import Synchronization
import Tracing

/// The service's settings.
public struct MarketConfiguration: Sendable {
    public var host = "127.0.0.1"
    public var port = 8080
    public var instruments = 100
    public var ticksPerSecond = 10_000
    /// At most one update per client per window.
    public var rateLimit: Duration = .milliseconds(50)
    /// Updates a slow client may have waiting; older ones are dropped.
    public var clientBuffer = 8
    /// Each WebSocket's kernel send buffer (SO_SNDBUF), in bytes; nil: the
    /// system's, which grows to megabytes and so holds minutes of a slow
    /// client's updates before its writes wait and `clientBuffer` drops.
    public var clientSendBuffer: Int?
    /// How often the server pings each WebSocket; a client whose pong has
    /// not come by the next ping is closed ("Ping timeout"). A slow client's
    /// pong waits behind its unread updates, so with the default a client
    /// reading ten times slower than its updates come is closed after about a
    /// minute. nil: no pings.
    public var webSocketPingPeriod: Duration? = .seconds(30)
    /// What builds the per-client pipelines.
    public var engine: Engine = .signalKit
    /// Serve the feed to other instances over gRPC on this port of `host`
    /// (`ticksMethod`); nil: do not.
    public var grpcPort: Int?
    /// Serve gRPC over TLS with this certificate chain and private key (PEM
    /// files); nil: plaintext.
    public var grpcTLS: (certificateChain: String, privateKey: String)?
    /// Take the ticks from the instance serving gRPC at this address instead
    /// of running a feed of its own; `instruments` must not exceed that
    /// instance's.
    public var upstream: (host: String, port: Int)?
    /// Call `upstream` over TLS, trusting the certificates of this PEM file
    /// (the upstream's own, or the CA that signed it); nil: plaintext.
    public var upstreamTrustRoots: String?
    /// Share the instrument list through this PostgreSQL server
    /// (`InstrumentListing`); nil: every instrument is listed (or shared
    /// through NATS, with `nats`).
    public var postgres: PostgresEndpoint?
    /// Connect to these NATS servers (`nats://host:port`; the cluster's
    /// others are learnt from them): the ticks go through NATS as
    /// `natsRole` says, and without `postgres` the instrument list is a
    /// JetStream stream (`NATSInstrumentListing`); nil: no NATS.
    public var nats: [String]?
    /// What this instance does with the ticks on NATS.
    public var natsRole: NATSRole = .feed
    /// The copies of the instrument-list stream a NATS cluster keeps (1, 3
    /// or 5; at most the cluster's size).
    public var natsReplicas = 1
    /// The most instruments one WebSocket may ask for; a longer list, or one
    /// that names an instrument twice, is refused: the socket is closed with
    /// 1008 (policy violation) and a reason naming the rule.
    public var maximumInstrumentsPerClient = 64
    /// The bearer token the admin endpoints (`POST /instruments/…`, `POST
    /// /latency/reset`) require (`Authorization: Bearer <token>`); nil: they
    /// are open (for local runs only).
    public var adminToken: String?
    /// The tracer the process bootstrapped, when it keeps its spans in
    /// memory (`market-server --tracing memory`): served at `GET /traces`.
    /// The spans themselves go to whatever tracer the process bootstrapped
    /// (none: swift-distributed-tracing's no-op one).
    public var inMemoryTracer: InMemoryTracer?
    /// Switch SignalKit's inspection on and serve the live graph of the
    /// client graphs' named stages at this path (the page) and at this path
    /// plus `.json` (the snapshot), behind `adminToken` when there is one;
    /// nil: inspection stays off (`named` costs nothing then).
    public var inspectorPath: String?

    public enum NATSRole: String, Sendable {
        /// Runs the feed and publishes every tick to `ticks.<instrument>`.
        case feed
        /// Runs no feed: its clients' ticks come from those subjects (`NATSFeed`).
        case relay
    }

    public enum Engine: String, Sendable {
        /// `clientGraph`: SignalKit operators.
        case signalKit = "signalkit"
        /// `AsyncStreamFanOut`: the same pipeline on AsyncStream, for comparison.
        case asyncStream = "asyncstream"
    }

    public init() {}
}

/// The live-market service: a feed, and per WebSocket client a signal graph
/// (see `clientGraph`).
///
/// It runs alone, or as several instances on one machine or many: one
/// instance runs the feed and serves it over gRPC (`grpcPort`), the others
/// take their ticks from it (`upstream`, see `RemoteFeed`); with
/// `postgres`, all of them share the instrument list (see
/// `InstrumentListing`). Or through NATS (`nats`): the instance running the
/// feed publishes its ticks, the others relay them (`NATSFeed`), and the
/// instrument list is a JetStream stream (`NATSInstrumentListing`).
///
/// * `GET /ws?instruments=3,17,42` upgrades to a WebSocket that receives, as
///   text, one line per update: `instrument:sequence:price:timestamp`
///   entries separated by spaces, one per instrument, in the order asked.
///   More than `maximumInstrumentsPerClient` instruments, or one named
///   twice, and the socket is closed at once with code 1008 and the rule as
///   its reason.
/// * `GET /snapshot/:instrument`: the instrument's latest tick (from its
///   `ValuePromise`), the same format.
/// * `GET /stats`: `clients=<n> liveSubscriptions=<n> liveBags=<n>
///   servedCalls=<n> upstreamFailures=<n> listingEpoch=<n> clientDrops=<n>
///   clientBufferDepth=<n>` (the gRPC calls this instance serves, its failed
///   upstream calls or NATS subscriptions, the instrument list's epoch, the
///   updates slow clients lost and those waiting for the clients now); with
///   `nats`, then `natsReconnects=<n> natsPublishFailures=<n>
///   natsMessagesIn=<n> natsMessagesOut=<n>`.
/// * `GET /instruments`: `listed=<n> delisted=<i,j,…>`;
///   `POST /instruments/:instrument/delist` and `…/list` change the shared
///   list (`changed` or `unchanged`; 404 without `postgres` or `nats`). A WebSocket
///   asking for a delisted instrument is refused. With `adminToken`, these
///   and `POST /latency/reset` answer 401 without `Authorization: Bearer
///   <token>`.
/// * `GET /latency`, `POST /latency/reset`: the server-side latency by stage
///   (see `LatencyRecorder`), as JSON; emptied by the reset.
/// * `GET /traces` (with `inMemoryTracer`): the spans recorded, one per
///   line, `traceID spanID parentSpanID|- operation active|ended`.
///
/// Tracing: each WebSocket connection is a span (`market.websocket`), the
/// gRPC call an instrument's first client starts on a relaying instance is
/// its child (`market.ticks.call`), and the subscription the serving
/// instance runs for that call is the call's child (`market.ticks.serve`):
/// one trace across both instances (see `RemoteFeed`).
public final class MarketService: Sendable {
    public let configuration: MarketConfiguration
    /// The feed this instance runs; nil when it relays another's.
    public let feed: Feed?
    /// Where the clients' ticks come from: `feed`, or `upstream`'s.
    public let source: any TickSource
    private let remote: RemoteFeed?
    private let natsFeed: NATSFeed?
    /// The NATS connection, with `nats`.
    private let natsLink: NATSLink?
    private let listing: (any SharedInstrumentList)?
    /// The services behind `listing`.
    private let listingServices: [any Service]
    private let natsListing: NATSInstrumentListing?
    /// Tick publishes to NATS that failed.
    private let natsPublishFailures = Counter()
    /// The gRPC calls this instance serves.
    private let servedCalls = Counter()
    let clients = Synchronization.Atomic<Int>(0)
    let logger: Logger
    /// Server-side latency by stage, the same for both engines.
    public let latency = LatencyRecorder()
    let loopLag: EventLoopLagProbe

    public init(configuration: MarketConfiguration, logger: Logger) throws {
        self.configuration = configuration
        let natsLink = configuration.nats.map {
            NATSLink(servers: $0, name: "market-server:\(configuration.port)", logger: logger)
        }
        self.natsLink = natsLink
        if let upstream = configuration.upstream {
            precondition(configuration.engine == .signalKit, "MarketService: an upstream instance needs the SignalKit engine")
            let remote = try RemoteFeed(
                host: upstream.host,
                port: upstream.port,
                trustRoots: configuration.upstreamTrustRoots,
                instruments: configuration.instruments,
                logger: logger
            )
            self.feed = nil
            self.remote = remote
            self.natsFeed = nil
            self.source = remote
        } else if let natsLink, configuration.natsRole == .relay {
            precondition(configuration.engine == .signalKit, "MarketService: a relaying instance needs the SignalKit engine")
            let natsFeed = NATSFeed(connection: natsLink.connection, instruments: configuration.instruments, logger: logger)
            self.feed = nil
            self.remote = nil
            self.natsFeed = natsFeed
            self.source = natsFeed
        } else {
            let feed = Feed(
                instruments: configuration.instruments,
                fanOut: configuration.engine == .asyncStream ? AsyncStreamFanOut(instruments: configuration.instruments) : nil
            )
            self.feed = feed
            self.remote = nil
            self.natsFeed = nil
            self.source = feed
        }
        if let postgres = configuration.postgres {
            let listing = InstrumentListing(endpoint: postgres, logger: logger)
            self.listing = listing
            self.listingServices = [listing.client, listing]
            self.natsListing = nil
        } else if let natsLink {
            let listing = NATSInstrumentListing(
                connection: natsLink.connection, replicas: configuration.natsReplicas, logger: logger)
            self.listing = listing
            self.listingServices = [listing]
            self.natsListing = listing
        } else {
            self.listing = nil
            self.listingServices = []
            self.natsListing = nil
        }
        self.logger = logger
        self.loopLag = EventLoopLagProbe(recorder: latency)
    }

    /// Runs until SIGTERM or SIGINT, then shuts down gracefully: the server
    /// stops, client graphs are disposed, the feed service stops the feed.
    public func run() async throws {
        SignalKitDebug.isTrackingLiveObjects = true
        // A late instance applies every instrument-list change stored so far
        // before it serves (a failure here closes the connection it made).
        do {
            try await natsListing?.prepare()
        } catch {
            natsLink?.connection.close()
            throw error
        }
        let source = self.source
        let listing = self.listing
        let router = Router()
        let admin = AdminTokenMiddleware<BasicRequestContext>(token: configuration.adminToken)
        router.get("snapshot/:instrument") { _, context -> String in
            guard let instrument = context.parameters.get("instrument", as: Int.self),
                (0..<source.instruments).contains(instrument)
            else { throw HTTPError(.notFound) }
            let tick = try await source.latestTick(of: instrument).first()
            return encode([tick]) + "\n"
        }
        router.get("instruments") { _, _ -> String in
            // The shared list may name instruments beyond this instance's.
            let delisted = (listing?.delisted ?? []).filter { $0 < source.instruments }
            let names = delisted.sorted().map(String.init).joined(separator: ",")
            return "listed=\(source.instruments - delisted.count) delisted=\(names)\n"
        }
        router.group().add(middleware: admin).post("instruments/:instrument/:action") { _, context -> String in
            guard let listing, let instrument = context.parameters.get("instrument", as: Int.self),
                (0..<source.instruments).contains(instrument)
            else { throw HTTPError(.notFound) }
            let changed: Bool
            switch context.parameters.get("action") {
            case "delist": changed = try await listing.delist(instrument)
            case "list": changed = try await listing.list(instrument)
            default: throw HTTPError(.notFound)
            }
            return changed ? "changed\n" : "unchanged\n"
        }
        router.get("stats") { _, _ -> String in
            self.stats() + "\n"
        }
        router.get("latency") { _, _ -> String in
            self.latency.report() + "\n"
        }
        router.group().add(middleware: admin).post("latency/reset") { _, _ -> String in
            self.latency.reset()
            return "ok\n"
        }
        if let inspectorPath = configuration.inspectorPath {
            // Before any client graph is built: signals named earlier are not inspected.
            SignalKitDebug.isInspecting = true
            let inspector = router.group().add(middleware: admin)
            for path in [inspectorPath, inspectorPath + ".json"] {
                inspector.get(RouterPath(String(path.dropFirst()))) { _, _ -> Response in
                    guard let answer = SignalInspector.response(path: path, mountedAt: inspectorPath) else {
                        throw HTTPError(.notFound)
                    }
                    return Response(answer)
                }
            }
        }
        if let tracer = configuration.inMemoryTracer {
            router.get("traces") { _, _ -> String in
                Self.describe(tracer)
            }
        }
        let app = Application(
            router: router,
            server: .http1WebSocketUpgrade(
                configuration: .init(
                    ws: .init(autoPing: configuration.webSocketPingPeriod.map { .enabled(timePeriod: $0) } ?? .disabled)
                )
            ) { request, channel, logger in
                guard let path = request.path, path.hasPrefix("/ws"),
                    let instruments = Self.instruments(in: path, count: source.instruments),
                    listing.map({ $0.delisted.isDisjoint(with: instruments) }) ?? true
                else { return .dontUpgrade }
                if let refusal = Self.refusal(of: instruments, maximum: self.configuration.maximumInstrumentsPerClient) {
                    // Upgraded, then closed with the rule: a WebSocket client
                    // sees the code and the reason, not just a failed handshake.
                    return .upgrade([:]) { _, outbound, _ in
                        try await outbound.close(.unknown(1008), reason: refusal)
                    }
                }
                let eventLoop = channel.eventLoop
                self.loopLag.start(on: eventLoop)
                if let bytes = self.configuration.clientSendBuffer {
                    _ = channel.setOption(ChannelOptions.socketOption(.so_sndbuf), value: SocketOptionValue(bytes))
                }
                return .upgrade([:]) { inbound, outbound, _ in
                    try await self.serve(instruments, on: eventLoop, inbound: inbound, outbound: outbound)
                }
            },
            configuration: .init(address: .hostname(configuration.host, port: configuration.port)),
            services: services(),
            logger: logger
        )
        try await app.runService()
    }

    /// The lifecycle services beside the HTTP server: the feed or the
    /// upstream relay, the NATS connection and what uses it, the gRPC
    /// server, the instrument list.
    private func services() -> [any Service] {
        // The NATS connection first: services stop in reverse order, so it
        // closes after every service that uses it.
        var services: [any Service] = natsLink.map { [$0] } ?? []
        if let feed {
            services.append(FeedService(feed: feed, ticksPerSecond: configuration.ticksPerSecond, logger: logger))
            if let natsLink {
                services.append(
                    NATSTickPublisher(
                        feed: feed, connection: natsLink.connection, failures: natsPublishFailures, logger: logger))
            }
        }
        if let remote {
            services.append(remote)
        }
        if let natsFeed {
            services.append(natsFeed)
        }
        if let port = configuration.grpcPort {
            services.append(
                TickServerService(
                    source: source, host: configuration.host, port: port, tls: configuration.grpcTLS, openCalls: servedCalls,
                    logger: logger)
            )
        }
        return services + listingServices
    }

    /// One client, in a span of its own (`market.websocket`): what its graph
    /// starts (an upstream call) is in the client's trace.
    func serve(
        _ instruments: [Int],
        on eventLoop: any EventLoop,
        inbound: WebSocketInboundStream,
        outbound: WebSocketOutboundWriter
    ) async throws {
        try await withSpan("market.websocket", ofKind: .server) { span in
            span.attributes["market.instruments"] = instruments.map(String.init).joined(separator: ",")
            try await serveClient(instruments, on: eventLoop, inbound: inbound, outbound: outbound)
        }
    }

    /// One client: its graph's updates go out until the client goes, then
    /// the graph is disposed (the iteration ends with the task group).
    private func serveClient(
        _ instruments: [Int],
        on eventLoop: any EventLoop,
        inbound: WebSocketInboundStream,
        outbound: WebSocketOutboundWriter
    ) async throws {
        clients.add(1, ordering: .relaxed)
        defer { clients.subtract(1, ordering: .relaxed) }
        let probe = ClientLatencyProbe(recorder: latency, rateLimit: configuration.rateLimit)
        if let fanOut = feed?.fanOut {
            await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for try await _ in inbound {}
                }
                group.addTask { [configuration] in
                    try await fanOut.serve(
                        instruments,
                        rateLimit: configuration.rateLimit,
                        buffer: configuration.clientBuffer * instruments.count,
                        emitted: probe.emitted
                    ) { ticks in
                        probe.willWrite(ticks)
                        try await outbound.write(.text(encode(ticks)))
                        probe.written(ticks)
                    }
                }
                _ = try? await group.next()
                group.cancelAll()
            }
            return
        }
        let graph = clientGraph(
            feed: source,
            instruments: instruments,
            rateLimit: configuration.rateLimit,
            eventLoop: eventLoop,
            logger: logger,
            emitted: probe.emitted
        )
        // A client that reads slower than its updates come loses the oldest
        // waiting ones (counted: `/stats`' clientDrops, the metrics'
        // signalkit_buffer_drops_total).
        let updates = (graph |> named(clientGraphName)).values(buffer: .droppingOldest(beyond: configuration.clientBuffer))
        await withThrowingTaskGroup(of: Void.self) { group in
            // Ends when the client closes (or drops) the connection.
            group.addTask {
                for try await _ in inbound {}
            }
            group.addTask {
                for await ticks in updates {
                    probe.willWrite(ticks)
                    try await outbound.write(.text(encode(ticks)))
                    probe.written(ticks)
                }
            }
            _ = try? await group.next()
            group.cancelAll()
        }
    }

    /// `clients=… liveSubscriptions=… liveBags=… servedCalls=… upstreamFailures=… listingEpoch=…
    /// clientDrops=… clientBufferDepth=…`.
    public func stats() -> String {
        // The clients' buffers (SignalKit engine): drops since the start, and
        // the updates waiting now, over every client.
        let buffers = SignalKitDebug.bufferStatistics().filter { $0.name == clientGraphName }
        let drops = buffers.reduce(0) { $0 + $1.drops }
        let depth = buffers.reduce(0) { $0 + $1.depth }
        var line =
            "clients=\(clients.load(ordering: .relaxed)) liveSubscriptions=\(SignalKitDebug.liveSubscriptions) "
            + "liveBags=\(SignalKitDebug.liveBags) servedCalls=\(servedCalls.value.load(ordering: .relaxed)) "
            + "upstreamFailures=\((remote?.failedCalls ?? 0) + (natsFeed?.failedSubscriptions ?? 0)) "
            + "listingEpoch=\(listing?.epoch ?? 0) clientDrops=\(drops) clientBufferDepth=\(depth)"
        if let natsLink {
            let statistics = natsLink.connection.statistics
            line +=
                " natsReconnects=\(statistics.reconnects)"
                + " natsPublishFailures=\(natsPublishFailures.value.load(ordering: .relaxed))"
                + " natsMessagesIn=\(statistics.messagesIn) natsMessagesOut=\(statistics.messagesOut)"
        }
        return line
    }

    /// `GET /traces`: the tracer's spans, active then ended, one per line.
    static func describe(_ tracer: InMemoryTracer) -> String {
        func line(_ span: InMemorySpanContext, _ operation: String, _ state: String) -> String {
            "\(span.traceID) \(span.spanID) \(span.parentSpanID ?? "-") \(operation) \(state)"
        }
        let active = tracer.activeSpans.map { line($0.spanContext, $0.operationName, "active") }
        let ended = tracer.finishedSpans.map { line($0.spanContext, $0.operationName, "ended") }
        return (active + ended).map { $0 + "\n" }.joined()
    }

    /// Why a WebSocket asking for `instruments` is refused (too many, or
    /// one named twice: each entry is a graph input), or nil.
    static func refusal(of instruments: [Int], maximum: Int) -> String? {
        if instruments.count > maximum {
            return "at most \(maximum) instruments per connection, asked for \(instruments.count)"
        }
        if Set(instruments).count != instruments.count {
            return "an instrument is named twice"
        }
        return nil
    }

    /// The instruments of `/ws?instruments=1,2,3`, or nil if malformed.
    static func instruments(in path: String, count: Int) -> [Int]? {
        guard let query = path.split(separator: "?", maxSplits: 1).dropFirst().first else { return nil }
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, parts[0] == "instruments" else { continue }
            let instruments = parts[1].split(separator: ",").compactMap { Int($0) }
            guard !instruments.isEmpty, instruments.allSatisfy({ (0..<count).contains($0) }) else { return nil }
            return instruments
        }
        return nil
    }
}

/// `instrument:sequence:price:timestamp` per tick, separated by spaces.
func encode(_ ticks: [Tick]) -> String {
    ticks.map { "\($0.instrument):\($0.sequence):\($0.price):\($0.timestamp)" }.joined(separator: " ")
}

/// The feed as a lifecycle service: `run()` starts it (and the metrics
/// reporter), waits for graceful shutdown, then stops both.
struct FeedService: Service {
    let feed: Feed
    let ticksPerSecond: Int
    let logger: Logger

    func run() async throws {
        let reporting = SignalKitMetricsReporter.start(every: .seconds(10), on: Queue(name: "metrics"))
        feed.start(ticksPerSecond: ticksPerSecond)
        logger.info("feed started", metadata: ["instruments": "\(feed.instruments)", "ticksPerSecond": "\(ticksPerSecond)"])
        try? await gracefulShutdown()
        // `stop()` waits for the feed's thread: not on the cooperative pool.
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                feed.stop()
                done.resume()
            }
        }
        reporting.dispose()
        logger.info("feed stopped")
    }
}

extension Response {
    /// An inspector answer as a Hummingbird response.
    init(_ answer: SignalInspectorResponse) {
        var headers = HTTPFields()
        for header in answer.headers {
            if let name = HTTPFields.Element.Name(header.name) { headers[name] = header.value }
        }
        self.init(
            status: HTTPResponse.Status(code: answer.status),
            headers: headers,
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: answer.body)))
    }
}
