// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if GRPC
import GRPCCore
import GRPCNIOTransportHTTP2Posix
import InMemoryTracing
import Instrumentation
import Tracing
import SignalKit
import SignalKitGRPC
import SignalKitTesting
import Testing

private enum Boom: Error, CustomStringConvertible {
    case boom(String)
    var description: String {
        switch self {
        case .boom(let message): message
        }
    }
}

/// The process's instrument in this test process: an in-memory tracer,
/// bootstrapped on first use (the other tests carry no context: it injects
/// nothing for them).
let grpcTestTracer: InMemoryTracer = {
    let tracer = InMemoryTracer()
    InstrumentationSystem.bootstrap(tracer)
    return tracer
}()

/// Every suite of this target is nested in this one, so that their tests run
/// one at a time: they compare process-wide live-object counters.
@Suite(.serialized) enum GRPCSuite {}

extension GRPCSuite {
    /// A server and its clients on loopback, in this process.
    @Suite struct RemoteSignalTests {
        @Test func everyValueInOrderThenCompletion() async throws {
            try await leakChecked {
                let serverLog = EventLog()
                let pipe = ValuePipe<Int>()
                var service = RemoteSignalService()
                service.serve(Methods.ticks) { request in
                    logged(pipe.signal(), "feed", serverLog).take(100) |> map { Tick(symbol: request.symbol, price: $0) }
                }
                let server = try await TestServer.start(service)
                let log = EventLog()
                try await withTestClient(port: server.port) { client in
                    let handle = start(client.remoteSignal(Methods.ticks, request: Subscribe(symbol: "ACME")), log)
                    #expect(await waitUntil { serverLog.events == ["feed.subscribe"] })
                    for price in 1...100 { pipe.putNext(price) }
                    #expect(await waitUntil { log.events.last == "completed" })
                    handle.dispose()
                }
                await server.stop()
                #expect(log.events == (1...100).map { "next ACME@\($0)" } + ["completed"])
                #expect(serverLog.events == ["feed.subscribe", "feed.dispose"])
            }
        }

        /// A remote signal started under a trace: the server's subscription
        /// runs in that trace (the context travels in the call's metadata);
        /// one started with none carries none.
        @Test func theCallersTraceReachesTheServedSubscription() async throws {
            try await leakChecked {
                let tracer = grpcTestTracer
                let seen = Shared<[String]>([])
                var service = RemoteSignalService()
                service.serve(Methods.ints) { request in
                    Signal<Int, NoError> { subscriber in
                        let trace = ServiceContext.current?.inMemorySpanContext?.traceID ?? "none"
                        seen.withLock { $0.append("\(request) \(trace)") }
                        subscriber.putNext(1)
                        subscriber.putCompletion()
                        return EmptyDisposable
                    }
                }
                let server = try await TestServer.start(service)
                let span = tracer.startSpan("request")
                try await withTestClient(port: server.port) { client in
                    for (request, context) in [("traced", span.context as ServiceContext?), ("plain", nil)] {
                        let log = EventLog()
                        let handle = ServiceContext.withValue(context) {
                            start(client.remoteSignal(Methods.ints, request: request), log)
                        }
                        #expect(await waitUntil { log.events.last == "completed" })
                        handle.dispose()
                    }
                }
                await server.stop()
                span.end()
                #expect(seen.value == ["traced \(span.traceID)", "plain none"])
            }
        }

        @Test func anUpstreamErrorArrivesAsAStatusWithItsMessage() async throws {
            try await leakChecked {
                var service = RemoteSignalService()
                service.serve(Methods.ints) { request in
                    Signal<Int, Boom> { subscriber in
                        subscriber.putNext(1)
                        subscriber.putNext(2)
                        subscriber.putError(.boom("disk on fire: \(request)"))
                        return EmptyDisposable
                    }
                }
                let events = try await clientEvents(of: service) { $0.count == 3 }
                #expect(events == ["next 1", "next 2", "error unknown: disk on fire: A"])
            }
        }

        @Test func anRPCErrorKeepsItsCode() async throws {
            try await leakChecked {
                var service = RemoteSignalService()
                service.serve(Methods.ints) { _ in
                    Signal<Int, RPCError>.fail(RPCError(code: .notFound, message: "no such feed"))
                }
                let events = try await clientEvents(of: service) { $0.count == 1 }
                #expect(events == ["error notFound: no such feed"])
            }
        }

        @Test func disposingTheClientDisposesTheServersSubscriptionWithinASecond() async throws {
            try await leakChecked {
                let feed = try await PipeServer.start()
                let (pipe, serverLog, server) = (feed.pipe, feed.serverLog, feed.server)
                let log = EventLog()
                let elapsed = try await withTestClient(port: server.port) { client in
                    let handle = start(client.remoteSignal(Methods.ints, request: "A"), log)
                    #expect(await waitUntil { serverLog.events == ["feed.subscribe"] })
                    pipe.putNext(1)
                    #expect(await waitUntil { log.events == ["next 1"] })
                    let disposed = ContinuousClock.now
                    handle.dispose()
                    #expect(await waitUntil { serverLog.events.count == 2 })
                    return ContinuousClock.now - disposed
                }
                await server.stop()
                #expect(elapsed < .seconds(1))
                #expect(log.events == ["next 1"])
                #expect(serverLog.events == ["feed.subscribe", "feed.dispose"])
            }
        }

        /// A burst of `limit + 1` values inside the subscription (before the
        /// call can write anything): the call fails with `resourceExhausted`,
        /// nothing is written, the subscription is disposed.
        @Test func aBurstPastTheBoundFailsTheCall() async throws {
            try await leakChecked {
                let serverLog = EventLog()
                var service = RemoteSignalService()
                service.serve(Methods.ints, buffer: .failing(beyond: 5)) { _ in
                    logged(burst(6), "burst", serverLog)
                }
                let events = try await clientEvents(of: service) { $0.count == 1 }
                #expect(events == ["error resourceExhausted: SignalKitGRPC: more than 5 values waiting for a slow client"])
                #expect(serverLog.events == ["burst.subscribe", "burst.dispose"])
            }
        }

        /// A burst up to the bound is delivered whole.
        @Test func aBurstUpToTheBoundIsDelivered() async throws {
            try await leakChecked {
                var service = RemoteSignalService()
                service.serve(Methods.ints, buffer: .failing(beyond: 5)) { _ in burst(5) }
                let events = try await clientEvents(of: service) { $0.last == "completed" }
                #expect(events == ["next 1", "next 2", "next 3", "next 4", "next 5", "completed"])
            }
        }

        /// Dropping the oldest: of a burst of 1,000 values into a buffer of 10,
        /// the client gets the last 10, then the completion.
        @Test func aBurstPastTheBoundDropsTheOldest() async throws {
            try await leakChecked {
                var service = RemoteSignalService()
                service.serve(Methods.ints, buffer: .droppingOldest(beyond: 10)) { _ in burst(1_000) }
                let events = try await clientEvents(of: service) { $0.last == "completed" }
                #expect(events == (991...1_000).map { "next \($0)" } + ["completed"])
            }
        }

        /// `retry` with a delay resubscribes after the server goes away; the new
        /// call reaches the server restarted on the same port.
        @Test func retryReconnectsAfterTheServerRestarts() async throws {
            try await leakChecked {
                let serverLog = EventLog()
                let first = ValuePipe<Int>()
                let second = ValuePipe<Int>()
                var firstService = RemoteSignalService()
                firstService.serve(logged(first.signal(), "first", serverLog), as: Methods.ints)
                var secondService = RemoteSignalService()
                secondService.serve(logged(second.signal(), "second", serverLog), as: Methods.ints)
                let server = try await TestServer.start(firstService)
                let log = EventLog()
                let retryQueue = Queue(name: "retry")
                let events = try await withTestClient(port: server.port) { client in
                    let handle = log.start(
                        client.remoteSignal(Methods.ints, request: "A") |> retry(0.02, maxDelay: 0.1, onQueue: retryQueue)
                    )
                    #expect(await waitUntil { serverLog.events == ["first.subscribe"] })
                    first.putNext(1)
                    #expect(await waitUntil { log.events == ["next 1"] })
                    await server.stop()
                    #expect(await waitUntil { serverLog.events.count == 2 })
                    let restarted = try await TestServer.start(secondService, port: server.port)
                    #expect(await waitUntil { serverLog.events.count == 3 })
                    second.putNext(2)
                    #expect(await waitUntil { log.events == ["next 1", "next 2"] })
                    handle.dispose()
                    #expect(await waitUntil { serverLog.events.count == 4 })
                    await restarted.stop()
                    return serverLog.events
                }
                #expect(log.events == ["next 1", "next 2"])
                #expect(events == ["first.subscribe", "first.dispose", "second.subscribe", "second.dispose"])
            }
        }

        @Test func jsonRoundTripsACodableValue() throws {
            let request: [UInt8] = try JSONMessageSerializer<Subscribe>().serialize(Subscribe(symbol: "ACME"))
            #expect(String(decoding: request, as: UTF8.self) == #"{"symbol":"ACME"}"#)
            let bytes: [UInt8] = try JSONMessageSerializer<Tick>().serialize(Tick(symbol: "ACME", price: 42))
            #expect(try JSONMessageDeserializer<Tick>().deserialize(bytes).description == "ACME@42")
        }

        @Test func theDefaultPolicyFailsBeyondTenThousandWithResourceExhausted() {
            #expect(SignalBuffer<RPCError>.standard.description == "failing(beyond: 10000)")
            #expect(SignalBuffer<RPCError>.failing(beyond: 3).limit == 3)
        }

        /// Every `SignalBuffer` policy is served: dropping the newest keeps
        /// the first values of a burst.
        @Test func aBurstPastTheBoundDropsTheNewest() async throws {
            try await leakChecked {
                var service = RemoteSignalService()
                service.serve(Methods.ints, buffer: .droppingNewest(beyond: 3)) { _ in burst(1_000) }
                let events = try await clientEvents(of: service) { $0.last == "completed" }
                #expect(events == ["next 1", "next 2", "next 3", "completed"])
            }
        }

        /// `latest` keeps only the newest waiting value.
        @Test func latestKeepsTheNewestValue() async throws {
            try await leakChecked {
                var service = RemoteSignalService()
                service.serve(Methods.ints, buffer: .latest) { _ in burst(1_000) }
                let events = try await clientEvents(of: service) { $0.last == "completed" }
                #expect(events == ["next 1000", "completed"])
            }
        }

        /// `failing(beyond:with:)` ends the call with the status supplied.
        @Test func failingWithAStatusOfOneOwn() async throws {
            try await leakChecked {
                var service = RemoteSignalService()
                let status = RPCError(code: .unavailable, message: "feed too fast")
                service.serve(Methods.ints, buffer: .failing(beyond: 2, with: status)) { _ in burst(3) }
                let events = try await clientEvents(of: service) { $0.count == 1 }
                #expect(events == ["error unavailable: feed too fast"])
            }
        }

        /// Drops are counted under the served signal's name, as at every
        /// bounded boundary.
        @Test func dropsAreCountedUnderTheSignalsName() async throws {
            try await leakChecked {
                let name = "grpc.dropsCounted"
                var service = RemoteSignalService()
                service.serve(Methods.ints, buffer: .droppingOldest(beyond: 10)) { _ in burst(1_000) |> named(name) }
                let events = try await clientEvents(of: service) { $0.last == "completed" }
                #expect(events.count == 11)
                let statistics = SignalKitDebug.bufferStatistics().first { $0.name == name }
                #expect(statistics?.drops == 990)
                #expect(statistics?.maximumDepth == 10)
                #expect(statistics?.liveSubscriptions == 0)
            }
        }

        /// `blocking` holds the producing thread until the writer took the
        /// batch: a fast producer on a thread of its own loses nothing.
        @Test func blockingLosesNothing() async throws {
            try await leakChecked {
                var service = RemoteSignalService()
                service.serve(Methods.ints, buffer: .blocking(beyond: 4)) { _ in
                    Signal<Int, NoError> { subscriber in
                        let producer = Queue(name: "grpc.blocking.producer")
                        producer.async {
                            for value in 1...500 { subscriber.putNext(value) }
                            subscriber.putCompletion()
                        }
                        return EmptyDisposable
                    }
                }
                let events = try await clientEvents(of: service) { $0.last == "completed" }
                #expect(events == (1...500).map { "next \($0)" } + ["completed"])
            }
        }
    }
}

/// `1...count` synchronously inside the subscription, then completion.
private func burst(_ count: Int) -> Signal<Int, NoError> {
    Signal { subscriber in
        for value in 1...count { subscriber.putNext(value) }
        subscriber.putCompletion()
        return EmptyDisposable
    }
}

#endif  // GRPC
