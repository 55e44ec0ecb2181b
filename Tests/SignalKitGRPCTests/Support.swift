// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if GRPC
import GRPCCore
import GRPCNIOTransportHTTP2Posix
import SignalKit
import SignalKitGRPC
import SignalKitTesting
import Testing

/// A request and a value type travelling as JSON.
struct Subscribe: Codable, Sendable {
    var symbol: String
}

struct Tick: Codable, Sendable, CustomStringConvertible {
    var symbol: String
    var price: Int
    var description: String { "\(symbol)@\(price)" }
}

/// The methods the tests serve (the test client process uses `ints`, with
/// the same names).
enum Methods {
    static let ticks = RemoteSignalMethod<Subscribe, Tick>(service: "signalkit.test.Feed", method: "Ticks")
    static let ints = RemoteSignalMethod<String, Int>(service: "signalkit.test.Feed", method: "Ints")
    static let blobs = RemoteSignalMethod<String, String>(service: "signalkit.test.Feed", method: "Blobs")
}

/// A server on 127.0.0.1, serving `service` until `stop()`.
struct TestServer {
    let port: Int
    private let task: Task<Void, any Error>

    /// Starts a server on `port` (0: a free port) and waits until it listens.
    static func start(
        _ service: RemoteSignalService,
        port: Int = 0,
        config: HTTP2ServerTransport.Posix.Config = .defaults,
        interceptors: [any ServerInterceptor] = []
    ) async throws -> TestServer {
        let server = GRPCServer(
            transport: .http2NIOPosix(
                address: .ipv4(host: "127.0.0.1", port: port), transportSecurity: .plaintext, config: config),
            services: [service],
            interceptors: interceptors
        )
        let task = Task { try await server.serve() }
        guard let bound = try await server.listeningAddress?.ipv4?.port else {
            task.cancel()
            throw RPCError(code: .internalError, message: "the test server has no IPv4 address")
        }
        return TestServer(port: bound, task: task)
    }

    /// Stops the server at once (its open calls are cancelled) and waits
    /// until it has stopped.
    func stop() async {
        task.cancel()
        _ = await task.result
    }
}

/// A server serving a `ValuePipe` as `Methods.ints` to every call, the
/// subscriptions logged in `serverLog` (`"feed.subscribe"`, `"feed.dispose"`).
struct PipeServer {
    let pipe: ValuePipe<Int>
    let serverLog: EventLog
    let server: TestServer

    static func start() async throws -> PipeServer {
        let pipe = ValuePipe<Int>()
        let serverLog = EventLog()
        var service = RemoteSignalService()
        service.serve(logged(pipe.signal(), "feed", serverLog), as: Methods.ints)
        return PipeServer(pipe: pipe, serverLog: serverLog, server: try await TestServer.start(service))
    }
}

/// A client of 127.0.0.1:`port` that reconnects quickly (10 ms backoff), for
/// the duration of `body`; `targetWindowSize`, if given, is its HTTP/2
/// flow-control window (how much a server may send it unread).
func withTestClient<R: Sendable>(
    port: Int,
    targetWindowSize: Int? = nil,
    _ body: (GRPCClient<HTTP2ClientTransport.Posix>) async throws -> R
) async throws -> R {
    var config = HTTP2ClientTransport.Posix.Config.defaults
    config.backoff = .init(initial: .milliseconds(10), max: .milliseconds(50), multiplier: 1.5, jitter: 0)
    if let targetWindowSize {
        config.http2.targetWindowSize = targetWindowSize
    }
    let client = GRPCClient(
        transport: try .http2NIOPosix(
            target: .ipv4(address: "127.0.0.1", port: port),
            transportSecurity: .plaintext,
            config: config
        )
    )
    let connections = Task { try await client.runConnections() }
    do {
        let result = try await body(client)
        client.beginGracefulShutdown()
        _ = await connections.result
        return result
    } catch {
        connections.cancel()
        _ = await connections.result
        throw error
    }
}

/// `signal`, logging `"<name>.subscribe"` and `"<name>.dispose"` (the
/// server's upstream subscription and its disposal). "subscribe" is logged
/// once the subscription exists, so that a test waiting for it may then send
/// on a hot source and know the value reaches it.
func logged<T, E>(_ signal: Signal<T, E>, _ name: String, _ log: EventLog) -> Signal<T, E> {
    Signal { subscriber in
        let inner = signal.start(
            next: { subscriber.putNext($0) },
            error: { subscriber.putError($0) },
            completed: { subscriber.putCompletion() }
        )
        log.append("\(name).subscribe")
        return ActionDisposable {
            log.append("\(name).dispose")
            inner.dispose()
        }
    }
}

/// Subscribes and logs `"next v"`, `"error <code>: <message>"`,
/// `"completed"`.
func start<T>(_ signal: Signal<T, RPCError>, _ log: EventLog) -> any Disposable {
    signal.start(
        next: { log.append("next \($0)") },
        error: { log.append("error \($0.code): \($0.message)") },
        completed: { log.append("completed") }
    )
}

/// Serves `service` on loopback, subscribes to `Methods.ints` (request
/// `"A"`) through one client, waits until the client's events satisfy
/// `done`, disposes, stops the server, and returns the client's events (as
/// `start(_:_:)` logs them).
func clientEvents(
    of service: RemoteSignalService,
    sourceLocation: SourceLocation = #_sourceLocation,
    until done: ([String]) -> Bool
) async throws -> [String] {
    let server = try await TestServer.start(service)
    let log = EventLog()
    try await withTestClient(port: server.port) { client in
        let handle = start(client.remoteSignal(Methods.ints, request: "A"), log)
        #expect(await waitUntil { done(log.events) }, sourceLocation: sourceLocation)
        handle.dispose()
    }
    await server.stop()
    return log.events
}

/// Runs `body`, then expects SignalKit's live-object counters back where
/// they were once `body`'s locals (pipes, signals, clients) are released.
func leakChecked(
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> Void
) async rethrows {
    let check = LeakCheck()
    try await body()
    #expect(check.leaks() == nil, sourceLocation: sourceLocation)
}

/// Polls `condition` every millisecond until it holds or `seconds` pass;
/// returns whether it held (a bounded wait for a network condition).
func waitUntil(seconds: Double = 10, _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while !condition() {
        if ContinuousClock.now >= deadline { return false }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return true
}

#endif  // GRPC
