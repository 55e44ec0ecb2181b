// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if Inspector
public import NIOCore
public import NIOHTTP1

/// Serves the inspector on a plain SwiftNIO HTTP/1 server: the page at
/// `mount`, the snapshot at `mount.json`, 404 for anything else. Put it
/// after NIO's HTTP server pipeline, on a port only operators reach:
///
/// ```swift
/// // not compiled: needs NIOPosix
/// let server = try await ServerBootstrap(group: group)
///     .childChannelInitializer { channel in
///         channel.eventLoop.makeCompletedFuture {
///             try channel.pipeline.syncOperations.configureHTTPServerPipeline()
///             try channel.pipeline.syncOperations.addHandler(SignalInspectorHTTPHandler())
///         }
///     }
///     .bind(host: "127.0.0.1", port: 9090).get()
/// ```
///
/// Request bodies are ignored; keep-alive is honoured.
public final class SignalInspectorHTTPHandler: ChannelInboundHandler, RemovableChannelHandler {
    public typealias InboundIn = HTTPServerRequestPart
    public typealias OutboundOut = HTTPServerResponsePart

    private let mount: String
    private var request: HTTPRequestHead?

    /// - Parameter mount: the page's path; the snapshot is at `mount.json`.
    public init(mountedAt mount: String = SignalInspector.defaultMount) {
        self.mount = mount
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            request = head
        case .body:
            break
        case .end:
            guard let head = request else { return }
            request = nil
            respond(to: head, context: context)
        }
    }

    private func respond(to head: HTTPRequestHead, context: ChannelHandlerContext) {
        // HEAD is answered as GET without the body, so that its length is the GET's.
        let isHead = head.method == .HEAD
        let answer =
            SignalInspector.response(method: isHead ? "GET" : head.method.rawValue, path: head.uri, mountedAt: mount)
            ?? SignalInspectorResponse(
                status: 404, contentType: "text/plain; charset=utf-8", body: Array("not found\n".utf8),
                extraHeaders: [])
        var headers = HTTPHeaders(answer.headers.map { ($0.name, $0.value) })
        headers.add(name: "Content-Length", value: String(answer.body.count))
        let keepAlive = head.isKeepAlive
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        let responseHead = HTTPResponseHead(
            version: head.version, status: HTTPResponseStatus(statusCode: answer.status), headers: headers)
        context.write(wrapOutboundOut(.head(responseHead)), promise: nil)
        if !isHead, !answer.body.isEmpty {
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: answer.body)))), promise: nil)
        }
        if keepAlive {
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        } else {
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
        }
    }
}
#endif
