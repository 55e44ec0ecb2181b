// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if GRPC
import Foundation
import SignalKit
import SignalKitGRPC
import SignalKitTesting
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A client in another process (SignalKitGRPCTestClient), killed with
/// SIGKILL: the server notices the dead connection and disposes.
extension GRPCSuite {
    @Suite struct ClientProcessTests {
        @Test func aClientKilledWithSIGKILLMakesTheServerDisposeWithinASecond() async throws {
            try await leakChecked {
                let feed = try await PipeServer.start()
                let (pipe, serverLog, server) = (feed.pipe, feed.serverLog, feed.server)

                let output = Pipe()
                let child = Process()
                child.executableURL = try testClientExecutable()
                child.arguments = [String(server.port)]
                child.standardOutput = output
                try child.run()
                let reader = LineReader(fd: output.fileHandleForReading.fileDescriptor)

                #expect(await waitUntil { serverLog.events == ["feed.subscribe"] })
                pipe.putNext(1)
                #expect(reader.readLine(seconds: 10) == "next 1")
                kill(child.processIdentifier, SIGKILL)
                let killed = ContinuousClock.now
                #expect(await waitUntil { serverLog.events.count == 2 })
                let elapsed = ContinuousClock.now - killed
                child.waitUntilExit()
                await server.stop()

                #expect(child.terminationReason == .uncaughtSignal)
                #expect(child.terminationStatus == SIGKILL)
                #expect(elapsed < .seconds(1))
                #expect(serverLog.events == ["feed.subscribe", "feed.dispose"])
            }
        }
    }
}

/// SignalKitGRPCTestClient, built next to the test binary (SwiftPM builds a
/// test target's executable dependencies into the same folder).
private func testClientExecutable() throws -> URL {
    let name = "SignalKitGRPCTestClient"
    var folder = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
    for _ in 0..<4 {
        let candidate = folder.appendingPathComponent(name)
        if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        folder = folder.deletingLastPathComponent()
    }
    throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: name])
}

/// Reads lines from a file descriptor with a deadline (poll(2), then read(2)).
private final class LineReader {
    private let fd: Int32
    private var buffered: [UInt8] = []

    init(fd: Int32) { self.fd = fd }

    /// The next line without its newline, or nil if none came within
    /// `seconds` or the stream ended.
    func readLine(seconds: Double) -> String? {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while true {
            if let newline = buffered.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffered[..<newline], as: UTF8.self)
                buffered.removeSubrange(...newline)
                return line
            }
            guard ContinuousClock.now < deadline else { return nil }
            var request = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&request, 1, 10) >= 0 else { return nil }
            guard request.revents != 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { return nil }
            buffered.append(contentsOf: chunk[..<count])
        }
    }
}

#endif  // GRPC
