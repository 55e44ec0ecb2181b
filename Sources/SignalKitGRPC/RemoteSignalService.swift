// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if GRPC
public import GRPCCore
internal import Instrumentation
public import SignalKit

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
/// goes away). Values wait for the client in a bounded buffer with the
/// policy you choose (a `SignalBuffer<RPCError>`, see "Slow clients" below).
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
/// ## Slow clients
///
/// A signal pushes its values whether the network keeps up or not: a slow
/// client cannot slow its source down. A served stream keeps the values not yet handed
/// to gRPC in a buffer of its own and hands everything that waits over as
/// one batch (`write(contentsOf:)`) each time gRPC has taken the previous
/// batch (which waits while the transport's flow control holds it back). The
/// buffer is SignalKit's `SignalBuffer`, with the call's status as its error:
///
/// - `.failing(beyond: n)` (the default, with `n` = 10,000): the call ends
///   with status `resourceExhausted`; the waiting values are discarded and
///   the subscription disposed. The client learns that it fell behind (its
///   signal fails with that status) and may resubscribe.
///   `.failing(beyond:with:)` ends it with a status of your own.
/// - `.droppingOldest(beyond: n)`, `.latest`: the client sees the newest
///   values, with gaps. For feeds where only recent values matter.
///   `.droppingNewest(beyond: n)` keeps the oldest instead.
/// - `.blocking(beyond: n)`: the signal's producing thread waits for room
///   (never produce on a Swift concurrency thread under it: the writing task
///   needs one; a signal that sends more than `n` values synchronously while
///   the call subscribes it stops the process with a message, as that wait
///   could never end).
/// - `.unbounded`: nothing is bounded; only for signals known to be slow.
///
/// Drops, overflows and the buffer's depth are counted under the signal's
/// name in `SignalKitDebug.bufferStatistics()` (and exported by
/// SignalKitMetrics), like every bounded boundary's.
///
/// A method registered twice is served by the last registration.
///
/// ## Limits and authorization
///
/// Each served subscription holds a buffer of up to its bound, so a caller
/// that opens calls without end holds memory without end. Give the service
/// ``RemoteSignalLimits``: beyond its caps a call ends with status
/// `resourceExhausted` and a message naming the cap, before its request's
/// signal is made or subscribed. The maximum message size both ways is the
/// transports': `rpc.maxRequestPayloadSize` in the server transport's
/// configuration, and on the client `CallOptions.maxRequestMessageBytes`,
/// which grpc-swift-nio-transport 2.9.2 applies to the messages the client
/// receives. Authorization is a gRPC `ServerInterceptor`, which runs
/// before the service's handler, so a call it rejects subscribes nothing.
public struct RemoteSignalService: RegistrableRPCService {
    private var handlers: [any _RemoteSignalHandlerProtocol] = []
    private let admission: _CallAdmission

    /// A service that serves no method yet; add them with `serve`. Every
    /// method it serves shares `limits`.
    public init(limits: RemoteSignalLimits = RemoteSignalLimits()) {
        admission = _CallAdmission(limits)
    }

    /// The calls this service is serving now (admitted and not ended).
    public var servedCalls: Int { admission.servedCalls }

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
        buffer: SignalBuffer<RPCError> = .standard,
        errorStatus: @escaping @Sendable (E) -> RPCError = { RPCError(signalError: $0) },
        _ makeSignal: @escaping @Sendable (Request) -> Signal<Value, E>
    ) {
        handlers.append(
            _RemoteSignalHandler(
                method: method, buffer: buffer, errorStatus: errorStatus, admission: admission, makeSignal: makeSignal)
        )
    }

    /// Serves `method` with a ``RemoteSignalBuffer`` (deprecated: pass a
    /// `SignalBuffer<RPCError>`).
    @available(
        *, deprecated, message: "pass a SignalBuffer<RPCError>: .failing(beyond:), .droppingOldest(beyond:), or any other policy"
    )
    @_disfavoredOverload
    public mutating func serve<Request, Value, E>(
        _ method: RemoteSignalMethod<Request, Value>,
        buffer: RemoteSignalBuffer,
        errorStatus: @escaping @Sendable (E) -> RPCError = { RPCError(signalError: $0) },
        _ makeSignal: @escaping @Sendable (Request) -> Signal<Value, E>
    ) {
        serve(method, buffer: buffer.signalBuffer, errorStatus: errorStatus, makeSignal)
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
        buffer: SignalBuffer<RPCError> = .standard,
        errorStatus: @escaping @Sendable (E) -> RPCError = { RPCError(signalError: $0) }
    ) {
        serve(method, buffer: buffer, errorStatus: errorStatus) { _ in signal }
    }

    /// Serves `method` with one signal for every request, with a
    /// ``RemoteSignalBuffer`` (deprecated: pass a `SignalBuffer<RPCError>`).
    @available(
        *, deprecated, message: "pass a SignalBuffer<RPCError>: .failing(beyond:), .droppingOldest(beyond:), or any other policy"
    )
    @_disfavoredOverload
    public mutating func serve<Request, Value, E>(
        _ signal: Signal<Value, E>,
        as method: RemoteSignalMethod<Request, Value>,
        buffer: RemoteSignalBuffer,
        errorStatus: @escaping @Sendable (E) -> RPCError = { RPCError(signalError: $0) }
    ) {
        serve(method, buffer: buffer.signalBuffer, errorStatus: errorStatus) { _ in signal }
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
    let buffer: SignalBuffer<RPCError>
    let errorStatus: @Sendable (E) -> RPCError
    let admission: _CallAdmission
    let makeSignal: @Sendable (Request) -> Signal<Value, E>

    func register<Transport: ServerTransport>(with router: inout RPCRouter<Transport>) {
        let buffer = self.buffer
        let errorStatus = self.errorStatus
        let admission = self.admission
        let makeSignal = self.makeSignal
        router.registerHandler(
            forMethod: method.descriptor,
            deserializer: _RequestDecoding(method.requestDeserializer),
            serializer: method.valueSerializer
        ) { request, serverContext in
            let single = try await ServerRequest(stream: request)
            // Over a cap: the call ends here, nothing made or subscribed.
            let ticket = try admission.admit(peer: serverContext.remotePeer)
            // The caller's trace (TraceContext.swift): the served signal is
            // made, and subscribed, inside it.
            let context = single.metadata.extractedContext(base: ServiceContext.current)
            return ServiceContext.withValue(context) {
                StreamingServerResponse(
                    signal: makeSignal(single.message), buffer: buffer, errorStatus: errorStatus, holding: ticket)
            }
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
    /// The subscription runs in the `ServiceContext` current where the
    /// response is made (a `RemoteSignalService` handler's: the caller's
    /// trace, extracted from the call's metadata).
    ///
    /// - Parameters:
    ///   - signal: subscribed once, when the response is produced.
    ///   - buffer: the bound on values waiting for a slow client, and what
    ///     happens beyond it.
    ///   - errorStatus: the status a signal error ends the call with.
    public init<E>(
        signal: Signal<Message, E>,
        buffer: SignalBuffer<RPCError> = .standard,
        errorStatus: @escaping @Sendable (E) -> RPCError = { RPCError(signalError: $0) }
    ) {
        self.init(signal: signal, buffer: buffer, errorStatus: errorStatus, holding: nil)
    }

    /// The public initializer's response, holding a served call's `ticket`
    /// (RemoteSignalLimits.swift): released when the call ends, or with the
    /// response if gRPC drops it without running it.
    init<E>(
        signal: Signal<Message, E>,
        buffer: SignalBuffer<RPCError>,
        errorStatus: @escaping @Sendable (E) -> RPCError,
        holding ticket: _CallTicket?
    ) {
        let context = ServiceContext.current
        self.init(of: Message.self) { writer in
            defer { ticket?.release() }
            return try await ServiceContext.withValue(context) {
                try await _ServedStream<Message>.run(signal, buffer: buffer, errorStatus: errorStatus, writer: writer)
            }
        }
    }

    /// A response that streams a subscription to `signal`, with a
    /// ``RemoteSignalBuffer`` (deprecated: pass a `SignalBuffer<RPCError>`).
    @available(
        *, deprecated, message: "pass a SignalBuffer<RPCError>: .failing(beyond:), .droppingOldest(beyond:), or any other policy"
    )
    @_disfavoredOverload
    public init<E>(
        signal: Signal<Message, E>,
        buffer: RemoteSignalBuffer,
        errorStatus: @escaping @Sendable (E) -> RPCError = { RPCError(signalError: $0) }
    ) {
        self.init(signal: signal, buffer: buffer.signalBuffer, errorStatus: errorStatus)
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

extension SignalBuffer where Failure == RPCError {
    /// Ends the call with status `resourceExhausted` when more than `limit`
    /// values wait for the client: ``SignalKit/SignalBuffer/failing(beyond:with:)``
    /// with that status.
    public static func failing(beyond limit: Int) -> SignalBuffer<RPCError> {
        .failing(
            beyond: limit,
            with: RPCError(
                code: .resourceExhausted,
                message: "SignalKitGRPC: more than \(limit) values waiting for a slow client"
            )
        )
    }

    /// A served stream's default: `failing(beyond: 10_000)`, so no value is
    /// lost silently and a burst of ten thousand values is held for a client
    /// that keeps up on average.
    public static var standard: SignalBuffer<RPCError> { .failing(beyond: 10_000) }
}

/// A deprecated buffer policy of SignalKitGRPC: every boundary, served
/// streams included, takes ``SignalKit/SignalBuffer``, so pass a
/// `SignalBuffer<RPCError>` instead (``failing(beyond:)`` and
/// ``droppingOldest(beyond:)`` have the same spelling there).
@available(
    *, deprecated, message: "pass a SignalBuffer<RPCError>: .failing(beyond:), .droppingOldest(beyond:), or any other policy"
)
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
        _signalKitRequire(limit >= 1, "RemoteSignalBuffer: the limit must be at least 1 (it is \(limit))")
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

    /// `failing(beyond: 10_000)`.
    public static let standard = RemoteSignalBuffer.failing(beyond: 10_000)

    /// `"fail beyond N"` or `"drop oldest beyond N"`.
    public var description: String {
        switch overflow {
        case .fail: "fail beyond \(limit)"
        case .dropOldest: "drop oldest beyond \(limit)"
        }
    }

    /// The same policy as a `SignalBuffer`.
    public var signalBuffer: SignalBuffer<RPCError> {
        switch overflow {
        case .fail: .failing(beyond: limit)
        case .dropOldest: .droppingOldest(beyond: limit)
        }
    }
}

/// One call's subscription: the signal's callbacks push into a bounded
/// buffer (SignalKit's `_TaskDrainedBuffer`: the policy, drop counting and
/// the `blocking` deadlock check every boundary shares), the call's producer
/// takes everything that waits as one batch and writes it.
enum _ServedStream<Value: Sendable> {
    /// Subscribes to `signal` and writes its events into `writer` until it
    /// ends or the call is cancelled. Returns the trailing metadata of a
    /// successful call.
    static func run<E>(
        _ signal: Signal<Value, E>,
        buffer: SignalBuffer<RPCError>,
        errorStatus: @escaping @Sendable (E) -> RPCError,
        writer: RPCWriter<Value>
    ) async throws -> Metadata {
        let stream = _TaskDrainedBuffer<Value, RPCError>(policy: buffer, name: signal.description)
        defer { stream.cancel() }
        return try await withTaskCancellationHandler {
            try await withRPCCancellationHandler {
                stream.subscribe {
                    signal.start(
                        next: { stream.send($0) },
                        error: { stream.finish(errorStatus($0)) },
                        completed: { stream.finish(nil) }
                    )
                }
                while true {
                    switch await stream.next() {
                    case .values(let values):
                        try await writer.write(contentsOf: values)
                    case .completed:
                        return [:]
                    case .failed(let error):
                        throw error
                    case .cancelled:
                        throw RPCError(code: .cancelled, message: "SignalKitGRPC: the call was cancelled")
                    }
                }
            } onCancelRPC: {
                stream.cancel()
            }
        } onCancel: {
            stream.cancel()
        }
    }
}

#endif  // GRPC
