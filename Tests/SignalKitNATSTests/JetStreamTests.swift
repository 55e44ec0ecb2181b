// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if NATS
import Foundation
import InMemoryTracing
import Instrumentation
import MetricsTestKit
import SignalKit
import SignalKitNATS
import SignalKitTesting
import Synchronization
import Testing
import Tracing

/// Polls the async `condition` every 10 ms until it holds or `timeout`
/// passes; whether it held.
func eventuallyAsync(timeout: Duration = .seconds(10), _ condition: () async -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return await condition()
}

/// Streams, consumers, acknowledged publishes and pull consumers against a
/// JetStream-enabled nats-server each test starts and stops.
@Suite struct JetStreamTests {
    /// A server with JetStream, a connection, and a stream `S` on `s.>`.
    struct Fixture {
        let server: NATSTestServer
        let nats: NATSConnection
        let js: NATSJetStream

        init(stream config: NATSStreamConfig = NATSStreamConfig(name: "S", subjects: ["s.>"], storage: .memory))
            async throws
        {
            server = try NATSTestServer(jetStream: true)
            nats = try await NATSConnection.connected(to: server)
            js = nats.jetStream()
            try await js.createOrUpdateStream(config)
        }

        func close() {
            nats.close()
            server.stop()
        }

        /// Publishes `count` messages `m <index>` to `subject`.
        func publish(_ count: Int, to subject: String = "s.a", from first: Int = 1) async throws {
            for index in first..<(first + count) {
                try await js.publish(to: subject, payload: Array("m \(index)".utf8))
            }
        }
    }

    @Test func aStreamIsCreatedUpdatedAndAPublishAcknowledgedWithItsSequence() async throws {
        let fixture = try await Fixture()
        defer { fixture.close() }
        let js = fixture.js
        var sequences: [UInt64] = []
        for index in 0..<3 {
            let ack = try await js.publish(to: "s.a", payload: Array("m \(index)".utf8))
            #expect(ack.stream == "S")
            #expect(!ack.duplicate)
            #expect(ack.attempts == 1)
            sequences.append(ack.sequence)
        }
        #expect(sequences == [1, 2, 3])
        var info = try await js.streamInfo("S")
        #expect(info.messages == 3)
        #expect(info.firstSequence == 1 && info.lastSequence == 3)
        #expect(info.subjects == ["s.>"])
        // The same name with other subjects: an update, the messages kept.
        info = try await js.createOrUpdateStream(
            NATSStreamConfig(name: "S", subjects: ["s.>", "t.>"], storage: .memory, maxAge: .seconds(3_600)))
        #expect(info.subjects == ["s.>", "t.>"])
        #expect(info.messages == 3)
        let consumer = try await js.createOrUpdateConsumer(
            stream: "S", NATSConsumerConfig(durableName: "C", ackWait: .seconds(5), filterSubject: "s.a"))
        #expect(consumer.name == "C")
        #expect(consumer.pending == 3)
        #expect(try await js.streamInfo("S").consumerCount == 1)
        try await js.deleteConsumer(stream: "S", consumer: "C")
        try await js.deleteStream("S")
        await #expect(throws: NATSError.self) { try await js.streamInfo("S") }
    }

    @Test func aPublishWithTheSameMessageIDIsStoredOnce() async throws {
        let fixture = try await Fixture()
        defer { fixture.close() }
        let js = fixture.js
        let first = try await js.publish(to: "s.a", payload: Array("once".utf8), messageID: "order-17")
        let second = try await js.publish(to: "s.a", payload: Array("once".utf8), messageID: "order-17")
        let other = try await js.publish(to: "s.a", payload: Array("other".utf8), messageID: "order-18")
        #expect(first.sequence == 1 && !first.duplicate)
        #expect(second.sequence == 1 && second.duplicate)
        #expect(other.sequence == 2 && !other.duplicate)
        #expect(try await js.streamInfo("S").messages == 2)
    }

    @Test func anAPIErrorIsTyped() async throws {
        let fixture = try await Fixture()
        defer { fixture.close() }
        let js = fixture.js
        do {
            _ = try await js.streamInfo("MISSING")
            Issue.record("no error")
        } catch {
            guard case .jetStream(let apiError) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(apiError.code == 404)
            #expect(apiError.errorCode == NATSJetStreamAPIError.streamNotFound)
        }
        // Another stream on the same subjects: refused.
        await #expect(throws: NATSError.self) {
            try await js.createOrUpdateStream(NATSStreamConfig(name: "T", subjects: ["s.>"], storage: .memory))
        }
        await #expect(throws: NATSError.invalidSubject("a.b")) { try await js.streamInfo("a.b") }
        // A subject no stream stores: no responder, tried again until the deadline.
        do {
            _ = try await js.publish(
                to: "nowhere", payload: [], messageID: "x", attemptTimeout: .milliseconds(200),
                deadline: .milliseconds(150))
            Issue.record("no error")
        } catch {
            guard case .publishNotAcknowledged(let id, let attempts) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(id == "x")
            #expect(attempts >= 1)
        }
    }

    /// Two publishes that wait (nothing answers "nowhere") until their
    /// 1 s deadline, on `js`.
    static func twoWaiting(on js: NATSJetStream) -> [Task<NATSPublishAck, any Error>] {
        (0..<2).map { index in
            Task {
                try await js.publish(
                    to: "nowhere", payload: [], messageID: "waiting \(index)", attemptTimeout: .milliseconds(300),
                    deadline: .seconds(1))
            }
        }
    }

    @Test func pendingPublishesFailOrAreDroppedByTheirPolicy() async throws {
        let fixture = try await Fixture()
        defer { fixture.close() }
        // failing: the third fails at once with the policy's error.
        let failing = fixture.nats.jetStream(pendingPublishes: .failing(beyond: 2, with: .invalidSubject("full")))
        var waiting = Self.twoWaiting(on: failing)
        #expect(await eventually { failing.pendingPublishes == 2 })
        await #expect(throws: NATSError.invalidSubject("full")) { try await failing.publish(to: "s.a", payload: []) }
        for task in waiting { _ = await task.result }
        #expect(failing.pendingPublishes == 0)
        #expect(try await failing.publish(to: "s.a", payload: []).sequence == 1)

        // droppingNewest: the third is refused, and counted.
        let newest = fixture.nats.jetStream(pendingPublishes: .droppingNewest(beyond: 2))
        waiting = Self.twoWaiting(on: newest)
        #expect(await eventually { newest.pendingPublishes == 2 })
        await #expect(throws: NATSError.tooManyPendingPublishes(limit: 2)) {
            try await newest.publish(to: "s.a", payload: [])
        }
        #expect(newest.droppedPublishes == 1)
        for task in waiting { _ = await task.result }

        // droppingOldest: the third takes the oldest one's place at once;
        // the oldest gives up.
        let oldest = fixture.nats.jetStream(pendingPublishes: .droppingOldest(beyond: 2))
        let first = Task {
            try await oldest.publish(
                to: "nowhere", payload: [], messageID: "first", attemptTimeout: .milliseconds(300),
                deadline: .seconds(5))
        }
        #expect(await eventually { oldest.pendingPublishes == 1 })
        let second = Task {
            try await oldest.publish(
                to: "nowhere", payload: [], messageID: "second", attemptTimeout: .milliseconds(300),
                deadline: .seconds(1))
        }
        #expect(await eventually { oldest.pendingPublishes == 2 })
        #expect(try await oldest.publish(to: "s.a", payload: []).sequence == 2)
        #expect(oldest.droppedPublishes == 1)
        await #expect(throws: NATSError.publishDropped(messageID: "first")) { try await first.value }
        // The second one kept its place until its deadline.
        let secondResult = await second.result
        guard case .failure(NATSError.publishNotAcknowledged(messageID: "second", _)) = secondResult else {
            Issue.record("\(secondResult)")
            return
        }
        #expect(oldest.pendingPublishes == 0)
    }

    @Test func aBlockingPolicyMakesAPublishWaitForRoom() async throws {
        let fixture = try await Fixture()
        defer { fixture.close() }
        let js = fixture.nats.jetStream(pendingPublishes: .blocking(beyond: 2))
        // Two publishes wait for an acknowledgement that never comes, until
        // they are cancelled.
        let waiting = (0..<2).map { _ in
            Task {
                try await js.publish(
                    to: "nowhere", payload: [], attemptTimeout: .milliseconds(300), deadline: .seconds(30))
            }
        }
        #expect(await eventually { js.pendingPublishes == 2 })
        // A third waits for room; a fourth, cancelled while it waits, gives up.
        let done = Recorder<UInt64>()
        let third = Task {
            let ack = try await js.publish(to: "s.a", payload: Array("third".utf8))
            done.append(ack.sequence)
        }
        let fourth = Task { try await js.publish(to: "s.a", payload: Array("fourth".utf8), messageID: "fourth") }
        try await Task.sleep(for: .milliseconds(200))
        #expect(done.count == 0)
        #expect(js.pendingPublishes == 2)
        fourth.cancel()
        await #expect(throws: NATSError.publishNotAcknowledged(messageID: "fourth", attempts: 0)) {
            try await fourth.value
        }
        // One of the two gives up: the third takes its place and is stored.
        waiting[0].cancel()
        try await third.value
        #expect(done.all == [1])
        waiting[1].cancel()
        for task in waiting { _ = await task.result }
        #expect(js.pendingPublishes == 0)
        #expect(js.droppedPublishes == 0)
    }

    @Test func anUnboundedPolicyLetsEveryPublishWait() async throws {
        let fixture = try await Fixture()
        defer { fixture.close() }
        let js = fixture.nats.jetStream(pendingPublishes: .unbounded)
        let waiting = (0..<50).map { _ in
            Task { try await js.publish(to: "nowhere", payload: [], attemptTimeout: .milliseconds(300), deadline: .seconds(1)) }
        }
        #expect(await eventually { js.pendingPublishes == 50 })
        for task in waiting { _ = await task.result }
        #expect(js.pendingPublishes == 0)
    }

    /// The stream sequences a consumer delivers.
    static func collect(
        _ signal: Signal<NATSJetStreamMessage, NATSError>,
        count: Int,
        ack: Bool = true
    ) async throws -> [UInt64] {
        let received = Recorder<UInt64>()
        let handle = signal.start(next: { message in
            received.append(message.streamSequence)
            if ack { try? message.ack() }
        })
        defer { handle.dispose() }
        #expect(await eventually { received.count >= count })
        // Nothing more arrives.
        try await Task.sleep(for: .milliseconds(50))
        return received.all
    }

    @Test func aConsumerStartsFromAllNewASequenceOrATime() async throws {
        let fixture = try await Fixture()
        defer { fixture.close() }
        let js = fixture.js
        try await fixture.publish(5)
        // Named, so the inspector shows each consumer as a stage.
        #expect(js.consume(stream: "S", consumer: "D3").description == "nats.consume(S, consumer: D3)")
        #expect(js.consume(stream: "S", consumer: nil).description == "nats.consume(S, consumer: ephemeral)")
        #expect(js.replayThenFollow(stream: "S", subject: "s.x").description == "nats.replayThenFollow(S, subject: s.x)")
        let all = try await Self.collect(js.consume(stream: "S", consumer: nil, from: .all), count: 5)
        #expect(all == [1, 2, 3, 4, 5])
        let fromThree = try await Self.collect(js.consume(stream: "S", consumer: "D3", from: .sequence(3)), count: 3)
        #expect(fromThree == [3, 4, 5])

        let news = Recorder<String>()
        let stored = Recorder<Date>()
        let baseline = fixture.nats.subscriptionCount
        let handle = js.consume(stream: "S", consumer: nil, from: .new).start(next: { message in
            news.append(message.text)
            stored.append(message.timestamp)
            try? message.ack()
        })
        defer { handle.dispose() }
        // The consumer exists once its pull inbox is subscribed.
        #expect(await eventually { fixture.nats.subscriptionCount == baseline + 1 })
        try await Task.sleep(for: .milliseconds(20))
        let mark = Date()
        try await fixture.publish(2, from: 6)
        #expect(await eventually { news.count == 2 })
        #expect(news.all == ["m 6", "m 7"])

        let byTime = try await Self.collect(js.consume(stream: "S", consumer: nil, from: .time(mark)), count: 2)
        #expect(byTime == [6, 7])
        // A microsecond before 6 was stored: 6 is in (the start time is
        // sent to the nanosecond, not rounded to a millisecond).
        let justBefore = stored.all[0].addingTimeInterval(-0.000_001)
        let fromJustBefore = try await Self.collect(
            js.consume(stream: "S", consumer: nil, from: .time(justBefore)), count: 2)
        #expect(fromJustBefore == [6, 7])
    }

    @Test func aNakedMessageIsDeliveredAgainWithItsDeliveryCount() async throws {
        let fixture = try await Fixture()
        defer { fixture.close() }
        let js = fixture.js
        try await js.createOrUpdateConsumer(stream: "S", NATSConsumerConfig(durableName: "C", ackWait: .seconds(30)))
        try await fixture.publish(3)
        let log = Recorder<String>()
        let handle = js.consume(stream: "S", consumer: "C").start(next: { message in
            log.append("\(message.streamSequence)#\(message.deliveryCount)")
            if message.streamSequence == 2 && message.deliveryCount == 1 {
                try? message.nak()
            } else {
                try? message.ack()
            }
        })
        defer { handle.dispose() }
        #expect(await eventually { log.count == 4 })
        try await Task.sleep(for: .milliseconds(50))
        let all = log.all
        #expect(all.sorted() == ["1#1", "2#1", "2#2", "3#1"])
        #expect(all.firstIndex(of: "2#1")! < all.firstIndex(of: "2#2")!)
        #expect(await eventuallyAsync { (try? await js.consumerInfo(stream: "S", consumer: "C").ackPending) == 0 })
        let info = try await js.consumerInfo(stream: "S", consumer: "C")
        #expect(info.ackFloorStreamSequence == 3)
    }

    @Test func anUnacknowledgedMessageIsDeliveredAgainAfterTheAckWait() async throws {
        let fixture = try await Fixture()
        defer { fixture.close() }
        let js = fixture.js
        try await js.createOrUpdateConsumer(
            stream: "S", NATSConsumerConfig(durableName: "C", ackWait: .milliseconds(500), maxDeliver: 3))
        // The server's ack wait starts when it sends the first delivery,
        // which is after the publish: the redelivery comes at least the ack
        // wait after `published`. (Measured from the first delivery's
        // arrival instead, a client slowed down by a sanitizer saw 394 ms.)
        let clock = ContinuousClock()
        let published = clock.now
        try await fixture.publish(1)
        let times = Recorder<(Int, ContinuousClock.Instant)>()
        let handle = js.consume(stream: "S", consumer: "C").start(next: { message in
            times.append((message.deliveryCount, clock.now))
            if message.deliveryCount == 2 { try? message.ack() }
        })
        defer { handle.dispose() }
        #expect(await eventually { times.count == 2 })
        try await Task.sleep(for: .milliseconds(700))
        let all = times.all
        #expect(all.map(\.0) == [1, 2])
        #expect(all[1].1 - published >= .milliseconds(500), "\(all[1].1 - published)")
        #expect(all[1].1 - all[0].1 < .seconds(3), "\(all[1].1 - all[0].1)")
    }

    @Test func redeliveriesAndUnansweredMessagesAreCountedAndExported() async throws {
        let fixture = try await Fixture()
        defer { fixture.close() }
        let js = fixture.js
        let nats = fixture.nats
        let metrics = TestMetrics()
        let clock = VirtualTimeScheduler()
        let reporting = nats.reportMetrics(every: .seconds(10), on: clock.makeQueue(), factory: metrics)
        defer { reporting.dispose() }
        try await js.createOrUpdateConsumer(
            stream: "S", NATSConsumerConfig(durableName: "C", ackWait: .seconds(1), maxDeliver: 5))
        try await fixture.publish(3)
        // 1 is acknowledged at once; 2 on its redelivery; 3 never.
        let log = Recorder<String>()
        let handle = js.consume(stream: "S", consumer: "C").start(next: { message in
            log.append("\(message.streamSequence)#\(message.deliveryCount)")
            if message.streamSequence == 1 || (message.streamSequence == 2 && message.deliveryCount == 2) {
                try? message.ack()
            }
        })
        #expect(await eventually { log.count == 3 })
        #expect(nats.statistics.pendingAcknowledgements == 2)
        #expect(nats.statistics.redeliveries == 0)
        // Past the ack wait, 2 and 3 come again: 3 still counts once.
        #expect(await eventually { log.all.contains("2#2") && log.all.contains("3#2") })
        #expect(await eventually { nats.statistics.pendingAcknowledgements == 1 })
        #expect(nats.statistics.redeliveries >= 2)
        clock.advance(by: 10)
        let dimensions = [("connection", "nats")]
        #expect(metrics.counterTotal(label: "signalkit_nats_redeliveries_total", dimensions: dimensions) >= 2)
        #expect(try metrics.expectGauge("signalkit_nats_pending_acknowledgements", dimensions).lastValue == 1)
        // A disposed subscription's unanswered messages stop counting; an
        // answer after it changes nothing.
        handle.dispose()
        #expect(nats.statistics.pendingAcknowledgements == 0)
        let redeliveries = nats.statistics.redeliveries
        try await Task.sleep(for: .milliseconds(1_200))
        #expect(nats.statistics.redeliveries == redeliveries)
        #expect(nats.statistics.pendingAcknowledgements == 0)
    }

    @Test func automaticAcknowledgementAcksAfterTheCallback() async throws {
        let fixture = try await Fixture()
        defer { fixture.close() }
        let js = fixture.js
        try await js.createOrUpdateConsumer(stream: "S", NATSConsumerConfig(durableName: "C", ackWait: .seconds(1)))
        try await fixture.publish(10)
        let received = Recorder<UInt64>()
        let handle = js.consume(stream: "S", consumer: "C", acknowledgement: .automatic).start(next: {
            received.append($0.streamSequence)
        })
        defer { handle.dispose() }
        #expect(await eventually { received.count == 10 })
        #expect(
            await eventuallyAsync { (try? await js.consumerInfo(stream: "S", consumer: "C").ackFloorStreamSequence) == 10 })
        // Past the ack wait: nothing delivered again.
        try await Task.sleep(for: .milliseconds(1_300))
        #expect(received.all == Array(1...10))
    }

    @Test func aPullNeverAsksForMoreThanTheBufferCanHold() async throws {
        let fixture = try await Fixture()
        defer { fixture.close() }
        let js = fixture.js
        // Another connection sees every pull request.
        let spy = try await NATSConnection.connected(to: fixture.server)
        defer { spy.close() }
        let batches = Recorder<Int>()
        let spying = spy.messages("$JS.API.CONSUMER.MSG.NEXT.S.C").start(next: { message in
            let request = try? JSONSerialization.jsonObject(with: Data(message.payload)) as? [String: Any]
            batches.append((request?["batch"] as? Int) ?? -1)
        })
        defer { spying.dispose() }
        try await spy.flush()
        try await js.createOrUpdateConsumer(stream: "S", NATSConsumerConfig(durableName: "C"))
        let total = 100
        try await fixture.publish(total)
        let limit = 8
        let received = Recorder<UInt64>()
        let inCallback = Atomic(0)
        let maxInCallback = Atomic(0)
        let handle = js.consume(stream: "S", consumer: "C", buffer: .blocking(beyond: limit)).start(next: { message in
            let now = inCallback.add(1, ordering: .relaxed).newValue
            maxInCallback.max(now, ordering: .relaxed)
            usleep(500)
            received.append(message.streamSequence)
            try? message.ack()
            inCallback.subtract(1, ordering: .relaxed)
        })
        defer { handle.dispose() }
        #expect(await eventually { received.count == total })
        try await spy.flush()
        let asked = batches.all
        print(
            "JetStream pull with a buffer of \(limit): \(asked.count) pulls, batches \(asked.prefix(12))…, max \(asked.max() ?? 0)"
        )
        #expect(received.all == (1...total).map(UInt64.init))
        #expect(asked.allSatisfy { $0 >= 1 && $0 <= limit })
        #expect(asked.reduce(0, +) >= total)
        #expect(asked.count >= total / limit)
        #expect(maxInCallback.load(ordering: .relaxed) == 1)
    }

    @Test func aDisposedConsumerDeliversNothingMoreAndUnsubscribes() async throws {
        let fixture = try await Fixture()
        defer { fixture.close() }
        let js = fixture.js
        let nats = fixture.nats
        // Messages on their way when it is disposed come again after the ack wait.
        try await js.createOrUpdateConsumer(stream: "S", NATSConsumerConfig(durableName: "C", ackWait: .seconds(1)))
        try await fixture.publish(200)
        let baseline = nats.subscriptionCount
        let received = Recorder<UInt64>()
        let handle = js.consume(stream: "S", consumer: "C", buffer: .blocking(beyond: 16)).start(next: { message in
            received.append(message.streamSequence)
            try? message.ack()
            usleep(200)
        })
        #expect(await eventually { received.count >= 20 })
        #expect(nats.subscriptionCount == baseline + 1)
        handle.dispose()
        let atDispose = received.count
        #expect(nats.subscriptionCount == baseline)
        try await Task.sleep(for: .milliseconds(200))
        #expect(received.count == atDispose)
        #expect(atDispose < 200)
        // The rest is delivered to the next subscriber, from where the acks left it.
        let rest = Recorder<UInt64>()
        let next = js.consume(stream: "S", consumer: "C").start(next: { message in
            rest.append(message.streamSequence)
            try? message.ack()
        })
        defer { next.dispose() }
        #expect(await eventually { Set(received.all).union(rest.all).count == 200 })
    }

    @Test func replayThenFollowHasNoGapAndNoDuplicateAtTheSeam() async throws {
        let fixture = try await Fixture()
        defer { fixture.close() }
        let js = fixture.js
        try await fixture.publish(300)
        let received = Recorder<UInt64>()
        let texts = Recorder<String>()
        // A small buffer: the replay takes many pulls while new messages
        // are stored behind it.
        let handle = js.replayThenFollow(stream: "S", subject: "s.a", buffer: .blocking(beyond: 16)).start(next: {
            received.append($0.streamSequence)
            texts.append($0.text)
        })
        defer { handle.dispose() }
        let publisher = Task { try await fixture.publish(200, from: 301) }
        try await publisher.value
        #expect(await eventually { received.count >= 500 })
        try await Task.sleep(for: .milliseconds(100))
        #expect(received.all == (1...500).map(UInt64.init))
        #expect(texts.all == (1...500).map { "m \($0)" })
        // A message on another subject is not in the replay of s.a.
        try await js.publish(to: "s.b", payload: [])
        try await js.publish(to: "s.a", payload: Array("m 502".utf8))
        #expect(await eventually { received.count == 501 })
        #expect(received.all.last == 502)
        // The consumer it made is deleted when the subscription ends.
        #expect(try await js.streamInfo("S").consumerCount == 1)
        handle.dispose()
        #expect(await eventuallyAsync { (try? await js.streamInfo("S").consumerCount) == 0 })
    }

    /// A consumer that cannot be made for now (the server stopped: each
    /// request times out) is asked for again until the server answers; a
    /// stream that does not exist fails the signal.
    @Test func replayThenFollowMakesItsConsumerOnceTheServerAnswers() async throws {
        let fixture = try await Fixture()
        defer { fixture.close() }
        try await fixture.publish(3)
        let impatient = fixture.nats.jetStream(timeout: .milliseconds(200))
        let received = Recorder<UInt64>()
        let errors = Recorder<String>()
        fixture.server.pause(true)
        let handle = impatient.replayThenFollow(stream: "S").start(
            next: { received.append($0.streamSequence) }, error: { errors.append("\($0)") })
        defer { handle.dispose() }
        // Long enough for a few requests to time out.
        try await Task.sleep(for: .milliseconds(600))
        fixture.server.pause(false)
        #expect(await eventually { received.count == 3 })
        #expect(received.all == [1, 2, 3])
        #expect(errors.all.isEmpty)
        let missing = Recorder<NATSError>()
        let other = impatient.replayThenFollow(stream: "MISSING").start(error: { missing.append($0) })
        defer { other.dispose() }
        #expect(await eventually { missing.count == 1 })
        if case .jetStream(let apiError)? = missing.all.first {
            #expect(apiError.errorCode == NATSJetStreamAPIError.streamNotFound)
        } else {
            Issue.record("expected the stream's absence, got \(missing.all)")
        }
    }

    @Test func aStreamMessageCarriesItsPublishersTrace() async throws {
        let tracer = natsTestTracer
        let fixture = try await Fixture()
        defer { fixture.close() }
        let js = fixture.js
        let span = tracer.startSpan("stream publisher")
        try await ServiceContext.withValue(span.context) {
            _ = try await js.publish(to: "s.a", payload: Array("1".utf8))
        }
        span.end()
        try await js.publish(to: "s.a", payload: Array("2".utf8))
        let traces = Recorder<String>()
        let handle = js.consume(stream: "S", consumer: nil, acknowledgement: .automatic).start(next: { _ in
            traces.append(ServiceContext.current?.inMemorySpanContext?.traceID ?? "none")
        })
        defer { handle.dispose() }
        #expect(await eventually { traces.count == 2 })
        #expect(traces.all == [span.traceID, "none"])
    }

    // MARK: - nats-py

    static let script = #"""
        import asyncio, json, sys
        import nats

        async def main():
            mode, url, stream, subject, count = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
            nc = await nats.connect(url)
            js = nc.jetstream()
            if mode == "publish":
                for i in range(count):
                    ack = await js.publish(subject, f"py {i}".encode(), headers={"X-Index": str(i)})
                    print(json.dumps({"seq": ack.seq, "stream": ack.stream}), flush=True)
            else:
                sub = await js.pull_subscribe(subject, durable="py", stream=stream)
                got = []
                while len(got) < count:
                    for msg in await sub.fetch(count - len(got), timeout=10):
                        await msg.ack()
                        headers = msg.headers or {}
                        got.append({"data": msg.data.decode(), "seq": msg.metadata.sequence.stream,
                                    "index": headers.get("X-Index"), "has_id": "Nats-Msg-Id" in headers})
                for entry in got:
                    print(json.dumps(entry, sort_keys=True), flush=True)
            await nc.close()

        asyncio.run(main())
        """#

    static func runPython(_ arguments: [String]) throws -> (Process, URL) {
        try runPythonScript(script, named: "jetstream.py", arguments: arguments)
    }

    @Test func natsPyPublishesToAStreamAndSignalKitConsumes() async throws {
        let fixture = try await Fixture()
        defer { fixture.close() }
        let (process, output) = try Self.runPython(["publish", fixture.server.url, "S", "s.py", "5"])
        defer { try? FileManager.default.removeItem(at: output.deletingLastPathComponent()) }
        process.waitUntilExit()
        let lines = FaultAndInteropTests.lines(output)
        #expect(process.terminationStatus == 0, "\(lines)")
        #expect(lines == (1...5).map { #"{"seq": \#($0), "stream": "S"}"# })
        let received = Recorder<NATSJetStreamMessage>()
        let handle = fixture.js.consume(stream: "S", consumer: "swift", acknowledgement: .automatic).start(next: {
            received.append($0)
        })
        defer { handle.dispose() }
        #expect(await eventually { received.count == 5 })
        #expect(received.all.map(\.text) == (0..<5).map { "py \($0)" })
        #expect(received.all.map { $0.headers["X-Index"] } == (0..<5).map { String($0) })
        #expect(received.all.map(\.streamSequence) == [1, 2, 3, 4, 5])
        #expect(received.all.allSatisfy { $0.deliveryCount == 1 && $0.subject == "s.py" })
    }

    @Test func signalKitPublishesToAStreamAndNatsPyConsumes() async throws {
        let fixture = try await Fixture()
        defer { fixture.close() }
        for index in 0..<3 {
            try await fixture.js.publish(
                to: "s.swift", payload: Array("swift \(index)".utf8), headers: ["X-Index": String(index)])
        }
        let (process, output) = try Self.runPython(["consume", fixture.server.url, "S", "s.swift", "3"])
        defer { try? FileManager.default.removeItem(at: output.deletingLastPathComponent()) }
        process.waitUntilExit()
        let lines = FaultAndInteropTests.lines(output)
        #expect(process.terminationStatus == 0, "\(lines)")
        #expect(
            lines
                == (0..<3).map {
                    #"{"data": "swift \#($0)", "has_id": true, "index": "\#($0)", "seq": \#($0 + 1)}"#
                })
    }
}
#endif
