// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if NATS
public import Foundation
public import SignalKit
import Synchronization

/// How a consumer's messages are acknowledged.
public enum NATSAcknowledgement: Sendable, Equatable {
    /// By the subscriber: ``NATSJetStreamMessage/ack()``,
    /// ``NATSJetStreamMessage/nak(delay:)``,
    /// ``NATSJetStreamMessage/inProgress()`` or
    /// ``NATSJetStreamMessage/term()``.
    case explicit
    /// `ack()` after the subscriber's `next` returns (unless it
    /// acknowledged the message itself).
    case automatic
}

/// A message a consumer delivers: the stored message and where it is in
/// its stream and consumer.
public struct NATSJetStreamMessage: Sendable {
    /// The subject it was published to.
    public let subject: String
    public let payload: [UInt8]
    public let headers: NATSHeaders
    public let stream: String
    public let consumer: String
    /// Its sequence in the stream (from 1).
    public let streamSequence: UInt64
    /// Its delivery's sequence in the consumer.
    public let consumerSequence: UInt64
    /// 1 for the first delivery, 2 for the first redelivery, …
    public let deliveryCount: Int
    /// Messages the consumer had left to deliver after this one.
    public let pending: UInt64
    /// When the stream stored it.
    public let timestamp: Date
    /// The subject acknowledgements go to (`$JS.ACK.…`).
    public let replySubject: String
    let connection: NATSConnection
    let acknowledged: _AckFlag

    /// The payload as UTF-8 text (invalid sequences repaired).
    public var text: String { String(decoding: payload, as: UTF8.self) }

    /// Processed: the server will not deliver it again.
    public func ack() throws(NATSError) { try send("+ACK", final: true) }

    /// Acknowledged and waits until the server confirms it took the
    /// acknowledgement: once this returns, the message is not delivered
    /// again.
    public func ackConfirmed(timeout: Duration = .seconds(5)) async throws(NATSError) {
        acknowledged.set()
        _ = try await connection.requestReply(replySubject, payload: Array("+ACK".utf8), timeout: timeout)
    }

    /// Not processed: deliver it again, after `delay` (at once when nil).
    public func nak(delay: Duration? = nil) throws(NATSError) {
        if let delay {
            try send("-NAK {\"delay\":\(delay._nanoseconds)}", final: true)
        } else {
            try send("-NAK", final: true)
        }
    }

    /// Still being processed: the ack wait starts again.
    public func inProgress() throws(NATSError) { try send("+WPI", final: false) }

    /// Never deliver it again, processed or not.
    public func term() throws(NATSError) { try send("+TERM", final: true) }

    private func send(_ body: String, final: Bool) throws(NATSError) {
        if final { acknowledged.set() }
        try connection.publish(replySubject, payload: Array(body.utf8))
    }

    /// Parses a `$JS.ACK` reply subject: 9 tokens
    /// (`$JS.ACK.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<tm>.<pending>`)
    /// or, with a domain and an account hash, 11 or more. `observer` is
    /// told when the message is first answered (`ack`, `nak`, `term`).
    init?(_ message: NATSMessage, connection: NATSConnection, answeredTo observer: (any _AnswerObserver)? = nil) {
        guard let reply = message.replyTo else { return nil }
        let tokens = reply.split(separator: ".", omittingEmptySubsequences: false)
        guard tokens.count >= 9, tokens[0] == "$JS", tokens[1] == "ACK" else { return nil }
        let base = tokens.count == 9 ? 2 : 4
        guard tokens.count >= base + 7,
            let delivered = Int(tokens[base + 2]),
            let streamSequence = UInt64(tokens[base + 3]),
            let consumerSequence = UInt64(tokens[base + 4]),
            let nanoseconds = Int64(tokens[base + 5]),
            let pending = UInt64(tokens[base + 6])
        else { return nil }
        subject = message.subject
        payload = message.payload
        headers = message.headers
        stream = String(tokens[base])
        consumer = String(tokens[base + 1])
        self.streamSequence = streamSequence
        self.consumerSequence = consumerSequence
        deliveryCount = delivered
        self.pending = pending
        timestamp = Date(timeIntervalSince1970: Double(nanoseconds) / 1e9)
        replySubject = reply
        self.connection = connection
        acknowledged = _AckFlag(observer: observer, streamSequence: streamSequence)
    }
}

/// Told when a delivered message is first answered: its subscription, for
/// ``NATSStatistics/pendingAcknowledgements``.
protocol _AnswerObserver: AnyObject, Sendable {
    func answered(_ streamSequence: UInt64)
}

/// Whether a message was answered (for `.automatic`, and its
/// subscription's ``NATSStatistics/pendingAcknowledgements``).
final class _AckFlag: Sendable {
    private let value = Atomic(false)
    /// Told once, by the first `set()`; weak: a message may outlive its
    /// subscription.
    private weak let observer: (any _AnswerObserver)?
    private let streamSequence: UInt64

    init(observer: (any _AnswerObserver)? = nil, streamSequence: UInt64 = 0) {
        self.observer = observer
        self.streamSequence = streamSequence
    }

    func set() {
        // Relaxed: the flag orders nothing; the observer takes its own lock.
        if !value.exchange(true, ordering: .relaxed) { observer?.answered(streamSequence) }
    }

    var isSet: Bool { value.load(ordering: .relaxed) }
}

extension NATSJetStream {
    /// The messages of a pull consumer, as a cold signal: each subscription
    /// pulls on its own.
    ///
    /// `consumer` names a durable consumer: made with `from` (and
    /// `filterSubject`) when the stream has none of that name, else used as
    /// it is (it resumes where its acknowledgements left it; `from` is not
    /// applied). With nil, an ephemeral consumer starting at `from` is made
    /// for the subscription, and deleted when the subscription ends.
    ///
    /// **Flow control.** A pull asks for no more messages than the
    /// subscriber can still take: `buffer`'s limit minus the messages
    /// received and not yet delivered and those asked for and not yet
    /// received (256 for ``SignalBuffer/unbounded``). So at most that many
    /// messages wait between the server and `next`; the buffer's policy
    /// never has to drop. A message beyond it (a pull given up for lost and
    /// answered late) is handed back with `-NAK`. Each pull waits up to
    /// `pullExpiry` on the server; more is pulled as the subscriber takes
    /// messages.
    ///
    /// **Threading:** delivered one at a time, in order, on a queue of the
    /// subscription's own (a slow subscriber holds up no other signal of
    /// the connection), each in its publisher's trace context.
    ///
    /// **Acknowledgement:** see ``NATSAcknowledgement``. A message not
    /// acknowledged within the consumer's ack wait is delivered again, its
    /// ``NATSJetStreamMessage/deliveryCount`` one higher.
    ///
    /// **Termination:** never completes; fails with the API's error when
    /// the consumer can be neither found nor made, and with
    /// ``NATSError/closed`` when the connection closes. A reconnection is
    /// no termination: pulling resumes on the new connection.
    ///
    /// **Inspection:** named `nats.consume(stream, consumer: name)`
    /// (`ephemeral` without a name), a stage of that name in the inspector.
    ///
    /// **Disposal:** stops pulling and unsubscribes; when `dispose()`
    /// returns, the subscriber receives nothing more. Messages received and
    /// not delivered are handed back with `-NAK`; messages still on their
    /// way (a pull cannot be called back) come again after the consumer's
    /// ack wait.
    public func consume(
        stream: String,
        consumer: String?,
        from start: NATSDeliverPolicy = .all,
        filterSubject: String? = nil,
        buffer: SignalBuffer<NATSError> = .unbounded,
        acknowledgement: NATSAcknowledgement = .explicit,
        pullExpiry: Duration = .seconds(5)
    ) -> Signal<NATSJetStreamMessage, NATSError> {
        let jetStream = self
        return Signal { subscriber in
            let puller = _Puller(
                jetStream: jetStream,
                stream: stream,
                limit: buffer.limit ?? 256,
                acknowledgement: acknowledgement,
                ordered: nil,
                ephemeral: consumer == nil,
                expiry: pullExpiry,
                subscriber: subscriber
            )
            puller.start { () async throws(NATSError) -> String in
                if let consumer {
                    do throws(NATSError) {
                        return try await jetStream.consumerInfo(stream: stream, consumer: consumer).name
                    } catch {
                        guard case .jetStream(let apiError) = error,
                            apiError.errorCode == NATSJetStreamAPIError.consumerNotFound
                        else { throw error }
                        let config = NATSConsumerConfig(
                            durableName: consumer, deliverPolicy: start, filterSubject: filterSubject)
                        return try await jetStream.createOrUpdateConsumer(stream: stream, config).name
                    }
                }
                let config = NATSConsumerConfig(
                    durableName: nil, deliverPolicy: start, filterSubject: filterSubject,
                    inactiveThreshold: .seconds(30))
                return try await jetStream.createOrUpdateConsumer(stream: stream, config).name
            }
            return puller
        } |> named("nats.consume(\(stream), consumer: \(consumer ?? "ephemeral"))")
    }

    /// A stream's history, then its live tail: every message stored on
    /// `subject` (the whole stream when nil) from the first, then each one
    /// stored after, in stream order, with no gap and no duplicate at the
    /// seam between the two, as one cold signal.
    ///
    /// It is the cross-machine form of `ReplaySubject`: any process that
    /// subscribes sees what was published before it came, then what comes
    /// next, and the history survives the publishers (it is the stream's).
    ///
    /// It reads through an ephemeral consumer without acknowledgements (an
    /// ordered consumer): each delivery's consumer sequence must follow the
    /// one before; on a gap, a lost consumer or a lost pull, a new consumer
    /// is made from the stream sequence after the last one delivered, and
    /// a message at or before it is never delivered twice. A consumer that
    /// cannot be made for now (no answer in time, no responders, not
    /// connected, the server's 503: a cluster electing a leader) is asked
    /// for again, with a backoff from 50 ms to 1 s, as long as the
    /// subscription lives; a stream that does not exist fails it. Flow control,
    /// threading, termination and disposal are those of
    /// ``consume(stream:consumer:from:filterSubject:buffer:acknowledgement:pullExpiry:)``.
    public func replayThenFollow(
        stream: String,
        subject: String? = nil,
        from start: NATSDeliverPolicy = .all,
        buffer: SignalBuffer<NATSError> = .unbounded,
        pullExpiry: Duration = .seconds(5)
    ) -> Signal<NATSJetStreamMessage, NATSError> {
        let jetStream = self
        return Signal { subscriber in
            let puller = _Puller(
                jetStream: jetStream,
                stream: stream,
                limit: buffer.limit ?? 256,
                acknowledgement: .explicit,
                ordered: _OrderedStart(start: start, filterSubject: subject),
                ephemeral: true,
                expiry: pullExpiry,
                subscriber: subscriber
            )
            puller.start { [weak puller] () async throws(NATSError) -> String in
                try await puller?.makeOrderedConsumerRetrying(while: _Puller.isTransient) ?? ""
            }
            return puller
        } |> named("nats.replayThenFollow(\(stream)\(subject.map { ", subject: \($0)" } ?? ""))")
    }
}

struct _OrderedStart: Sendable {
    let start: NATSDeliverPolicy
    let filterSubject: String?
}

/// One subscription's pull loop: asks for what the subscriber can take,
/// queues what arrives, delivers it in order on its own queue.
final class _Puller: Disposable, Sendable, _AnswerObserver {
    struct State {
        var disposed = false
        var consumer: String?
        /// Pulls sent and not finished, oldest first: reply token, messages
        /// still owed. A message does not say which pull it answers (its
        /// subject is the one it was published to); the server answers
        /// pulls in order, so it counts against the oldest. A pull's status
        /// (on its reply token) ends it.
        var pulls: [(token: String, owed: Int)] = []
        var nextPull = 0
        /// Received and not yet delivered (the one being delivered
        /// included).
        var queued: [NATSJetStreamMessage] = []
        var delivering = false
        var handles: [any Disposable] = []
        var task: Task<Void, Never>?
        var sawDisconnect = false
        /// Ordered: the last stream sequence delivered, the consumer
        /// sequence expected next; whether a new consumer is being made.
        var lastStreamSequence: UInt64 = 0
        var expectedConsumerSequence: UInt64 = 1
        var resetting = false
        /// Not ordered: the stream sequences delivered to the subscriber
        /// and not answered yet (what it adds to the connection's
        /// ``NATSStatistics/pendingAcknowledgements``).
        var unanswered: Set<UInt64> = []
    }

    let jetStream: NATSJetStream
    let stream: String
    let limit: Int
    let acknowledgement: NATSAcknowledgement
    let ordered: _OrderedStart?
    /// Whether the subscription made its consumer (deleted when it ends).
    let ephemeral: Bool
    let expiry: Duration
    let subscriber: Subscriber<NATSJetStreamMessage, NATSError>
    let inbox: String
    let queue = Queue(name: "SignalKitNATS.consume")
    private let state = _LockedState(State())

    init(
        jetStream: NATSJetStream,
        stream: String,
        limit: Int,
        acknowledgement: NATSAcknowledgement,
        ordered: _OrderedStart?,
        ephemeral: Bool,
        expiry: Duration,
        subscriber: Subscriber<NATSJetStreamMessage, NATSError>
    ) {
        self.jetStream = jetStream
        self.stream = stream
        self.limit = max(1, limit)
        self.acknowledgement = acknowledgement
        self.ordered = ordered
        self.ephemeral = ephemeral
        self.expiry = expiry
        self.subscriber = subscriber
        inbox = jetStream.connection.inboxPrefix + ".js" + NATSJetStream.randomID()
    }

    var connection: NATSConnection { jetStream.connection }

    /// Finds or makes the consumer (`resolve`), subscribes the pull inbox,
    /// and pulls.
    func start(_ resolve: @escaping @Sendable () async throws(NATSError) -> String) {
        let task = Task { [self] in
            let name: String
            do throws(NATSError) {
                name = try await resolve()
            } catch {
                fail(error)
                return
            }
            let feed = connection.messages(inbox + ".*").start(
                next: { [weak self] message in self?.received(message) },
                error: { [weak self] error in self?.fail(error) }
            )
            let states = connection.state.start(next: { [weak self] value in self?.connectionChanged(value) })
            let keep = state.withLock { state -> Bool in
                guard !state.disposed else { return false }
                state.consumer = name
                state.handles = [feed, states]
                return true
            }
            guard keep else {
                feed.dispose()
                states.dispose()
                return
            }
            pull()
        }
        let disposed = state.withLock { state -> Bool in
            state.task = task
            return state.disposed
        }
        if disposed { task.cancel() }
    }

    /// Makes a new ephemeral consumer without acknowledgements from the
    /// stream sequence after the last one delivered.
    func makeOrderedConsumer() async throws(NATSError) -> String {
        guard let ordered else { return "" }
        let last = state.withLock { $0.lastStreamSequence }
        var config = NATSConsumerConfig(
            durableName: nil,
            deliverPolicy: last == 0 ? ordered.start : .sequence(last + 1),
            ackWait: .seconds(3_600),
            maxDeliver: 1,
            filterSubject: ordered.filterSubject,
            inactiveThreshold: .seconds(30),
            replicas: 1
        ).json(acknowledged: false)
        config["mem_storage"] = true
        return try await jetStream.createConsumer(stream: stream, config).name
    }

    /// `makeOrderedConsumer`, made again after a failure `retrying` accepts
    /// (with a jittered backoff from 50 ms to 1 s), until it is made, another
    /// error (thrown), or disposal, before a wait or after it (the last
    /// error thrown; no consumer is asked for once disposed).
    func makeOrderedConsumerRetrying(while retrying: (NATSError) -> Bool) async throws(NATSError) -> String {
        let backoff = SignalBackoff(initialDelay: .milliseconds(50), maximumDelay: .seconds(1))
        var failures = 0
        while true {
            do throws(NATSError) {
                return try await makeOrderedConsumer()
            } catch {
                guard retrying(error), !state.withLock({ $0.disposed }) else { throw error }
                failures += 1
                try? await Task.sleep(for: backoff.jitteredDelay(afterFailures: failures))
                if state.withLock({ $0.disposed }) { throw error }
            }
        }
    }

    /// What a JetStream API call meets while a cluster elects a leader or
    /// the connection is down, and is worth trying again: no answer in
    /// time, no responders, not connected, or the server's 503.
    static func isTransient(_ error: NATSError) -> Bool {
        switch error {
        case .timeout, .noResponders, .notConnected: true
        case .jetStream(let apiError): apiError.code == 503
        default: false
        }
    }

    /// Sends a pull for what the subscriber can still take, when that is
    /// at least half the limit (or everything is taken back).
    func pull() {
        let request = state.withLock { state -> (subject: String, token: String, batch: Int)? in
            guard !state.disposed, !state.resetting, let consumer = state.consumer else { return nil }
            let owed = state.pulls.reduce(0) { $0 + $1.owed }
            let room = limit - state.queued.count - owed
            guard room > 0, room >= (limit + 1) / 2 || (owed == 0 && state.queued.isEmpty) else { return nil }
            state.nextPull += 1
            let token = inbox + "." + String(state.nextPull)
            state.pulls.append((token, room))
            return ("\(jetStream.apiPrefix).CONSUMER.MSG.NEXT.\(stream).\(consumer)", token, room)
        }
        guard let request else { return }
        let body = "{\"batch\":\(request.batch),\"expires\":\(expiry._nanoseconds)}"
        do {
            try connection.publish(request.subject, payload: Array(body.utf8), replyTo: request.token)
        } catch {
            state.withLock { $0.pulls.removeAll { $0.token == request.token } }
            if error == .closed { fail(error) }
            return
        }
        // A pull the server never answers (lost with a connection, a
        // leader that died) is given up after its expiry and a margin.
        let seconds = Double(expiry._nanoseconds) / 1e9 + 1
        queue.after(seconds) { [weak self] in self?.pullLost(request.token) }
    }

    private func pullLost(_ token: String) {
        let lost = state.withLock { state -> Bool in
            guard !state.disposed, state.pulls.contains(where: { $0.token == token }) else { return false }
            state.pulls.removeAll { $0.token == token }
            return true
        }
        guard lost else { return }
        if ordered != nil {
            reset()
        } else {
            pull()
        }
    }

    /// The connection is back after a loss: the pulls sent before are gone.
    /// An ordered read makes a new consumer at once: its old one lives in
    /// the server's memory, gone with a restarted server, and a pull to a
    /// consumer that is gone is answered by nothing but its expiry.
    private func connectionChanged(_ value: NATSConnectionState) {
        switch value {
        case .connected:
            let resume = state.withLock { state -> Bool in
                guard state.sawDisconnect, !state.disposed else { return false }
                state.sawDisconnect = false
                state.pulls = []
                return true
            }
            guard resume else { return }
            if ordered != nil {
                reset()
            } else {
                pull()
            }
        case .reconnecting, .connecting:
            state.withLock { $0.sawDisconnect = true }
        case .closed(let error):
            fail(error ?? .closed)
        }
    }

    /// A message on the pull inbox (on the connection's delivery queue).
    private func received(_ message: NATSMessage) {
        if let status = message.headers.status {
            pullEnded(message.subject, status: status, description: message.headers.statusDescription ?? "")
            return
        }
        // An ordered read takes no acknowledgements: nothing to count.
        guard let delivered = NATSJetStreamMessage(message, connection: connection, answeredTo: ordered == nil ? self : nil)
        else { return }
        enum Outcome { case queued, handBack, skip, gap }
        let outcome = state.withLock { state -> Outcome in
            if !state.pulls.isEmpty {
                state.pulls[0].owed -= 1
                if state.pulls[0].owed <= 0 { state.pulls.removeFirst() }
            }
            guard !state.disposed else { return .skip }
            if ordered != nil {
                guard !state.resetting, delivered.consumer == state.consumer else { return .skip }
                if delivered.consumerSequence != state.expectedConsumerSequence { return .gap }
                state.expectedConsumerSequence += 1
                if delivered.streamSequence <= state.lastStreamSequence { return .skip }
                state.lastStreamSequence = delivered.streamSequence
            }
            if state.queued.count >= limit { return .handBack }
            state.queued.append(delivered)
            return .queued
        }
        switch outcome {
        case .queued:
            drain()
        case .handBack:
            try? delivered.nak()
            pull()
        case .skip:
            break
        case .gap:
            reset()
        }
    }

    /// A pull's status: 404/408 (nothing more, expired), 409 (the server
    /// ended it), 503 (no responder), 100 (a heartbeat).
    private func pullEnded(_ token: String, status: Int, description: String) {
        guard status != 100 else { return }
        state.withLock { $0.pulls.removeAll { $0.token == token } }
        let lowered = description.lowercased()
        if status == 409 && lowered.contains("consumer deleted") {
            if ordered != nil {
                reset()
            } else {
                fail(.jetStream(NATSJetStreamAPIError(code: 409, errorCode: 0, description: description)))
            }
            return
        }
        if status == 503 || status == 409 {
            // No leader now (an election): try again shortly.
            queue.after(0.1) { [weak self] in
                if self?.ordered != nil && status == 503 { self?.reset() } else { self?.pull() }
            }
            return
        }
        pull()
    }

    /// Ordered: makes a new consumer from after the last message delivered.
    private func reset() {
        let go = state.withLock { state -> Bool in
            guard !state.disposed, !state.resetting else { return false }
            state.resetting = true
            state.pulls = []
            return true
        }
        guard go else { return }
        Task { [self] in
            // The consumer was made once with this configuration: every
            // error but a stream that is gone is worth trying again.
            let name: String
            do throws(NATSError) {
                name = try await makeOrderedConsumerRetrying { error in
                    guard case .jetStream(let apiError) = error else { return true }
                    return apiError.errorCode != NATSJetStreamAPIError.streamNotFound
                }
            } catch {
                fail(error)
                return
            }
            let old = state.withLock { state in
                defer { state.consumer = name }
                return state.consumer
            }
            if let old { deleteConsumer(old) }
            state.withLock { state in
                state.expectedConsumerSequence = 1
                state.resetting = false
            }
            pull()
        }
    }

    /// Delivers the queued messages one at a time on the subscription's
    /// queue.
    private func drain() {
        let start = state.withLock { state -> Bool in
            guard !state.delivering, !state.queued.isEmpty, !state.disposed else { return false }
            state.delivering = true
            return true
        }
        guard start else { return }
        queue.async { [self] in
            while let message = state.withLock({ state -> NATSJetStreamMessage? in
                guard !state.disposed, let first = state.queued.first else {
                    state.delivering = false
                    return nil
                }
                if ordered == nil { track(first, &state) }
                return first
            }) {
                _withPublisherContext(message.headers) {
                    subscriber.putNext(message)
                }
                if acknowledgement == .automatic && !message.acknowledged.isSet {
                    try? message.ack()
                }
                state.withLock { state in
                    if !state.queued.isEmpty { state.queued.removeFirst() }
                }
                pull()
            }
        }
    }

    /// Counts a message about to be delivered: a redelivery, and awaiting
    /// its answer.
    private func track(_ message: NATSJetStreamMessage, _ state: inout State) {
        let counts = connection.jetStreamCounts
        if message.deliveryCount > 1 { counts.redeliveries.add(1, ordering: .relaxed) }
        if !message.acknowledged.isSet, state.unanswered.insert(message.streamSequence).inserted {
            counts.pendingAcknowledgements.add(1, ordering: .relaxed)
        }
    }

    /// A delivery of stream message `sequence` was answered (a message
    /// handed back unseen answers an earlier delivery of it too).
    func answered(_ sequence: UInt64) {
        let removed = state.withLock { $0.unanswered.remove(sequence) != nil }
        if removed { connection.jetStreamCounts.pendingAcknowledgements.subtract(1, ordering: .relaxed) }
    }

    private func fail(_ error: NATSError) {
        let first = state.withLock { state -> Bool in
            guard !state.disposed else { return false }
            state.disposed = true
            return true
        }
        guard first else { return }
        stop()
        subscriber.putError(error)
    }

    func dispose() {
        let first = state.withLock { state -> Bool in
            guard !state.disposed else { return false }
            state.disposed = true
            return true
        }
        guard first else { return }
        stop()
        // A delivery under way finishes before dispose returns.
        if !queue.isCurrent() { queue.sync {} }
    }

    /// Unsubscribes and hands back what was not delivered.
    private func stop() {
        let (handles, task, left, consumer, unanswered) = state.withLock { state in
            defer {
                state.handles = []
                state.task = nil
                state.queued = []
                state.pulls = []
                state.unanswered = []
            }
            return (
                state.handles, state.task, state.delivering ? Array(state.queued.dropFirst()) : state.queued,
                state.consumer, state.unanswered.count
            )
        }
        connection.jetStreamCounts.pendingAcknowledgements.subtract(unanswered, ordering: .relaxed)
        task?.cancel()
        for handle in handles { handle.dispose() }
        if ordered == nil {
            for message in left { try? message.nak() }
        }
        if ephemeral, let consumer { deleteConsumer(consumer) }
    }

    /// Deletes a consumer this subscription made, in the background (the
    /// server would remove it after its inactive threshold anyway).
    private func deleteConsumer(_ name: String) {
        let jetStream = jetStream
        let stream = stream
        Task { try? await jetStream.deleteConsumer(stream: stream, consumer: name) }
    }
}
#endif  // NATS
