// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import FuzzSupport

// SignalKitPostgres's NOTIFY payload parser against hostile text (see
// README.md). `PayloadCodec.swift` here is a symbolic link to the library's
// own file, so this is the code a listener runs; it needs no PostgreSQL.
//
// Each input is checked twice:
// - as a payload (its bytes as UTF-8, invalid sequences replaced): the
//   parser returns, and what it accepts encodes to a payload that parses to
//   the same parts (the sender, number, context and body);
// - as the parts of a payload (`Parts(decoding:)`): they encode to a payload
//   that parses back to exactly those parts.

/// The parts of a payload, as the parser returns them.
struct Parts: Equatable, CustomStringConvertible {
    var sender: String
    var sequence: UInt64
    var context: [String: String]
    var body: String

    init(sender: String, sequence: UInt64, context: [String: String], body: String) {
        self.sender = sender
        self.sequence = sequence
        self.context = context
        self.body = body
    }

    /// Parts made from arbitrary bytes: the first eight the number, the rest
    /// split at 0x00 into the sender (its `:` removed: a sender never has
    /// one), the body and key-value pairs of the context.
    init(decoding bytes: UnsafeRawBufferPointer) {
        var sequence: UInt64 = 0
        for byte in bytes.prefix(8) { sequence = sequence << 8 | UInt64(byte) }
        let chunks = bytes.dropFirst(8).split(separator: 0, omittingEmptySubsequences: false).map {
            String(decoding: $0, as: UTF8.self)
        }
        var context: [String: String] = [:]
        var index = 2
        while index + 1 < chunks.count {
            context[chunks[index]] = chunks[index + 1]
            index += 2
        }
        self.init(
            sender: (chunks.first ?? "").replacingColons(),
            sequence: sequence,
            context: context,
            body: chunks.count > 1 ? chunks[1] : ""
        )
    }

    var description: String {
        "sender \(sender.debugDescription), #\(sequence), context \(context), body \(body.debugDescription)"
    }
}

extension String {
    fileprivate func replacingColons() -> String { String(unicodeScalars.filter { $0 != ":" }) }
}

func parse(_ payload: String) -> Parts? {
    _parseSequencedPayload(payload).map { Parts(sender: $0.sender, sequence: $0.sequence, context: $0.context, body: $0.body) }
}

func encode(_ parts: Parts) -> String {
    _encodeSequencedPayload(sender: parts.sender, sequence: parts.sequence, context: parts.context, body: parts.body)
}

func check(_ input: UnsafeRawBufferPointer) -> String? {
    let text = String(decoding: input, as: UTF8.self)
    if let parts = parse(text) {
        let again = encode(parts)
        guard parse(again) == parts else {
            return
                "accepted \(text.debugDescription) as \(parts), but its encoding \(again.debugDescription) parses as \(parse(again).map { "\($0)" } ?? "nothing")"
        }
    }
    let parts = Parts(decoding: input)
    let encoded = encode(parts)
    guard let decoded = parse(encoded) else { return "\(parts) encode to \(encoded.debugDescription), which does not parse" }
    guard decoded == parts else { return "\(parts) encode to \(encoded.debugDescription), which parses as \(decoded)" }
    return nil
}

@main
enum PayloadFuzzer {
    static func main() {
        FuzzMain.run(
            check,
            describe: { input in
                "as a payload: \(String(decoding: input, as: UTF8.self).debugDescription)\nas parts: \(Parts(decoding: input))"
            })
    }
}
