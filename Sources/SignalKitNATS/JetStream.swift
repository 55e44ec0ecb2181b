// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if NATS
public import Foundation
public import SignalKit

// JetStream over the client protocol: its API is request/reply on
// `$JS.API.…` subjects with JSON bodies, a stream publish is a request whose
// reply is the publish acknowledgement, and a pull consumer is asked for
// messages with `$JS.API.CONSUMER.MSG.NEXT.<stream>.<consumer>`.

/// The JSON `error` of a JetStream API response.
public struct NATSJetStreamAPIError: Error, Sendable, Equatable, Decodable, CustomStringConvertible {
    /// The HTTP-like status (`404`, `400`, `503`, …).
    public var code: Int
    /// JetStream's own error code (`10059` stream not found, `10014`
    /// consumer not found, `10058` stream name in use with another
    /// configuration, …); 0 when the server gave none.
    public var errorCode: Int
    /// The server's text.
    public var errorDescription: String

    public init(code: Int, errorCode: Int, description: String) {
        self.code = code
        self.errorCode = errorCode
        self.errorDescription = description
    }

    enum CodingKeys: String, CodingKey {
        case code
        case errorCode = "err_code"
        case errorDescription = "description"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        code = try container.decodeIfPresent(Int.self, forKey: .code) ?? 0
        errorCode = try container.decodeIfPresent(Int.self, forKey: .errorCode) ?? 0
        errorDescription = try container.decodeIfPresent(String.self, forKey: .errorDescription) ?? ""
    }

    public var description: String { "\(errorDescription) (code \(code), err_code \(errorCode))" }

    /// `10059`: no stream of that name.
    public static let streamNotFound = 10059
    /// `10014`: no consumer of that name.
    public static let consumerNotFound = 10014
    /// `10058`: a stream of that name exists with another configuration.
    public static let streamNameInUse = 10058
}

/// Where a stream keeps its messages.
public enum NATSStreamStorage: String, Sendable, Equatable {
    case file
    case memory
}

/// A stream's configuration (the fields this client sets; the server
/// gives the others their defaults).
public struct NATSStreamConfig: Sendable, Equatable {
    /// The stream's name (no `.`, `*`, `>` or whitespace).
    public var name: String
    /// The subjects it stores (wildcards allowed).
    public var subjects: [String]
    public var storage: NATSStreamStorage
    /// Copies kept in a cluster: 1, 3 or 5 (at most the cluster's size).
    public var replicas: Int
    /// How long a message is kept; nil keeps it until a limit removes it.
    public var maxAge: Duration?
    /// How long a `Nats-Msg-Id` is remembered to drop duplicates; nil is
    /// the server's default (2 minutes).
    public var duplicateWindow: Duration?
    /// The most messages kept; nil for no limit.
    public var maxMessages: Int?

    public init(
        name: String,
        subjects: [String],
        storage: NATSStreamStorage = .file,
        replicas: Int = 1,
        maxAge: Duration? = nil,
        duplicateWindow: Duration? = nil,
        maxMessages: Int? = nil
    ) {
        self.name = name
        self.subjects = subjects
        self.storage = storage
        self.replicas = replicas
        self.maxAge = maxAge
        self.duplicateWindow = duplicateWindow
        self.maxMessages = maxMessages
    }

    var json: [String: Any] {
        var fields: [String: Any] = [
            "name": name,
            "subjects": subjects,
            "storage": storage.rawValue,
            "num_replicas": replicas,
            "retention": "limits",
            "discard": "old",
            "max_msgs": maxMessages ?? -1,
        ]
        if let maxAge { fields["max_age"] = Int(maxAge._nanoseconds) }
        if let duplicateWindow { fields["duplicate_window"] = Int(duplicateWindow._nanoseconds) }
        return fields
    }
}

/// Where a consumer starts in its stream.
public enum NATSDeliverPolicy: Sendable, Equatable {
    /// From the first message stored.
    case all
    /// From the first message stored after the consumer is made.
    case new
    /// From stream sequence `n` (the first is 1).
    case sequence(UInt64)
    /// From the first message stored at or after `time`.
    case time(Date)

    var fields: [String: Any] {
        switch self {
        case .all: return ["deliver_policy": "all"]
        case .new: return ["deliver_policy": "new"]
        case .sequence(let sequence):
            return ["deliver_policy": "by_start_sequence", "opt_start_seq": Int(max(sequence, 1))]
        case .time(let date):
            return ["deliver_policy": "by_start_time", "opt_start_time": Self.rfc3339(date)]
        }
    }

    /// `date` in RFC 3339, UTC, with nanoseconds truncated, never later
    /// than `date`: a fraction rounded to milliseconds could start after a
    /// message stored in the half millisecond after `date`.
    static func rfc3339(_ date: Date) -> String {
        let interval = date.timeIntervalSince1970
        let seconds = interval.rounded(.down)
        let nanoseconds = min(Int((interval - seconds) * 1e9), 999_999_999)
        // "yyyy-MM-ddTHH:mm:ssZ" (ISO8601DateFormatter's default: UTC).
        let whole = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: seconds))
        let digits = String(nanoseconds)
        return whole.dropLast() + "." + String(repeating: "0", count: 9 - digits.count) + digits + "Z"
    }
}

/// A pull consumer's configuration.
public struct NATSConsumerConfig: Sendable, Equatable {
    /// The durable name; nil makes an ephemeral consumer (removed by the
    /// server after `inactiveThreshold` without a pull).
    public var durableName: String?
    public var deliverPolicy: NATSDeliverPolicy
    /// How long the server waits for an acknowledgement before it delivers
    /// the message again.
    public var ackWait: Duration
    /// The most deliveries of one message; nil for no limit.
    public var maxDeliver: Int?
    /// Only the stream's messages on this subject (wildcards allowed).
    public var filterSubject: String?
    /// The most messages delivered and not yet acknowledged; nil is the
    /// server's default (1,000).
    public var maxAckPending: Int?
    /// For an ephemeral consumer: removed after this long without a pull.
    public var inactiveThreshold: Duration?
    /// Copies kept in a cluster; nil is the stream's.
    public var replicas: Int?

    public init(
        durableName: String?,
        deliverPolicy: NATSDeliverPolicy = .all,
        ackWait: Duration = .seconds(30),
        maxDeliver: Int? = nil,
        filterSubject: String? = nil,
        maxAckPending: Int? = nil,
        inactiveThreshold: Duration? = nil,
        replicas: Int? = nil
    ) {
        self.durableName = durableName
        self.deliverPolicy = deliverPolicy
        self.ackWait = ackWait
        self.maxDeliver = maxDeliver
        self.filterSubject = filterSubject
        self.maxAckPending = maxAckPending
        self.inactiveThreshold = inactiveThreshold
        self.replicas = replicas
    }

    func json(acknowledged: Bool = true) -> [String: Any] {
        var fields = deliverPolicy.fields
        fields["ack_policy"] = acknowledged ? "explicit" : "none"
        fields["ack_wait"] = Int(ackWait._nanoseconds)
        fields["max_deliver"] = maxDeliver ?? -1
        fields["replay_policy"] = "instant"
        if let durableName { fields["durable_name"] = durableName }
        if let filterSubject { fields["filter_subject"] = filterSubject }
        if let maxAckPending { fields["max_ack_pending"] = maxAckPending }
        if let inactiveThreshold { fields["inactive_threshold"] = Int(inactiveThreshold._nanoseconds) }
        if let replicas { fields["num_replicas"] = replicas }
        return fields
    }
}

/// What the server says about a stream: its state and, in a cluster, its
/// leader.
public struct NATSStreamInfo: Sendable, Equatable {
    public var name: String
    public var subjects: [String]
    /// Messages stored now.
    public var messages: UInt64
    public var bytes: UInt64
    public var firstSequence: UInt64
    public var lastSequence: UInt64
    public var consumerCount: Int
    /// The server that leads the stream's replicas (its name), nil
    /// outside a cluster.
    public var leader: String?
    /// The servers that hold the other replicas.
    public var replicaNames: [String]
}

/// What the server says about a consumer.
public struct NATSConsumerInfo: Sendable, Equatable {
    public var stream: String
    public var name: String
    /// Messages of the stream the consumer has not delivered yet.
    public var pending: UInt64
    /// Messages delivered and not yet acknowledged.
    public var ackPending: Int
    /// Messages being delivered again.
    public var redelivered: Int
    /// The stream sequence of the highest message acknowledged with every
    /// one before it.
    public var ackFloorStreamSequence: UInt64
}

/// A stream's publish acknowledgement.
public struct NATSPublishAck: Sendable, Equatable {
    /// The stream that stored the message.
    public var stream: String
    /// Its sequence in the stream.
    public var sequence: UInt64
    /// Whether the stream had it already (same `Nats-Msg-Id` within the
    /// duplicate window): stored once, at `sequence`.
    public var duplicate: Bool
    /// The `Nats-Msg-Id` sent.
    public var messageID: String
    /// How many tries it took (1 without a retry).
    public var attempts: Int
}

/// JetStream on a connection: streams, consumers, acknowledged publishes
/// and pull consumers as cold signals.
///
/// ```swift
/// let js = nats.jetStream()
/// try await js.createOrUpdateStream(NATSStreamConfig(name: "ORDERS", subjects: ["orders.>"]))
/// let ack = try await js.publish(to: "orders.created", payload: Array("42".utf8))
/// let handle = js.consume(stream: "ORDERS", consumer: "billing", buffer: .blocking(beyond: 64))
///     .start(next: { message in bill(message.payload); try? message.ack() })
/// ```
///
/// Its API calls are requests on the connection (`$JS.API.…`, or under a
/// domain's or a prefix's subjects), answered by the server that leads the
/// stream or consumer.
public struct NATSJetStream: Sendable {
    /// The connection it uses.
    public let connection: NATSConnection
    /// The API's subject prefix (`$JS.API`, `$JS.<domain>.API`, or the one
    /// given).
    public let apiPrefix: String
    /// How long an API call waits for its answer.
    public let timeout: Duration
    let publishes: _PendingPublishes

    init(connection: NATSConnection, apiPrefix: String, timeout: Duration, pendingPublishes: SignalBuffer<NATSError>) {
        self.connection = connection
        self.apiPrefix = apiPrefix
        self.timeout = timeout
        publishes = _PendingPublishes(pendingPublishes)
    }

    /// Publishes waiting for their acknowledgement now (not those waiting
    /// for room under a `blocking` policy).
    public var pendingPublishes: Int { publishes.counts.pending }

    /// Publishes given up by a dropping policy (see
    /// ``NATSConnection/jetStream(domain:prefix:timeout:pendingPublishes:)``).
    public var droppedPublishes: Int { publishes.counts.dropped }

    // MARK: - Streams

    /// Creates the stream, or updates it when one of that name exists with
    /// another configuration (a change the server refuses, such as its
    /// storage, fails with the server's error).
    /// - Throws: ``NATSError/jetStream(_:)`` with the server's error,
    ///   ``NATSError/timeout``, ``NATSError/noResponders`` (JetStream is not
    ///   enabled).
    @discardableResult
    public func createOrUpdateStream(_ config: NATSStreamConfig) async throws(NATSError) -> NATSStreamInfo {
        try _checkName(config.name)
        let body = try _json(config.json)
        do {
            return try Self.streamInfo(try await call("STREAM.CREATE.\(config.name)", body))
        } catch .jetStream(let error) where error.errorCode == NATSJetStreamAPIError.streamNameInUse {
            return try Self.streamInfo(try await call("STREAM.UPDATE.\(config.name)", body))
        }
    }

    /// The stream's configuration and state.
    public func streamInfo(_ name: String) async throws(NATSError) -> NATSStreamInfo {
        try _checkName(name)
        return try Self.streamInfo(try await call("STREAM.INFO.\(name)", []))
    }

    /// Deletes the stream and its consumers.
    public func deleteStream(_ name: String) async throws(NATSError) {
        try _checkName(name)
        _ = try await call("STREAM.DELETE.\(name)", [])
    }

    // MARK: - Consumers

    /// Creates the pull consumer, or updates a durable one with this name
    /// (the server refuses some changes, such as its deliver policy).
    @discardableResult
    public func createOrUpdateConsumer(stream: String, _ config: NATSConsumerConfig) async throws(NATSError)
        -> NATSConsumerInfo
    {
        try await createConsumer(stream: stream, config.json())
    }

    func createConsumer(stream: String, _ config: [String: Any]) async throws(NATSError) -> NATSConsumerInfo {
        try _checkName(stream)
        let body = try _json(["stream_name": stream, "config": config])
        if let durable = config["durable_name"] as? String {
            try _checkName(durable)
            return try Self.consumerInfo(try await call("CONSUMER.DURABLE.CREATE.\(stream).\(durable)", body))
        }
        return try Self.consumerInfo(try await call("CONSUMER.CREATE.\(stream)", body))
    }

    /// The consumer's state.
    public func consumerInfo(stream: String, consumer: String) async throws(NATSError) -> NATSConsumerInfo {
        try _checkName(stream)
        try _checkName(consumer)
        return try Self.consumerInfo(try await call("CONSUMER.INFO.\(stream).\(consumer)", []))
    }

    /// Deletes the consumer.
    public func deleteConsumer(stream: String, consumer: String) async throws(NATSError) {
        try _checkName(stream)
        try _checkName(consumer)
        _ = try await call("CONSUMER.DELETE.\(stream).\(consumer)", [])
    }

    // MARK: - Publishing

    /// Publishes `payload` to `subject` and waits until a stream has stored
    /// it: the stream's acknowledgement.
    ///
    /// The message carries `Nats-Msg-Id` (`messageID`, or a random one), so
    /// the stream stores it once within its duplicate window however often
    /// it is sent. An attempt that gets no acknowledgement within
    /// `attemptTimeout` (no stream leader during an election, a connection
    /// being made again) or finds no responder is tried again with the same
    /// ID, after a backoff from 25 ms doubling to 1 s, until `deadline`.
    /// The sender's trace context goes in the headers, as with
    /// ``NATSConnection/publish(_:payload:headers:replyTo:)``.
    ///
    /// - Throws: when the jet stream's publishes waiting for their
    ///   acknowledgement are at the limit of its `pendingPublishes` policy,
    ///   what the policy says: its error (`failing`), or
    ///   ``NATSError/tooManyPendingPublishes(limit:)`` (`droppingNewest`),
    ///   at once; ``NATSError/publishDropped(messageID:)`` when a
    ///   `droppingOldest` policy gave this publish up for a newer one;
    ///   ``NATSError/publishNotAcknowledged(messageID:attempts:)`` at the
    ///   deadline, or at once when its task is cancelled (with 0 attempts
    ///   while it waits for room under `blocking`); ``NATSError/jetStream(_:)`` with the stream's refusal (a
    ///   wrong expected sequence, a full stream); a publish error.
    @discardableResult
    public func publish(
        to subject: String,
        payload: [UInt8],
        headers: NATSHeaders = NATSHeaders(),
        messageID: String? = nil,
        attemptTimeout: Duration = .seconds(1),
        deadline: Duration = .seconds(30)
    ) async throws(NATSError) -> NATSPublishAck {
        guard _isValidSubject(subject, wildcards: false) else { throw .invalidSubject(subject) }
        let id = messageID ?? Self.randomID()
        let place = try await publishes.enter(id)
        defer { publishes.leave(place) }
        var headers = headers
        headers["Nats-Msg-Id"] = id
        let clock = ContinuousClock()
        let end = clock.now + deadline
        var attempts = 0
        let backoff = SignalBackoff(initialDelay: .milliseconds(25), maximumDelay: .seconds(1))
        while true {
            attempts += 1
            if publishes.wasDropped(place) { throw .publishDropped(messageID: id) }
            do {
                let left = end - clock.now
                let reply = try await connection.requestReply(
                    subject, payload: payload, headers: headers,
                    timeout: max(min(attemptTimeout, left), .milliseconds(1)))
                let ack = try Self.decode(_PublishAckJSON.self, reply)
                // Acknowledged, even if given up meanwhile: it is stored.
                return NATSPublishAck(
                    stream: ack.stream, sequence: ack.seq, duplicate: ack.duplicate ?? false, messageID: id,
                    attempts: attempts)
            } catch {
                switch error {
                case .timeout, .noResponders, .notConnected:
                    break
                case .jetStream(let apiError) where apiError.code == 503:
                    break
                case .cancelled:
                    throw .publishNotAcknowledged(messageID: id, attempts: attempts)
                default:
                    throw error
                }
            }
            let wait = backoff.jitteredDelay(afterFailures: attempts)
            if publishes.wasDropped(place) { throw .publishDropped(messageID: id) }
            if Task.isCancelled || clock.now + wait >= end {
                throw .publishNotAcknowledged(messageID: id, attempts: attempts)
            }
            try? await Task.sleep(for: wait)
        }
    }

    /// ``publish(to:payload:headers:messageID:attemptTimeout:deadline:)``
    /// of `value` as JSON.
    @discardableResult
    public func publish<Value: Encodable>(
        to subject: String,
        json value: Value,
        headers: NATSHeaders = NATSHeaders(),
        messageID: String? = nil,
        encoder: JSONEncoder = JSONEncoder()
    ) async throws(NATSError) -> NATSPublishAck {
        let data: Data
        do {
            data = try encoder.encode(value)
        } catch {
            throw .coding(String(describing: error))
        }
        return try await publish(to: subject, payload: Array(data), headers: headers, messageID: messageID)
    }

    static func randomID() -> String {
        String(UInt64.random(in: 0...UInt64.max), radix: 36) + String(UInt64.random(in: 0...UInt64.max), radix: 36)
    }

    // MARK: - The API

    /// A request to `<prefix>.<operation>`; the answer's payload, or its
    /// `error` thrown.
    func call(_ operation: String, _ body: [UInt8]) async throws(NATSError) -> [UInt8] {
        let reply = try await connection.requestReply(apiPrefix + "." + operation, payload: body, timeout: timeout)
        try Self.checkError(reply.payload)
        return reply.payload
    }

    static func checkError(_ payload: [UInt8]) throws(NATSError) {
        guard payload.count > 8, let envelope = try? JSONDecoder().decode(_ErrorEnvelope.self, from: Data(payload)),
            let error = envelope.error
        else { return }
        throw .jetStream(error)
    }

    static func decode<Value: Decodable>(_ type: Value.Type, _ message: NATSMessage) throws(NATSError) -> Value {
        if message.headers.status == 503 { throw .noResponders }
        try checkError(message.payload)
        return try decode(type, message.payload)
    }

    static func decode<Value: Decodable>(_ type: Value.Type, _ payload: [UInt8]) throws(NATSError) -> Value {
        do {
            return try JSONDecoder().decode(type, from: Data(payload))
        } catch {
            throw .coding(String(describing: error))
        }
    }

    static func streamInfo(_ payload: [UInt8]) throws(NATSError) -> NATSStreamInfo {
        let info = try decode(_StreamInfoJSON.self, payload)
        return NATSStreamInfo(
            name: info.config.name,
            subjects: info.config.subjects ?? [],
            messages: info.state.messages,
            bytes: info.state.bytes,
            firstSequence: info.state.first_seq,
            lastSequence: info.state.last_seq,
            consumerCount: info.state.consumer_count ?? 0,
            leader: info.cluster?.leader,
            replicaNames: info.cluster?.replicas?.map(\.name) ?? []
        )
    }

    static func consumerInfo(_ payload: [UInt8]) throws(NATSError) -> NATSConsumerInfo {
        let info = try decode(_ConsumerInfoJSON.self, payload)
        return NATSConsumerInfo(
            stream: info.stream_name,
            name: info.name,
            pending: info.num_pending ?? 0,
            ackPending: info.num_ack_pending ?? 0,
            redelivered: info.num_redelivered ?? 0,
            ackFloorStreamSequence: info.ack_floor?.stream_seq ?? 0
        )
    }
}

extension NATSConnection {
    /// JetStream on this connection.
    /// - Parameters:
    ///   - domain: the JetStream domain (`$JS.<domain>.API`), for a leaf
    ///     node's or a hub's.
    ///   - prefix: the API's subject prefix, for an account that imports
    ///     it under another name (wins over `domain`).
    ///   - timeout: how long an API call waits.
    ///   - pendingPublishes: how many stream publishes may wait for their
    ///     acknowledgement at once (an election can hold them for seconds),
    ///     and what one more does:
    ///     * `failing(beyond:with:)` (the default, 1,024): it throws the
    ///       policy's error at once;
    ///     * `blocking(beyond:)`: it waits (suspended, not blocking a thread)
    ///       until one of them is acknowledged or fails, first come first
    ///       served;
    ///     * `droppingNewest(beyond:)`: it throws
    ///       ``NATSError/tooManyPendingPublishes(limit:)`` at once, counted
    ///       in ``NATSJetStream/droppedPublishes``;
    ///     * `droppingOldest(beyond:)` and `latest`: the oldest waiting
    ///       publish is given up, counted, and it throws
    ///       ``NATSError/publishDropped(messageID:)`` when its attempt under
    ///       way ends (unless that attempt is acknowledged: the message is
    ///       stored); the new one takes its place at once;
    ///     * `unbounded`: no limit.
    public func jetStream(
        domain: String? = nil,
        prefix: String? = nil,
        timeout: Duration = .seconds(5),
        pendingPublishes: SignalBuffer<NATSError> = .failing(
            beyond: 1_024, with: .tooManyPendingPublishes(limit: 1_024))
    ) -> NATSJetStream {
        let apiPrefix = prefix ?? domain.map { "$JS.\($0).API" } ?? "$JS.API"
        return NATSJetStream(
            connection: self, apiPrefix: apiPrefix, timeout: timeout, pendingPublishes: pendingPublishes)
    }
}

/// A jet stream's publishes waiting for their acknowledgement, bounded by
/// its `pendingPublishes` policy: the places taken, the publishes waiting
/// for one (`blocking`), those given up (`droppingOldest`).
final class _PendingPublishes: Sendable {
    /// A publish's place, from `enter`.
    struct Place: Hashable, Sendable {
        let number: UInt64
    }

    private struct State {
        var nextNumber: UInt64 = 0
        /// The places taken (numbers grow: the oldest is the smallest).
        var taken: Set<UInt64> = []
        var dropped: Set<UInt64> = []
        var droppedCount = 0
        /// Publishes waiting for a place (`blocking`), first come first
        /// served.
        var waiting: [(number: UInt64, continuation: CheckedContinuation<Bool, Never>)] = []
    }

    private let policy: SignalBuffer<NATSError>
    private let limit: Int
    private let state = _LockedState(State())

    init(_ policy: SignalBuffer<NATSError>) {
        self.policy = policy
        limit = max(1, policy.limit ?? .max)
    }

    var counts: (pending: Int, dropped: Int) {
        state.withLock { ($0.taken.count, $0.droppedCount) }
    }

    /// Takes a place for publish `id`, as the policy says when all are
    /// taken.
    func enter(_ id: String) async throws(NATSError) -> Place {
        enum Entry {
            case entered(UInt64)
            case refused(NATSError)
            case wait(UInt64)
        }
        let entry = state.withLock { state -> Entry in
            state.nextNumber += 1
            let number = state.nextNumber
            if state.taken.count < limit {
                state.taken.insert(number)
                return .entered(number)
            }
            switch policy.overflow {
            case .never:
                state.taken.insert(number)
                return .entered(number)
            case .fail:
                return .refused(policy.errorOnOverflow ?? .tooManyPendingPublishes(limit: limit))
            case .dropNewest:
                state.droppedCount += 1
                return .refused(.tooManyPendingPublishes(limit: limit))
            case .dropOldest:
                // Only here is the set scanned: at most `limit` places.
                let oldest = state.taken.min()!  // invariant: full, so not empty
                state.taken.remove(oldest)
                state.dropped.insert(oldest)
                state.droppedCount += 1
                state.taken.insert(number)
                return .entered(number)
            case .block:
                return .wait(number)
            }
        }
        switch entry {
        case .entered(let number):
            return Place(number: number)
        case .refused(let error):
            throw error
        case .wait(let number):
            let admitted = await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                    let resumeNow = state.withLock { state -> Bool? in
                        // A place freed meanwhile, or cancelled before waiting.
                        if Task.isCancelled { return false }
                        if state.taken.count < limit {
                            state.taken.insert(number)
                            return true
                        }
                        state.waiting.append((number, continuation))
                        return nil
                    }
                    if let resumeNow { continuation.resume(returning: resumeNow) }
                }
            } onCancel: {
                let cancelled = state.withLock { state -> CheckedContinuation<Bool, Never>? in
                    guard let index = state.waiting.firstIndex(where: { $0.number == number }) else { return nil }
                    return state.waiting.remove(at: index).continuation
                }
                cancelled?.resume(returning: false)
            }
            guard admitted else { throw .publishNotAcknowledged(messageID: id, attempts: 0) }
            return Place(number: number)
        }
    }

    /// Whether a `droppingOldest` policy gave `place` up.
    func wasDropped(_ place: Place) -> Bool {
        state.withLock { $0.dropped.contains(place.number) }
    }

    /// Gives `place` back; the first publish waiting for one takes it.
    func leave(_ place: Place) {
        let next = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            // A dropped place was given up already.
            if state.dropped.remove(place.number) == nil { state.taken.remove(place.number) }
            guard state.taken.count < limit, !state.waiting.isEmpty else { return nil }
            let first = state.waiting.removeFirst()
            state.taken.insert(first.number)
            return first.continuation
        }
        next?.resume(returning: true)
    }
}

func _json(_ object: [String: Any]) throws(NATSError) -> [UInt8] {
    do {
        return Array(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
    } catch {
        throw .coding(String(describing: error))
    }
}

/// A stream's or consumer's name: a subject token, no wildcard.
func _checkName(_ name: String) throws(NATSError) {
    if name.isEmpty || name.contains(where: { $0 == "." || $0 == "*" || $0 == ">" || $0.isWhitespace }) {
        throw .invalidSubject(name)
    }
}

extension Duration {
    var _nanoseconds: Int64 {
        components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000
    }
}

// The JSON of the API's answers (the fields read).

struct _ErrorEnvelope: Decodable {
    let error: NATSJetStreamAPIError?
}

struct _PublishAckJSON: Decodable {
    let stream: String
    let seq: UInt64
    let duplicate: Bool?
}

// swift-format-ignore: AlwaysUseLowerCamelCase
struct _StreamInfoJSON: Decodable {
    struct Config: Decodable {
        let name: String
        let subjects: [String]?
    }
    struct State: Decodable {
        let messages: UInt64
        let bytes: UInt64
        let first_seq: UInt64
        let last_seq: UInt64
        let consumer_count: Int?
    }
    struct Cluster: Decodable {
        struct Replica: Decodable { let name: String }
        let leader: String?
        let replicas: [Replica]?
    }
    let config: Config
    let state: State
    let cluster: Cluster?
}

// swift-format-ignore: AlwaysUseLowerCamelCase
struct _ConsumerInfoJSON: Decodable {
    struct Floor: Decodable { let stream_seq: UInt64? }
    let stream_name: String
    let name: String
    let num_pending: UInt64?
    let num_ack_pending: Int?
    let num_redelivered: Int?
    let ack_floor: Floor?
}
#endif  // NATS
