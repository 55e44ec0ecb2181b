// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if Inspector
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore
import NIOHTTP1
import NIOPosix
import SignalKit
import SignalKitInspector
import Testing

// SignalInspectorHTTPHandler on a real NIO server on 127.0.0.1, asked over a
// plain socket.

/// Sends `request` to 127.0.0.1:`port` and reads until the server closes.
private func exchange(_ request: String, port: Int) throws -> String {
    #if canImport(Glibc)
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #else
    let fd = socket(AF_INET, SOCK_STREAM, 0)
    #endif
    #expect(fd >= 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var timeout = timeval(tv_sec: 10, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    #expect(connected == 0)
    let bytes = Array(request.utf8)
    #expect(bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) } == bytes.count)
    var received: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65_536)
    while true {
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if count <= 0 { break }
        received += chunk[0..<count]
    }
    return String(decoding: received, as: UTF8.self)
}

@Suite struct SignalInspectorHTTPHandlerTests {
    @Test func servesThePageTheSnapshotAndNotFound() async throws {
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(SignalInspectorHTTPHandler())
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let port = try #require(server.localAddress?.port)

        let pipe = ValuePipe<Int>()
        let stage = SignalKitDebug.withInspection { pipe.signal() |> named("inspector.http.ticks") }
        let handle = stage.start()
        pipe.putNext(1)

        let json = try exchange("GET /inspector.json HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n", port: port)
        #expect(json.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(json.contains("content-type: application/json") || json.contains("Content-Type: application/json"))
        #expect(json.contains("\"name\":\"inspector.http.ticks\""))

        let page = try exchange("GET /inspector HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n", port: port)
        #expect(page.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(page.contains("Content-Security-Policy"))
        #expect(page.contains("id=\"graph\""))

        let head = try exchange("HEAD /inspector HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n", port: port)
        #expect(head.contains("Content-Length: \(SignalInspector.page.count)"))
        #expect(!head.contains("<html"))

        let missing = try exchange("GET /secret HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n", port: port)
        #expect(missing.hasPrefix("HTTP/1.1 404 Not Found\r\n"))

        // Two requests on one kept-alive connection, then close.
        let both = try exchange(
            "GET /inspector.json HTTP/1.1\r\nHost: t\r\n\r\nGET /nothing HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
            port: port)
        #expect(both.ranges(of: "HTTP/1.1 ").count == 2)
        #expect(both.contains("HTTP/1.1 404"))

        handle.dispose()
        try await server.close()
    }
}
#endif
