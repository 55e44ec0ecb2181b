// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import FuzzSupport
import GRPCCore

// SignalKitGRPC's request decoding against hostile bytes (see README.md).
// `RemoteSignalCodec.swift` here is a symbolic link to the library's own
// file, built with GRPCCore alone (no transport): the decoder a served
// method runs, `_RequestDecoding` around `JSONMessageDeserializer`, over a
// request type with the shapes a request has (text, numbers, optionals,
// arrays, a nested message, an enum).
//
// Each input is decoded as a request. It must come back as a request,
// which then survives its own encoding (encoded and decoded again: equal),
// or fail with an `RPCError` of code `invalidArgument` naming SignalKitGRPC
// and the size; any other error, a crash or a hang is a finding.

struct Request: Codable, Equatable {
    enum Side: String, Codable { case buy, sell }
    struct Window: Codable, Equatable {
        var from: Int64
        var to: Int64?
    }

    var symbol: String
    var depth: Int?
    var side: Side
    var tags: [String]
    var weights: [Double]?
    var window: Window?
}

func check(_ input: UnsafeRawBufferPointer) -> String? {
    let bytes = Array(input)
    let decoder = _RequestDecoding(JSONMessageDeserializer<Request>())
    let request: Request
    do {
        request = try decoder.deserialize(bytes)
    } catch let error as RPCError {
        guard error.code == .invalidArgument,
            error.message.hasPrefix("SignalKitGRPC: the request message could not be decoded (\(bytes.count) bytes)")
        else { return "bytes \(bytes) failed with \(error.code): \(error.message)" }
        return nil
    } catch {
        return "bytes \(bytes) failed with \(type(of: error)), not an RPCError: \(error)"
    }
    // JSON has no NaN or infinity: such a request cannot be sent back.
    if request.weights?.contains(where: { !$0.isFinite }) == true { return nil }
    do {
        let encoded: [UInt8] = try JSONMessageSerializer<Request>().serialize(request)
        let again = try decoder.deserialize(encoded)
        guard again == request else {
            return "decoded \(request), but its encoding \(String(decoding: encoded, as: UTF8.self)) decodes as \(again)"
        }
    } catch {
        return "decoded \(request), but it does not survive its encoding: \(error)"
    }
    return nil
}

@main
enum RequestFuzzer {
    static func main() {
        FuzzMain.run(check, describe: { input in "as text: \(String(decoding: input, as: UTF8.self).debugDescription)" })
    }
}
