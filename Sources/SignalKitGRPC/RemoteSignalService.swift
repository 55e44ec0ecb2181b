// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if GRPC
public import GRPCCore
public import SignalKit
import Synchronization

/// Signals served as server-streaming RPCs: a `RegistrableRPCService` to
/// pass to a `GRPCServer` with the gRPC services it runs beside.
///
/// Each RPC is one subscription: a call subscribes to the signal (or to the
/// signal the factory makes from the request), its values are the response
/// messages, completion ends the RPC with status OK, an error ends it with
/// the status `errorStatus` makes of it (by default `RPCError(signalError:)`:
/// the error's description as the message). When the client cancels the
/// call, disconnects or its deadline passes, or the server shuts down, the
/// subscription is disposed at once (through `withRPCCancellationHandler`:
/// gRPC does not cancel the task that produces a response when the client
/// goes away). Values wait for the client in a bounded buffer, see
/// ``RemoteSignalBuffer``.
///
/// ```swift
/// let prices = ValuePipe<Tick>()
/// var service = RemoteSignalService()
/// service.serve(ticks, buffer: .droppingOldest(beyond: 1_000)) { request in
///     prices.signal() |> filter { $0.symbol == request.symbol }
/// }
/// let server = GRPCServer(
///     transport: .http2NIOPosix(address: .ipv4(host: "127.0.0.1", port: 8080), transportSecurity: .plaintext),
///     services: [service]
/// )
/// try await server.serve()
/// ```
///
/// A method registered twice is served by the last registration.
public struct RemoteSignalService: RegistrableRPCService {
    private var handlers: [any _RemoteSignalHandlerProtocol] = []

    /// A service that serves no method yet; add them with `serve`.
    public init() {}

    /// Serves `method`: each call subscribes to the signal `makeSignal`
    /// returns for its request.
    ///
    /// - Parameters:
    ///   - method: the method, shared with the clients.
    ///   - buffer: the bound on values waiting for a slow client, and what
    ///     happens beyond it.
    ///   - errorStatus: the status a signal error ends the call with.
    ///   - makeSignal: called once per call, with its request, on a task of
    ///     the server.
    public mutating func serve<Request, Value, E>(
        _ method: RemoteSignalMethod<Request, Value>,
        buffer: RemoteSignalBuffer = .standard,
        errorStatus: @escaping @Sendable (E) -> RPCError = { RPCError(signalError: $0) },
        _ makeSignal: @escaping @Sendable (Request) -> Signal<Value, E>
    ) {
        handlers.append(
            _RemoteSignalHandler(method: method, buffer: buffer, errorStatus: errorStatus, makeSignal: makeSignal)
        )
    }

    /// Serves `method` with one signal for every request: each call
    /// subscribes to `signal` (the request is decoded and ignored).
    ///
    /// - Parameters:
    ///   - signal: the signal each call subscribes to.
    ///   - method: the method, shared with the clients.
    ///   - buffer: the bound on values waiting for a slow client, and what
    ///     happens beyond it.
    ///   - errorStatus: the status a signal error ends the call with.
    public mutating func serve<Request, Value, E>(
        _ signal: Signal<Value, E>,
        as method: RemoteSignalMethod<Request, Value>,
        buffer: RemoteSignalBuffer = .standard,
        errorStatus: @escaping @Sendable (E) -> RPCError = { RPCError(signalError: $0) }
    ) {
        serve(method, buffer: buffer, errorStatus: errorStatus) { _ in signal }
    }

    /// Registers every served method with the server's router (called by
    /// `GRPCServer`).
    public func registerMethods<Transport: ServerTransport>(with router: inout RPCRouter<Transport>) {
        for handler in handlers {
            handler.register(with: &router)
        }
    }
}

/// One served method, its types erased so that a service can hold several.
protocol _RemoteSignalHandlerProtocol: Sendable {
    func register<Transport: ServerTransport>(with router: inout RPCRouter<Transport>)
}

struct _RemoteSignalHandler<Request: Sendable, Value: Sendable, E>: _RemoteSignalHandlerProtocol {
    let method: RemoteSignalMethod<Request, Value>
    let buffer: RemoteSignalBuffer
    let errorStatus: @Sendable (E) -> RPCError
    let makeSignal: @Sendable (Request) -> Signal<Value, E>

    func register<Transport: ServerTransport>(with router: inout RPCRouter<Transport>) {
        let buffer = self.buffer
        let errorStatus = self.errorStatus
        let makeSignal = self.makeSignal
        router.registerHandler(
            forMethod: method.descriptor,
            deserializer: method.requestDeserializer,
            serializer: method.valueSerializer
        ) { request, _ in
            let single = try await ServerRequest(stream: request)
            return StreamingServerResponse(
                signal: makeSignal(single.message),
                buffer: buffer,
                errorStatus: errorStatus
            )
        }
    }
}

extension StreamingServerResponse {
    /// A response that streams a subscription to `signal`, for a
    /// server-streaming handler of your own (a generated service, say).
    ///
    /// The subscription starts when gRPC runs the response's producer and
    /// ends with the call: values are written in batches of what has
    /// accumulated (`write(contentsOf:)`), completion ends the call with
    /// status OK, an error with `errorStatus(error)`; the call's cancellation
    /// (client cancel or disconnect, deadline, server shutdown) disposes the
    /// subscription at once.
    ///
    /// ```swift
    /// func ticks(request: ServerRequest<Subscribe>, context: ServerContext) async throws -> StreamingServerResponse<Tick> {
    ///     StreamingServerResponse(signal: feed.ticks(for: request.message.symbol), buffer: .failing(beyond: 500))
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - signal: subscribed once, when the response is produced.
    ///   - buffer: the bound on values waiting for a slow client, and what
    ///     happens beyond it.
    ///   - errorStatus: the status a signal error ends the call with.
    public init<E>(
        signal: Signal<Message, E>,
        buffer: RemoteSignalBuffer = .standard,
        errorStatus: @escaping @Sendable (E) -> RPCError = { RPCError(signalError: $0) }
    ) {
        self.init(of: Message.self) { writer in
            try await _ServedStream<Message>.run(signal, buffer: buffer, errorStatus: errorStatus, writer: writer)
        }
    }
}

extension RPCError {
    /// The status a served signal's error ends its call with, by default:
    /// an `RPCError` as it is; an `RPCErrorConvertible` error as it converts;
    /// anything else with code `unknown` and the error's description
    /// (`String(describing:)`) as the message.
    public init<E>(signalError error: E) {
        if let error = error as? RPCError {
            self = error
        } else if let error = error as? any RPCErrorConvertible {
            self.init(
                code: error.rpcErrorCode,
                message: error.rpcErrorMessage,
                metadata: error.rpcErrorMetadata,
                cause: error.rpcErrorCause
            )
        } else {
            self.init(code: .unknown, message: String(describing: error))
        }
    }
}

/// How many values a served stream holds for a client that reads slower than
/// its signal produces, and what happens beyond that.
///
/// SignalKit has no backpressure: a signal pushes its values whether the
/// network keeps up or not. A served stream keeps the values not yet handed
/// to gRPC in a buffer of its own and hands them over as one batch
/// (`write(contentsOf:)`) each time gRPC has taken the previous batch (which
/// waits while the transport's flow control holds it back). When more than
/// `limit` values are waiting:
///
/// - ``Overflow/fail`` (``failing(beyond:)``): the call ends with status
///   `resourceExhausted`; the waiting values are discarded and the
///   subscription disposed. The client learns that it fell behind (its
///   signal fails with that status) and may resubscribe.
/// - ``Overflow/dropOldest`` (``droppingOldest(beyond:)``): the oldest
///   waiting value is discarded; the client sees the newest values, with
///   gaps. For feeds where only recent values matter.
///
/// A stream holds at most `limit` waiting values plus the batch being
/// written (itself at most `limit` values).
public struct RemoteSignalBuffer: Sendable, Hashable, CustomStringConvertible {
    /// What a full buffer does with one more value.
    public enum Overflow: Sendable, Hashable {
        /// End the call with status `resourceExhausted`.
        case fail
        /// Discard the oldest waiting value.
        case dropOldest
    }

    /// The most values that may wait for the client (at least 1).
    public let limit: Int
    /// What happens to the value past `limit`.
    public let overflow: Overflow

    /// A buffer of `limit` values with the given overflow policy.
    /// - Precondition: `limit >= 1`.
    public init(limit: Int, overflow: Overflow) {
        precondition(limit >= 1, "RemoteSignalBuffer: the limit must be at least 1 (it is \(limit))")
        self.limit = limit
        self.overflow = overflow
    }

    /// Ends the call with status `resourceExhausted` when more than `limit`
    /// values wait.
    public static func failing(beyond limit: Int) -> RemoteSignalBuffer {
        RemoteSignalBuffer(limit: limit, overflow: .fail)
    }

    /// Discards the oldest waiting value when more than `limit` values wait.
    public static func droppingOldest(beyond limit: Int) -> RemoteSignalBuffer {
        RemoteSignalBuffer(limit: limit, overflow: .dropOldest)
    }

    /// The default: `failing(beyond: 10_000)`, so no value is lost silently
    /// and a burst of ten thousand values is held for a client that keeps up
    /// on average.
    public static let standard = RemoteSignalBuffer.failing(beyond: 10_000)

    /// `"fail beyond N"` or `"drop oldest beyond N"`.
    public var description: String {
        switch overflow {
        case .fail: "fail beyond \(limit)"
        case .dropOldest: "drop oldest beyond \(limit)"
        }
    }
}

/// How a served stream ends.
enum _ServedOutcome: Sendable {
    case completed
    case failed(RPCError)
    /// The call was cancelled (or the producing task): nothing more is written.
    case cancelled
}

/// The state of one served stream, guarded by its mutex.
struct _ServedStreamState<Value: Sendable>: ~Copyable {
    /// Values waiting for the writer: `pending[head...]` (a dropped value
    /// only moves `head`, the prefix is compacted every `limit` drops).
    var pending: [Value] = []
    var head = 0
    var outcome: _ServedOutcome?
    /// The producer, suspended until there are values or an outcome.
    var waiter: CheckedContinuation<Void, Never>?

    var hasWork: Bool { outcome != nil || head < pending.count }
}

/// One call's subscription: the signal's callbacks push into a bounded
/// buffer, the call's producer takes batches out of it and writes them.
final class _ServedStream<Value: Sendable>: Sendable {
    private let state = Mutex(_ServedStreamState<Value>())
    private let buffer: RemoteSignalBuffer
    /// The subscription to the signal.
    let upstream = MetaDisposable()

    init(buffer: RemoteSignalBuffer) {
        self.buffer = buffer
    }

    /// Subscribes to `signal` and writes its events into `writer` until it
    /// ends or the call is cancelled. Returns the trailing metadata of a
    /// successful call.
    static func run<E>(
        _ signal: Signal<Value, E>,
        buffer: RemoteSignalBuffer,
        errorStatus: @escaping @Sendable (E) -> RPCError,
        writer: RPCWriter<Value>
    ) async throws -> Metadata {
        let stream = _ServedStream(buffer: buffer)
        defer { stream.upstream.dispose() }
        return try await withTaskCancellationHandler {
            try await withRPCCancellationHandler {
                stream.upstream.set(
                    signal.start(
                        next: { stream.push($0) },
                        error: { stream.finish(.failed(errorStatus($0))) },
                        completed: { stream.finish(.completed) }
                    )
                )
                return try await stream.drain(into: writer)
            } onCancelRPC: {
                stream.finish(.cancelled)
            }
        } onCancel: {
            stream.finish(.cancelled)
        }
    }

    /// Writes batches until an outcome.
    private func drain(into writer: RPCWriter<Value>) async throws -> Metadata {
        while true {
            let (values, outcome) = await nextBatch()
            if case .cancelled = outcome {
                throw RPCError(code: .cancelled, message: "SignalKitGRPC: the call was cancelled")
            }
            // Values that came before a completion or an error are written first.
            if !values.isEmpty {
                try await writer.write(contentsOf: values)
            }
            if case .completed = outcome { return [:] }
            if case .failed(let error) = outcome { throw error }
        }
    }

    /// The values waiting and the outcome, once there is either.
    private func nextBatch() async -> (ArraySlice<Value>, _ServedOutcome?) {
        while true {
            let batch = state.withLock { state -> (ArraySlice<Value>, _ServedOutcome?)? in
                guard state.hasWork else { return nil }
                let values = state.pending[state.head...]
                state.pending = []
                state.head = 0
                return (values, state.outcome)
            }
            if let batch { return batch }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state in
                    if state.hasWork { return true }
                    state.waiter = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        }
    }

    /// A value from the signal.
    func push(_ value: Value) {
        let limit = buffer.limit
        let overflow = buffer.overflow
        let (waiter, overflowed) = state.withLock { state -> (CheckedContinuation<Void, Never>?, Bool) in
            guard state.outcome == nil else { return (nil, false) }
            state.pending.append(value)
            var overflowed = false
            if state.pending.count - state.head > limit {
                switch overflow {
                case .dropOldest:
                    state.head += 1
                    if state.head >= limit {
                        state.pending.removeFirst(state.head)
                        state.head = 0
                    }
                case .fail:
                    state.pending = []
                    state.head = 0
                    state.outcome = .failed(
                        RPCError(
                            code: .resourceExhausted,
                            message: "SignalKitGRPC: more than \(limit) values waiting for a slow client"
                        )
                    )
                    overflowed = true
                }
            }
            let waiter = state.waiter
            state.waiter = nil
            return (waiter, overflowed)
        }
        waiter?.resume()
        if overflowed { upstream.dispose() }
    }

    /// The stream's end: the first outcome wins. Cancellation also disposes
    /// the subscription at once (the producer may be suspended in a write).
    func finish(_ outcome: _ServedOutcome) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.outcome == nil { state.outcome = outcome }
            let waiter = state.waiter
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
        if case .cancelled = outcome { upstream.dispose() }
    }
}

#endif  // GRPC
