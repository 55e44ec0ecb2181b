// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if GRPC
import GRPCCore
import GRPCNIOTransportHTTP2Posix
import SignalKit
import SignalKitGRPC
import SignalKitTesting
import Testing

/// Rejects every call whose metadata lacks `authorization: Bearer <token>`
/// with `unauthenticated`, before the service's handler runs (the recipe of
/// the SignalKitGRPC article).
struct BearerTokenInterceptor: ServerInterceptor {
    let token: String

    func intercept<Input: Sendable, Output: Sendable>(
        request: StreamingServerRequest<Input>,
        context: ServerContext,
        next: (StreamingServerRequest<Input>, ServerContext) async throws -> StreamingServerResponse<Output>
    ) async throws -> StreamingServerResponse<Output> {
        guard request.metadata[stringValues: "authorization"].contains("Bearer \(token)") else {
            throw RPCError(code: .unauthenticated, message: "a bearer token is required")
        }
        return try await next(request, context)
    }
}

/// Sends its bytes as they are (a client that makes up its own request messages).
struct RawBytesSerializer: MessageSerializer {
    func serialize<Bytes: GRPCContiguousBytes>(_ message: [UInt8]) throws -> Bytes { Bytes(message) }
}

/// Reads a message's bytes as they are.
struct RawBytesDeserializer: MessageDeserializer {
    func deserialize<Bytes: GRPCContiguousBytes>(_ serializedMessageBytes: Bytes) throws -> [UInt8] {
        serializedMessageBytes.withUnsafeBytes { Array($0) }
    }
}

/// What a hostile client does to a served signal: open calls without end,
/// send oversized requests, call without credentials.
extension GRPCSuite {
    @Suite struct LimitsTests {
        /// Beyond `maximumCalls` a call ends with `resourceExhausted` naming
        /// the cap, and its signal is never subscribed; once a call ends, its
        /// slot serves a new one.
        @Test func aServiceRefusesCallsBeyondItsCap() async throws {
            try await leakChecked {
                let pipe = ValuePipe<Int>()
                let serverLog = EventLog()
                var service = RemoteSignalService(limits: RemoteSignalLimits(maximumCalls: 2))
                service.serve(logged(pipe.signal(), "feed", serverLog), as: Methods.ints)
                let server = try await TestServer.start(service)
                try await withTestClient(port: server.port) { client in
                    let logs = (0..<3).map { _ in EventLog() }
                    var handles: [any Disposable] = []
                    for log in logs.prefix(2) {
                        handles.append(start(client.remoteSignal(Methods.ints, request: "A"), log))
                    }
                    #expect(await waitUntil { service.servedCalls == 2 && serverLog.events.count == 2 })
                    handles.append(start(client.remoteSignal(Methods.ints, request: "A"), logs[2]))
                    #expect(await waitUntil { !logs[2].events.isEmpty })
                    #expect(
                        logs[2].events == [
                            "error resourceExhausted: SignalKitGRPC: this service serves at most 2 calls at once (RemoteSignalLimits.maximumCalls)"
                        ])
                    #expect(serverLog.events == ["feed.subscribe", "feed.subscribe"])
                    pipe.putNext(1)
                    #expect(await waitUntil { logs[0].events == ["next 1"] && logs[1].events == ["next 1"] })

                    // A call ends: its slot serves a new one.
                    handles[0].dispose()
                    #expect(await waitUntil { service.servedCalls == 1 })
                    let again = EventLog()
                    handles.append(start(client.remoteSignal(Methods.ints, request: "A"), again))
                    #expect(await waitUntil { service.servedCalls == 2 && serverLog.events.count == 4 })
                    pipe.putNext(2)
                    #expect(await waitUntil { again.events == ["next 2"] })
                    handles.forEach { $0.dispose() }
                    #expect(await waitUntil { service.servedCalls == 0 })
                }
                await server.stop()
            }
        }

        /// `maximumCallsPerPeer` caps one connection's calls; another
        /// connection is served meanwhile.
        @Test func aPeerIsCappedAndOthersAreServed() async throws {
            try await leakChecked {
                let pipe = ValuePipe<Int>()
                let serverLog = EventLog()
                var service = RemoteSignalService(limits: RemoteSignalLimits(maximumCallsPerPeer: 1))
                service.serve(logged(pipe.signal(), "feed", serverLog), as: Methods.ints)
                let server = try await TestServer.start(service)
                try await withTestClient(port: server.port) { greedy in
                    let first = EventLog()
                    let second = EventLog()
                    let handles = [
                        start(greedy.remoteSignal(Methods.ints, request: "A"), first)
                    ]
                    #expect(await waitUntil { service.servedCalls == 1 && serverLog.events == ["feed.subscribe"] })
                    let refused = start(greedy.remoteSignal(Methods.ints, request: "A"), second)
                    #expect(await waitUntil { !second.events.isEmpty })
                    #expect(
                        second.events.first?.hasPrefix("error resourceExhausted: SignalKitGRPC: a peer has at most 1 calls")
                            == true)
                    #expect(second.events.first?.contains("(RemoteSignalLimits.maximumCallsPerPeer)") == true)
                    try await withTestClient(port: server.port) { other in
                        let log = EventLog()
                        let handle = start(other.remoteSignal(Methods.ints, request: "A"), log)
                        // Admitted is not yet subscribed: the pipe is hot, so
                        // the value is sent once both calls' subscriptions exist.
                        #expect(await waitUntil { service.servedCalls == 2 && serverLog.events.count == 2 })
                        pipe.putNext(7)
                        #expect(await waitUntil { log.events == ["next 7"] && first.events == ["next 7"] })
                        handle.dispose()
                    }
                    refused.dispose()
                    handles.forEach { $0.dispose() }
                }
                await server.stop()
            }
        }

        /// A request over the server transport's `maxRequestPayloadSize`
        /// fails the call (the server resets the stream: the client sees
        /// `unavailable`), and nothing is subscribed. On the client,
        /// grpc-swift-nio-transport 2.9.2 bounds the messages it receives with
        /// `CallOptions.maxRequestMessageBytes` (default 4 MiB); it does not
        /// enforce `maxResponseMessageBytes`.
        @Test func oversizedMessagesFailTheCall() async throws {
            try await leakChecked {
                let serverLog = EventLog()
                var service = RemoteSignalService()
                service.serve(Methods.blobs) { request in
                    logged(
                        Signal<String, NoError>.single(String(repeating: "x", count: 4_096)), "blob \(request.count)", serverLog)
                }
                var config = HTTP2ServerTransport.Posix.Config.defaults
                config.rpc.maxRequestPayloadSize = 256
                let server = try await TestServer.start(service, config: config)
                try await withTestClient(port: server.port) { client in
                    let oversized = EventLog()
                    let handle = start(
                        client.remoteSignal(Methods.blobs, request: String(repeating: "r", count: 1_000)), oversized)
                    #expect(await waitUntil { !oversized.events.isEmpty })
                    #expect(oversized.events.count == 1)
                    #expect(oversized.events.first?.hasPrefix("error unavailable: ") == true)
                    handle.dispose()

                    var options = CallOptions.defaults
                    options.maxRequestMessageBytes = 1_024
                    let capped = EventLog()
                    let cappedHandle = start(client.remoteSignal(Methods.blobs, request: "small", options: options), capped)
                    #expect(
                        await waitUntil { capped.events.last?.hasPrefix("error") == true || capped.events.last == "completed" })
                    #expect(capped.events.count == 1)
                    #expect(capped.events.first?.hasPrefix("error ") == true)
                    cappedHandle.dispose()
                    print("oversized request: \(oversized.events); oversized response: \(capped.events)")
                }
                await server.stop()
                // Only the small request's signal was ever subscribed.
                #expect(serverLog.events.allSatisfy { $0.hasPrefix("blob 5.") })
                #expect(serverLog.events.first == "blob 5.subscribe")
            }
        }

        /// Request messages a hostile client makes up (truncated, of the
        /// wrong type, deeply nested, not UTF-8, random bytes from a fixed
        /// seed) each end their call with `invalidArgument`, nothing is made
        /// or subscribed, and the server serves a well-formed call after them.
        @Test func malformedRequestsEndTheCallWithInvalidArgument() async throws {
            try await leakChecked {
                let pipe = ValuePipe<Int>()
                let serverLog = EventLog()
                var service = RemoteSignalService()
                service.serve(Methods.ints) { request in logged(pipe.signal(), "feed \(request)", serverLog) }
                let server = try await TestServer.start(service)
                let raw = RemoteSignalMethod<[UInt8], Int>(
                    descriptor: Methods.ints.descriptor,
                    requestSerializer: RawBytesSerializer(),
                    requestDeserializer: RawBytesDeserializer(),
                    valueSerializer: JSONMessageSerializer<Int>(),
                    valueDeserializer: JSONMessageDeserializer<Int>()
                )
                var inputs: [[UInt8]] = [
                    [], Array("\"unterminated".utf8), Array("42".utf8), Array("{\"a\":1}".utf8), Array("null".utf8),
                    Array(String(repeating: "[", count: 10_000).utf8), [0xFF, 0xFE, 0x22, 0x22], [0x22, 0xC3, 0x28, 0x22],
                ]
                var state: UInt64 = 0x5EED
                for _ in 0..<48 {
                    let count = Int(state % 64)
                    inputs.append(
                        (0..<count).map { _ in
                            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                            return UInt8(truncatingIfNeeded: state >> 56)
                        })
                    state = state &* 6_364_136_223_846_793_005 &+ 1
                }
                try await withTestClient(port: server.port) { client in
                    for input in inputs {
                        let log = EventLog()
                        let handle = start(client.remoteSignal(raw, request: input), log)
                        #expect(await waitUntil { !log.events.isEmpty }, "\(input)")
                        #expect(log.events.count == 1, "\(input): \(log.events)")
                        #expect(
                            log.events.first?.hasPrefix(
                                "error invalidArgument: SignalKitGRPC: the request message could not be decoded")
                                == true, "\(input): \(log.events)")
                        handle.dispose()
                    }
                    #expect(serverLog.events.isEmpty, "nothing was made or subscribed for a malformed request")
                    #expect(service.servedCalls == 0)
                    let log = EventLog()
                    let handle = start(client.remoteSignal(Methods.ints, request: "A"), log)
                    #expect(await waitUntil { serverLog.events == ["feed A.subscribe"] })
                    pipe.putNext(5)
                    #expect(await waitUntil { log.events == ["next 5"] })
                    handle.dispose()
                }
                await server.stop()
            }
        }

        /// A call without the bearer token ends with `unauthenticated`
        /// before the service's handler runs: nothing is subscribed. With
        /// it, the call is served.
        @Test func anInterceptorRejectsUnauthenticatedCallsBeforeAnythingIsSubscribed() async throws {
            try await leakChecked {
                let pipe = ValuePipe<Int>()
                let serverLog = EventLog()
                var service = RemoteSignalService()
                service.serve(logged(pipe.signal(), "feed", serverLog), as: Methods.ints)
                let server = try await TestServer.start(service, interceptors: [BearerTokenInterceptor(token: "s3cret")])
                try await withTestClient(port: server.port) { client in
                    for metadata: Metadata in [[:], ["authorization": "Bearer wrong"]] {
                        let log = EventLog()
                        let handle = start(client.remoteSignal(Methods.ints, request: "A", metadata: metadata), log)
                        #expect(await waitUntil { !log.events.isEmpty })
                        #expect(log.events == ["error unauthenticated: a bearer token is required"])
                        handle.dispose()
                    }
                    #expect(serverLog.events.isEmpty)
                    let log = EventLog()
                    let handle = start(
                        client.remoteSignal(Methods.ints, request: "A", metadata: ["authorization": "Bearer s3cret"]), log)
                    #expect(await waitUntil { serverLog.events == ["feed.subscribe"] })
                    pipe.putNext(3)
                    #expect(await waitUntil { log.events == ["next 3"] })
                    handle.dispose()
                }
                await server.stop()
            }
        }
    }
}
#endif  // GRPC
