// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if GRPC
import GRPCCore
import GRPCNIOTransportHTTP2Posix
import SignalKit
import SignalKitGRPC
import SignalKitTesting
import Synchronization
import Testing

extension GRPCSuite {
    /// A client that stops reading while the server's signal goes on: HTTP/2
    /// flow control (a 64 KiB window) holds the server's writes back, so the
    /// served stream's own buffer fills and its policy decides. (The burst
    /// tests of `RemoteSignalTests` fill the buffer before the first write;
    /// here it fills because the network does not take the values.)
    @Suite struct SlowClientTests {
        /// `.failing`: the call fails with `resourceExhausted` while the
        /// client is stalled; the server's subscription is disposed then, not
        /// when the client reads again; the client, once it reads, gets
        /// what was in flight, then the status.
        @Test func aStalledClientsCallFailsOnceTheBoundIsPassed() async throws {
            try await leakChecked {
                let serverLog = EventLog()
                let feed = Subject<String, NoError>()
                var service = RemoteSignalService()
                service.serve(Methods.blobs, buffer: .failing(beyond: 100)) { _ in
                    logged(feed.signal(), "feed", serverLog)
                }
                let server = try await TestServer.start(service)
                let outcome = try await readStalled(port: server.port, serverLog: serverLog) { sent in
                    // Push until the server gives up on the client.
                    await produce(into: feed, serverLog: serverLog, sent: sent, upTo: 100_000) {
                        serverLog.events.contains("feed.dispose")
                    }
                }
                await server.stop()
                #expect(serverLog.events == ["feed.subscribe", "feed.dispose"])
                #expect(outcome.disposedWhileStalled)
                #expect(outcome.sent > 100 + outcome.received.count, "the bound was passed by values the client never got")
                #expect(outcome.received == Array(1...outcome.received.count), "what arrived is a prefix, in order")
                #expect(outcome.end == "resourceExhausted: SignalKitGRPC: more than 100 values waiting for a slow client")
            }
        }

        /// `.droppingOldest`: the call lives on; once the client reads again it
        /// gets the values in order with a gap (the oldest of those that
        /// waited were dropped), ending with the newest, then OK.
        @Test func aStalledClientLosesTheOldestAndGetsTheNewest() async throws {
            try await leakChecked {
                let serverLog = EventLog()
                let feed = Subject<String, NoError>()
                let total = 5_000
                var service = RemoteSignalService()
                service.serve(Methods.blobs, buffer: .droppingOldest(beyond: 100)) { _ in
                    logged(feed.signal(), "feed", serverLog)
                }
                let server = try await TestServer.start(service)
                let outcome = try await readStalled(port: server.port, serverLog: serverLog) { sent in
                    await produce(into: feed, serverLog: serverLog, sent: sent, upTo: total) { false }
                    feed.putCompletion()
                }
                await server.stop()
                #expect(serverLog.events == ["feed.subscribe", "feed.dispose"])
                #expect(outcome.sent == total)
                #expect(outcome.end == "ok")
                #expect(outcome.received.last == total, "the newest value arrives")
                #expect(outcome.received == outcome.received.sorted() && Set(outcome.received).count == outcome.received.count)
                #expect(
                    outcome.received.count < total - 100, "values were dropped: \(outcome.received.count) of \(total) arrived")
                // What arrives: what flow control let through before it
                // closed (the values from 1 on, without a gap), then one gap,
                // then what waited in the buffer (at most 100, the newest).
                let received = outcome.received
                var gaps: [Int] = []  // per gap, the number of values after it
                for index in received.indices.dropLast() where received[index] + 1 != received[index + 1] {
                    gaps.append(received.count - index - 1)
                }
                #expect(outcome.received.first == 1)
                #expect(gaps.count == 1 && gaps[0] <= 100, "values after each gap: \(gaps)")
            }
        }
    }
}

/// 1 KiB values numbered from 1: `"<n>:xxx…"`.
private func blob(_ number: Int) -> String {
    "\(number):" + String(repeating: "x", count: 1_024)
}

/// The number of values a producer has sent.
private final class SentCount: Sendable {
    let value = Atomic<Int>(0)
}

/// Once the server has subscribed, puts values `1…` into `feed`, pausing
/// 1 ms every 20 so the server can write, until `stop` holds or `limit`
/// values are sent; counts them in `sent`.
private func produce(
    into feed: Subject<String, NoError>,
    serverLog: EventLog,
    sent: SentCount,
    upTo limit: Int,
    stop: () -> Bool
) async {
    guard await waitUntil({ serverLog.events.contains("feed.subscribe") }) else { return }
    for number in 1...limit {
        if stop() { return }
        feed.putNext(blob(number))
        sent.value.store(number, ordering: .releasing)
        if number % 20 == 0 {
            try? await Task.sleep(for: .milliseconds(1))
        }
    }
}

/// What a stalled client saw.
private struct StalledOutcome: Sendable {
    /// The numbers of the values received, in order.
    var received: [Int]
    /// `ok`, or `<code>: <message>` of the status that ended the call.
    var end: String
    /// Values the producer sent.
    var sent: Int
    /// Whether the server's subscription was disposed while the client was
    /// not reading.
    var disposedWhileStalled: Bool
}

/// Calls `Methods.blobs` on a client with a 64 KiB flow-control window,
/// reads the first value, then stops reading while `produce` runs to its
/// end, then reads everything that is left.
private func readStalled(
    port: Int,
    serverLog: EventLog,
    produce: @escaping @Sendable (SentCount) async -> Void
) async throws -> StalledOutcome {
    try await withTestClient(port: port, targetWindowSize: 65_535) { client in
        try await client.serverStreaming(
            request: ClientRequest(message: "A"),
            descriptor: Methods.blobs.descriptor,
            serializer: Methods.blobs.requestSerializer,
            deserializer: Methods.blobs.valueDeserializer,
            options: .defaults
        ) { response in
            let sent = SentCount()
            let producer = Task { await produce(sent) }
            var received: [Int] = []
            var end = "ok"
            var disposedWhileStalled = false
            var messages = response.messages.makeAsyncIterator()
            do {
                if let first = try await messages.next() {
                    received.append(number(of: first))
                }
                await producer.value
                disposedWhileStalled = serverLog.events.contains("feed.dispose")
                while let value = try await messages.next() {
                    received.append(number(of: value))
                }
            } catch let error as RPCError {
                await producer.value
                end = "\(error.code): \(error.message)"
            }
            return StalledOutcome(
                received: received,
                end: end,
                sent: sent.value.load(ordering: .acquiring),
                disposedWhileStalled: disposedWhileStalled
            )
        }
    }
}

private func number(of blob: String) -> Int {
    Int(blob.prefix { $0 != ":" })!
}

#endif  // GRPC
