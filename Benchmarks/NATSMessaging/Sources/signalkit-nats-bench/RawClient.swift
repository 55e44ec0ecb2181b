// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The floor's client: a blocking POSIX socket speaking NATS's text
/// protocol by hand. Frames to send are pre-built bytes; received frames
/// are scanned in place (no object per message).
final class RawConnection: @unchecked Sendable {  // one reading thread and one writing thread, each its own half
    let fd: Int32
    private var buffer: UnsafeMutableRawPointer
    private let capacity = 1 << 20
    private var start = 0
    private var end = 0
    /// Payload bytes (and their CRLF) still to skip, across reads.
    private var skip = 0

    /// Connects to `host:port` and completes the handshake (`INFO`, then
    /// `CONNECT` and a `PING` answered by `PONG`).
    init(host: String, port: Int) throws(BenchError) {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BenchError("socket() failed") }
        buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, host, &address.sin_addr)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw BenchError("connect to \(host):\(port) failed (errno \(errno))") }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        _ = try readFrames(onMessage: { _, _ in })  // INFO (a control line, skipped)
        try ping(after: "CONNECT {\"verbose\":false,\"pedantic\":false,\"echo\":false,\"headers\":false}\r\n")
    }

    /// Sends `commands` and a `PING`, and reads until its `PONG` (every
    /// command before it was processed); `MSG` frames meanwhile are skipped.
    func ping(after commands: String = "") throws(BenchError) {
        send(Array((commands + "PING\r\n").utf8))
        var pong = false
        while !pong {
            _ = try readFrames(
                onControl: { line, length in
                    if length == 4 && line[0] == UInt8(ascii: "P") && line[1] == UInt8(ascii: "O") { pong = true }
                },
                onMessage: { _, _ in })
        }
    }

    deinit {
        close(fd)
        buffer.deallocate()
    }

    /// Writes all of `bytes`.
    func send(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = write(fd, raw.baseAddress! + offset, raw.count - offset)
                if written <= 0 {
                    if written < 0 && errno == EINTR { continue }
                    return
                }
                offset += written
            }
        }
    }

    /// Stops the reading thread's `read` (it then returns 0).
    func shutdownBoth() {
        shutdown(fd, Int32(SHUT_RDWR))
    }

    /// Reads once and scans every complete frame: `onMessage` with each
    /// `MSG` control line (pointer, length; its payload is skipped),
    /// `onControl` with any other line (`PING` is answered here). Returns
    /// the number of `MSG` frames; throws when the socket closes.
    @inline(__always)
    func readFrames(
        onControl: (UnsafePointer<UInt8>, Int) -> Void = { _, _ in },
        onMessage: (UnsafePointer<UInt8>, Int) -> Void
    ) throws(BenchError) -> Int {
        if start == end {
            start = 0
            end = 0
        } else if end == capacity {
            memmove(buffer, buffer + start, end - start)
            end -= start
            start = 0
        }
        let count = read(fd, buffer + end, capacity - end)
        guard count > 0 else { throw BenchError("connection closed") }
        end += count
        let bytes = buffer.assumingMemoryBound(to: UInt8.self)
        var messages = 0
        while start < end {
            if skip > 0 {
                let taken = min(skip, end - start)
                skip -= taken
                start += taken
                continue
            }
            guard let newline = memchr(bytes + start, 0x0A, end - start) else { break }
            let lineEnd = buffer.distance(to: UnsafeMutableRawPointer(newline))
            let line = UnsafePointer(bytes + start)
            let length = lineEnd - start - 1  // without CR LF
            if bytes[start] == UInt8(ascii: "M") {
                // MSG <subject> <sid> [reply] <size>: the size is the last token.
                var size = 0
                var multiplier = 1
                var index = lineEnd - 2
                while index > start && bytes[index] != UInt8(ascii: " ") {
                    size += Int(bytes[index] &- 48) * multiplier
                    multiplier *= 10
                    index -= 1
                }
                onMessage(line, length)
                messages += 1
                skip = size + 2
            } else if bytes[start] == UInt8(ascii: "P") && length == 4 && bytes[start + 1] == UInt8(ascii: "I") {
                send(Array("PONG\r\n".utf8))
            } else {
                onControl(line, length)
            }
            start = lineEnd + 1
        }
        return messages
    }
}

/// `count` `PUB subject 64` frames with a 64-byte payload, back to back.
func pubFrames(subject: String, replyTo: String? = nil, count: Int) -> [UInt8] {
    let one = Array("PUB \(subject)\(replyTo.map { " " + $0 } ?? "") 64\r\n".utf8) + benchPayload + [13, 10]
    var frames: [UInt8] = []
    frames.reserveCapacity(one.count * count)
    for _ in 0..<count { frames += one }
    return frames
}

/// The 64-byte payload every peer sends.
let benchPayload = [UInt8](repeating: UInt8(ascii: "x"), count: 64)

/// W20's responder for every peer: a raw connection on its own thread
/// that answers each request on `subject` with a 64-byte reply, written
/// as soon as the request's control line is scanned.
final class RawResponder: @unchecked Sendable {  // the connection is used by the responder thread only, then shut down
    let connection: RawConnection
    private let stopped = DispatchSemaphoreLike()

    init(host: String, port: Int, subject: String) throws(BenchError) {
        connection = try RawConnection(host: host, port: port)
        try connection.ping(after: "SUB \(subject) 1\r\n")
        let connection = self.connection
        let stopped = self.stopped
        startThread {
            respond(connection)
            stopped.signal()
        }
    }

    func stop() {
        connection.shutdownBoth()
        stopped.wait()
    }
}

/// The responder's loop (until its socket is shut down).
@inline(never)
func respond(_ connection: RawConnection) {
    var reply: [UInt8] = []
    reply.reserveCapacity(256)
    let tail = Array(" 64\r\n".utf8) + benchPayload + [13, 10]
    while true {
        do {
            _ = try connection.readFrames { line, length in
                // MSG <subject> <sid> <reply> <size>: the fourth token.
                var tokens: [(Int, Int)] = []
                var index = 0
                while index < length {
                    while index < length && line[index] == UInt8(ascii: " ") { index += 1 }
                    let first = index
                    while index < length && line[index] != UInt8(ascii: " ") { index += 1 }
                    if index > first { tokens.append((first, index)) }
                }
                guard tokens.count == 5 else { return }
                reply.removeAll(keepingCapacity: true)
                reply += "PUB ".utf8
                reply.append(contentsOf: UnsafeBufferPointer(start: line + tokens[3].0, count: tokens[3].1 - tokens[3].0))
                reply += tail
                connection.send(reply)
            }
        } catch {
            return
        }
    }
}

/// A thread of its own (not the cooperative pool, not a Dispatch worker).
func startThread(_ body: @escaping @Sendable () -> Void) {
    final class Box: @unchecked Sendable {  // handed to the new thread once
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    var thread = pthread_t()
    let box = Unmanaged.passRetained(Box(body)).toOpaque()
    pthread_create(
        &thread, nil,
        { argument in
            let box = Unmanaged<AnyObject>.fromOpaque(argument!).takeRetainedValue()
            (box as! Box).body()
            return nil
        }, box)
    pthread_detach(thread)
}

/// A counting semaphore on a pthread mutex and condition.
final class DispatchSemaphoreLike: @unchecked Sendable {  // its state is guarded by its own mutex
    private var mutex = pthread_mutex_t()
    private var condition = pthread_cond_t()
    private var value = 0

    init() {
        pthread_mutex_init(&mutex, nil)
        pthread_cond_init(&condition, nil)
    }

    func signal() {
        pthread_mutex_lock(&mutex)
        value += 1
        pthread_cond_signal(&condition)
        pthread_mutex_unlock(&mutex)
    }

    func wait() {
        pthread_mutex_lock(&mutex)
        while value == 0 { pthread_cond_wait(&condition, &mutex) }
        value -= 1
        pthread_mutex_unlock(&mutex)
    }

    /// Waits up to `seconds`; whether it was signalled.
    func wait(seconds: Double) -> Bool {
        var deadline = timespec()
        clock_gettime(CLOCK_REALTIME, &deadline)
        let nanoseconds = Int(deadline.tv_nsec) + Int(seconds * 1e9)
        deadline.tv_sec += nanoseconds / 1_000_000_000
        deadline.tv_nsec = nanoseconds % 1_000_000_000
        pthread_mutex_lock(&mutex)
        while value == 0 {
            if pthread_cond_timedwait(&condition, &mutex, &deadline) == ETIMEDOUT { break }
        }
        let signalled = value > 0
        if signalled { value -= 1 }
        pthread_mutex_unlock(&mutex)
        return signalled
    }
}

/// CLOCK_MONOTONIC in nanoseconds (the same clock as Python's
/// `time.clock_gettime_ns(time.CLOCK_MONOTONIC)`).
@inline(__always)
func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
