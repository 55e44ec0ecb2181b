// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if NATS
import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS
import SignalKit

/// One TCP connection to one server: the handshake, keepalive pings, and
/// the frames after it, handed to the `NATSConnection`.
final class _Session: Sendable {
    private struct State {
        /// Waiting for `INFO`, then (with TLS) for the TLS handshake, then
        /// for the `PONG` that answers `CONNECT`'s `PING`, then established.
        var phase: Phase = .awaitingInfo
        var info: NATSServerInfo?
        /// Who each outstanding `PING` belongs to, in order: nil for a
        /// keepalive, else a waiting flush.
        var pings: [Int?] = []
        var flushes: [Int: CheckedContinuation<Void, any Error>] = [:]
        var nextFlush = 0
        var keepalivesOutstanding = 0
        var closeError: NATSError?
        var isClosed = false
        var keepalive: RepeatedTask?
        /// Commands written and not yet handed to SwiftNIO (encoded, in
        /// order): handed over on the event loop while the channel is
        /// writable, so that a writer faster than the socket fills this
        /// bounded buffer (``NATSOptions/writeBufferLimit``), not SwiftNIO's
        /// unbounded one.
        var outbound: [UInt8] = []
        /// A hand-over is scheduled on the event loop.
        var handOverScheduled = false
    }

    enum Phase {
        case awaitingInfo
        case awaitingTLS
        case awaitingPong
        case established
    }

    let channel: any Channel
    let options: NATSOptions
    /// Told when the outbound buffer has room again (`outboundHasRoom`).
    let connection: NATSConnection
    /// The server's host (TLS's expected name).
    let host: String
    private let state = _LockedState(State())
    private let handshake: EventLoopPromise<NATSServerInfo>

    private init(channel: any Channel, options: NATSOptions, host: String, connection: NATSConnection) {
        self.channel = channel
        self.options = options
        self.connection = connection
        self.host = host
        handshake = channel.eventLoop.makePromise()
    }

    /// Connects to `endpoint` and completes the handshake within the
    /// options' connect timeout.
    static func open(
        _ endpoint: _Endpoint,
        options: NATSOptions,
        group: any EventLoopGroup,
        connection: NATSConnection
    ) async throws(NATSError) -> (_Session, NATSServerInfo) {
        let timeout = TimeAmount.nanoseconds(
            Int64(options.connectTimeout.components.seconds) * 1_000_000_000
                + options.connectTimeout.components.attoseconds / 1_000_000_000)
        // The handler is in place before the channel reads: the server's
        // INFO comes first, at once.
        let made = _SessionBox()
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: group)
                .connectTimeout(timeout)
                .channelOption(.socketOption(.tcp_nodelay), value: 1)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let session = _Session(
                            channel: channel, options: options, host: endpoint.host, connection: connection)
                        made.value.withLock { $0 = session }
                        try channel.pipeline.syncOperations.addHandler(_FrameHandler(session: session, connection: connection))
                    }
                }
                .connect(host: endpoint.host, port: endpoint.port)
                .get()
        } catch {
            // A session made for a channel that never connected: its handshake fails.
            made.value.withLock { $0 }?.fail(.server("connect to \(endpoint) failed: \(error)"))
            throw .server("connect to \(endpoint) failed: \(error)")
        }
        guard let session = made.value.withLock({ $0 }) else {
            channel.close(promise: nil)
            throw .server("connect to \(endpoint) failed: no session")
        }
        let timer = channel.eventLoop.scheduleTask(in: timeout) {
            session.handshakeTimedOut()
        }
        do {
            let info = try await session.handshake.futureResult.get()
            timer.cancel()
            session.startKeepalive()
            return (session, info)
        } catch {
            timer.cancel()
            channel.close(promise: nil)
            throw (error as? NATSError) ?? .server(String(describing: error))
        }
    }

    /// Writes `commands`, after everything written before: appended to the
    /// outbound buffer, which the event loop hands to the channel in one
    /// write while the channel is writable (at once when called on the
    /// event loop).
    func write(_ commands: [NATSClientCommand]) {
        _ = append(commands, ifRoomFor: nil)
    }

    /// Runs `handOver` on the event loop: at once when already there.
    private func scheduleHandOver() {
        if channel.eventLoop.inEventLoop {
            // Not telling the connection: the caller may hold its lock. The
            // hand-over that found no room (or the writability's return)
            // tells it.
            handOver(notifying: false)
        } else {
            channel.eventLoop.execute { [self] in handOver() }
        }
    }

    /// Writes `commands` as ``write(_:)`` does if `bytes` more fit in the
    /// outbound buffer (below ``NATSOptions/writeBufferLimit``, or the buffer
    /// is empty: one command larger than the limit still goes alone), in one
    /// lock; returns whether it wrote them.
    func writeIfRoom(_ commands: [NATSClientCommand], bytes: Int) -> Bool {
        append(commands, ifRoomFor: bytes)
    }

    /// Appends `commands` to the outbound buffer, if `bytes` fit (always
    /// when nil), and schedules the hand-over unless one is scheduled.
    private func append(_ commands: [NATSClientCommand], ifRoomFor bytes: Int?) -> Bool {
        guard !commands.isEmpty else { return true }
        let outcome = state.withLock { state -> (written: Bool, schedule: Bool) in
            if let bytes, !state.outbound.isEmpty, state.outbound.count + bytes > options.writeBufferLimit {
                return (false, false)
            }
            for command in commands { command.encode(into: &state.outbound) }
            guard !state.handOverScheduled else { return (true, false) }
            state.handOverScheduled = true
            return (true, true)
        }
        if outcome.schedule { scheduleHandOver() }
        return outcome.written
    }

    /// Hands the outbound buffer to the channel, if it is writable (on the
    /// event loop); a channel that is not waits for its writability to
    /// return (`_FrameHandler.channelWritabilityChanged`). Then, when
    /// `notifying`, tells the connection there is room again.
    func handOver(notifying: Bool = true) {
        let bytes = state.withLock { state -> [UInt8]? in
            state.handOverScheduled = false
            guard !state.isClosed, !state.outbound.isEmpty, channel.isWritable else { return nil }
            defer { state.outbound = [] }
            return state.outbound
        }
        guard let bytes else { return }
        channel.writeAndFlush(ByteBuffer(bytes: bytes), promise: nil)
        if notifying { connection.outboundHasRoom(self) }
    }

    /// Sends a `PING` and waits for its `PONG`; `send` writes the `PING`
    /// (by default at once, after everything written before).
    func ping(timeout: Duration, send: (@Sendable () -> Void)? = nil) async throws(NATSError) {
        let id = state.withLock { state -> Int in
            state.nextFlush += 1
            return state.nextFlush
        }
        do {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let accepted = state.withLock { state -> Bool in
                    guard !state.isClosed else { return false }
                    state.flushes[id] = continuation
                    state.pings.append(id)
                    return true
                }
                guard accepted else {
                    continuation.resume(throwing: NATSError.notConnected)
                    return
                }
                if let send { send() } else { write([.ping]) }
                let nanoseconds =
                    Int64(timeout.components.seconds) * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000
                channel.eventLoop.scheduleTask(in: .nanoseconds(nanoseconds)) { [self] in
                    let waiting = state.withLock { $0.flushes.removeValue(forKey: id) }
                    waiting?.resume(throwing: NATSError.timeout)
                }
            }
        } catch {
            throw (error as? NATSError) ?? .timeout
        }
    }

    /// Closes the channel (its close is reported by `closed()`).
    func close(_ error: NATSError? = nil) {
        state.withLock { state in
            if state.closeError == nil { state.closeError = error }
        }
        channel.close(promise: nil)
    }

    /// Waits until the channel is closed; the error that closed it, if any.
    func closed() async -> NATSError? {
        try? await channel.closeFuture.get()
        return state.withLock { $0.closeError }
    }

    private func startKeepalive() {
        let interval = options.pingInterval
        let nanoseconds = Int64(interval.components.seconds) * 1_000_000_000 + interval.components.attoseconds / 1_000_000_000
        let task = channel.eventLoop.scheduleRepeatedTask(
            initialDelay: .nanoseconds(nanoseconds),
            delay: .nanoseconds(nanoseconds)
        ) { [self] _ in
            let stale = state.withLock { state -> Bool in
                if state.keepalivesOutstanding >= options.maximumPingsOutstanding { return true }
                state.keepalivesOutstanding += 1
                state.pings.append(nil)
                return false
            }
            if stale {
                close(.staleConnection)
            } else {
                write([.ping])
            }
        }
        let cancelled = state.withLock { state -> Bool in
            state.keepalive = task
            return state.isClosed
        }
        if cancelled { task.cancel() }
    }

    /// The connect timeout passed: fails the handshake unless it is done
    /// (the timer may fire before the task that awaited it cancels it).
    func handshakeTimedOut() {
        let established = state.withLock { $0.phase == .established }
        if !established { fail(.timeout) }
    }

    /// Fails the handshake (or closes an established session).
    func fail(_ error: NATSError) {
        state.withLock { state in
            if state.closeError == nil { state.closeError = error }
        }
        handshake.fail(error)
        channel.close(promise: nil)
    }

    /// The channel closed: fails the handshake and every waiting flush.
    func channelClosed() {
        let (flushes, keepalive) = state.withLock { state in
            state.isClosed = true
            defer {
                state.flushes = [:]
                state.keepalive = nil
                // Lost with the connection, as the socket's own buffers are.
                state.outbound = []
            }
            return (Array(state.flushes.values), state.keepalive)
        }
        keepalive?.cancel()
        handshake.fail(state.withLock { $0.closeError } ?? NATSError.server("connection closed"))
        for flush in flushes { flush.resume(throwing: NATSError.notConnected) }
    }

    /// A frame from the server (on the event loop). Returns whether it goes
    /// on to the connection.
    func handle(_ frame: NATSServerFrame) -> Bool {
        let phase = state.withLock { $0.phase }
        switch (phase, frame) {
        case (_, .ping):
            write([.pong])
            return false
        case (.awaitingInfo, .info(let info)):
            if let tls = options.tls {
                guard info.tlsRequired || info.tlsAvailable else {
                    fail(.tls("the server at \(host) offers no TLS"))
                    return false
                }
                state.withLock { state in
                    state.info = info
                    state.phase = .awaitingTLS
                }
                // In front of the frame handler: the bytes from here on are
                // TLS records. `CONNECT` goes once the handshake completes.
                do {
                    let handler = try tls.makeHandler(host: host)
                    try channel.pipeline.syncOperations.addHandler(handler, position: .first)
                } catch {
                    fail((error as? NATSError) ?? .tls("\(error)"))
                }
                return false
            }
            if info.tlsRequired {
                fail(.tlsRequired)
                return false
            }
            state.withLock { state in
                state.info = info
                state.phase = .awaitingPong
            }
            write([.connect(json: connectJSON(info)), .ping])
            return false
        case (.awaitingInfo, _):
            fail(.server("expected INFO first"))
            return false
        case (.awaitingPong, .pong):
            let info = state.withLock { state -> NATSServerInfo? in
                state.phase = .established
                return state.info
            }
            if let info { handshake.succeed(info) }
            return false
        case (.awaitingTLS, _):
            fail(.tls("the server sent a frame before the TLS handshake"))
            return false
        case (.awaitingPong, .error(let text)):
            fail(.server(text))
            return false
        case (.awaitingPong, _):
            return false
        case (.established, .pong):
            let flush = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                guard !state.pings.isEmpty else { return nil }
                let owner = state.pings.removeFirst()
                guard let owner else {
                    state.keepalivesOutstanding = 0
                    return nil
                }
                return state.flushes.removeValue(forKey: owner)
            }
            flush?.resume()
            return false
        case (.established, _):
            return true
        }
    }

    /// The TLS handshake completed: the `CONNECT` goes, in TLS.
    func tlsEstablished() {
        let info = state.withLock { state -> NATSServerInfo? in
            guard state.phase == .awaitingTLS else { return nil }
            state.phase = .awaitingPong
            return state.info
        }
        if let info { write([.connect(json: connectJSON(info)), .ping]) }
    }

    /// An error in the channel: a TLS one (a refused certificate, in the
    /// handshake or, with TLS 1.3, the server's refusal of the client's
    /// certificate just after it) is ``NATSError/tls(_:)``.
    func failed(_ error: any Error) {
        let inHandshake = state.withLock { $0.phase == .awaitingTLS }
        if inHandshake || error is NIOSSLError || error is BoringSSLError || error is NIOSSLExtraError {
            close(.tls("\(error)"))
        } else {
            close(.server("\(error)"))
        }
    }

    private func connectJSON(_ info: NATSServerInfo) -> String {
        var fields: [String: Any] = [
            "verbose": false,
            "pedantic": false,
            "tls_required": options.tls != nil,
            "lang": "swift",
            "version": "0.1.0",
            "protocol": 1,
            "headers": true,
            "no_responders": true,
            "echo": true,
        ]
        if let name = options.name { fields["name"] = name }
        switch options.authentication {
        case .none: break
        case .token(let token): fields["auth_token"] = token
        case .userPassword(let user, let password):
            fields["user"] = user
            fields["pass"] = password
        }
        let data = (try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}

/// The session a channel initializer makes.
final class _SessionBox: Sendable {
    let value = _LockedState<_Session?>(nil)
}

/// The channel's handler: parses frames and hands them over.
final class _FrameHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private var parser = NATSFrameParser()
    private let session: _Session
    private let connection: NATSConnection

    init(session: _Session, connection: NATSConnection) {
        self.session = session
        self.connection = connection
    }

    /// Messages are handed to the connection in batches of up to this
    /// many (one lock, one delivery block), the rest of a read's frames
    /// one at a time, in order.
    static let batchLimit = 16

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        parser.append(buffer.readableBytesView)
        var messages: [(message: NATSMessage, sid: UInt64)] = []
        func handOver() {
            guard !messages.isEmpty else { return }
            connection.received(messages: messages, from: session)
            messages.removeAll(keepingCapacity: true)
        }
        do {
            while let frame = try parser.next() {
                if case .info(let info) = frame { parser.maxPayload = info.maxPayload }
                guard session.handle(frame) else { continue }
                if case .message(let message, let sid) = frame {
                    messages.append((message, sid))
                    if messages.count == Self.batchLimit { handOver() }
                } else {
                    handOver()
                    connection.received(frame, from: session)
                }
            }
            handOver()
        } catch {
            handOver()
            session.fail(.protocolViolation(error))
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        session.channelClosed()
        context.fireChannelInactive()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { session.handOver() }
        context.fireChannelWritabilityChanged()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted = event as? TLSUserEvent { session.tlsEstablished() }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        session.failed(error)
    }
}
#endif  // NATS
