// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import InMemoryTracing
import Logging
import MarketService
import SignalKit
import SignalKitTracing
import Tracing

// market-server [--port N] [--instruments N] [--rate TICKS_PER_SECOND] [--rate-limit-ms N]
//               [--engine signalkit|asyncstream] [--grpc-port N] [--upstream HOST:PORT]
//               [--postgres postgres://USER@HOST:PORT/DATABASE] [--client-send-buffer BYTES]
//               [--tracing memory] [--admin-token TOKEN] [--max-instruments-per-client N]
//               [--inspector PATH] [--grpc-tls CERTIFICATE.pem,KEY.pem] [--upstream-ca CA.pem]
//               [--ping-seconds N] [--nats URL[,URL…]] [--nats-role feed|relay]
//               [--nats-replicas N]
// Binds to 127.0.0.1. Stops gracefully on SIGTERM or SIGINT and then prints
// SignalKit's live-object counters. --grpc-port serves the feed to other
// instances; --upstream takes the ticks from such an instance instead of
// running a feed; --postgres shares the instrument list (see README.md);
// --client-send-buffer sets each WebSocket's SO_SNDBUF (the kernel's
// default grows to megabytes, which hides a slow client for minutes);
// --tracing memory records spans in memory (served at /traces) and carries
// ServiceContext across SignalKit's hops (see README.md for an exporter);
// --admin-token makes the POST endpoints require `Authorization: Bearer
// TOKEN`; --max-instruments-per-client caps a WebSocket's list (default 64);
// --inspector switches SignalKit's inspection on and serves the live graph
// at PATH (the page) and PATH.json (behind the admin token, if one is set);
// --grpc-tls serves gRPC over TLS with that certificate and key, and
// --upstream-ca calls the upstream over TLS, trusting that PEM file;
// --ping-seconds sets how often each WebSocket is pinged (default 30; a
// client that has not answered by the next ping is closed; 0: no pings);
// --nats connects to NATS: with --nats-role feed (the default) the instance
// runs the feed and publishes its ticks, with relay it serves its clients
// from them, and without --postgres the instrument list is a JetStream
// stream of --nats-replicas copies (default 1).

var configuration = MarketConfiguration()
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    guard let value = arguments.next() else {
        fatalError("market-server: \(argument) needs a value")
    }
    func integer() -> Int {
        guard let integer = Int(value) else { fatalError("market-server: \(argument) needs an integer value") }
        return integer
    }
    switch argument {
    case "--port": configuration.port = integer()
    case "--instruments": configuration.instruments = integer()
    case "--rate": configuration.ticksPerSecond = integer()
    case "--rate-limit-ms": configuration.rateLimit = .milliseconds(integer())
    case "--client-send-buffer": configuration.clientSendBuffer = integer()
    case "--ping-seconds":
        let seconds = integer()
        guard seconds >= 0 else { fatalError("market-server: --ping-seconds takes 0 (no pings) or more") }
        configuration.webSocketPingPeriod = seconds == 0 ? nil : .seconds(seconds)
    case "--grpc-port": configuration.grpcPort = integer()
    case "--engine":
        guard let engine = MarketConfiguration.Engine(rawValue: value) else {
            fatalError("market-server: --engine takes signalkit or asyncstream")
        }
        configuration.engine = engine
    case "--grpc-tls":
        // CERT.pem,KEY.pem
        let parts = value.split(separator: ",", maxSplits: 1).map(String.init)
        guard parts.count == 2 else { fatalError("market-server: --grpc-tls takes CERTIFICATE.pem,KEY.pem") }
        configuration.grpcTLS = (parts[0], parts[1])
    case "--upstream-ca":
        guard !value.isEmpty else { fatalError("market-server: --upstream-ca takes a PEM file") }
        configuration.upstreamTrustRoots = value
    case "--upstream":
        let parts = value.split(separator: ":")
        guard parts.count == 2, let port = Int(parts[1]) else { fatalError("market-server: --upstream takes HOST:PORT") }
        configuration.upstream = (String(parts[0]), port)
    case "--postgres":
        guard let endpoint = PostgresEndpoint(url: value) else {
            fatalError("market-server: --postgres takes postgres://USER@HOST:PORT/DATABASE")
        }
        configuration.postgres = endpoint
    case "--nats":
        let servers = value.split(separator: ",").map(String.init)
        guard !servers.isEmpty, servers.allSatisfy({ !$0.isEmpty }) else {
            fatalError("market-server: --nats takes nats://HOST:PORT[,nats://HOST:PORT…]")
        }
        configuration.nats = servers
    case "--nats-role":
        guard let role = MarketConfiguration.NATSRole(rawValue: value) else {
            fatalError("market-server: --nats-role takes feed or relay")
        }
        configuration.natsRole = role
    case "--nats-replicas":
        let replicas = integer()
        guard [1, 3, 5].contains(replicas) else { fatalError("market-server: --nats-replicas takes 1, 3 or 5") }
        configuration.natsReplicas = replicas
    case "--admin-token":
        guard !value.isEmpty else { fatalError("market-server: --admin-token needs a token") }
        configuration.adminToken = value
    case "--max-instruments-per-client": configuration.maximumInstrumentsPerClient = integer()
    case "--tracing":
        guard value == "memory" else { fatalError("market-server: --tracing takes memory") }
        let tracer = InMemoryTracer()
        InstrumentationSystem.bootstrap(tracer)
        SignalKitTracing.installServiceContextPropagation()
        configuration.inMemoryTracer = tracer
    case "--inspector":
        guard value.hasPrefix("/"), value.count > 1 else { fatalError("market-server: --inspector takes a path, /inspector") }
        configuration.inspectorPath = value
    default: fatalError("market-server: unknown option \(argument)")
    }
}
var logger = Logger(label: "market")
logger.logLevel = .info
/// Runs the service; everything it built is released when this returns.
func serve(_ configuration: MarketConfiguration, logger: Logger) async throws {
    let service = try MarketService(configuration: configuration, logger: logger)
    try await service.run()
}

try await serve(configuration, logger: logger)
// Connection tasks may still be finishing when the server returns: give
// them up to 5 s to release what they hold before reading the counters.
let clock = ContinuousClock()
let stoppedAt = clock.now
let deadline = stoppedAt.advanced(by: .seconds(5))
while clock.now < deadline,
    SignalKitDebug.liveSubscriptions + SignalKitDebug.liveBags + SignalKitDebug.liveBagArrays
        + SignalKitDebug.retiredBagItems > 0
{
    try await Task.sleep(for: .milliseconds(10))
}
print(
    "market-server stopped (counters read \(clock.now - stoppedAt) after the server returned): liveSubscriptions=\(SignalKitDebug.liveSubscriptions) liveBags=\(SignalKitDebug.liveBags) "
        + "liveBagArrays=\(SignalKitDebug.liveBagArrays) retiredBagItems=\(SignalKitDebug.retiredBagItems)"
)
