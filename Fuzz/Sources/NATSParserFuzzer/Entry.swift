// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import FuzzSupport

// SignalKitNATS's protocol parser against hostile byte streams (see
// README.md). `NATSProtocol.swift` here is a symbolic link to the library's
// own file (Foundation only, no NIO; `NATS` defined as the trait would), so
// this is the parser a connection runs.
//
// An input is two header bytes, the cuts, then the stream:
// - byte 0 picks the limits: its low three bits the largest payload, the
//   next three the longest control line (small ones reach the limit checks);
// - byte 1 modulo 8 is the number of cuts, each the next byte: the length
//   of a chunk (the stream is fed in those chunks, then the rest).
//
// Each input is checked for:
// - the same outcome whole and split: the same frames, then the same error
//   or none, and the same bytes left over (an unknown operation seen before
//   its line ended names the bytes that had arrived: a prefix of the
//   whole's);
// - a failed parser staying failed, with the same error;
// - every frame surviving its encoding: a message written back as `MSG` or
//   `HMSG`, an `-ERR` as `-ERR '…'`, parse to the same frame;
// - a message larger than the limit being `payloadTooLarge`, before its
//   payload arrives.
// As a connection does, an `INFO` replaces the largest payload.

let payloadLimits = [1_048_576, 0, 1, 4, 16, 64, 300, 4096]
let lineLimits = [65_536, 4, 8, 12, 16, 32, 64, 200]

/// What a parser made of a stream.
struct Outcome: Equatable {
    var frames: [NATSServerFrame] = []
    var error: NATSProtocolError?
    var leftOver = 0
}

struct Input {
    var maxPayload: Int
    var maxControlLine: Int
    var cuts: [Int]
    var stream: [UInt8]

    init(_ bytes: UnsafeRawBufferPointer) {
        let limits = bytes.first ?? 0
        maxPayload = payloadLimits[Int(limits & 7)]
        maxControlLine = lineLimits[Int(limits >> 3 & 7)]
        let cutCount = bytes.count > 1 ? Int(bytes[1] % 8) : 0
        cuts = bytes.dropFirst(2).prefix(cutCount).map(Int.init)
        stream = Array(bytes.dropFirst(2 + cutCount))
    }

    /// The stream in chunks: one per cut, then the rest.
    var chunks: [ArraySlice<UInt8>] {
        var chunks: [ArraySlice<UInt8>] = []
        var start = 0
        for cut in cuts {
            let end = min(stream.count, start + cut)
            chunks.append(stream[start..<end])
            start = end
        }
        chunks.append(stream[start...])
        return chunks
    }
}

/// Feeds `chunks` in turn, taking every frame after each.
func run(_ chunks: [ArraySlice<UInt8>], maxPayload: Int, maxControlLine: Int) -> (Outcome, String?) {
    var parser = NATSFrameParser(maxPayload: maxPayload, maxControlLine: maxControlLine)
    var outcome = Outcome()
    for chunk in chunks {
        parser.append(chunk)
        do {
            while let frame = try parser.next() {
                if case .info(let info) = frame { parser.maxPayload = info.maxPayload }
                outcome.frames.append(frame)
            }
        } catch {
            outcome.error = error
            // Failed for good: the same error again, whatever comes.
            parser.append(Array("PING\r\n".utf8))
            do {
                let frame = try parser.next()
                return (outcome, "a failed parser (\(error)) went on with \(String(describing: frame))")
            } catch let again {
                if again != error { return (outcome, "a failed parser (\(error)) then threw \(again)") }
            }
            return (outcome, nil)
        }
    }
    outcome.leftOver = parser.bufferedByteCount
    return (outcome, nil)
}

/// Whether `split`'s error is `whole`'s (an early unknown operation may
/// name fewer bytes).
func sameError(whole: NATSProtocolError?, split: NATSProtocolError?) -> Bool {
    if case .unknownOperation(let a) = whole, case .unknownOperation(let b) = split {
        return a.hasPrefix(b)
    }
    return whole == split
}

/// A frame as a server would send it, or nil where that is not defined
/// (`INFO` is only decoded).
func encoded(_ frame: NATSServerFrame) -> [UInt8]? {
    switch frame {
    case .info: return nil
    case .ping: return Array("PING\r\n".utf8)
    case .pong: return Array("PONG\r\n".utf8)
    case .ok: return Array("+OK\r\n".utf8)
    case .error(let text): return Array("-ERR '\(text)'\r\n".utf8)
    case .message(let message, let sid):
        let reply = message.replyTo.map { " \($0)" } ?? ""
        var bytes: [UInt8]
        if message.headers.isEmpty {
            bytes = Array("MSG \(message.subject) \(sid)\(reply) \(message.payload.count)\r\n".utf8)
        } else {
            let block = message.headers.encoded
            bytes = Array("HMSG \(message.subject) \(sid)\(reply) \(block.count) \(block.count + message.payload.count)\r\n".utf8)
            bytes += block
        }
        return bytes + message.payload + [13, 10]
    }
}

func check(_ bytes: UnsafeRawBufferPointer) -> String? {
    let input = Input(bytes)
    let (whole, wholeFinding) = run([input.stream[...]], maxPayload: input.maxPayload, maxControlLine: input.maxControlLine)
    if let wholeFinding { return "whole: \(wholeFinding)" }
    let (split, splitFinding) = run(input.chunks, maxPayload: input.maxPayload, maxControlLine: input.maxControlLine)
    if let splitFinding { return "split: \(splitFinding)" }
    guard whole.frames == split.frames, sameError(whole: whole.error, split: split.error), whole.leftOver == split.leftOver else {
        return "whole and split differ:\n  whole: \(whole)\n  split: \(split)"
    }
    for frame in whole.frames {
        guard let again = encoded(frame) else { continue }
        let (parsed, finding) = run([again[...]], maxPayload: Int.max / 2, maxControlLine: Int.max / 2)
        if let finding { return "re-encoded \(frame): \(finding)" }
        guard parsed.frames == [frame], parsed.error == nil, parsed.leftOver == 0 else {
            return "\(frame) re-encoded as \(String(decoding: again, as: UTF8.self).debugDescription) parses as \(parsed)"
        }
    }
    // A message one byte (or more) over the limit: refused from its control line.
    let over = input.maxPayload + 1 + Int(bytes.last ?? 0)
    for line in ["MSG a.b 1 \(over)\r\n", "HMSG a.b 1 _INBOX.x 1 \(over)\r\n"] {
        let (outcome, _) = run([Array(line.utf8)[...]], maxPayload: input.maxPayload, maxControlLine: 65_536)
        guard outcome.frames.isEmpty, outcome.error == .payloadTooLarge(size: over, limit: input.maxPayload) else {
            return "\(line.debugDescription) with a limit of \(input.maxPayload): \(outcome)"
        }
    }
    return nil
}

@main
enum NATSParserFuzzer {
    static func main() {
        FuzzMain.run(
            check,
            describe: { bytes in
                let input = Input(bytes)
                return "limits: payload \(input.maxPayload), control line \(input.maxControlLine); cuts \(input.cuts)\n"
                    + "stream: \(String(decoding: input.stream, as: UTF8.self).debugDescription)"
            })
    }
}
