// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if Postgres
public import Instrumentation
public import Logging
public import PostgresNIO
public import SignalKit
import Synchronization

/// A NOTIFY payload that names its sender and numbers it:
/// `sender:sequence:body`, or `sender:sequence;key=value;…:body` when it
/// carries its sender's trace context.
///
/// ``SignalKit/Signal/notify(channel:configuration:sender:logger:carryingContext:)``
/// sends its values in this form, numbered 1, 2, 3, … per subscription, so
/// that a listener can tell, per sender, a gap (a number skipped: the
/// listener was reconnecting) from a restart (the sender's number goes back
/// to 1).
///
/// Numbering also keeps every payload distinct: PostgreSQL merges identical
/// payloads sent on one channel in one transaction into one notification,
/// which numbered payloads never are.
///
/// **Context.** A notification carries nothing but its payload, so a
/// listener's work belongs to no trace unless the sender puts its context
/// there: with `carryingContext`, the sink adds the fields the process's
/// instrument injects for the context current where each value was sent
/// (with swift-otel's tracer, W3C `traceparent` and `tracestate`: about 70
/// bytes, counted against the payload limit); a listener gets them back as
/// a `ServiceContext` with ``serviceContext(base:)`` and runs its work
/// inside it (`ServiceContext.withValue`).
public struct PostgresSequencedPayload: Sendable, Equatable {
    /// The sender's name (no `:`).
    public var sender: String
    /// The payload's number in its sender's sequence, from 1.
    public var sequence: UInt64
    /// The sender's trace context as the instrument injected it (for
    /// example `traceparent`), empty when it carries none.
    public var context: [String: String]
    /// The value sent.
    public var body: String

    /// A payload.
    public init(sender: String, sequence: UInt64, context: [String: String] = [:], body: String) {
        self.sender = sender
        self.sequence = sequence
        self.context = context
        self.body = body
    }

    /// Parses `sender:sequence:body` or `sender:sequence;key=value;…:body`;
    /// nil when `payload` is not of that form.
    public init?(_ payload: String) {
        guard let parts = _parseSequencedPayload(payload) else { return nil }
        self.init(sender: parts.sender, sequence: parts.sequence, context: parts.context, body: parts.body)
    }

    /// The payload as sent: `sender:sequence:body`, or
    /// `sender:sequence;key=value;…:body` with a context (keys in order,
    /// `%`, `:`, `;` and `=` in them percent-encoded).
    public var encoded: String {
        _encodeSequencedPayload(sender: sender, sequence: sequence, context: context, body: body)
    }

    /// `base` (or a new top-level context) with what the process's
    /// instrument extracts from the payload's context: the sender's trace,
    /// for a listener to run its work in. With the default no-op instrument
    /// it extracts nothing.
    public func serviceContext(base: ServiceContext? = nil) -> ServiceContext {
        var extracted = base ?? .topLevel
        InstrumentationSystem.instrument.extract(context, into: &extracted, using: _PayloadContextExtractor())
        return extracted
    }

    /// The largest payload PostgreSQL accepts, in UTF-8 bytes (a payload of
    /// 8,000 bytes or more fails with SQLSTATE 22023).
    public static let maximumByteCount = 7999
}

/// Writes a context's fields into a payload's.
struct _PayloadContextInjector: Injector {
    func inject(_ value: String, forKey key: String, into fields: inout [String: String]) {
        fields[key] = value
    }
}

/// Reads a context's fields from a payload's.
struct _PayloadContextExtractor: Extractor {
    func extract(key: String, from fields: [String: String]) -> String? {
        fields[key]
    }
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
    /// value arrives; opened again for the next batch when the server
    /// closed it while the sink was idle, since nothing was sent on it) and
    /// sends one transaction at a time. The values that
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
    ///   - carryingContext: whether each payload carries the trace context
    ///     current where its value was sent (`ServiceContext.current`, as
    ///     the process's instrument injects it; see
    ///     ``PostgresSequencedPayload``): for listeners that should work in
    ///     the sender's trace. Nothing is added while there is no context or
    ///     the instrument injects nothing (the default no-op one).
    /// - Returns: a cold signal: each subscription subscribes to the source
    ///   and sends its values.
    public func notify(
        channel: String,
        configuration: PostgresConnection.Configuration,
        sender: String,
        logger: Logger? = nil,
        carryingContext: Bool = false
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
            let sink = _NotifySink(sender: sender, carryingContext: carryingContext)
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
    let carryingContext: Bool
    private let state = _LockedState(State())
    private let wakeups: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation

    init(sender: String, carryingContext: Bool) {
        self.sender = sender
        self.carryingContext = carryingContext
        (wakeups, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// A value from the source (on its sender's thread, in its context):
    /// numbered, checked, buffered.
    func append(_ body: String) {
        var context: [String: String] = [:]
        if carryingContext, let current = ServiceContext.current {
            InstrumentationSystem.instrument.inject(current, into: &context, using: _PayloadContextInjector())
        }
        let accepted = state.withLock { state -> Bool in
            guard !state.finished, state.failure == nil else { return false }
            let sequence = state.nextSequence
            state.nextSequence += 1
            let payload = PostgresSequencedPayload(sender: sender, sequence: sequence, context: context, body: body)
                .encoded
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
                    // A connection closed since the last batch (by the
                    // server, say) is replaced: nothing was sent on it, and
                    // postgres-nio does not complete a query on a closed
                    // connection (one closed by `close()` waited 3 s here
                    // without an answer).
                    if connection?.isClosed == true { connection = nil }
                    let open: PostgresConnection
                    if let connection {
                        open = connection
                    } else {
                        guard let opened = try await configuration._connect(logger: logger) else { return nil }
                        open = opened
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
