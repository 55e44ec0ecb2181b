// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if NATS
public import Foundation

// NATS's client protocol (text control lines ending in CRLF, payloads
// counted in bytes): the frames a server sends, an incremental parser for
// them, and the encoder of the commands a client sends.

/// A message's headers (`NATS/1.0` block of `HMSG`/`HPUB`): ordered
/// name-value pairs (a name may repeat), with the optional status line of a
/// server-made message (`503` for no responders).
public struct NATSHeaders: Sendable, Equatable, ExpressibleByDictionaryLiteral {
    /// One header field.
    public struct Field: Sendable, Equatable {
        public var name: String
        public var value: String

        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The fields, in order.
    public var fields: [Field]
    /// The status code of the header line (`NATS/1.0 503`), if any.
    public var status: Int?
    /// The status line's description after the code, if any.
    public var statusDescription: String?

    /// No field, no status.
    public init() {
        self.init([])
    }

    public init(_ fields: [Field], status: Int? = nil, statusDescription: String? = nil) {
        self.fields = fields
        self.status = status
        self.statusDescription = statusDescription
    }

    public init(status: Int, statusDescription: String? = nil) {
        self.init([], status: status, statusDescription: statusDescription)
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements.map { Field(name: $0.0, value: $0.1) })
    }

    /// Whether there is neither a field nor a status.
    public var isEmpty: Bool { fields.isEmpty && status == nil }

    /// The first value of `name` (compared case-insensitively), or nil;
    /// setting replaces every field of that name (nil removes them).
    public subscript(name: String) -> String? {
        get {
            let key = name.lowercased()
            return fields.first { $0.name.lowercased() == key }?.value
        }
        set {
            let key = name.lowercased()
            if let index = fields.firstIndex(where: { $0.name.lowercased() == key }) {
                fields.removeAll { $0.name.lowercased() == key }
                if let newValue { fields.insert(Field(name: name, value: newValue), at: index) }
            } else if let newValue {
                fields.append(Field(name: name, value: newValue))
            }
        }
    }

    /// The encoded block, `NATS/1.0` line to the empty line.
    var encoded: [UInt8] {
        var text = "NATS/1.0"
        if let status {
            text += " \(status)"
            if let statusDescription { text += " \(statusDescription)" }
        }
        text += "\r\n"
        for field in fields {
            text += "\(field.name): \(field.value)\r\n"
        }
        text += "\r\n"
        return Array(text.utf8)
    }

    /// Parses a header block (as counted by `HMSG`'s header size).
    static func decode(_ bytes: ArraySlice<UInt8>) -> NATSHeaders? {
        guard let text = String(validating: bytes, as: UTF8.self) else { return nil }
        var lines = text.components(separatedBy: "\r\n")
        // The block ends with an empty line: "…\r\n\r\n" leaves two empty strings.
        guard lines.count >= 3, lines.removeLast().isEmpty, lines.removeLast().isEmpty else { return nil }
        let first = lines.removeFirst()
        guard first.hasPrefix("NATS/1.0") else { return nil }
        var headers = NATSHeaders()
        let rest = first.dropFirst("NATS/1.0".count).trimmingCharacters(in: .whitespaces)
        if !rest.isEmpty {
            let parts = rest.split(separator: " ", maxSplits: 1)
            guard let code = Int(parts[0]) else { return nil }
            headers.status = code
            if parts.count > 1 { headers.statusDescription = String(parts[1]) }
        }
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { return nil }
            let name = String(line[..<colon])
            guard !name.isEmpty else { return nil }
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            headers.fields.append(Field(name: name, value: value))
        }
        return headers
    }
}

/// A message as received: `MSG` or `HMSG`.
public struct NATSMessage: Sendable, Equatable {
    /// The subject it was published to (the concrete subject, also for a
    /// wildcard subscription).
    public var subject: String
    /// Where a reply goes, if the publisher asked for one.
    public var replyTo: String?
    /// Its headers; empty for `MSG`.
    public var headers: NATSHeaders
    /// Its payload bytes.
    public var payload: [UInt8]

    public init(subject: String, replyTo: String? = nil, headers: NATSHeaders = NATSHeaders(), payload: [UInt8]) {
        self.subject = subject
        self.replyTo = replyTo
        self.headers = headers
        self.payload = payload
    }

    /// The payload as UTF-8 text (invalid sequences repaired).
    public var text: String { String(decoding: payload, as: UTF8.self) }

    /// The payload decoded from JSON.
    public func decode<Value: Decodable>(_ type: Value.Type, decoder: JSONDecoder = JSONDecoder()) throws -> Value {
        try decoder.decode(type, from: Data(payload))
    }
}

/// What the server says about itself (`INFO`); the fields this client uses.
public struct NATSServerInfo: Sendable, Equatable, Decodable {
    public var serverID: String
    public var version: String
    /// The largest payload (headers included) the server accepts.
    public var maxPayload: Int
    /// Whether the server takes `HPUB` and sends `HMSG`.
    public var headers: Bool
    /// Whether the server requires authentication.
    public var authRequired: Bool
    /// Whether the server requires TLS.
    public var tlsRequired: Bool
    /// Whether the server takes TLS without requiring it.
    public var tlsAvailable: Bool
    /// Other servers of its cluster a client may connect to (`host:port`).
    public var connectURLs: [String]
    /// The client's ID on this server.
    public var clientID: UInt64?

    enum CodingKeys: String, CodingKey {
        case serverID = "server_id"
        case version
        case maxPayload = "max_payload"
        case headers
        case authRequired = "auth_required"
        case tlsRequired = "tls_required"
        case tlsAvailable = "tls_available"
        case connectURLs = "connect_urls"
        case clientID = "client_id"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        serverID = try container.decodeIfPresent(String.self, forKey: .serverID) ?? ""
        version = try container.decodeIfPresent(String.self, forKey: .version) ?? ""
        maxPayload = try container.decodeIfPresent(Int.self, forKey: .maxPayload) ?? 1_048_576
        headers = try container.decodeIfPresent(Bool.self, forKey: .headers) ?? false
        authRequired = try container.decodeIfPresent(Bool.self, forKey: .authRequired) ?? false
        tlsRequired = try container.decodeIfPresent(Bool.self, forKey: .tlsRequired) ?? false
        tlsAvailable = try container.decodeIfPresent(Bool.self, forKey: .tlsAvailable) ?? false
        connectURLs = try container.decodeIfPresent([String].self, forKey: .connectURLs) ?? []
        clientID = try container.decodeIfPresent(UInt64.self, forKey: .clientID)
    }
}

/// A frame a server sends.
public enum NATSServerFrame: Sendable, Equatable {
    case info(NATSServerInfo)
    /// `MSG` or `HMSG`, with the subscription ID it was delivered for.
    case message(NATSMessage, sid: UInt64)
    case ping
    case pong
    case ok
    /// `-ERR`, with the server's text (quotes removed).
    case error(String)
}

/// Why the byte stream from a server is not NATS's protocol. After one, the
/// parser stays failed: the connection is closed.
public enum NATSProtocolError: Error, Sendable, Equatable {
    /// The line does not start with a known operation (its first bytes,
    /// printable).
    case unknownOperation(String)
    /// A known operation with arguments that do not parse.
    case malformedControlLine(String)
    /// A control line longer than the limit without its CRLF.
    case controlLineTooLong(limit: Int)
    /// A message whose payload (headers included) exceeds the limit (the
    /// server's `max_payload`).
    case payloadTooLarge(size: Int, limit: Int)
    /// A payload not followed by CRLF where its size says it ends.
    case missingPayloadTerminator
    /// An `HMSG` header block that is not `NATS/1.0` headers.
    case malformedHeaders
    /// An `INFO` whose JSON does not decode.
    case malformedInfo
}

/// Parses the frames of a server's byte stream, fed in chunks split
/// anywhere.
public struct NATSFrameParser: Sendable {
    /// The largest payload accepted (the server's `max_payload`).
    public var maxPayload: Int
    /// The longest control line accepted.
    public let maxControlLine: Int

    private var buffer: [UInt8] = []
    /// Where the unparsed bytes start in `buffer`.
    private var start = 0
    /// Bytes after `start` already searched for CR LF.
    private var scanned = 0
    /// The control line of a message whose payload has not all arrived.
    private var pending: (subject: String, sid: UInt64, replyTo: String?, headerSize: Int, totalSize: Int)?
    private var failure: NATSProtocolError?

    /// A parser; `maxPayload` is replaced by the server's once known.
    public init(maxPayload: Int = 1_048_576, maxControlLine: Int = 65_536) {
        self.maxPayload = maxPayload
        self.maxControlLine = maxControlLine
    }

    /// Appends received bytes.
    public mutating func append<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        if start > 0 && start >= buffer.count / 2 {
            buffer.removeFirst(start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The bytes received and not yet parsed.
    public var bufferedByteCount: Int { buffer.count - start }

    /// The next complete frame, nil when more bytes are needed.
    /// - Throws: the stream is not NATS's protocol (again on every later
    ///   call).
    public mutating func next() throws(NATSProtocolError) -> NATSServerFrame? {
        if let failure { throw failure }
        do {
            return try parse()
        } catch {
            failure = error
            throw error
        }
    }

    /// Every complete frame buffered.
    public mutating func frames() throws(NATSProtocolError) -> [NATSServerFrame] {
        var frames: [NATSServerFrame] = []
        while let frame = try next() { frames.append(frame) }
        return frames
    }

    private mutating func parse() throws(NATSProtocolError) -> NATSServerFrame? {
        if let message = pending {
            return try payload(of: message)
        }
        // The same checks in the same order whether the line has ended or
        // not, so that a stream split anywhere fails as it does whole: the
        // operation, then the length (a line of `maxControlLine` bytes may
        // have all but its LF).
        guard let lineEnd = findLineEnd() else {
            try checkOperationPrefix()
            if buffer.count - start - 1 > maxControlLine { throw .controlLineTooLong(limit: maxControlLine) }
            return nil
        }
        try checkOperationPrefix()
        if lineEnd - start > maxControlLine { throw .controlLineTooLong(limit: maxControlLine) }
        let line = buffer[start..<lineEnd]
        start = lineEnd + 2
        scanned = 0
        return try frame(line: line)
    }

    /// The index of the CR of the first CR LF after `start`.
    private mutating func findLineEnd() -> Int? {
        var index = start + scanned
        while index + 1 < buffer.count {
            if buffer[index] == 13 && buffer[index + 1] == 10 { return index }
            index += 1
        }
        scanned = max(0, index - start)
        return nil
    }

    private static let operations: [[UInt8]] = ["INFO", "MSG", "HMSG", "PING", "PONG", "+OK", "-ERR"].map { Array($0.utf8) }

    /// Fails on bytes that cannot start any operation (also before their
    /// line ends): an operation (ASCII, any case), then a space, a tab or
    /// CR, as far as the bytes go.
    private func checkOperationPrefix() throws(NATSProtocolError) {
        let count = min(buffer.count - start, 5)
        guard count > 0 else { return }
        let matches = Self.operations.contains { operation in
            for offset in 0..<count {
                var byte = buffer[start + offset]
                if byte >= 97 && byte <= 122 { byte -= 32 }
                if offset < operation.count {
                    if byte != operation[offset] { return false }
                } else {
                    return byte == 32 || byte == 9 || byte == 13
                }
            }
            return true
        }
        if !matches { throw Self.unknownOperation(buffer[start...]) }
    }

    /// The bytes that name an unknown operation: up to 16 from the line's
    /// start, to the first CR, printable (the same from a line that has
    /// ended and from one that has not).
    private static func unknownOperation(_ bytes: ArraySlice<UInt8>) -> NATSProtocolError {
        let head = bytes.prefix(16).prefix { $0 != 13 }
        return .unknownOperation(String(head.map { $0 >= 32 && $0 < 127 ? Character(UnicodeScalar($0)) : "?" }))
    }

    /// Parses a control line (`line` ends before its CRLF). Operations and arguments are split on bytes (space, tab),
    /// operations compared in ASCII without case.
    private mutating func frame(line: ArraySlice<UInt8>) throws(NATSProtocolError) -> NATSServerFrame? {
        // A message's line, the common case, read on its bytes (the same
        // outcome as the general path below, with two strings instead of
        // a string per token).
        if let message = Self.messageLine(line) {
            guard message.totalSize <= maxPayload else {
                throw .payloadTooLarge(size: message.totalSize, limit: maxPayload)
            }
            pending = message
            return try payload(of: message)
        }
        guard let text = String(validating: line, as: UTF8.self) else { throw Self.unknownOperation(line) }
        let isBlank: (UInt8) -> Bool = { $0 == 32 || $0 == 9 }
        let operationEnd = line.firstIndex(where: isBlank) ?? line.endIndex
        let operation = String(decoding: line[..<operationEnd].map { $0 >= 97 && $0 <= 122 ? $0 - 32 : $0 }, as: UTF8.self)
        var argumentBytes = line[operationEnd...].drop(while: isBlank)
        while let last = argumentBytes.last, isBlank(last) { argumentBytes = argumentBytes.dropLast() }
        let arguments = String(decoding: argumentBytes, as: UTF8.self)
        switch operation {
        case "PING": return .ping
        case "PONG": return .pong
        case "+OK": return .ok
        case "-ERR":
            // Quotes removed as bytes: a quote then a combining mark is one `Character`.
            if argumentBytes.count >= 2 && argumentBytes.first == 39 && argumentBytes.last == 39 {
                return .error(String(decoding: argumentBytes.dropFirst().dropLast(), as: UTF8.self))
            }
            return .error(arguments)
        case "INFO":
            do {
                return .info(try JSONDecoder().decode(NATSServerInfo.self, from: Data(arguments.utf8)))
            } catch {
                throw .malformedInfo
            }
        case "MSG", "HMSG":
            let parts = argumentBytes.split(whereSeparator: isBlank).map { String(decoding: $0, as: UTF8.self) }
            let withHeaders = operation == "HMSG"
            let sizes = withHeaders ? 2 : 1
            guard parts.count == 2 + sizes || parts.count == 3 + sizes,
                let sid = UInt64(parts[1]),
                let total = Int(parts[parts.count - 1]), total >= 0
            else { throw .malformedControlLine(String(text.prefix(200))) }
            let headerSize = withHeaders ? Int(parts[parts.count - 2]) : 0
            guard let headerSize, headerSize >= 0, headerSize <= total, !withHeaders || headerSize > 0 else {
                throw .malformedControlLine(String(text.prefix(200)))
            }
            guard total <= maxPayload else { throw .payloadTooLarge(size: total, limit: maxPayload) }
            let replyTo = parts.count == 3 + sizes ? parts[2] : nil
            pending = (parts[0], sid, replyTo, withHeaders ? headerSize : -1, total)
            return try payload(of: pending!)
        default:
            throw Self.unknownOperation(line)
        }
    }

    /// `MSG <subject> <sid> [reply] <size>` in ASCII (operation in any
    /// case, tokens separated by spaces and tabs), `sid` and `size` plain
    /// decimal digits: its fields. Nil for any other line, which the
    /// general path parses (or refuses).
    private static func messageLine(
        _ line: ArraySlice<UInt8>
    ) -> (subject: String, sid: UInt64, replyTo: String?, headerSize: Int, totalSize: Int)? {
        let first = line.startIndex
        guard line.count > 4, line[first] | 0x20 == 0x6D, line[first + 1] | 0x20 == 0x73, line[first + 2] | 0x20 == 0x67,
            line[first + 3] == 32 || line[first + 3] == 9
        else { return nil }
        // Up to 4 tokens after the operation; a fifth means another shape.
        var starts = (0, 0, 0, 0)
        var ends = (0, 0, 0, 0)
        var count = 0
        var index = first + 4
        let end = line.endIndex
        while index < end {
            let byte = line[index]
            if byte >= 0x80 { return nil }
            if byte == 32 || byte == 9 {
                index += 1
                continue
            }
            let tokenStart = index
            while index < end && line[index] != 32 && line[index] != 9 {
                if line[index] >= 0x80 { return nil }
                index += 1
            }
            switch count {
            case 0: (starts.0, ends.0) = (tokenStart, index)
            case 1: (starts.1, ends.1) = (tokenStart, index)
            case 2: (starts.2, ends.2) = (tokenStart, index)
            case 3: (starts.3, ends.3) = (tokenStart, index)
            default: return nil
            }
            count += 1
        }
        guard count == 3 || count == 4 else { return nil }
        func decimal(_ start: Int, _ end: Int) -> UInt64? {
            guard end > start, end - start <= 18 else { return nil }
            var value: UInt64 = 0
            for index in start..<end {
                let digit = line[index] &- 48
                guard digit < 10 else { return nil }
                value = value * 10 + UInt64(digit)
            }
            return value
        }
        guard let sid = decimal(starts.1, ends.1) else { return nil }
        let sizeRange = count == 4 ? (starts.3, ends.3) : (starts.2, ends.2)
        guard let total = decimal(sizeRange.0, sizeRange.1) else { return nil }
        let subject = String(decoding: line[starts.0..<ends.0], as: UTF8.self)
        let replyTo = count == 4 ? String(decoding: line[starts.2..<ends.2], as: UTF8.self) : nil
        return (subject, sid, replyTo, -1, Int(total))
    }

    private mutating func payload(
        of message: (subject: String, sid: UInt64, replyTo: String?, headerSize: Int, totalSize: Int)
    ) throws(NATSProtocolError) -> NATSServerFrame? {
        // (Not `totalSize + 2`: a server's `max_payload` may be as large as `Int.max`.)
        guard buffer.count - start - 2 >= message.totalSize else { return nil }
        let end = start + message.totalSize
        guard buffer[end] == 13 && buffer[end + 1] == 10 else { throw .missingPayloadTerminator }
        var headers = NATSHeaders()
        var bodyStart = start
        if message.headerSize >= 0 {
            guard let decoded = NATSHeaders.decode(buffer[start..<start + message.headerSize]) else {
                throw .malformedHeaders
            }
            headers = decoded
            bodyStart = start + message.headerSize
        }
        let payload = Array(buffer[bodyStart..<end])
        start = end + 2
        scanned = 0
        pending = nil
        return .message(
            NATSMessage(subject: message.subject, replyTo: message.replyTo, headers: headers, payload: payload),
            sid: message.sid
        )
    }
}

/// A command a client sends.
enum NATSClientCommand: Sendable, Equatable {
    case connect(json: String)
    case publish(subject: String, replyTo: String?, headers: NATSHeaders?, payload: [UInt8])
    case subscribe(subject: String, queueGroup: String?, sid: UInt64)
    case unsubscribe(sid: UInt64, max: Int?)
    case ping
    case pong

    /// The command's bytes, appended to `bytes`.
    func encode(into bytes: inout [UInt8]) {
        switch self {
        case .connect(let json):
            bytes.append(contentsOf: "CONNECT \(json)\r\n".utf8)
        case .publish(let subject, let replyTo, let headers, let payload):
            // Appended piece by piece: no string is made per publish.
            bytes.append(contentsOf: headers == nil ? "PUB ".utf8 : "HPUB ".utf8)
            bytes.append(contentsOf: subject.utf8)
            if let replyTo {
                bytes.append(32)
                bytes.append(contentsOf: replyTo.utf8)
            }
            if let headers {
                let block = headers.encoded
                bytes.append(32)
                Self.appendDecimal(block.count, to: &bytes)
                bytes.append(32)
                Self.appendDecimal(block.count + payload.count, to: &bytes)
                bytes.append(contentsOf: [13, 10])
                bytes.append(contentsOf: block)
            } else {
                bytes.append(32)
                Self.appendDecimal(payload.count, to: &bytes)
                bytes.append(contentsOf: [13, 10])
            }
            bytes.append(contentsOf: payload)
            bytes.append(contentsOf: [13, 10])
        case .subscribe(let subject, let queueGroup, let sid):
            let group = queueGroup.map { " \($0)" } ?? ""
            bytes.append(contentsOf: "SUB \(subject)\(group) \(sid)\r\n".utf8)
        case .unsubscribe(let sid, let max):
            bytes.append(contentsOf: "UNSUB \(sid)\(max.map { " \($0)" } ?? "")\r\n".utf8)
        case .ping:
            bytes.append(contentsOf: "PING\r\n".utf8)
        case .pong:
            bytes.append(contentsOf: "PONG\r\n".utf8)
        }
    }

    /// `value` (not negative) in decimal ASCII digits.
    private static func appendDecimal(_ value: Int, to bytes: inout [UInt8]) {
        var divisor = 1
        while divisor <= value / 10 { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            bytes.append(UInt8(48 + rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }

    /// The bytes of the message part (headers and payload) a `max_payload`
    /// limits.
    var payloadSize: Int {
        guard case .publish(_, _, let headers, let payload) = self else { return 0 }
        return (headers?.encoded.count ?? 0) + payload.count
    }

    /// Whether it is a publish (not a `PING` waiting in order behind them).
    var isPublish: Bool {
        if case .publish = self { return true }
        return false
    }

    /// The payload's bytes alone (what ``NATSStatistics`` counts).
    var bodySize: Int {
        guard case .publish(_, _, _, let payload) = self else { return 0 }
        return payload.count
    }
}

/// Whether `subject` can be published to (no wildcard) or, with
/// `wildcards`, subscribed to: non-empty tokens separated by dots, no
/// whitespace; `>` only as the last token.
func _isValidSubject(_ subject: String, wildcards: Bool) -> Bool {
    // ASCII, the common case, checked on its bytes (the same outcome as
    // the general path below, which iterates characters).
    if let valid = subject.utf8.withContiguousStorageIfAvailable({ _isValidASCIISubject($0, wildcards: wildcards) }),
        let valid
    {
        return valid
    }
    guard !subject.isEmpty, !subject.contains(where: { $0.isWhitespace }) else { return false }
    let tokens = subject.split(separator: ".", omittingEmptySubsequences: false)
    for (index, token) in tokens.enumerated() {
        if token.isEmpty { return false }
        if token == "*" || token == ">" {
            if !wildcards { return false }
            if token == ">" && index != tokens.count - 1 { return false }
        }
    }
    return true
}

/// `_isValidSubject` for an ASCII subject; nil when it is not ASCII.
private func _isValidASCIISubject(_ bytes: UnsafeBufferPointer<UInt8>, wildcards: Bool) -> Bool? {
    guard !bytes.isEmpty else { return false }
    var tokenStart = 0
    for index in 0...bytes.count {
        let byte = index < bytes.count ? bytes[index] : UInt8(ascii: ".")
        if byte >= 0x80 { return nil }
        // Character.isWhitespace in ASCII: tab, LF, VT, FF, CR, space.
        if byte == 32 || (byte >= 9 && byte <= 13) { return false }
        guard byte == UInt8(ascii: ".") else { continue }
        let length = index - tokenStart
        if length == 0 { return false }
        if length == 1, bytes[tokenStart] == UInt8(ascii: "*") || bytes[tokenStart] == UInt8(ascii: ">") {
            if !wildcards { return false }
            if bytes[tokenStart] == UInt8(ascii: ">") && index != bytes.count { return false }
        }
        tokenStart = index + 1
    }
    return true
}

/// Whether `group` can name a queue group.
func _isValidQueueGroup(_ group: String) -> Bool {
    !group.isEmpty && !group.contains(where: { $0.isWhitespace })
}
#endif  // NATS
