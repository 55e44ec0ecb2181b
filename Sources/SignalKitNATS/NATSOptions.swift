// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if NATS
import Foundation
public import SignalKit

/// How a connection authenticates.
public enum NATSAuthentication: Sendable, Equatable {
    case none
    /// `auth_token`.
    case token(String)
    /// `user` and `pass`.
    case userPassword(user: String, password: String)
}

/// How a connection reconnects: SignalKit's jittered exponential backoff
/// (``SignalKit/SignalBackoff``), bounded in delay and optionally in attempts.
///
/// After an established connection is lost, the first attempt is made at
/// once; each failed attempt waits `jitteredDelay(afterFailures:)` before the
/// next one, trying the servers in turn. The defaults wait about 50 ms,
/// 100 ms, 200 ms, … up to 2 s (± 20 %), forever; after `maximumAttempts`
/// failures in a row the connection closes with
/// ``NATSError/gaveUp(attempts:lastError:)``.
public typealias NATSReconnectPolicy = SignalBackoff

/// A connection's settings.
public struct NATSOptions: Sendable {
    /// The servers, tried in turn: `nats://host:port`, `host:port` or
    /// `host` (port 4222).
    public var servers: [String]
    /// The credentials sent in `CONNECT`.
    public var authentication: NATSAuthentication
    /// The client's name in the server's monitoring.
    public var name: String?
    /// How often the client pings the server.
    public var pingInterval: Duration
    /// Pings left unanswered before the connection is taken as stale and
    /// closed (then reconnected).
    public var maximumPingsOutstanding: Int
    /// The longest a TCP connect plus the `INFO`/`CONNECT` handshake may take.
    public var connectTimeout: Duration
    /// How the connection reconnects.
    public var reconnect: NATSReconnectPolicy
    /// Whether the servers a cluster advertises (`connect_urls`) join the
    /// list of servers to reconnect to.
    public var usesAdvertisedServers: Bool
    /// What happens to messages published while the connection is down, or
    /// while it is up but ``writeBufferLimit`` bytes wait for the socket (a
    /// publisher faster than the network or the server): they wait, up to
    /// the policy's limit, and are sent in order once there is room. ``SignalBuffer/failing(beyond:with:)`` (the default,
    /// 1,024 messages) makes a publish beyond the limit throw the policy's
    /// error (``NATSError/publishBufferFull(limit:)`` by default); `droppingOldest` and
    /// `droppingNewest` drop (and count in
    /// ``NATSConnection/droppedPublishes``); `latest` keeps the newest;
    /// `blocking` is taken as `failing` (a publish never waits);
    /// `unbounded` keeps everything.
    public var publishBuffer: SignalBuffer<NATSError>
    /// TLS for every connection (see ``NATSTLS``); nil connects in plain
    /// text and refuses a server that requires TLS.
    public var tls: NATSTLS?
    /// The most bytes of commands a connection keeps for its socket while
    /// SwiftNIO's own buffer is full (past its high-water mark, 64 KiB by
    /// default): beyond it, publishes wait in ``publishBuffer`` under its
    /// policy. So a publisher faster than the socket never grows a buffer
    /// without bound. Default 4 MiB; a command larger than the limit is
    /// still written, alone.
    public var writeBufferLimit: Int

    public init(
        servers: [String] = ["nats://127.0.0.1:4222"],
        authentication: NATSAuthentication = .none,
        name: String? = nil,
        pingInterval: Duration = .seconds(30),
        maximumPingsOutstanding: Int = 2,
        connectTimeout: Duration = .seconds(2),
        reconnect: NATSReconnectPolicy = NATSReconnectPolicy(),
        usesAdvertisedServers: Bool = true,
        publishBuffer: SignalBuffer<NATSError> = .failing(beyond: 1_024, with: .publishBufferFull(limit: 1_024)),
        tls: NATSTLS? = nil,
        writeBufferLimit: Int = 4 << 20
    ) {
        self.servers = servers
        self.authentication = authentication
        self.name = name
        self.pingInterval = pingInterval
        self.maximumPingsOutstanding = max(1, maximumPingsOutstanding)
        self.connectTimeout = connectTimeout
        self.reconnect = reconnect
        self.usesAdvertisedServers = usesAdvertisedServers
        self.publishBuffer = publishBuffer
        self.tls = tls
        self.writeBufferLimit = max(1, writeBufferLimit)
    }
}

/// Why a NATS operation or connection failed.
public enum NATSError: Error, Sendable, Equatable {
    /// A subject that cannot be used here (empty, whitespace, a wildcard
    /// where none is allowed).
    case invalidSubject(String)
    /// A queue group name with whitespace, or empty.
    case invalidQueueGroup(String)
    /// A message (headers and payload) larger than the server's
    /// `max_payload`.
    case payloadTooLarge(size: Int, limit: Int)
    /// A publish while disconnected, with the publish buffer full (its
    /// policy is `failing`).
    case publishBufferFull(limit: Int)
    /// The server's `-ERR`, with its text.
    case server(String)
    /// The server's `-ERR 'Permissions Violation …'` (the connection stays).
    case permissionViolation(String)
    /// The server's byte stream is not NATS's protocol.
    case protocolViolation(NATSProtocolError)
    /// No answer to `maximumPingsOutstanding` pings.
    case staleConnection
    /// The connection is not up (for ``NATSConnection/flush(timeout:)``).
    case notConnected
    /// The connection was closed by ``NATSConnection/close()``.
    case closed
    /// A request's reply or a flush did not arrive in time.
    case timeout
    /// The task awaiting a request's reply
    /// (``NATSConnection/requestReply(_:payload:headers:timeout:)``) was
    /// cancelled.
    case cancelled
    /// A request found no subscriber on its subject (status 503).
    case noResponders
    /// `maximumAttempts` attempts in a row failed; the last one's error.
    case gaveUp(attempts: Int, lastError: String)
    /// A server address that does not parse.
    case invalidServer(String)
    /// A value that could not be encoded or a payload that could not be
    /// decoded (the underlying error's description).
    case coding(String)
    /// The server requires TLS (its `INFO` says `tls_required`) and the
    /// options set no ``NATSOptions/tls``.
    case tlsRequired
    /// TLS failed: a handshake refused (an untrusted certificate, a name
    /// that does not match, a client certificate the server refused),
    /// certificate files that do not load, or a server that offers no TLS
    /// to a client that requires it (the description).
    case tls(String)

    // JetStream (see NATSJetStream).

    /// The JetStream API answered with an error (its JSON `error`).
    case jetStream(NATSJetStreamAPIError)
    /// A stream publish got no acknowledgement within its deadline (every
    /// attempt timed out or found no responder), after `attempts` tries
    /// with the same `Nats-Msg-Id`.
    case publishNotAcknowledged(messageID: String, attempts: Int)
    /// A stream publish while `limit` publishes already wait for their
    /// acknowledgement.
    case tooManyPendingPublishes(limit: Int)
    /// A stream publish given up for a newer one by a `droppingOldest`
    /// `pendingPublishes` policy, before it was acknowledged (it may have
    /// been stored).
    case publishDropped(messageID: String)
}

/// The state of a connection, as ``NATSConnection/state`` sends it.
public enum NATSConnectionState: Sendable, Equatable {
    /// The first connection is being made.
    case connecting
    /// Connected to `server` (`host:port`), handshake done, subscriptions
    /// in place.
    case connected(server: String)
    /// The connection was lost; attempt `attempt` (from 1) is under way.
    case reconnecting(attempt: Int)
    /// Closed for good: by ``NATSConnection/close()`` (nil) or with an error.
    case closed(NATSError?)
}

/// A server address.
struct _Endpoint: Sendable, Hashable, CustomStringConvertible {
    let host: String
    let port: Int

    var description: String { "\(host):\(port)" }

    /// Parses `nats://host:port`, `host:port` or `host`.
    init?(_ text: String) {
        var rest = Substring(text.trimmingWhitespace)
        if let scheme = rest.range(of: "://") { rest = rest[scheme.upperBound...] }
        if let at = rest.lastIndex(of: "@") { rest = rest[rest.index(after: at)...] }
        if let slash = rest.firstIndex(of: "/") { rest = rest[..<slash] }
        guard !rest.isEmpty else { return nil }
        if let colon = rest.lastIndex(of: ":"), !rest.hasSuffix("]") {
            guard let port = Int(rest[rest.index(after: colon)...]), (1...65535).contains(port) else { return nil }
            host = String(rest[..<colon])._trimming(["[", "]"])
            self.port = port
        } else {
            host = String(rest)._trimming(["[", "]"])
            port = 4222
        }
        guard !host.isEmpty else { return nil }
    }
}

extension String {
    fileprivate var trimmingWhitespace: String {
        String(drop(while: { $0.isWhitespace }).reversed().drop(while: { $0.isWhitespace }).reversed())
    }

    fileprivate func _trimming(_ characters: Set<Character>) -> String {
        String(drop(while: { characters.contains($0) }).reversed().drop(while: { characters.contains($0) }).reversed())
    }
}
#endif  // NATS
