// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if NATS
public import Foundation
internal import Instrumentation
import NIOCore
import NIOPosix
public import SignalKit
import Synchronization

/// A NATS client connection on SwiftNIO: subjects as hot signals,
/// publishing, request/reply.
///
/// ```swift
/// let nats = NATSConnection(NATSOptions(servers: ["nats://127.0.0.1:4222"]))
/// let handle = nats.messages("orders.>").start(next: { message in handle(message) })
/// try nats.publish("orders.created", payload: Array("42".utf8))
/// ```
///
/// **Connecting.** The connection starts connecting when it is made, and
/// keeps reconnecting by ``NATSOptions/reconnect``'s policy, across the
/// servers given and those the cluster advertises, until ``close()``:
/// ``state`` tells where it is. Every live subscription is subscribed
/// again on each new connection. Messages published to a subject while the
/// connection is down are lost (core NATS stores nothing); the client's own
/// publishes wait in ``NATSOptions/publishBuffer``.
///
/// **Errors.** The server's `-ERR` is sent on ``errors``; one that closes
/// the connection is followed by a reconnection. A permission violation on
/// a subscription fails that subject's signal. A handshake refused (bad
/// credentials) counts as a failed attempt.
///
/// **Threading.** Messages are delivered one at a time, in the order
/// received, on the connection's serial delivery queue; each message's
/// delivery runs in the trace context its publisher put in its headers.
///
/// **TLS.** With ``NATSOptions/tls`` set, every connection is upgraded to
/// TLS after the server's `INFO`; without it, a server that requires TLS is
/// refused with ``NATSError/tlsRequired`` (see ``NATSTLS``).
public final class NATSConnection: Sendable {
    /// A subscription's ID and what receives its messages.
    enum _Target: Sendable {
        case feed(_FeedKey)
        case inbox
    }

    struct _FeedKey: Hashable, Sendable {
        let subject: String
        let queueGroup: String?
    }

    struct _Feed {
        let sid: UInt64
        var subscribers: [Int: Subscriber<NATSMessage, NATSError>] = [:] {
            // `ids` follows: sorted again on a join, filtered on a leave.
            didSet {
                if subscribers.count > ids.count {
                    ids = subscribers.keys.sorted()
                } else if subscribers.count < ids.count {
                    ids.removeAll { subscribers[$0] == nil }
                }
            }
        }
        /// The subscribers' IDs in order, handed to each delivery (shared,
        /// not copied per message).
        private(set) var ids: [Int] = []
    }

    /// Who waits for a request's reply.
    enum _Request {
        /// A `request` signal's subscriber: called on the delivery queue,
        /// in the reply's publisher context.
        case subscriber(Subscriber<NATSMessage, NATSError>)
        /// A `requestReply` caller's continuation: resumed where the reply
        /// is read (the event loop), which runs nothing of the caller's.
        case continuation(@Sendable (Result<NATSMessage, NATSError>) -> Void)

        /// What a reply on the inbox means: a status 503 is the server's
        /// "no responders".
        static func outcome(of reply: NATSMessage) -> Result<NATSMessage, NATSError> {
            reply.headers.status == 503 ? .failure(.noResponders) : .success(reply)
        }

        func finish(with result: Result<NATSMessage, NATSError>) {
            switch self {
            case .subscriber(let subscriber):
                switch result {
                case .success(let message):
                    subscriber.putNext(message)
                    subscriber.putCompletion()
                case .failure(let error):
                    subscriber.putError(error)
                }
            case .continuation(let resume):
                resume(result)
            }
        }
    }

    struct _State {
        var closed = false
        /// The established session (handshake done), if any.
        var session: _Session?
        var serverInfo: NATSServerInfo?
        var servers: [_Endpoint]
        var nextServer = 0
        var nextSID: UInt64 = 1
        var nextSubscriberID = 0
        var targets: [UInt64: (subject: String, queueGroup: String?, target: _Target)] = [:]
        var feeds: [_FeedKey: _Feed] = [:]
        /// Publishes waiting for a connection.
        var pending: [NATSClientCommand] = []
        var droppedPublishes = 0
        var inboxSID: UInt64?
        var nextRequest = 0
        var requests: [String: _Request] = [:]
        var task: Task<Void, Never>?
        /// Counted under the lock the paths already take.
        var statistics = NATSStatistics()
    }

    let options: NATSOptions
    let inboxPrefix: String
    let deliveryQueue = Queue(name: "SignalKitNATS.delivery")
    /// What the connection's JetStream consumers count (outside `shared`:
    /// they count on their own queues).
    let jetStreamCounts = _JetStreamCounts()
    private let shared: _LockedState<_State>
    private let stateValue = ValuePromise<NATSConnectionState>(.connecting, ignoreRepeated: true)
    private let errorPipe = ValuePipe<NATSError>()
    private let group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton

    /// A connection with `options`, connecting at once (see ``state``).
    public init(_ options: NATSOptions = NATSOptions()) {
        self.options = options
        inboxPrefix =
            "_INBOX." + String(UInt64.random(in: 0...UInt64.max), radix: 36)
            + String(UInt32.random(in: 0...UInt32.max), radix: 36)
        let endpoints = options.servers.compactMap(_Endpoint.init)
        shared = _LockedState(_State(servers: endpoints))
        if endpoints.isEmpty || endpoints.count != options.servers.count {
            let bad = options.servers.first { _Endpoint($0) == nil } ?? ""
            shared.withLock { $0.closed = true }
            stateValue.set(.closed(.invalidServer(bad)))
            return
        }
        let task = Task { [self] in await run() }
        shared.withLock { $0.task = task }
    }

    /// The connection's state: the current one first, then every change.
    public var state: Signal<NATSConnectionState, NoError> { stateValue.get() }

    /// The server's `-ERR`s and the connection's failures (a stale
    /// connection, a protocol violation), as they happen.
    public var errors: Signal<NATSError, NoError> { errorPipe.signal() }

    /// What the current server said about itself, nil before the first
    /// connection.
    public var serverInfo: NATSServerInfo? { shared.withLock { $0.serverInfo } }

    /// Publishes dropped by a dropping ``NATSOptions/publishBuffer`` policy.
    public var droppedPublishes: Int { shared.withLock { $0.droppedPublishes } }

    /// What the connection has counted since it was made: messages and
    /// payload bytes in and out, reconnections, publishes waiting and
    /// dropped, live subscriptions, its JetStream consumers' redeliveries
    /// and messages awaiting an acknowledgement
    /// (``reportMetrics(every:on:factory:)`` exports them).
    public var statistics: NATSStatistics {
        shared.withLock { state in
            var statistics = state.statistics
            statistics.droppedPublishes = state.droppedPublishes
            statistics.pendingPublishes = state.pending.count { $0.isPublish }
            statistics.subscriptions = state.targets.count
            statistics.redeliveries = jetStreamCounts.redeliveries.load(ordering: .relaxed)
            statistics.pendingAcknowledgements = jetStreamCounts.pendingAcknowledgements.load(ordering: .relaxed)
            return statistics
        }
    }

    /// Publishes waiting for the connection.
    public var pendingPublishes: Int { shared.withLock { $0.pending.count { $0.isPublish } } }

    /// The live subscriptions on the server (subjects and the inbox).
    public var subscriptionCount: Int { shared.withLock { $0.targets.count } }

    /// Closes the connection for good: every subject's signal and every
    /// request fails with ``NATSError/closed``, ``state`` ends at
    /// `closed(nil)`.
    public func close() {
        close(with: nil)
    }

    // MARK: - Publishing

    /// Publishes `payload` to `subject`, with `headers` and a `replyTo`
    /// subject. The sender's trace context (`ServiceContext.current`, as
    /// the process's instrument injects it) is added to the headers.
    ///
    /// - Throws: ``NATSError/invalidSubject(_:)``,
    ///   ``NATSError/payloadTooLarge(size:limit:)`` (the server's
    ///   `max_payload`), ``NATSError/publishBufferFull(limit:)`` (while
    ///   disconnected), ``NATSError/closed``.
    public func publish(
        _ subject: String,
        payload: [UInt8],
        headers: NATSHeaders = NATSHeaders(),
        replyTo: String? = nil
    ) throws(NATSError) {
        guard _isValidSubject(subject, wildcards: false) else { throw .invalidSubject(subject) }
        if let replyTo, !_isValidSubject(replyTo, wildcards: false) { throw .invalidSubject(replyTo) }
        var headers = headers
        if let context = ServiceContext.current {
            InstrumentationSystem.instrument.inject(context, into: &headers, using: _HeaderInjector())
        }
        let command = NATSClientCommand.publish(
            subject: subject,
            replyTo: replyTo,
            headers: headers.isEmpty ? nil : headers,
            payload: payload
        )
        try send(publish: command)
    }

    /// Publishes `value` as JSON.
    public func publish<Value: Encodable>(
        _ subject: String,
        json value: Value,
        headers: NATSHeaders = NATSHeaders(),
        encoder: JSONEncoder = JSONEncoder()
    ) throws(NATSError) {
        let data: Data
        do {
            data = try encoder.encode(value)
        } catch {
            throw .coding(String(describing: error))
        }
        try publish(subject, payload: Array(data), headers: headers)
    }

    /// Waits until the server has processed everything sent before (a
    /// `PING` answered by its `PONG`).
    /// - Throws: ``NATSError/notConnected``, ``NATSError/timeout``.
    public func flush(timeout: Duration = .seconds(5)) async throws(NATSError) {
        guard let session = shared.withLock({ $0.session }) else { throw .notConnected }
        // The `PING` goes after the publishes waiting for room, in order.
        try await session.ping(timeout: timeout) { [self] in
            shared.withLock { state in
                if state.session === session, !state.pending.isEmpty {
                    state.pending.append(.ping)
                } else {
                    session.write([.ping])
                }
            }
        }
    }

    /// `session`'s outbound buffer was handed to its channel: the publishes
    /// waiting for room go, in order, as far as there is room.
    func outboundHasRoom(_ session: _Session) {
        shared.withLock { state in
            guard state.session === session, !state.pending.isEmpty else { return }
            var sent = 0
            for command in state.pending {
                guard session.writeIfRoom([command], bytes: command.payloadSize) else { break }
                sent += 1
                if command.isPublish {
                    state.statistics.messagesOut += 1
                    state.statistics.bytesOut += command.bodySize
                }
            }
            state.pending.removeFirst(sent)
        }
    }

    private func send(publish command: NATSClientCommand) throws(NATSError) {
        let size = command.payloadSize
        try shared.withLock { state throws(NATSError) in
            guard !state.closed else { throw .closed }
            if let info = state.serverInfo, size > info.maxPayload {
                throw .payloadTooLarge(size: size, limit: info.maxPayload)
            }
            // Straight to the session while its outbound buffer has room and
            // nothing waits before this publish; else into the publish buffer.
            if let session = state.session, state.pending.isEmpty, session.writeIfRoom([command], bytes: size) {
                state.statistics.messagesOut += 1
                state.statistics.bytesOut += command.bodySize
                return
            }
            let policy = options.publishBuffer
            let limit = policy.limit ?? .max
            if state.pending.count < limit {
                state.pending.append(command)
                return
            }
            switch policy.overflow {
            case .dropOldest:
                state.pending.removeFirst()
                state.pending.append(command)
                state.droppedPublishes += 1
            case .dropNewest:
                state.droppedPublishes += 1
            case .fail, .block, .never:
                // `.block` fails too: a publish never blocks its caller,
                // which may be an event loop (see NATSOptions.publishBuffer).
                throw policy.errorOnOverflow ?? .publishBufferFull(limit: limit)
            }
        }
    }

    // MARK: - Subscriptions

    /// Adds `subscriber` to the feed of (`subject`, `queueGroup`),
    /// subscribing on the server when it is the first.
    func attach(
        _ subscriber: Subscriber<NATSMessage, NATSError>,
        subject: String,
        queueGroup: String?
    ) -> (any Disposable)? {
        let key = _FeedKey(subject: subject, queueGroup: queueGroup)
        let id = shared.withLock { state -> Int? in
            guard !state.closed else { return nil }
            state.nextSubscriberID += 1
            let id = state.nextSubscriberID
            if state.feeds[key] == nil {
                let sid = state.nextSID
                state.nextSID += 1
                state.feeds[key] = _Feed(sid: sid)
                state.targets[sid] = (subject, queueGroup, .feed(key))
                state.session?.write([.subscribe(subject: subject, queueGroup: queueGroup, sid: sid)])
            }
            state.feeds[key]!.subscribers[id] = subscriber
            return id
        }
        guard let id else { return nil }
        return ActionDisposable { [self] in
            detach(key: key, id: id)
        }
    }

    /// Removes a subscriber; the last one unsubscribes on the server. When
    /// it returns, the subscriber receives nothing more.
    private func detach(key: _FeedKey, id: Int) {
        shared.withLock { state in
            guard var feed = state.feeds[key], feed.subscribers.removeValue(forKey: id) != nil else { return }
            if feed.subscribers.isEmpty {
                state.feeds[key] = nil
                state.targets[feed.sid] = nil
                state.session?.write([.unsubscribe(sid: feed.sid, max: nil)])
            } else {
                state.feeds[key] = feed
            }
        }
        // A delivery already running finishes before dispose returns.
        if !deliveryQueue.isCurrent() { deliveryQueue.sync {} }
    }

    // MARK: - Requests

    /// Sends a request and registers `subscriber` for its reply.
    func startRequest(
        _ subject: String,
        payload: [UInt8],
        headers: NATSHeaders,
        timeout: Duration,
        subscriber: Subscriber<NATSMessage, NATSError>
    ) -> any Disposable {
        guard let token = sendRequest(subject, payload: payload, headers: headers, timeout: timeout, .subscriber(subscriber))
        else { return EmptyDisposable }
        return ActionDisposable { [self] in
            _ = shared.withLock { $0.requests.removeValue(forKey: token) }
            if !deliveryQueue.isCurrent() { deliveryQueue.sync {} }
        }
    }

    /// Sends a request, the reply to go to `request`; its token, or nil
    /// when it was finished at once (a closed connection, a publish error).
    func sendRequest(
        _ subject: String,
        payload: [UInt8],
        headers: NATSHeaders,
        timeout: Duration,
        _ request: _Request
    ) -> String? {
        let token: String? = shared.withLock { state in
            guard !state.closed else { return nil }
            if state.inboxSID == nil {
                let sid = state.nextSID
                state.nextSID += 1
                state.inboxSID = sid
                state.targets[sid] = (inboxPrefix + ".*", nil, .inbox)
                state.session?.write([.subscribe(subject: inboxPrefix + ".*", queueGroup: nil, sid: sid)])
            }
            state.nextRequest += 1
            let token = inboxPrefix + "." + String(state.nextRequest)
            state.requests[token] = request
            return token
        }
        guard let token else {
            request.finish(with: .failure(.closed))
            return nil
        }
        do {
            try publish(subject, payload: payload, headers: headers, replyTo: token)
        } catch {
            finishRequest(token, with: .failure(error))
            return nil
        }
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        deliveryQueue.after(seconds) { [self] in
            finishRequest(token, with: .failure(.timeout))
        }
        return token
    }

    /// Finishes a request if it is still waiting.
    func finishRequest(_ token: String, with result: Result<NATSMessage, NATSError>) {
        guard let request = shared.withLock({ $0.requests.removeValue(forKey: token) }) else { return }
        request.finish(with: result)
    }

    // MARK: - Receiving

    /// Messages of an established session (on its event loop), in the
    /// order received: routed under one lock, delivered in one block on
    /// the delivery queue.
    func received(messages: [(message: NATSMessage, sid: UInt64)], from session: _Session) {
        var awaited: [(resume: @Sendable (Result<NATSMessage, NATSError>) -> Void, message: NATSMessage)] = []
        let routed = shared.withLock { state -> [(NATSMessage, _Target, [Int])] in
            guard state.session === session else { return [] }
            var routed: [(NATSMessage, _Target, [Int])] = []
            routed.reserveCapacity(messages.count)
            for (message, sid) in messages {
                state.statistics.messagesIn += 1
                state.statistics.bytesIn += message.payload.count
                guard let target = state.targets[sid] else { continue }
                switch target.target {
                case .feed(let key):
                    routed.append((message, target.target, state.feeds[key]?.ids ?? []))
                case .inbox:
                    // An awaited reply skips the delivery queue.
                    if case .continuation(let resume) = state.requests[message.subject] {
                        state.requests[message.subject] = nil
                        awaited.append((resume, message))
                    } else {
                        routed.append((message, target.target, []))
                    }
                }
            }
            return routed
        }
        for (resume, message) in awaited {
            resume(_Request.outcome(of: message))
        }
        guard !routed.isEmpty else { return }
        deliveryQueue.async { [self] in
            for (message, target, ids) in routed {
                deliver(message, to: target, ids: ids)
            }
        }
    }

    /// A frame of an established session (on its event loop).
    func received(_ frame: NATSServerFrame, from session: _Session) {
        switch frame {
        case .message(let message, let sid):
            received(messages: [(message, sid)], from: session)
        case .info(let info):
            update(info)
        case .error(let text):
            if text.lowercased().hasPrefix("permissions violation") {
                permissionViolation(text)
            } else {
                errorPipe.putNext(.server(text))
            }
        case .ping, .pong, .ok:
            break
        }
    }

    /// Delivers a message on the delivery queue, in its publisher's context.
    private func deliver(_ message: NATSMessage, to target: _Target, ids: [Int]) {
        switch target {
        case .feed(let key):
            _withPublisherContext(message.headers) {
                for id in ids {
                    let subscriber = shared.withLock { $0.feeds[key]?.subscribers[id] }
                    subscriber?.putNext(message)
                }
            }
        case .inbox:
            _withPublisherContext(message.headers) {
                finishRequest(message.subject, with: _Request.outcome(of: message))
            }
        }
    }

    /// `-ERR 'Permissions Violation for Subscription to "subject"'`: fails
    /// the feeds on that subject.
    private func permissionViolation(_ text: String) {
        errorPipe.putNext(.permissionViolation(text))
        guard text.lowercased().contains("subscription") else { return }
        let failed = shared.withLock { state -> [Subscriber<NATSMessage, NATSError>] in
            var failed: [Subscriber<NATSMessage, NATSError>] = []
            for (key, feed) in state.feeds where text.contains("\"\(key.subject)\"") || text.hasSuffix(" \(key.subject)") {
                failed += feed.subscribers.values
                state.feeds[key] = nil
                state.targets[feed.sid] = nil
            }
            return failed
        }
        deliveryQueue.async {
            for subscriber in failed { subscriber.putError(.permissionViolation(text)) }
        }
    }

    private func update(_ info: NATSServerInfo) {
        shared.withLock { state in
            state.serverInfo = info
            guard options.usesAdvertisedServers else { return }
            for url in info.connectURLs {
                if let endpoint = _Endpoint(url), !state.servers.contains(endpoint) {
                    state.servers.append(endpoint)
                }
            }
        }
    }

    // MARK: - The connection loop

    private func run() async {
        var failures = 0
        var lastError = NATSError.notConnected
        var everConnected = false
        while !Task.isCancelled {
            let endpoint = shared.withLock { state -> _Endpoint in
                defer { state.nextServer += 1 }
                return state.servers[state.nextServer % state.servers.count]
            }
            do throws(NATSError) {
                let (session, info) = try await _Session.open(
                    endpoint,
                    options: options,
                    group: group,
                    connection: self
                )
                everConnected = true
                failures = 0
                guard activate(session, info: info, endpoint: endpoint) else {
                    session.close()
                    return
                }
                let error = await session.closed()
                deactivate(session)
                if let error { errorPipe.putNext(error) }
                if Task.isCancelled { return }
                stateValue.set(.reconnecting(attempt: 1))
                continue
            } catch {
                lastError = error
                // A TLS failure is typed on `errors` (the attempts go on).
                if case .tlsRequired = error { errorPipe.putNext(error) }
                if case .tls = error { errorPipe.putNext(error) }
            }
            if Task.isCancelled { return }
            failures += 1
            if options.reconnect.isExhausted(afterFailures: failures) {
                close(with: .gaveUp(attempts: failures, lastError: String(describing: lastError)))
                return
            }
            stateValue.set(everConnected ? .reconnecting(attempt: failures + 1) : .connecting)
            try? await Task.sleep(for: options.reconnect.jitteredDelay(afterFailures: failures))
        }
    }

    /// Makes `session` the connection's: subscribes every live
    /// subscription again and sends the waiting publishes, in order.
    private func activate(_ session: _Session, info: NATSServerInfo, endpoint: _Endpoint) -> Bool {
        update(info)
        let activated = shared.withLock { state -> Bool in
            guard !state.closed else { return false }
            var commands: [NATSClientCommand] = state.targets.sorted { $0.key < $1.key }.map {
                .subscribe(subject: $0.value.subject, queueGroup: $0.value.queueGroup, sid: $0.key)
            }
            var kept: [NATSClientCommand] = []
            for command in state.pending {
                if command.payloadSize <= info.maxPayload { kept.append(command) } else { state.droppedPublishes += 1 }
            }
            commands += kept
            state.statistics.messagesOut += kept.count { $0.isPublish }
            state.statistics.bytesOut += kept.reduce(0) { $0 + $1.bodySize }
            state.statistics.connections += 1
            state.pending = []
            state.session = session
            session.write(commands)
            return true
        }
        if activated { stateValue.set(.connected(server: endpoint.description)) }
        return activated
    }

    private func deactivate(_ session: _Session) {
        shared.withLock { state in
            if state.session === session { state.session = nil }
        }
    }

    private func close(with error: NATSError?) {
        let (session, task, subscribers, requests) = shared.withLock { state in
            let wasClosed = state.closed
            state.closed = true
            let subscribers = wasClosed ? [] : state.feeds.values.flatMap { $0.subscribers.values }
            let requests = Array(state.requests.values)
            state.feeds = [:]
            state.targets = [:]
            state.requests = [:]
            state.pending = []
            defer {
                state.session = nil
                state.task = nil
            }
            return (state.session, state.task, subscribers, requests)
        }
        task?.cancel()
        session?.close()
        stateValue.set(.closed(error))
        deliveryQueue.async {
            for subscriber in subscribers { subscriber.putError(error ?? .closed) }
            for request in requests { request.finish(with: .failure(error ?? .closed)) }
        }
    }
}

#endif  // NATS
