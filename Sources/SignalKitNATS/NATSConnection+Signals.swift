// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if NATS
public import Foundation
internal import Instrumentation
public import SignalKit

extension NATSConnection {
    /// The messages published to `subject` (wildcards `*` and `>` allowed),
    /// as a hot signal.
    ///
    /// **Hot and shared.** All subscribers of one (`subject`, `queueGroup`)
    /// share one subscription on the server: the first one's start sends
    /// `SUB`, the last one's dispose `UNSUB`. A subscriber receives the
    /// messages that arrive after it joined. With a `queueGroup`, the server
    /// gives each message to one member of the group (one connection), and
    /// every subscriber of that connection's feed receives it.
    ///
    /// **Threading:** delivered one at a time on the connection's delivery
    /// queue, each in its publisher's trace context (read from its headers
    /// by the process's instrument).
    ///
    /// **Termination:** never completes; fails with
    /// ``NATSError/invalidSubject(_:)`` or
    /// ``NATSError/invalidQueueGroup(_:)`` at once, with
    /// ``NATSError/permissionViolation(_:)`` when the server refuses the
    /// subscription, and with ``NATSError/closed`` (or the connection's
    /// error) when the connection closes for good. A reconnection is no
    /// termination: the subscription is made again on the new connection
    /// (messages published in the gap are lost).
    ///
    /// **Inspection:** the signal is named `nats.messages(subject)` (with
    /// `, queueGroup: group` when it has one), a stage of that name in the
    /// inspector.
    ///
    /// **Disposal:** when `dispose()` returns, the subscriber receives
    /// nothing more (a delivery under way on another thread is waited for).
    public func messages(_ subject: String, queueGroup: String? = nil) -> Signal<NATSMessage, NATSError> {
        Signal { [self] subscriber in
            guard _isValidSubject(subject, wildcards: true) else {
                subscriber.putError(.invalidSubject(subject))
                return EmptyDisposable
            }
            if let queueGroup, !_isValidQueueGroup(queueGroup) {
                subscriber.putError(.invalidQueueGroup(queueGroup))
                return EmptyDisposable
            }
            guard let handle = attach(subscriber, subject: subject, queueGroup: queueGroup) else {
                subscriber.putError(.closed)
                return EmptyDisposable
            }
            return handle
        } |> named(queueGroup.map { "nats.messages(\(subject), queueGroup: \($0))" } ?? "nats.messages(\(subject))")
    }

    /// The messages on `subject` decoded from JSON; a payload that does not
    /// decode fails the signal with ``NATSError/coding(_:)``.
    public func messages<Value: Decodable & Sendable>(
        _ subject: String,
        queueGroup: String? = nil,
        decoding type: Value.Type,
        decoder: JSONDecoder = JSONDecoder()
    ) -> Signal<Value, NATSError> {
        let decoder = _SendableDecoder(decoder)
        // One throwing map per message (no inner signal per message).
        return messages(subject, queueGroup: queueGroup)
            |> tryMap(
                { message in try message.decode(type, decoder: decoder.decoder) },
                mapError: { NATSError.coding(String(describing: $0)) })
    }

    /// A request: publishes `payload` to `subject` with a reply subject of
    /// the connection's shared inbox (`_INBOX.<random>.*`, subscribed once),
    /// and sends the first reply, then completes.
    ///
    /// **Termination:** fails with ``NATSError/timeout`` when no reply
    /// arrives within `timeout`, ``NATSError/noResponders`` when nobody
    /// subscribes to `subject`, or a publish error.
    ///
    /// **Disposal:** forgets the request; a reply arriving later is dropped.
    public func request(
        _ subject: String,
        payload: [UInt8],
        headers: NATSHeaders = NATSHeaders(),
        timeout: Duration = .seconds(5)
    ) -> Signal<NATSMessage, NATSError> {
        Signal { [self] subscriber in
            startRequest(subject, payload: payload, headers: headers, timeout: timeout, subscriber: subscriber)
        } |> named("nats.request(\(subject))")
    }

    /// A request, awaited: publishes `payload` to `subject` with a reply
    /// subject of the connection's shared inbox and returns the first
    /// reply.
    ///
    /// The reply resumes the caller from where it is read (the
    /// connection's event loop), without the hop through the delivery
    /// queue that a ``request(_:payload:headers:timeout:)`` signal's
    /// callbacks take: resuming runs nothing of the caller's there.
    ///
    /// - Throws: ``NATSError/timeout`` when no reply arrives within
    ///   `timeout`, ``NATSError/noResponders`` when nobody subscribes to
    ///   `subject`, ``NATSError/cancelled`` when the calling task is
    ///   cancelled first (the reply is then dropped), a publish error.
    public func requestReply(
        _ subject: String,
        payload: [UInt8],
        headers: NATSHeaders = NATSHeaders(),
        timeout: Duration = .seconds(5)
    ) async throws(NATSError) -> NATSMessage {
        let token = _LockedState<String?>(nil)
        let result: Result<NATSMessage, NATSError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                // Resumed once: by the reply, the timeout, a failure, or
                // the cancellation (whichever takes the request first).
                let sent = sendRequest(
                    subject, payload: payload, headers: headers, timeout: timeout,
                    .continuation { continuation.resume(returning: $0) })
                let cancelled = token.withLock { stored -> Bool in
                    stored = sent
                    return Task.isCancelled
                }
                if cancelled, let sent { finishRequest(sent, with: .failure(.cancelled)) }
            }
        } onCancel: {
            if let sent = token.withLock({ $0 }) { finishRequest(sent, with: .failure(.cancelled)) }
        }
        return try result.get()
    }

    /// Replies to `message` (publishes `payload` to its reply subject).
    /// - Throws: ``NATSError/invalidSubject(_:)`` when it asks for no reply.
    public func reply(to message: NATSMessage, payload: [UInt8], headers: NATSHeaders = NATSHeaders()) throws(NATSError) {
        guard let replyTo = message.replyTo else { throw .invalidSubject("") }
        try publish(replyTo, payload: payload, headers: headers)
    }
}

extension Signal where T == [UInt8] {
    /// A sink: publishes each value of this signal to `subject` on
    /// `connection`, and sends how many it has published.
    ///
    /// **Termination:** completes when this signal completes; fails with
    /// the first publish error (``NATSError``: a full publish buffer, a
    /// payload too large, a closed connection), disposing this signal's
    /// subscription; this signal's error `E` is given to `mapError` first.
    public func publish(
        to subject: String,
        on connection: NATSConnection,
        headers: NATSHeaders = NATSHeaders(),
        mapError: @escaping @Sendable (E) -> NATSError
    ) -> Signal<Int, NATSError> {
        let source = self
        return Signal<Int, NATSError> { subscriber in
            let upstream = MetaDisposable()
            let count = _Counter()
            upstream.set(
                source.start(
                    next: { payload in
                        do throws(NATSError) {
                            try connection.publish(subject, payload: payload, headers: headers)
                            subscriber.putNext(count.increment())
                        } catch {
                            subscriber.putError(error)
                            upstream.dispose()
                        }
                    },
                    error: { subscriber.putError(mapError($0)) },
                    completed: { subscriber.putCompletion() }
                )
            )
            return upstream
        }
    }
}

extension Signal where T == [UInt8], E == NoError {
    /// ``publish(to:on:headers:mapError:)`` for a signal that cannot fail.
    public func publish(to subject: String, on connection: NATSConnection, headers: NATSHeaders = NATSHeaders())
        -> Signal<Int, NATSError>
    {
        (self |> castError(NATSError.self)).publish(to: subject, on: connection, headers: headers, mapError: { $0 })
    }
}

extension Signal where T: Encodable & SendableMetatype, E == NoError {
    /// Publishes each value as JSON to `subject` (see
    /// ``Signal/publish(to:on:headers:mapError:)``).
    public func publishJSON(
        to subject: String,
        on connection: NATSConnection,
        encoder: JSONEncoder = JSONEncoder()
    ) -> Signal<Int, NATSError> {
        let encoder = _SendableEncoder(encoder)
        // One throwing map per value (no inner signal per value).
        let bytes: Signal<[UInt8], NATSError> =
            self |> castError(NATSError.self)
            |> tryMap(
                { value in Array(try encoder.encoder.encode(value)) },
                mapError: { NATSError.coding(String(describing: $0)) })
        return bytes.publish(to: subject, on: connection, mapError: { $0 })
    }
}

/// A counter for a sink's published values.
final class _Counter: Sendable {
    private let value = _LockedState(0)

    func increment() -> Int {
        value.withLock { value in
            value += 1
            return value
        }
    }
}

// JSONEncoder and JSONDecoder are Sendable on Linux's Foundation but not
// everywhere: wrapped, used one call at a time.
struct _SendableEncoder: @unchecked Sendable {  // JSONEncoder is thread-safe (immutable after setup)
    let encoder: JSONEncoder
    init(_ encoder: JSONEncoder) { self.encoder = encoder }
}

struct _SendableDecoder: @unchecked Sendable {  // JSONDecoder is thread-safe (immutable after setup)
    let decoder: JSONDecoder
    init(_ decoder: JSONDecoder) { self.decoder = decoder }
}

// A message carries its publisher's trace: `publish` injects the
// `ServiceContext` current where it is called into the headers with the
// process's instrument (a W3C `traceparent` with swift-otel's tracer,
// nothing with the default no-op one); a subscriber's delivery runs inside
// what the instrument extracts, so a boundary downstream (`deliverOn`, an
// actor) carries it on through the core's propagation hook.

/// Writes a context's fields into headers.
struct _HeaderInjector: Injector {
    func inject(_ value: String, forKey key: String, into headers: inout NATSHeaders) {
        headers[key] = value
    }
}

/// Reads a context's fields from headers.
struct _HeaderExtractor: Extractor {
    func extract(key: String, from headers: NATSHeaders) -> String? {
        headers[key]
    }
}

/// Runs `body` in the context the process's instrument extracts from
/// `headers` (as is, with no headers).
func _withPublisherContext(_ headers: NATSHeaders, _ body: () -> Void) {
    guard !headers.fields.isEmpty else {
        body()
        return
    }
    var context = ServiceContext.topLevel
    InstrumentationSystem.instrument.extract(headers, into: &context, using: _HeaderExtractor())
    ServiceContext.withValue(context, operation: body)
}
#endif  // NATS
