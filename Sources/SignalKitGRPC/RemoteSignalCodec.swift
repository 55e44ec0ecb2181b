// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// How a remote signal's messages travel as bytes: JSON for `Codable`
// messages, and the server's guard around a method's request decoder. A
// request comes from whoever can reach the server, so this file meets
// hostile bytes: Fuzz/Sources/RequestFuzzer compiles it (a symbolic link)
// with GRPCCore alone and checks that any bytes decode to a request or end
// the call with `invalidArgument` (Fuzz/README.md).

#if GRPC
public import GRPCCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Encodes an `Encodable` message as JSON (Foundation's `JSONEncoder`, default
/// settings).
public struct JSONMessageSerializer<Message: Encodable>: MessageSerializer {
    /// A serializer with `JSONEncoder`'s default settings.
    public init() {}

    /// The message's JSON bytes.
    public func serialize<Bytes: GRPCContiguousBytes>(_ message: Message) throws -> Bytes {
        let data = try JSONEncoder().encode(message)
        return Bytes(data)
    }
}

/// Decodes a `Decodable` message from JSON (Foundation's `JSONDecoder`,
/// default settings).
public struct JSONMessageDeserializer<Message: Decodable>: MessageDeserializer {
    /// A deserializer with `JSONDecoder`'s default settings.
    public init() {}

    /// The message decoded from its JSON bytes.
    public func deserialize<Bytes: GRPCContiguousBytes>(_ serializedMessageBytes: Bytes) throws -> Message {
        let data = serializedMessageBytes.withUnsafeBytes { Data($0) }
        return try JSONDecoder().decode(Message.self, from: data)
    }
}

/// A method's request deserializer whose failures end the call with
/// `invalidArgument` (a malformed message is the caller's fault, whatever the
/// decoder throws); an `RPCError` it throws keeps its code.
struct _RequestDecoding<Request>: MessageDeserializer {
    let decoder: any MessageDeserializer<Request>

    init(_ decoder: any MessageDeserializer<Request>) {
        self.decoder = decoder
    }

    func deserialize<Bytes: GRPCContiguousBytes>(_ serializedMessageBytes: Bytes) throws -> Request {
        do {
            return try decoder.deserialize(serializedMessageBytes)
        } catch let error as RPCError {
            throw error
        } catch {
            throw RPCError(
                code: .invalidArgument,
                message:
                    "SignalKitGRPC: the request message could not be decoded (\(serializedMessageBytes.count) bytes): \(error)"
            )
        }
    }
}

#endif  // GRPC
