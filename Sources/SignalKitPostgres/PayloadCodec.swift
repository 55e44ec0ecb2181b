// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// The text form of `PostgresSequencedPayload`: `sender:sequence:body`, or
// `sender:sequence;key=value;…:body` with its sender's context. A
// notification's payload comes from whoever can NOTIFY on the channel, so
// this parser meets hostile text: it is pure Swift with no imports, and
// Fuzz/Sources/PayloadFuzzer compiles this very file (a symbolic link) into
// a libFuzzer target that checks it never crashes and that what it accepts
// survives a round trip (Fuzz/README.md).

/// The parts of a sequenced payload; nil when `payload` is not of the form
/// (no two `:`, a sequence that is not a `UInt64`, a context field without
/// `=`, a malformed `%XX` or a bare reserved character in a field).
///
/// It splits on the separators' bytes, not on `Character`s: a part that
/// begins with a combining mark joins the separator before it into one
/// grapheme (`=` followed by U+0301 is one `Character`, which is not `=`),
/// and such a payload would not parse.
func _parseSequencedPayload(_ payload: String) -> (
    sender: String, sequence: UInt64, context: [String: String], body: String
)? {
    let bytes = payload.utf8
    guard let first = bytes.firstIndex(of: UInt8(ascii: ":")) else { return nil }
    let rest = bytes[bytes.index(after: first)...]
    guard let second = rest.firstIndex(of: UInt8(ascii: ":")) else { return nil }
    var fields = rest[..<second].split(separator: UInt8(ascii: ";"), omittingEmptySubsequences: false)[...]
    guard let sequence = fields.popFirst().flatMap({ UInt64(String(decoding: $0, as: UTF8.self)) }) else { return nil }
    var context: [String: String] = [:]
    for field in fields {
        guard let equals = field.firstIndex(of: UInt8(ascii: "=")),
            let key = _percentDecoded(field[..<equals]),
            let value = _percentDecoded(field[field.index(after: equals)...])
        else { return nil }
        context[key] = value
    }
    // Cut at ASCII bytes, so both parts are whole UTF-8.
    let sender = String(decoding: bytes[..<first], as: UTF8.self)
    let body = String(decoding: rest[rest.index(after: second)...], as: UTF8.self)
    return (sender, sequence, context, body)
}

/// `sender:sequence:body`, or `sender:sequence;key=value;…:body` with a
/// context (keys in order, `%`, `:`, `;` and `=` in them percent-encoded).
/// `sender` must not contain `:` (the parser would split it there).
func _encodeSequencedPayload(sender: String, sequence: UInt64, context: [String: String], body: String) -> String {
    guard !context.isEmpty else { return "\(sender):\(sequence):\(body)" }
    let fields = context.sorted { $0.key < $1.key }.map { "\(_percentEncoded($0.key))=\(_percentEncoded($0.value))" }
    return "\(sender):\(sequence);\(fields.joined(separator: ";")):\(body)"
}

/// `text` with `%`, `:`, `;` and `=` (and nothing else) as `%XX`.
func _percentEncoded(_ text: String) -> String {
    guard text.utf8.contains(where: { _isReservedInPayloadField($0) }) else { return text }
    var encoded = ""
    for scalar in text.unicodeScalars {
        if scalar.isASCII, _isReservedInPayloadField(UInt8(scalar.value)) {
            // The reserved characters are all 0x20–0x7F: two hex digits.
            encoded += "%" + String(scalar.value, radix: 16, uppercase: true)
        } else {
            encoded.unicodeScalars.append(scalar)
        }
    }
    return encoded
}

/// `field` (UTF-8) with its `%XX` sequences decoded; nil when one is
/// malformed, a reserved character appears bare, or the result is not UTF-8.
func _percentDecoded(_ field: Substring.UTF8View) -> String? {
    var bytes: [UInt8] = []
    var iterator = field.makeIterator()
    while let byte = iterator.next() {
        if byte == UInt8(ascii: "%") {
            guard let high = iterator.next(), let low = iterator.next(),
                let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
            else { return nil }
            bytes.append(value)
        } else if _isReservedInPayloadField(byte) {
            return nil
        } else {
            bytes.append(byte)
        }
    }
    return String(validating: bytes, as: UTF8.self)
}

private func _isReservedInPayloadField(_ byte: UInt8) -> Bool {
    byte == UInt8(ascii: "%") || byte == UInt8(ascii: ":") || byte == UInt8(ascii: ";") || byte == UInt8(ascii: "=")
}
