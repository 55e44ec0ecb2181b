// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if Postgres
import InMemoryTracing
import Instrumentation
import PostgresNIO
import SignalKit
import SignalKitPostgres
import SignalKitTesting
import Testing
import Tracing

/// Every suite of this target, one test at a time: the leak checks compare
/// process-wide live-object counters.
@Suite(.serialized) enum PostgresTests {}

/// Writes a context's fields into a dictionary (as the NOTIFY sink does).
struct FieldsInjector: Injector {
    func inject(_ value: String, forKey key: String, into fields: inout [String: String]) {
        fields[key] = value
    }
}

/// The process's instrument in this test process: an in-memory tracer,
/// bootstrapped on first use (it injects nothing where there is no context).
let postgresTestTracer: InMemoryTracer = {
    let tracer = InMemoryTracer()
    InstrumentationSystem.bootstrap(tracer)
    return tracer
}()

/// Tests without a server: payload encoding and the backoff.
extension PostgresTests {
    @Suite struct ChangeFeedUnitTests {
        @Test func aSequencedPayloadRoundTrips() {
            let payload = PostgresSequencedPayload(sender: "a", sequence: 42, body: "x:y")
            #expect(payload.encoded == "a:42:x:y")
            #expect(PostgresSequencedPayload("a:42:x:y") == payload)
            #expect(PostgresSequencedPayload("a:x:y") == nil)
            #expect(PostgresSequencedPayload("plain") == nil)
        }

        @Test func aPayloadWithAContextRoundTrips() {
            let payload = PostgresSequencedPayload(
                sender: "a", sequence: 7, context: ["traceparent": "00-4bf9-00f0-01", "k:;=%": "v é"], body: "x:y;z=1")
            #expect(payload.encoded == "a:7;k%3A%3B%3D%25=v é;traceparent=00-4bf9-00f0-01:x:y;z=1")
            #expect(PostgresSequencedPayload(payload.encoded) == payload)
            // Malformed context fields: the payload is not of the form.
            for malformed in ["a:7;novalue:x", "a:7;k=%G1:x", "a:7;k=%4:x", "a:7;k==:x", "a:;k=v:x"] {
                #expect(PostgresSequencedPayload(malformed) == nil, "\(malformed)")
            }
            // No context: the plain form, and an empty context back.
            #expect(PostgresSequencedPayload("a:7:x")?.context == [:])
        }

        /// A part that begins with a combining mark joins the separator
        /// before it into one `Character` ("=" + U+033B is one grapheme): the
        /// parser splits on bytes, so such a payload still parses, and round
        /// trips (PayloadFuzzer's first finding).
        @Test func partsBeginningWithACombiningMarkRoundTrip() {
            let payload = PostgresSequencedPayload(
                sender: "2\u{11}", sequence: 7, context: ["": "\u{033B}00%", "k": "\u{0301}v"], body: "\u{0301}body")
            #expect(PostgresSequencedPayload(payload.encoded) == payload)
            #expect(PostgresSequencedPayload("a:7:\u{0301}x")?.body == "\u{0301}x")
            #expect(PostgresSequencedPayload("a\u{0301}:7:x")?.sender == "a\u{0301}")
        }

        /// The fields the process's instrument injected come back as the
        /// sender's context, through the payload's encoded form; fields it
        /// does not know give none.
        @Test func aPayloadsContextIsExtractedByTheInstrument() throws {
            let span = postgresTestTracer.startSpan("sender")
            defer { span.end() }
            var fields: [String: String] = [:]
            InstrumentationSystem.instrument.inject(span.context, into: &fields, using: FieldsInjector())
            #expect(!fields.isEmpty)
            let sent = PostgresSequencedPayload(sender: "a", sequence: 1, context: fields, body: "x")
            let received = try #require(PostgresSequencedPayload(sent.encoded))
            #expect(received.serviceContext().inMemorySpanContext?.traceID == span.traceID)
            let unknown = PostgresSequencedPayload(sender: "a", sequence: 1, context: ["k": "v"], body: "")
            #expect(unknown.serviceContext().inMemorySpanContext == nil)
        }

        @Test func theBackoffGrowsUpToItsBound() {
            let policy = PostgresReconnectPolicy(initialDelay: .milliseconds(10), multiplier: 3, maximumDelay: .milliseconds(200))
            #expect((1...6).map { policy.delay(afterFailures: $0) } == [10, 30, 90, 200, 200, 200].map { .milliseconds($0) })
        }

        @Test func anInvalidChannelFailsAtOnce() {
            let log = EventLog()
            _ = log.start(PostgresTestServer.configuration().notifications(channel: "a\"b"))
            #expect(log.events == ["error invalidChannel(\"a\\\"b\")"])
            _ = log.start(
                Signal<String, NoError>.single("v").notify(
                    channel: "c", configuration: PostgresTestServer.configuration(), sender: "a:b"))
            #expect(log.events.last == "error invalidSender(\"a:b\")")
        }

        /// The feed retries with its backoff, then gives up (a port where
        /// nothing listens: connections are refused at once).
        @Test func aFeedGivesUpAfterItsAttempts() async {
            var configuration = PostgresTestServer.configuration()
            configuration = PostgresConnection.Configuration(
                host: "127.0.0.1",
                port: 1,
                username: configuration.username,
                password: nil,
                database: nil,
                tls: .disable
            )
            let log = EventLog()
            let started = ContinuousClock.now
            let handle = log.start(
                configuration.notifications(
                    channel: "nobody",
                    reconnect: PostgresReconnectPolicy(initialDelay: .milliseconds(20), multiplier: 2, maximumAttempts: 3)
                )
            )
            await waitUntil { !log.events.isEmpty }
            let elapsed = ContinuousClock.now - started
            #expect(log.events.count == 1)
            #expect(log.events.first?.hasPrefix("error gaveUp(attempts: 3,") == true)
            // Two waits between three attempts: 20 ms + 40 ms.
            #expect(elapsed >= .milliseconds(60))
            handle.dispose()
        }
    }

}

/// Tests against the server of scripts/test's remote stage.
extension PostgresTests {
    @Suite(.enabled(if: PostgresTestServer.isConfigured, PostgresTestServer.skipReason))
    struct ChangeFeedServerTests {
        let configuration = PostgresTestServer.configuration()
        let logger = PostgresTestServer.logger

        /// Sends `values` through a sink and waits for its completion; returns
        /// its events.
        func send(_ values: [String], channel: String, sender: String) async -> [String] {
            let log = EventLog()
            let handle = log.start(
                Signal<String, NoError> { subscriber in
                    for value in values { subscriber.putNext(value) }
                    subscriber.putCompletion()
                    return EmptyDisposable
                }.notify(channel: channel, configuration: configuration, sender: sender)
            )
            await waitUntil { log.events.last == "completed" || log.events.last?.hasPrefix("error") == true }
            handle.dispose()
            return log.events
        }

        /// A feed on a new channel named from `prefix`, once it listens: the
        /// channel, the feed's events, its subscription.
        func listeningFeed(_ prefix: String) async -> (channel: String, events: EventLog, feed: any Disposable) {
            let channel = PostgresTestServer.uniqueChannel(prefix)
            let received = EventLog()
            let feed = received.start(configuration.notifications(channel: channel))
            #expect(await waitUntil { received.events == ["next listening(epoch: 1)"] })
            return (channel, received, feed)
        }

        /// The scenario: two listener processes and a sink. Both see
        /// every notification of the committed transactions, in order per
        /// sender, and none of a rolled-back one; terminating one listener's
        /// backend gives it a second epoch, and it goes on.
        @Test func twoListenerProcessesSeeCommittedNotificationsAndSurviveATerminatedBackend() async throws {
            let check = LeakCheck()
            do {
                let channel = PostgresTestServer.uniqueChannel("feed")
                let first = try ListenerProcess(channel: channel, applicationName: "\(channel)_1")
                let second = try ListenerProcess(channel: channel, applicationName: "\(channel)_2")
                #expect(await waitUntil { first.events == ["listening 1"] && second.events == ["listening 1"] })

                // A sink's burst: one transaction.
                let values = (1...20).map { "v\($0)" }
                #expect(
                    await send(values, channel: channel, sender: "a") == [
                        "next PostgresNotifyBatch(sequences: ClosedRange(1...20))", "completed",
                    ])
                // A rolled-back transaction: nothing.
                try await PostgresTestServer.withConnection { connection in
                    try await connection.query("BEGIN", logger: logger)
                    try await connection.query("SELECT pg_notify(\(channel), 'rolled back')", logger: logger)
                    try await connection.query("ROLLBACK", logger: logger)
                }
                // A second sender.
                #expect(
                    await send(["x", "y"], channel: channel, sender: "b") == [
                        "next PostgresNotifyBatch(sequences: ClosedRange(1...2))", "completed",
                    ])

                let expected =
                    ["listening 1"] + (1...20).map { "notification a:\($0):v\($0)" } + [
                        "notification b:1:x", "notification b:2:y",
                    ]
                #expect(await waitUntil { first.events.count >= expected.count && second.events.count >= expected.count })
                #expect(first.events == expected)
                #expect(second.events == expected)

                // The first listener's backend is terminated: it listens again, in
                // epoch 2, and receives what is sent after.
                #expect(try await PostgresTestServer.terminateBackends(named: "\(channel)_1") == 1)
                #expect(await waitUntil { first.events.last == "listening 2" })
                #expect(
                    await send(["z"], channel: channel, sender: "c") == [
                        "next PostgresNotifyBatch(sequences: ClosedRange(1...1))", "completed",
                    ])
                #expect(
                    await waitUntil { first.events.last == "notification c:1:z" && second.events.last == "notification c:1:z" })
                #expect(first.events == expected + ["listening 2", "notification c:1:z"])
                #expect(second.events == expected + ["notification c:1:z"])

                #expect(await first.stop() == 0)
                #expect(await second.stop() == 0)
                // Their connections are gone.
                #expect(try await waitUntil { try await PostgresTestServer.backends(named: "\(channel)_1") == 0 })
                #expect(try await waitUntil { try await PostgresTestServer.backends(named: "\(channel)_2") == 0 })
            }
            #expect(check.leaks() == nil)
        }

        /// In-process subscribers share one connection; a late subscriber is
        /// handed the current epoch first; disposing the last one closes the
        /// connection, and the next subscriber opens one in the next epoch.
        @Test func subscribersShareOneListeningConnectionUntilTheLastLeaves() async throws {
            let check = LeakCheck()
            do {
                let channel = PostgresTestServer.uniqueChannel("shared")
                let name = "\(channel)_feed"
                let feed = PostgresTestServer.configuration(applicationName: name).notifications(channel: channel)
                let first = EventLog()
                let second = EventLog()
                let firstHandle = first.start(feed)
                #expect(await waitUntil { first.events == ["next listening(epoch: 1)"] })
                let secondHandle = second.start(feed)
                #expect(await waitUntil { second.events == ["next listening(epoch: 1)"] })
                #expect(try await PostgresTestServer.backends(named: name) == 1)

                #expect(await send(["one"], channel: channel, sender: "s").last == "completed")
                #expect(await waitUntil { first.events.count == 2 && second.events.count == 2 })
                #expect(first.events == ["next listening(epoch: 1)", "next notification(payload: \"s:1:one\")"])
                #expect(second.events == ["next listening(epoch: 1)", "next notification(payload: \"s:1:one\")"])

                firstHandle.dispose()
                #expect(try await PostgresTestServer.backends(named: name) == 1)
                secondHandle.dispose()
                #expect(try await waitUntil { try await PostgresTestServer.backends(named: name) == 0 })

                // Nothing listens: what is sent now reaches nobody.
                #expect(await send(["lost"], channel: channel, sender: "s").last == "completed")
                let third = EventLog()
                let thirdHandle = third.start(feed)
                #expect(await waitUntil { third.events == ["next listening(epoch: 2)"] })
                #expect(await send(["two"], channel: channel, sender: "s").last == "completed")
                #expect(await waitUntil { third.events.count == 2 })
                #expect(third.events == ["next listening(epoch: 2)", "next notification(payload: \"s:1:two\")"])
                thirdHandle.dispose()
                #expect(try await waitUntil { try await PostgresTestServer.backends(named: name) == 0 })
            }
            #expect(check.leaks() == nil)
        }

        /// The limit is checked before sending: a 7,999-byte payload is sent, an
        /// 8,000-byte one fails the sink with its size and is not sent (the
        /// server would reject it with SQLSTATE 22023).
        @Test func aPayloadOverTheLimitFailsBeforeSending() async throws {
            let check = LeakCheck()
            do {
                let channel = PostgresTestServer.uniqueChannel("limit")
                let log = EventLog()
                let handle = log.start(configuration.notifications(channel: channel))
                #expect(await waitUntil { log.events == ["next listening(epoch: 1)"] })

                // "s:1:" and "s:2:" are 4 bytes.
                let fits = String(repeating: "é", count: 3997) + "x"  // 7,995 bytes
                let tooLarge = String(repeating: "x", count: 7996)
                #expect(
                    await send([fits, tooLarge, "never"], channel: channel, sender: "s") == [
                        "next PostgresNotifyBatch(sequences: ClosedRange(1...1))",
                        "error payloadTooLarge(sequence: 2, byteCount: 8000, limit: 7999)",
                    ]
                )
                #expect(await send(["marker"], channel: channel, sender: "m").last == "completed")
                #expect(await waitUntil { log.events.count == 3 })
                #expect(
                    log.events == [
                        "next listening(epoch: 1)", "next notification(payload: \"s:1:\(fits)\")",
                        "next notification(payload: \"m:1:marker\")",
                    ])
                #expect(PostgresSequencedPayload.maximumByteCount == 7999)

                // The server's own limit, for the record.
                await #expect(throws: PSQLError.self) {
                    try await PostgresTestServer.withConnection { connection in
                        let rows = try await connection.query("SELECT pg_notify(\(channel), repeat('x', 8000))", logger: logger)
                        for try await _ in rows {}
                    }
                }
                handle.dispose()
            }
            #expect(check.leaks() == nil)
        }

        /// With `carryingContext`, each payload carries its sender's trace as
        /// the instrument injects it (an in-memory tracer here), and the
        /// listener extracts it; values sent with no context, and a sink
        /// without the option, carry none.
        @Test func aSenderCanPutItsTraceInThePayload() async throws {
            let check = LeakCheck()
            do {
                let tracer = postgresTestTracer
                let channel = PostgresTestServer.uniqueChannel("trace")
                let log = EventLog()
                let feed = log.start(configuration.notifications(channel: channel))
                #expect(await waitUntil { log.events == ["next listening(epoch: 1)"] })

                let span = tracer.startSpan("request")
                let pipe = ValuePipe<String>()
                let batches = EventLog()
                let handle = batches.start(
                    pipe.signal().notify(
                        channel: channel, configuration: configuration, sender: "s", logger: logger, carryingContext: true)
                )
                ServiceContext.withValue(span.context) { pipe.putNext("traced") }
                pipe.putNext("plain")
                #expect(await waitUntil { log.events.count == 3 })
                let plainSink = await send(["untraced sink"], channel: channel, sender: "u")
                #expect(plainSink.last == "completed")
                #expect(await waitUntil { log.events.count == 4 })
                span.end()

                let payloads = log.events.dropFirst().compactMap { event -> PostgresSequencedPayload? in
                    guard let start = event.firstIndex(of: "\""), let end = event.lastIndex(of: "\"") else { return nil }
                    return PostgresSequencedPayload(String(event[event.index(after: start)..<end]))
                }
                #expect(payloads.map(\.body) == ["traced", "plain", "untraced sink"])
                let traces = payloads.map { $0.serviceContext().inMemorySpanContext?.traceID ?? "none" }
                #expect(traces == [span.traceID, "none", "none"])
                #expect(payloads[0].context.isEmpty == false)
                #expect(payloads[1].context.isEmpty && payloads[2].context.isEmpty)
                handle.dispose()
                feed.dispose()
            }
            #expect(check.leaks() == nil)
        }

        /// Values of one burst go in one transaction: the burst a source sends
        /// synchronously on subscription is one batch; a burst pushed while the
        /// sink is connected takes at most two (the first value may leave alone
        /// before the rest arrive, the rest then wait for it and go together).
        @Test func aBurstIsOneTransaction() async throws {
            let check = LeakCheck()
            do {
                let (channel, received, feed) = await listeningFeed("burst")

                let pipe = ValuePipe<String>()
                let batches = EventLog()
                let handle = batches.start(
                    (Signal<String, NoError> { subscriber in
                        for index in 1...100 { subscriber.putNext("\(index)") }
                        subscriber.putCompletion()
                        return EmptyDisposable
                    } |> then(pipe.signal())).notify(
                        channel: channel,
                        configuration: PostgresTestServer.configuration(applicationName: "\(channel)_sink"),
                        sender: "s"
                    )
                )
                #expect(await waitUntil { batches.events.count == 1 })
                #expect(batches.events == ["next PostgresNotifyBatch(sequences: ClosedRange(1...100))"])
                for burst in 1...3 {
                    let before = batches.events.count
                    for index in 1...100 { pipe.putNext("\(burst * 100 + index)") }
                    let last = UInt64(burst * 100 + 100)
                    #expect(await waitUntil { batches.events.last?.hasSuffix("...\(last)))") == true })
                    #expect(batches.events.count - before <= 2)
                }
                #expect(await waitUntil { received.events.count == 401 })
                #expect(
                    received.events == ["next listening(epoch: 1)"]
                        + (1...400).map { "next notification(payload: \"s:\($0):\($0)\")" })
                // Disposing the sink closes its connection.
                #expect(try await PostgresTestServer.backends(named: "\(channel)_sink") == 1)
                handle.dispose()
                #expect(try await waitUntil { try await PostgresTestServer.backends(named: "\(channel)_sink") == 0 })
                feed.dispose()
            }
            #expect(check.leaks() == nil)
        }

        /// A connection the server closes while the sink is idle is replaced
        /// for the next batch: nothing was sent on it, so the sink goes on
        /// (numbering on) instead of failing or waiting for a query that
        /// cannot complete.
        @Test func aSinkReplacesAConnectionTheServerClosedWhileIdle() async throws {
            let check = LeakCheck()
            do {
                let (channel, received, feed) = await listeningFeed("idle")

                let pipe = ValuePipe<String>()
                let batches = EventLog()
                let handle = batches.start(
                    pipe.signal().notify(
                        channel: channel,
                        configuration: PostgresTestServer.configuration(applicationName: "\(channel)_sink"),
                        sender: "s"
                    )
                )
                pipe.putNext("a")
                #expect(await waitUntil { batches.events.count == 1 })
                #expect(try await PostgresTestServer.terminateBackends(named: "\(channel)_sink") == 1)
                #expect(try await waitUntil { try await PostgresTestServer.backends(named: "\(channel)_sink") == 0 })
                // The sink's side of the connection sees the close.
                try await Task.sleep(for: .milliseconds(100))
                pipe.putNext("b")
                #expect(await waitUntil { batches.events.count == 2 })
                #expect(
                    batches.events == [
                        "next PostgresNotifyBatch(sequences: ClosedRange(1...1))",
                        "next PostgresNotifyBatch(sequences: ClosedRange(2...2))",
                    ])
                #expect(await waitUntil { received.events.count == 3 })
                #expect(
                    received.events == [
                        "next listening(epoch: 1)", "next notification(payload: \"s:1:a\")",
                        "next notification(payload: \"s:2:b\")",
                    ])
                #expect(try await PostgresTestServer.backends(named: "\(channel)_sink") == 1)
                handle.dispose()
                #expect(try await waitUntil { try await PostgresTestServer.backends(named: "\(channel)_sink") == 0 })
                feed.dispose()
            }
            #expect(check.leaks() == nil)
        }

        /// Measures a value's trip from a sink's source to a feed's subscriber
        /// (NOTIFY transaction, commit, delivery), one value at a time; prints
        /// the percentiles and checks only that every value arrived.
        @Test func notifyToListenerLatency() async throws {
            let check = LeakCheck()
            do {
                let channel = PostgresTestServer.uniqueChannel("latency")
                let (arrivals, arrived) = AsyncStream.makeStream(of: String.self)
                let feed = configuration.notifications(channel: channel).start(next: { event in
                    switch event {
                    case .listening: arrived.yield("listening")
                    case .notification(let payload): arrived.yield(payload)
                    }
                })
                var next = arrivals.makeAsyncIterator()
                #expect(await next.next() == "listening")
                let pipe = ValuePipe<String>()
                let sink = pipe.signal().notify(channel: channel, configuration: configuration, sender: "s").start()
                var samples: [Duration] = []
                for index in 1...220 {
                    let sent = ContinuousClock.now
                    pipe.putNext("\(index)")
                    let payload = await next.next()
                    // The first 20 warm up (the sink's connection opens on the first).
                    if index > 20 { samples.append(ContinuousClock.now - sent) }
                    #expect(payload == "s:\(index):\(index)")
                }
                samples.sort()
                let milliseconds = { (duration: Duration) in
                    Double(duration.components.attoseconds) / 1e15 + Double(duration.components.seconds) * 1000
                }
                print(
                    "notify to listener, \(samples.count) values one at a time: p50 \(milliseconds(samples[samples.count / 2])) ms, p99 \(milliseconds(samples[samples.count * 99 / 100])) ms"
                )
                sink.dispose()
                feed.dispose()
                arrived.finish()
            }
            #expect(check.leaks() == nil)
        }
    }
}
#endif
