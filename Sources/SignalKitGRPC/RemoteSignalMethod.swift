// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if GRPC
public import GRPCCore

/// A server-streaming method that carries a signal: its name, and how its
/// request and its values travel as bytes.
///
/// The server serves it with ``RemoteSignalService`` (or a
/// `StreamingServerResponse(signal:)` in a handler of its own), the client
/// subscribes with `GRPCClient.remoteSignal(_:request:)`. Both sides use the
/// same value, so the method is declared once, next to its message types. No
/// `protoc` is needed: a method registered by hand is an ordinary gRPC method
/// (any gRPC client that speaks its encoding can call it).
///
/// ```swift
/// struct Subscribe: Codable, Sendable { var symbol: String }
/// struct Tick: Codable, Sendable { var symbol: String; var price: Double }
///
/// // JSON on the wire (the default for Codable messages).
/// let ticks = RemoteSignalMethod<Subscribe, Tick>(service: "market.Feed", method: "Ticks")
/// ```
public struct RemoteSignalMethod<Request: Sendable, Value: Sendable>: Sendable {
    /// The method's gRPC name (`/service/method` on the wire).
    public var descriptor: MethodDescriptor
    /// Encodes the request (client side).
    public var requestSerializer: any MessageSerializer<Request>
    /// Decodes the request (server side).
    public var requestDeserializer: any MessageDeserializer<Request>
    /// Encodes each value (server side).
    public var valueSerializer: any MessageSerializer<Value>
    /// Decodes each value (client side).
    public var valueDeserializer: any MessageDeserializer<Value>

    /// A method with the given encodings: any grpc-swift serializers (for
    /// example SwiftProtobuf's `ProtobufSerializer` /
    /// `ProtobufDeserializer` for generated messages).
    public init(
        descriptor: MethodDescriptor,
        requestSerializer: some MessageSerializer<Request>,
        requestDeserializer: some MessageDeserializer<Request>,
        valueSerializer: some MessageSerializer<Value>,
        valueDeserializer: some MessageDeserializer<Value>
    ) {
        self.descriptor = descriptor
        self.requestSerializer = requestSerializer
        self.requestDeserializer = requestDeserializer
        self.valueSerializer = valueSerializer
        self.valueDeserializer = valueDeserializer
    }
}

extension RemoteSignalMethod where Request: Codable, Value: Codable {
    /// A method whose request and values travel as JSON (`Codable`, through
    /// ``JSONMessageSerializer`` and ``JSONMessageDeserializer``).
    ///
    /// - Parameters:
    ///   - service: the fully qualified service name, e.g. `"market.Feed"`.
    ///   - method: the method name, e.g. `"Ticks"`.
    public init(service: String, method: String) {
        self.init(
            descriptor: MethodDescriptor(fullyQualifiedService: service, method: method),
            requestSerializer: JSONMessageSerializer<Request>(),
            requestDeserializer: JSONMessageDeserializer<Request>(),
            valueSerializer: JSONMessageSerializer<Value>(),
            valueDeserializer: JSONMessageDeserializer<Value>()
        )
    }
}

#endif  // GRPC
