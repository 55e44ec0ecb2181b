// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitNATS
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// The timed bodies of W19–W21 for SignalKitNATS and the raw-socket floor
// (nats-py's are in nats_py_peer.py). Each returns its figures in the
// order of its workload's rows, or throws `BenchError` ("CHECK FAILED" on
// a lost message).

/// The server the script started.
struct Server: Sendable {
    let url: String
    let host: String
    let port: Int

    init(url: String) throws(BenchError) {
        var rest = Substring(url)
        if let scheme = rest.range(of: "://") { rest = rest[scheme.upperBound...] }
        guard let colon = rest.lastIndex(of: ":"), let port = Int(rest[rest.index(after: colon)...]) else {
            throw BenchError("--url needs nats://HOST:PORT, got \(url)")
        }
        self.url = url
        host = String(rest[..<colon]) == "localhost" ? "127.0.0.1" : String(rest[..<colon])
        self.port = port
    }
}

/// A message counter for delivery callbacks.
final class Counter: Sendable {
    private let value = Atomic(0)
    private let failures = Mutex<[String]>([])

    @inline(__always)
    func increment() -> Int { value.wrappingAdd(1, ordering: .relaxed).newValue }
    var count: Int { value.load(ordering: .relaxed) }
    func fail(_ text: String) { failures.withLock { $0.append(text) } }
    var failed: [String] { failures.withLock { $0 } }
}

/// Runs `body` on the cooperative pool and waits for it on this thread.
func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let result = Mutex<Result<T, any Error>?>(nil)
    let done = DispatchSemaphoreLike()
    Task {
        let outcome: Result<T, any Error>
        do { outcome = .success(try await body()) } catch { outcome = .failure(error) }
        result.withLock { $0 = outcome }
        done.signal()
    }
    done.wait()
    return try result.withLock { $0! }.get()
}

/// A SignalKitNATS connection to `server`, connected. Its publish buffer
/// is unbounded: a publisher faster than the socket waits in memory (at
/// most the run's messages) instead of failing beyond 1,024 (the default
/// `failing` policy), so no publish is refused or dropped.
func connectSignalKit(_ server: Server, name: String) throws -> NATSConnection {
    let options = NATSOptions(servers: [server.url], name: name, publishBuffer: .unbounded)
    let connection = NATSConnection(options)
    let connected = DispatchSemaphoreLike()
    let handle = connection.state.start(next: { state in
        if case .connected = state { connected.signal() }
    })
    defer { handle.dispose() }
    guard connected.wait(seconds: 10) else { throw BenchError("SignalKitNATS did not connect to \(server.url)") }
    return connection
}

// MARK: - W19 publish → subscribe

/// SignalKit's W19: `publisher` publishes `count` messages to `subject`,
/// `subscriber` receives them on `messages(subject)`. Returns end-to-end
/// messages/s (first publish to last delivery) and the publisher's alone
/// (first publish to its `flush()`).
@inline(never)
func signalKitPublishSubscribe(
    publisher: NATSConnection,
    subscriber: NATSConnection,
    subject: String,
    count: Int
) throws -> [Double] {
    let counter = Counter()
    let done = DispatchSemaphoreLike()
    let handle = subscriber.messages(subject).start(
        next: { _ in
            if counter.increment() == count { done.signal() }
        },
        error: { counter.fail("subscription failed: \($0)") }
    )
    defer { handle.dispose() }
    try blocking { try await subscriber.flush() }
    let payload = benchPayload
    let start = monotonicNanoseconds()
    for _ in 0..<count {
        try publisher.publish(subject, payload: payload)
    }
    try blocking { try await publisher.flush(timeout: .seconds(60)) }
    let published = monotonicNanoseconds()
    let arrived = done.wait(seconds: 120)
    let end = monotonicNanoseconds()
    guard arrived, counter.failed.isEmpty, publisher.droppedPublishes == 0 else {
        throw BenchError(
            "CHECK FAILED: SignalKit W19 received \(counter.count) of \(count) \(counter.failed) "
                + "(dropped publishes \(publisher.droppedPublishes))")
    }
    return [Double(count) / (Double(end - start) / 1e9), Double(count) / (Double(published - start) / 1e9)]
}

/// The floor's W19: one thread writes pre-built `PUB` frames in batches of
/// 1,000 on one socket, this one reads and counts `MSG` frames on another.
@inline(never)
func floorPublishSubscribe(server: Server, subject: String, count: Int) throws -> [Double] {
    let subscriber = try RawConnection(host: server.host, port: server.port)
    try subscriber.ping(after: "SUB \(subject) 1\r\n")
    let publisher = try RawConnection(host: server.host, port: server.port)
    let batch = 1_000
    let frames = pubFrames(subject: subject, count: batch)
    let remainder = pubFrames(subject: subject, count: count % batch)
    let published = Atomic<UInt64>(0)
    let start = monotonicNanoseconds()
    startThread {
        for _ in 0..<(count / batch) { publisher.send(frames) }
        publisher.send(remainder)
        // The publisher's own flush: a PING answered after every PUB.
        try? publisher.ping()
        published.store(monotonicNanoseconds(), ordering: .releasing)
    }
    var received = 0
    while received < count {
        received += try subscriber.readFrames { _, _ in }
    }
    let end = monotonicNanoseconds()
    var publishedAt = published.load(ordering: .acquiring)
    while publishedAt == 0 {
        usleep(100)
        publishedAt = published.load(ordering: .acquiring)
    }
    guard received == count else { throw BenchError("CHECK FAILED: floor W19 received \(received) of \(count)") }
    return [Double(count) / (Double(end - start) / 1e9), Double(count) / (Double(publishedAt - start) / 1e9)]
}

// MARK: - W20 request/reply

/// SignalKit's W20: `count` requests one after the other, each timed from
/// `request(...).start` to its completion on this thread. Returns p50
/// and p99 in µs.
@inline(never)
func signalKitRequests(_ connection: NATSConnection, subject: String, count: Int) throws -> [Double] {
    var samples: [UInt64] = []
    samples.reserveCapacity(count)
    let done = DispatchSemaphoreLike()
    let counter = Counter()
    let payload = benchPayload
    for _ in 0..<count {
        let start = monotonicNanoseconds()
        let handle = connection.request(subject, payload: payload).start(
            next: { message in
                if message.payload.count == 64 { _ = counter.increment() }
            },
            error: { error in
                counter.fail("\(error)")
                done.signal()
            },
            completed: { done.signal() }
        )
        done.wait()
        samples.append(monotonicNanoseconds() - start)
        handle.dispose()
    }
    guard counter.count == count, counter.failed.isEmpty else {
        throw BenchError("CHECK FAILED: SignalKit W20 got \(counter.count) replies of \(count) \(counter.failed.prefix(3))")
    }
    return percentiles(samples)
}

/// SignalKit's W20, awaited: `count` `requestReply` calls one after the
/// other in one task, each timed from the call to its return. Returns p50
/// and p99 in µs.
@inline(never)
func signalKitAwaitedRequests(_ connection: NATSConnection, subject: String, count: Int) throws -> [Double] {
    let payload = benchPayload
    let samples = try blocking { () async throws -> [UInt64] in
        var samples: [UInt64] = []
        samples.reserveCapacity(count)
        for _ in 0..<count {
            let start = monotonicNanoseconds()
            let reply = try await connection.requestReply(subject, payload: payload)
            samples.append(monotonicNanoseconds() - start)
            guard reply.payload.count == 64 else {
                throw BenchError("CHECK FAILED: SignalKit W20 awaited got a reply of \(reply.payload.count) bytes")
            }
        }
        return samples
    }
    return percentiles(samples)
}

/// The floor's W20: a raw connection subscribed to its own reply subject
/// writes a pre-built request frame and reads until its reply's `MSG`.
@inline(never)
func floorRequests(server: Server, subject: String, inbox: String, count: Int) throws -> [Double] {
    let connection = try RawConnection(host: server.host, port: server.port)
    try connection.ping(after: "SUB \(inbox) 1\r\n")
    let request = pubFrames(subject: subject, replyTo: inbox, count: 1)
    var samples: [UInt64] = []
    samples.reserveCapacity(count)
    for _ in 0..<count {
        let start = monotonicNanoseconds()
        connection.send(request)
        var replies = 0
        while replies == 0 { replies = try connection.readFrames { _, _ in } }
        samples.append(monotonicNanoseconds() - start)
        guard replies == 1 else { throw BenchError("CHECK FAILED: floor W20 got \(replies) replies to one request") }
    }
    return percentiles(samples)
}

/// p50 and p99 of `samples` (nanoseconds) in µs, from the sorted samples.
func percentiles(_ samples: [UInt64]) -> [Double] {
    let sorted = samples.sorted()
    return [Double(sorted[sorted.count / 2]) / 1e3, Double(sorted[sorted.count * 99 / 100]) / 1e3]
}

// MARK: - W21 JetStream consume with acknowledgements

/// SignalKit's W21: a fresh ephemeral pull consumer over the whole stream
/// (`consume(stream:consumer: nil, acknowledgement: .explicit)`, its
/// default flow control: 256 messages asked for at a time), `ack()` per
/// message, until `count` are acknowledged and a `flush()` has sent the
/// last acknowledgement. Returns messages/s, consumer creation included.
@inline(never)
func signalKitConsume(_ connection: NATSConnection, stream: String, count: Int) throws -> [Double] {
    let jetStream = connection.jetStream()
    let counter = Counter()
    let done = DispatchSemaphoreLike()
    let start = monotonicNanoseconds()
    let handle = jetStream.consume(stream: stream, consumer: nil, from: .all, acknowledgement: .explicit).start(
        next: { message in
            do {
                try message.ack()
            } catch {
                counter.fail("ack: \(error)")
            }
            if counter.increment() == count { done.signal() }
        },
        error: { error in
            counter.fail("consume: \(error)")
            done.signal()
        }
    )
    let arrived = done.wait(seconds: 120)
    try blocking { try await connection.flush() }
    let end = monotonicNanoseconds()
    handle.dispose()
    guard arrived, counter.count == count, counter.failed.isEmpty else {
        throw BenchError("CHECK FAILED: SignalKit W21 consumed \(counter.count) of \(count) \(counter.failed.prefix(3))")
    }
    return [Double(count) / (Double(end - start) / 1e9)]
}

/// Makes W21's stream (memory storage) and stores `count` 64-byte
/// messages in it, published on a raw connection; checks the stream has
/// them all.
func prepareStream(
    _ connection: NATSConnection,
    server: Server,
    stream: String,
    subjects: String,
    subject: String,
    count: Int
) throws {
    let jetStream = connection.jetStream()
    try? blocking { try await jetStream.deleteStream(stream) }
    _ = try blocking {
        try await jetStream.createOrUpdateStream(NATSStreamConfig(name: stream, subjects: [subjects], storage: .memory))
    }
    let publisher = try RawConnection(host: server.host, port: server.port)
    let batch = 1_000
    for first in stride(from: 0, to: count, by: batch) {
        publisher.send(pubFrames(subject: subject, count: min(batch, count - first)))
        // One PONG per batch: the server keeps up, nothing is refused.
        try publisher.ping()
    }
    let deadline = monotonicNanoseconds() + 10_000_000_000
    var stored: UInt64 = 0
    while monotonicNanoseconds() < deadline {
        stored = try blocking { try await jetStream.streamInfo(stream).messages }
        if stored == UInt64(count) { return }
        usleep(20_000)
    }
    throw BenchError("CHECK FAILED: W21's stream holds \(stored) of \(count) messages")
}
