// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2Posix
import SignalKit
import SignalKitGRPC
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What a call asks for: `count` messages, one every `intervalNanoseconds`
/// (0: as fast as the producer can).
struct Run: Codable, Sendable {
    var count: Int
    var intervalNanoseconds: UInt64
}

/// One message: its number and when the server produced it (CLOCK_MONOTONIC,
/// comparable across processes on one machine).
struct Message: Codable, Sendable {
    var seq: Int
    var sentAt: UInt64
}

enum Methods {
    static let signalKit = RemoteSignalMethod<Run, Message>(service: "bench.Remote", method: "SignalKit")
    static let plain = RemoteSignalMethod<Run, Message>(service: "bench.Remote", method: "Plain")
}

func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}

/// The producer both servers share: on a thread of its own, `run.count`
/// messages paced by `run.intervalNanoseconds`, then `finish`. Stops early
/// when `flag` is set.
func produce(
    _ run: Run,
    flag: StopFlag,
    emit: @escaping @Sendable (Message) -> Void,
    finish: @escaping @Sendable () -> Void
) {
    let thread = Thread {
        var next = monotonicNanoseconds()
        for seq in 0..<run.count {
            if flag.stopped.load(ordering: .relaxed) { break }
            if run.intervalNanoseconds > 0 {
                next += run.intervalNanoseconds
                while monotonicNanoseconds() < next {
                    var pause = timespec(tv_sec: 0, tv_nsec: 50_000)
                    nanosleep(&pause, nil)
                }
            }
            emit(Message(seq: seq, sentAt: monotonicNanoseconds()))
        }
        finish()
    }
    thread.start()
}

/// A stop flag shared by a producer thread and its subscription's disposal.
final class StopFlag: Sendable {
    let stopped = Atomic<Bool>(false)
}

/// The server: both methods, on 127.0.0.1, printing its port.
func runServer() async throws {
    var service = RemoteSignalService()
    // SignalKitGRPC: a signal fed by the producer thread; the buffer holds a
    // whole burst, so nothing is dropped or failed.
    service.serve(Methods.signalKit, buffer: .failing(beyond: 1_000_000)) { run in
        Signal<Message, NoError> { subscriber in
            let flag = StopFlag()
            produce(run, flag: flag, emit: { subscriber.putNext($0) }, finish: { subscriber.putCompletion() })
            return ActionDisposable { flag.stopped.store(true, ordering: .relaxed) }
        }
    }
    let server = GRPCServer(
        transport: .http2NIOPosix(address: .ipv4(host: "127.0.0.1", port: 0), transportSecurity: .plaintext),
        services: [service, PlainService()]
    )
    try await withThrowingDiscardingTaskGroup { group in
        group.addTask { try await server.serve() }
        guard let port = try await server.listeningAddress?.ipv4?.port else { fatalError("no IPv4 address") }
        print("port \(port)")
        fflush(nil)
    }
}

/// The plain grpc-swift handler: the producer yields into an `AsyncStream`,
/// the response writes each message as it comes.
struct PlainService: RegistrableRPCService {
    func registerMethods<Transport: ServerTransport>(with router: inout RPCRouter<Transport>) {
        router.registerHandler(
            forMethod: Methods.plain.descriptor,
            deserializer: JSONMessageDeserializer<Run>(),
            serializer: JSONMessageSerializer<Message>()
        ) { request, _ in
            let run = try await ServerRequest(stream: request).message
            return StreamingServerResponse { writer in
                let (stream, continuation) = AsyncStream.makeStream(of: Message.self)
                let flag = StopFlag()
                continuation.onTermination = { _ in flag.stopped.store(true, ordering: .relaxed) }
                produce(run, flag: flag, emit: { continuation.yield($0) }, finish: { continuation.finish() })
                for await message in stream {
                    try await writer.write(message)
                }
                return [:]
            }
        }
    }
}

/// Latencies recorded by callbacks, and whether the call has ended.
final class Recorder: Sendable {
    let latencies = Mutex<[UInt64]>([])
    let done = Atomic<Bool>(false)

    func record(_ message: Message) {
        let now = monotonicNanoseconds()
        latencies.withLock { $0.append(now - message.sentAt) }
    }
}

/// One call's measurements on the client.
struct Sample {
    var received = 0
    var seconds = 0.0
    var latencies: [UInt64] = []
}

/// Receives one call through `remoteSignal` (SignalKit) or the client's
/// `serverStreaming` (plain) and measures it.
func measure(
    _ client: GRPCClient<HTTP2ClientTransport.Posix>,
    signalKit: Bool,
    run: Run
) async throws -> Sample {
    let start = monotonicNanoseconds()
    let recorder = Recorder()
    recorder.latencies.withLock { $0.reserveCapacity(run.count) }
    if signalKit {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            _ = client.remoteSignal(Methods.signalKit, request: run).start(
                next: { recorder.record($0) },
                error: { error in
                    if !recorder.done.exchange(true, ordering: .relaxed) { continuation.resume(throwing: error) }
                },
                completed: {
                    if !recorder.done.exchange(true, ordering: .relaxed) { continuation.resume() }
                }
            )
        }
    } else {
        try await client.serverStreaming(
            request: ClientRequest(message: run),
            descriptor: Methods.plain.descriptor,
            serializer: JSONMessageSerializer<Run>(),
            deserializer: JSONMessageDeserializer<Message>(),
            options: .defaults
        ) { response in
            for try await message in response.messages {
                recorder.record(message)
            }
        }
    }
    let end = monotonicNanoseconds()
    let all = recorder.latencies.withLock { $0 }
    return Sample(received: all.count, seconds: Double(end - start) / 1e9, latencies: all)
}

func percentile(_ sorted: [UInt64], _ p: Double) -> Double {
    guard !sorted.isEmpty else { return .nan }
    let index = min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)
    return Double(sorted[max(0, index)]) / 1000
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted[sorted.count / 2]
}

/// The client: launches the server process, then alternates the two
/// engines `reps` times on a burst and on a paced run.
func runClient(reps: Int, burst: Int, paced: Int, rateHz: Int) async throws {
    let server = Process()
    server.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    server.arguments = ["server"]
    let output = Pipe()
    server.standardOutput = output
    try server.run()
    defer {
        server.terminate()
        server.waitUntilExit()
    }
    var line = Data()
    while !line.contains(UInt8(ascii: "\n")) {
        let chunk = output.fileHandleForReading.availableData
        if chunk.isEmpty { fatalError("the server process ended before printing its port") }
        line.append(chunk)
    }
    let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    guard text.hasPrefix("port "), let port = Int(text.dropFirst(5)) else { fatalError("unexpected: \(text)") }

    let client = GRPCClient(
        transport: try .http2NIOPosix(target: .ipv4(address: "127.0.0.1", port: port), transportSecurity: .plaintext)
    )
    try await withThrowingDiscardingTaskGroup { group in
        group.addTask { try await client.runConnections() }
        defer { client.beginGracefulShutdown() }
        let burstRun = Run(count: burst, intervalNanoseconds: 0)
        let pacedRun = Run(count: paced, intervalNanoseconds: UInt64(1_000_000_000 / rateHz))
        // Warm-up, both engines.
        for engine in [true, false] {
            _ = try await measure(client, signalKit: engine, run: Run(count: 1_000, intervalNanoseconds: 0))
        }
        var rate: [Bool: [Double]] = [true: [], false: []]
        var p50: [Bool: [Double]] = [true: [], false: []]
        var p99: [Bool: [Double]] = [true: [], false: []]
        for rep in 0..<reps {
            // Alternate which engine goes first.
            for engine in rep % 2 == 0 ? [true, false] : [false, true] {
                let b = try await measure(client, signalKit: engine, run: burstRun)
                precondition(b.received == burst, "burst: \(b.received) of \(burst)")
                rate[engine]!.append(Double(b.received) / b.seconds)
                let p = try await measure(client, signalKit: engine, run: pacedRun)
                precondition(p.received == paced, "paced: \(p.received) of \(paced)")
                let sorted = p.latencies.sorted()
                p50[engine]!.append(percentile(sorted, 0.50))
                p99[engine]!.append(percentile(sorted, 0.99))
                let progress =
                    "rep \(rep + 1) \(engine ? "SignalKitGRPC" : "plain"): \(Int(rate[engine]!.last!)) msg/s, "
                    + "p50 \(p50[engine]!.last!) µs, p99 \(p99[engine]!.last!) µs\n"
                FileHandle.standardError.write(Data(progress.utf8))
            }
        }
        print("| engine | messages/s (burst of \(burst)), median (min–max) | p50 µs at \(rateHz) Hz | p99 µs at \(rateHz) Hz |")
        print("|---|---|---|---|")
        for engine in [true, false] {
            let r = rate[engine]!
            print(
                "| \(engine ? "SignalKitGRPC (remoteSignal, batched writes)" : "plain grpc-swift (AsyncStream, one write per message)") "
                    + "| \(Int(median(r))) (\(Int(r.min()!))–\(Int(r.max()!))) "
                    + "| \(String(format: "%.0f", median(p50[engine]!))) "
                    + "| \(String(format: "%.0f", median(p99[engine]!))) |"
            )
        }
    }
}
