// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if Postgres
public import Logging
public import PostgresNIO
public import SignalKit
import Synchronization

/// A NOTIFY payload that names its sender and numbers it:
/// `sender:sequence:body`.
///
/// ``SignalKit/Signal/notify(channel:configuration:sender:logger:)`` sends
/// its values in this form, numbered 1, 2, 3, … per subscription, so that a
/// listener can tell, per sender, a gap (a number skipped: the listener was
/// reconnecting) from a restart (the sender's number goes back to 1).
///
/// Numbering also keeps every payload distinct: PostgreSQL merges identical
/// payloads sent on one channel in one transaction into one notification,
/// which numbered payloads never are.
public struct PostgresSequencedPayload: Sendable, Equatable {
    /// The sender's name (no `:`).
    public var sender: String
    /// The payload's number in its sender's sequence, from 1.
    public var sequence: UInt64
    /// The value sent.
    public var body: String

    /// A payload.
    public init(sender: String, sequence: UInt64, body: String) {
        self.sender = sender
        self.sequence = sequence
        self.body = body
    }

    /// Parses `sender:sequence:body`; nil when `payload` is not of that
    /// form.
    public init?(_ payload: String) {
        guard let first = payload.firstIndex(of: ":") else { return nil }
        let rest = payload[payload.index(after: first)...]
        guard let second = rest.firstIndex(of: ":"), let sequence = UInt64(rest[..<second]) else { return nil }
        self.sender = String(payload[..<first])
        self.sequence = sequence
        self.body = String(rest[rest.index(after: second)...])
    }

    /// The payload as sent: `sender:sequence:body`.
    public var encoded: String {
        "\(sender):\(sequence):\(body)"
    }

    /// The largest payload PostgreSQL accepts, in UTF-8 bytes (a payload of
    /// 8,000 bytes or more fails with SQLSTATE 22023).
    public static let maximumByteCount = 7999
}

/// One transaction of a NOTIFY sink: the values it committed, by number.
public struct PostgresNotifyBatch: Sendable, Equatable {
    /// The numbers of the values the transaction sent, in order.
    public var sequences: ClosedRange<UInt64>

    /// A batch.
    public init(sequences: ClosedRange<UInt64>) {
        self.sequences = sequences
    }
}

/// Why a NOTIFY sink stopped.
public enum PostgresNotifyError: Error {
    /// A value's payload (`sender:sequence:body`) is `byteCount` UTF-8
    /// bytes, more than ``PostgresSequencedPayload/maximumByteCount``. It
    /// was not sent; the values before it were.
    case payloadTooLarge(sequence: UInt64, byteCount: Int, limit: Int)
    /// The sender name is empty or contains `:`.
    case invalidSender(String)
    /// The channel name cannot be used (see
    /// ``PostgresChangeFeedError/invalidChannel(_:)``).
    case invalidChannel(String)
    /// Connecting or sending failed; the batch that was being sent (its
    /// numbers) may or may not have been committed.
    case sendFailed(sequences: ClosedRange<UInt64>, underlying: any Error)
}

extension Signal where T == String, E == NoError {
    /// Sends the signal's values as notifications on `channel`, batching
    /// the values of one burst into one transaction.
    ///
    /// ```swift
    /// let sent = changes.signal()
    ///     .notify(channel: "instruments", configuration: configuration, sender: "instance-a")
    ///     .start(error: { print("NOTIFY sink failed:", $0) })
    /// ```
    ///
    /// Each value is sent as ``PostgresSequencedPayload`` `sender:n:value`,
    /// numbered from 1 per subscription (so no two payloads are identical,
    /// and PostgreSQL's merging of identical payloads within a transaction
    /// never drops a value), and its size is checked when it
    /// arrives, before anything is sent: a payload over
    /// ``PostgresSequencedPayload/maximumByteCount`` bytes fails the sink
    /// with ``PostgresNotifyError/payloadTooLarge(sequence:byteCount:limit:)``
    /// once the values before it are sent.
    ///
    /// **Batching.** The sink has one connection (opened when the first
    /// value arrives) and sends one transaction at a time. The values that
    /// arrive while it connects or while a transaction is in flight are sent
    /// together, in order, in the next transaction: a burst costs one round
    /// trip, and its notifications are delivered together when it commits.
    /// Each committed transaction is one ``PostgresNotifyBatch`` value of
    /// the returned signal.
    ///
    /// **Termination:** when the source completes, the sink sends what is
    /// left, closes its connection and completes. It fails on a payload too
    /// large, an invalid sender or channel, or a failed connection or
    /// transaction (no retry: a retried batch could be delivered twice;
    /// compose `retry` to resubscribe, which numbers from 1 again).
    ///
    /// **Disposal:** disposing the subscription disposes the source's,
    /// drops the values not yet sent and closes the connection.
    ///
    /// **Threading:** the batches and the terminal event are delivered on
    /// the sink's task, one at a time.
    ///
    /// - Parameters:
    ///   - channel: the channel to notify (case-sensitive, as
    ///     `pg_notify`).
    ///   - configuration: the connection to open.
    ///   - sender: this sender's name in the payloads: non-empty, no `:`.
    ///     Give every sender its own.
    ///   - logger: the connection's logger; nil logs nothing.
    /// - Returns: a cold signal: each subscription subscribes to the source
    ///   and sends its values.
    public func notify(
        channel: String,
        configuration: PostgresConnection.Configuration,
        sender: String,
        logger: Logger? = nil
    ) -> Signal<PostgresNotifyBatch, PostgresNotifyError> {
        let source = self
        let logger = logger ?? _silentLogger
        return Signal<PostgresNotifyBatch, PostgresNotifyError> { subscriber in
            guard !sender.isEmpty, !sender.contains(":") else {
                subscriber.putError(.invalidSender(sender))
                return EmptyDisposable
            }
            guard _isValidChannel(channel) else {
                subscriber.putError(.invalidChannel(channel))
                return EmptyDisposable
            }
            let sink = _NotifySink(sender: sender)
            // The source first: what it sends synchronously is buffered
            // before the task starts, and goes in its first transaction.
            let upstream = source.start(
                next: { sink.append($0) },
                completed: { sink.finish() }
            )
            let task = Task {
                await sink.run(channel: channel, configuration: configuration, logger: logger, subscriber: subscriber)
            }
            let cancellation = subscriber._disposable(cancelling: task)
            return ActionDisposable {
                upstream.dispose()
                cancellation.dispose()
            }
        }
    }
}

/// The buffer between a NOTIFY sink's source and its task.
final class _NotifySink: Sendable {
    private struct State {
        var pending: [String] = []
        /// The number of `pending`'s first value.
        var firstPending: UInt64 = 1
        var nextSequence: UInt64 = 1
        var finished = false
        var failure: PostgresNotifyError?
    }

    let sender: String
    private let state = Mutex(State())
    private let wakeups: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation

    init(sender: String) {
        self.sender = sender
        (wakeups, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// A value from the source: numbered, checked, buffered.
    func append(_ body: String) {
        let accepted = state.withLock { state -> Bool in
            guard !state.finished, state.failure == nil else { return false }
            let sequence = state.nextSequence
            state.nextSequence += 1
            let payload = PostgresSequencedPayload(sender: sender, sequence: sequence, body: body).encoded
            let byteCount = payload.utf8.count
            if byteCount > PostgresSequencedPayload.maximumByteCount {
                state.failure = .payloadTooLarge(
                    sequence: sequence,
                    byteCount: byteCount,
                    limit: PostgresSequencedPayload.maximumByteCount
                )
            } else {
                state.pending.append(payload)
            }
            return true
        }
        if accepted { wake.yield() }
    }

    /// The source completed.
    func finish() {
        state.withLock { $0.finished = true }
        wake.yield()
    }

    /// Sends batches until the source finished and everything is sent, a
    /// failure, or cancellation; closes the connection before the terminal
    /// event.
    func run(
        channel: String,
        configuration: PostgresConnection.Configuration,
        logger: Logger,
        subscriber: Subscriber<PostgresNotifyBatch, PostgresNotifyError>
    ) async {
        var connection: PostgresConnection?
        let terminal = await send(
            channel: channel,
            configuration: configuration,
            logger: logger,
            subscriber: subscriber,
            connection: &connection
        )
        wake.finish()
        try? await connection?.close()
        switch terminal {
        case .none: break
        case .some(.none): subscriber.putCompletion()
        case .some(.some(let error)): subscriber.putError(error)
        }
    }

    /// The sending loop. Returns nil when cancelled, `.some(nil)` when
    /// everything is sent and the source finished, `.some(error)` on a
    /// failure.
    private func send(
        channel: String,
        configuration: PostgresConnection.Configuration,
        logger: Logger,
        subscriber: Subscriber<PostgresNotifyBatch, PostgresNotifyError>,
        connection: inout PostgresConnection?
    ) async -> PostgresNotifyError?? {
        for await _ in wakeups {
            while !Task.isCancelled {
                let (batch, first, finished, failure) = state.withLock { state in
                    let taken = (state.pending, state.firstPending, state.finished, state.failure)
                    state.firstPending += UInt64(state.pending.count)
                    state.pending = []
                    return taken
                }
                if batch.isEmpty {
                    if let failure { return .some(failure) }
                    if finished { return .some(nil) }
                    break
                }
                let sequences = first...(first + UInt64(batch.count) - 1)
                do {
                    let open: PostgresConnection
                    if let connection {
                        open = connection
                    } else {
                        open = try await PostgresConnection.connect(
                            configuration: configuration,
                            id: _connectionIDs.add(1, ordering: .relaxed).newValue,
                            logger: logger
                        )
                        connection = open
                    }
                    // One statement, so one transaction; the function scan
                    // yields the array's elements in order. The statement
                    // has committed (or failed) once its rows are read.
                    let rows = try await open.query(
                        "SELECT pg_notify(\(channel), payload) FROM unnest(\(batch)::text[]) AS batch(payload)",
                        logger: logger
                    )
                    for try await _ in rows {}
                } catch {
                    if Task.isCancelled { return nil }
                    return .some(.sendFailed(sequences: sequences, underlying: error))
                }
                if Task.isCancelled { return nil }
                subscriber.putNext(PostgresNotifyBatch(sequences: sequences))
            }
            if Task.isCancelled { return nil }
        }
        return nil
    }
}
#endif
