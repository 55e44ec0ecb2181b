// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if NATS
import Foundation
import SignalKit
@testable import SignalKitNATS
import Testing

/// The protocol's frames: a recorded server stream parsed whole and split
/// at every offset, garbage and oversized messages, and the encoder.
@Suite struct ParserTests {
    /// A server's stream as recorded from nats-server 2.9.10 (INFO trimmed
    /// to the fields this client reads), with every frame kind.
    static let recorded: [UInt8] = Array(
        (#"INFO {"server_id":"NA3","version":"2.9.10","max_payload":1048576,"headers":true,"#
            + #""connect_urls":["10.0.0.2:4222"]}"# + "\r\n"
            + "+OK\r\nPING\r\nPONG\r\n"
            + "MSG orders.created 1 5\r\nhello\r\n"
            + "MSG orders.created 12 _INBOX.abc.1 0\r\n\r\n"
            + "msg a.b 3 4\r\n\r\n\r\n\r\n"
            + "HMSG orders.x 2 _INBOX.r.7 33 36\r\nNATS/1.0\r\nA: 1\r\nTrace-Id: abc\r\n\r\nxyz\r\n"
            + "HMSG _INBOX.r.8 9 16 16\r\nNATS/1.0 503\r\n\r\n\r\n"
            + "-ERR 'Permissions Violation for Subscription to \"secret\"'\r\n").utf8)

    static let expected: [NATSServerFrame] = {
        var headers: NATSHeaders = ["A": "1", "Trace-Id": "abc"]
        headers.status = nil
        return [
            .ok, .ping, .pong,
            .message(NATSMessage(subject: "orders.created", payload: Array("hello".utf8)), sid: 1),
            .message(NATSMessage(subject: "orders.created", replyTo: "_INBOX.abc.1", payload: []), sid: 12),
            .message(NATSMessage(subject: "a.b", payload: Array("\r\n\r\n".utf8)), sid: 3),
            .message(
                NATSMessage(subject: "orders.x", replyTo: "_INBOX.r.7", headers: headers, payload: Array("xyz".utf8)), sid: 2),
            .message(NATSMessage(subject: "_INBOX.r.8", headers: NATSHeaders(status: 503), payload: []), sid: 9),
            .error("Permissions Violation for Subscription to \"secret\""),
        ]
    }()

    /// The frames of `chunks` fed one after the other.
    static func parse(_ chunks: [ArraySlice<UInt8>], maxPayload: Int = 1_048_576) throws -> [NATSServerFrame] {
        var parser = NATSFrameParser(maxPayload: maxPayload)
        var frames: [NATSServerFrame] = []
        for chunk in chunks {
            parser.append(chunk)
            frames += try parser.frames()
        }
        #expect(parser.bufferedByteCount == 0)
        return frames
    }

    @Test func aRecordedStreamParsesWhole() throws {
        let frames = try Self.parse([Self.recorded[...]])
        guard case .info(let info) = frames.first else {
            Issue.record("no INFO first: \(frames)")
            return
        }
        #expect(info.serverID == "NA3")
        #expect(info.maxPayload == 1_048_576)
        #expect(info.headers)
        #expect(info.connectURLs == ["10.0.0.2:4222"])
        #expect(Array(frames.dropFirst()) == Self.expected)
    }

    @Test func everySplitInTwoGivesTheSameFrames() throws {
        let whole = try Self.parse([Self.recorded[...]])
        for offset in 0...Self.recorded.count {
            let split = try Self.parse([Self.recorded[..<offset], Self.recorded[offset...]])
            #expect(split == whole, "split at \(offset)")
        }
    }

    @Test func byteByByteGivesTheSameFrames() throws {
        let whole = try Self.parse([Self.recorded[...]])
        let bytes = try Self.parse(Self.recorded.indices.map { Self.recorded[$0...$0] })
        #expect(bytes == whole)
    }

    @Test func everySplitInThreeGivesTheSameFrames() throws {
        let whole = try Self.parse([Self.recorded[...]])
        let count = Self.recorded.count
        for first in stride(from: 0, through: count, by: 7) {
            for second in first...count {
                let frames = try Self.parse([
                    Self.recorded[..<first], Self.recorded[first..<second], Self.recorded[second...],
                ])
                #expect(frames == whole, "split at \(first), \(second)")
            }
        }
    }

    @Test(arguments: [
        ("HELLO world\r\n", NATSProtocolError.unknownOperation("HELLO world")),
        ("GARBAGE", NATSProtocolError.unknownOperation("GARBAGE")),
        ("MSG a\r\n", NATSProtocolError.malformedControlLine("MSG a")),
        ("MSG a x 3\r\n", NATSProtocolError.malformedControlLine("MSG a x 3")),
        ("MSG a 1 -3\r\n", NATSProtocolError.malformedControlLine("MSG a 1 -3")),
        ("HMSG a 1 9 4\r\n", NATSProtocolError.malformedControlLine("HMSG a 1 9 4")),
        ("MSG a 1 3\r\nabcd\r\n", NATSProtocolError.missingPayloadTerminator),
        ("HMSG a 1 6 6\r\nHTTP\r\n\r\n", NATSProtocolError.malformedHeaders),
        ("INFO {nope\r\n", NATSProtocolError.malformedInfo),
    ])
    func garbageIsATypedError(stream: String, error: NATSProtocolError) {
        var parser = NATSFrameParser()
        parser.append(Array(stream.utf8))
        #expect(throws: error) { try parser.frames() }
        // The parser stays failed.
        parser.append(Array("PING\r\n".utf8))
        #expect(throws: error) { try parser.next() }
    }

    @Test func garbageIsSeenBeforeItsLineEnds() {
        var parser = NATSFrameParser()
        parser.append(Array("PING\r\nXY".utf8))
        #expect(throws: NATSProtocolError.unknownOperation("XY")) { try parser.frames() }
    }

    @Test func anOversizedMessageIsATypedErrorBeforeItsPayloadArrives() throws {
        var parser = NATSFrameParser(maxPayload: 100)
        parser.append(Array("MSG a 1 100\r\n".utf8) + Array(repeating: 65, count: 100) + [13, 10])
        #expect(try parser.frames().count == 1)
        parser.append(Array("MSG a 1 101\r\n".utf8))
        #expect(throws: NATSProtocolError.payloadTooLarge(size: 101, limit: 100)) { try parser.next() }
        var headers = NATSFrameParser(maxPayload: 100)
        headers.append(Array("HMSG a 1 12 1000\r\n".utf8))
        #expect(throws: NATSProtocolError.payloadTooLarge(size: 1000, limit: 100)) { try headers.next() }
    }

    @Test func anEndlessControlLineIsATypedError() {
        var parser = NATSFrameParser(maxControlLine: 64)
        parser.append(Array("MSG ".utf8) + Array(repeating: 97, count: 80))
        #expect(throws: NATSProtocolError.controlLineTooLong(limit: 64)) { try parser.next() }
    }

    /// The outcome of `stream` fed in `chunks`: its frames, then its error.
    static func outcome(
        _ chunks: [ArraySlice<UInt8>], maxPayload: Int = 1_048_576, maxControlLine: Int = 65_536
    ) -> ([NATSServerFrame], NATSProtocolError?) {
        var parser = NATSFrameParser(maxPayload: maxPayload, maxControlLine: maxControlLine)
        var frames: [NATSServerFrame] = []
        for chunk in chunks {
            parser.append(chunk)
            do {
                while let frame = try parser.next() {
                    if case .info(let info) = frame { parser.maxPayload = info.maxPayload }
                    frames.append(frame)
                }
            } catch {
                return (frames, error)
            }
        }
        return (frames, nil)
    }

    /// Whether `split`'s error is `whole`'s: the same, or, for an unknown
    /// operation refused before its line ended, a name of the bytes that had
    /// arrived (a prefix of the whole's).
    static func sameError(_ split: NATSProtocolError?, as whole: NATSProtocolError?) -> Bool {
        if case .unknownOperation(let splitName) = split, case .unknownOperation(let wholeName) = whole {
            return wholeName.hasPrefix(splitName)
        }
        return split == whole
    }

    /// `stream` whole, split in two at every offset and byte by byte: the
    /// same frames and the same error each time.
    static func expectSameOutcomeSplitAnywhere(
        _ stream: [UInt8], maxControlLine: Int = 65_536, _ expected: ([NATSServerFrame], NATSProtocolError?),
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let whole = outcome([stream[...]], maxControlLine: maxControlLine)
        #expect(whole.0 == expected.0 && whole.1 == expected.1, "whole: \(whole)", sourceLocation: sourceLocation)
        for offset in 0...stream.count {
            let split = outcome([stream[..<offset], stream[offset...]], maxControlLine: maxControlLine)
            #expect(
                split.0 == whole.0 && sameError(split.1, as: whole.1), "split at \(offset): \(split)",
                sourceLocation: sourceLocation)
        }
        let bytes = outcome(stream.indices.map { stream[$0...$0] }, maxControlLine: maxControlLine)
        #expect(bytes.0 == whole.0 && sameError(bytes.1, as: whole.1), "byte by byte: \(bytes)", sourceLocation: sourceLocation)
    }

    @Test func aControlLineOverTheLimitFailsWholeAsItDoesSplit() {
        // A line of 14 bytes: accepted, however it arrives; of 15: refused, however it arrives.
        let fits = Array("MSG a.b.cd 1 2\r\nhi\r\n".utf8)
        Self.expectSameOutcomeSplitAnywhere(
            fits, maxControlLine: 14, ([.message(NATSMessage(subject: "a.b.cd", payload: Array("hi".utf8)), sid: 1)], nil))
        let over = Array("MSG a.b.cde 1 2\r\nhi\r\n".utf8)
        Self.expectSameOutcomeSplitAnywhere(over, maxControlLine: 14, ([], .controlLineTooLong(limit: 14)))
    }

    @Test func anUnknownOperationIsNamedTheSameWholeAndSplit() {
        // Named up to its first CR, whether its line has ended or not.
        let stream = Array("PING\r\nHELLO\rworld\r\n".utf8)
        Self.expectSameOutcomeSplitAnywhere(stream, ([.ping], .unknownOperation("HELLO")))
        for offset in 11...stream.count {
            #expect(Self.outcome([stream[..<offset], stream[offset...]]).1 == .unknownOperation("HELLO"), "split at \(offset)")
        }
    }

    @Test func operationsAreComparedInASCII() {
        // "ı" (dotless i) upper-cases to "I" in Unicode: not an INFO.
        Self.expectSameOutcomeSplitAnywhere(Array("ınfo {}\r\n".utf8), ([], .unknownOperation("??nfo {}")))
    }

    @Test func argumentsAreSplitOnBytes() {
        // A space then a combining mark is one `Character`, but two arguments.
        Self.expectSameOutcomeSplitAnywhere(
            Array("MSG a \u{301}b 2\r\nhi\r\n".utf8), ([], .malformedControlLine("MSG a \u{301}b 2")))
        Self.expectSameOutcomeSplitAnywhere(
            Array("-ERR '\u{301}x'\r\n".utf8), ([.error("\u{301}x")], nil))
    }

    @Test func aServerMaxPayloadOfIntMaxDoesNotOverflow() {
        // The payload's size plus its CRLF is past `Int.max`: the parser waits for it.
        let info = Array(#"INFO {"max_payload":9223372036854775807}"#.utf8) + [13, 10]
        let (frames, error) = Self.outcome([info[...], Array("MSG a 1 9223372036854775807\r\nxx".utf8)[...]])
        #expect(frames.count == 1)
        #expect(error == nil)
    }

    @Test func theEncoderWritesEachCommand() {
        func encoded(_ command: NATSClientCommand) -> String {
            var bytes: [UInt8] = []
            command.encode(into: &bytes)
            return String(decoding: bytes, as: UTF8.self)
        }
        #expect(encoded(.connect(json: #"{"verbose":false}"#)) == "CONNECT {\"verbose\":false}\r\n")
        #expect(encoded(.publish(subject: "a.b", replyTo: nil, headers: nil, payload: Array("hi".utf8))) == "PUB a.b 2\r\nhi\r\n")
        #expect(encoded(.publish(subject: "a", replyTo: "r.1", headers: nil, payload: [])) == "PUB a r.1 0\r\n\r\n")
        #expect(
            encoded(.publish(subject: "a", replyTo: "r", headers: ["K": "v"], payload: Array("xy".utf8)))
                == "HPUB a r 18 20\r\nNATS/1.0\r\nK: v\r\n\r\nxy\r\n")
        #expect(encoded(.subscribe(subject: "a.*", queueGroup: nil, sid: 7)) == "SUB a.* 7\r\n")
        #expect(encoded(.subscribe(subject: "a.>", queueGroup: "workers", sid: 8)) == "SUB a.> workers 8\r\n")
        #expect(encoded(.unsubscribe(sid: 8, max: nil)) == "UNSUB 8\r\n")
        #expect(encoded(.unsubscribe(sid: 8, max: 1)) == "UNSUB 8 1\r\n")
        #expect(encoded(.ping) == "PING\r\n")
        #expect(encoded(.pong) == "PONG\r\n")
    }

    @Test func encodedPublishesParseBackAsMessages() throws {
        let headers: NATSHeaders = ["traceparent": "00-abc-def-01", "X": "a: b"]
        var bytes: [UInt8] = []
        NATSClientCommand.publish(subject: "s", replyTo: "r", headers: headers, payload: Array("body".utf8))
            .encode(into: &bytes)
        // A server's MSG mirrors a PUB: rename the operation, insert a sid.
        let text = String(decoding: bytes, as: UTF8.self).replacingFirst("HPUB s r", with: "HMSG s 5 r")
        let frames = try Self.parse([Array(text.utf8)[...]])
        #expect(
            frames == [.message(NATSMessage(subject: "s", replyTo: "r", headers: headers, payload: Array("body".utf8)), sid: 5)])
    }

    @Test func subjectsAreChecked() {
        #expect(_isValidSubject("a.b.c", wildcards: false))
        #expect(!_isValidSubject("a.*", wildcards: false))
        #expect(_isValidSubject("a.*.c", wildcards: true))
        #expect(_isValidSubject("a.>", wildcards: true))
        #expect(!_isValidSubject("a.>.c", wildcards: true))
        #expect(!_isValidSubject("a..b", wildcards: true))
        #expect(!_isValidSubject("a b", wildcards: true))
        #expect(!_isValidSubject("", wildcards: true))
        // ASCII subjects are checked on their bytes, others by characters: the same rules.
        #expect(!_isValidSubject("a.b\r\n", wildcards: false))
        #expect(!_isValidSubject("a.\tb", wildcards: false))
        #expect(!_isValidSubject("a.", wildcards: true))
        #expect(!_isValidSubject(".a", wildcards: true))
        #expect(_isValidSubject(">", wildcards: true))
        #expect(!_isValidSubject(">", wildcards: false))
        #expect(_isValidSubject("a.*x.>y", wildcards: false))
        #expect(_isValidSubject("é.b", wildcards: false))
        #expect(!_isValidSubject("é.\u{00A0}", wildcards: false))
        #expect(!_isValidSubject("é..b", wildcards: false))
        #expect(!_isValidSubject("é.>.b", wildcards: true))
    }

    @Test func messageLinesParseAlikeWhateverTheirShape() throws {
        // Read on their bytes (ASCII, decimal sid and size) or by the general
        // path (anything else): the same frames.
        let frames = try Self.parse([
            Array("MsG\ta.b  7\tr.1   2 \r\nhi\r\nMSG é 0012 1\r\nx\r\nMSG a +3 1\r\ny\r\n".utf8)[...]
        ])
        #expect(
            frames == [
                .message(NATSMessage(subject: "a.b", replyTo: "r.1", payload: Array("hi".utf8)), sid: 7),
                .message(NATSMessage(subject: "é", payload: Array("x".utf8)), sid: 12),
                .message(NATSMessage(subject: "a", payload: Array("y".utf8)), sid: 3),
            ])
        Self.expectSameOutcomeSplitAnywhere(
            Array("MSG a 1 2 3 4\r\n".utf8), ([], .malformedControlLine("MSG a 1 2 3 4")))
    }

    @Test func serversParse() {
        #expect(_Endpoint("nats://127.0.0.1:4333")?.description == "127.0.0.1:4333")
        #expect(_Endpoint("localhost")?.description == "localhost:4222")
        #expect(_Endpoint("nats://u:p@h:1/")?.description == "h:1")
        #expect(_Endpoint("h:0") == nil)
        #expect(_Endpoint("") == nil)
    }
}

extension String {
    fileprivate func replacingFirst(_ target: String, with replacement: String) -> String {
        guard let range = range(of: target) else { return self }
        var copy = self
        copy.replaceSubrange(range, with: replacement)
        return copy
    }
}
#endif
