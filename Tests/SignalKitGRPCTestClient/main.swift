// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// A client process for SignalKitGRPCTests: subscribes to the method
// "signalkit.test.Feed/Ints" on 127.0.0.1:<port> (the first argument) and
// writes "next <value>" to standard output for each value, unbuffered. The
// test kills it with SIGKILL; it exits by itself (status 3) after 10 s.
#if GRPC
import GRPCCore
import GRPCNIOTransportHTTP2Posix
import SignalKit
import SignalKitGRPC

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes `line` and a newline to standard output with one `write(2)`.
func writeLine(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
}

func runClient(port: Int) async throws {
    let method = RemoteSignalMethod<String, Int>(service: "signalkit.test.Feed", method: "Ints")
    let client = GRPCClient(
        transport: try .http2NIOPosix(target: .ipv4(address: "127.0.0.1", port: port), transportSecurity: .plaintext)
    )
    let connections = Task { try await client.runConnections() }
    let handle = client.remoteSignal(method, request: "child").start(
        next: { writeLine("next \($0)") },
        error: { writeLine("error \($0.code): \($0.message)") },
        completed: { writeLine("completed") }
    )
    try await Task.sleep(for: .seconds(10))
    handle.dispose()
    connections.cancel()
    exit(3)
}

guard CommandLine.arguments.count == 2, let port = Int(CommandLine.arguments[1]) else {
    writeLine("usage: SignalKitGRPCTestClient <port>")
    exit(2)
}
try await runClient(port: port)
#endif  // GRPC
