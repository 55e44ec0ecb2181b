// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if NATS
import Foundation
import MetricsTestKit
import SignalKit
import SignalKitTesting
import SignalKitNATS
import Synchronization
import Testing

/// Publish/subscribe, wildcards, queue groups, request/reply and the
/// connection's errors, against a nats-server each test starts and stops.
@Suite struct CoreNATSTests {
    @Test func publishedMessagesArriveInOrder() async throws {
        let server = try NATSTestServer()
        defer { server.stop() }
        let nats = try await NATSConnection.connected(to: server)
        defer { nats.close() }
        let received = Recorder<String>()
        let handle = nats.messages("greetings").start(next: { received.append($0.text) })
        try await nats.flush()
        for index in 1...3 { try nats.publish("greetings", payload: Array("hello \(index)".utf8)) }
        #expect(await eventually { received.count == 3 })
        #expect(received.all == ["hello 1", "hello 2", "hello 3"])
        handle.dispose()
        #expect(nats.subscriptionCount == 0)
    }

    @Test func aBurstOnTwoSubjectsArrivesInOrderOnEach() async throws {
        // Hundreds of messages per read: handed over in batches, each
        // subject's in its order, nothing lost, nothing to the other feed.
        let server = try NATSTestServer()
        defer { server.stop() }
        let nats = try await NATSConnection.connected(to: server) { $0.publishBuffer = .unbounded }
        defer { nats.close() }
        let a = Recorder<String>()
        let b = Recorder<String>()
        let first = nats.messages("burst.a").start(next: { a.append($0.text) })
        let second = nats.messages("burst.b").start(next: { b.append($0.text) })
        try await nats.flush()
        for index in 1...1_000 {
            try nats.publish(index % 3 == 0 ? "burst.b" : "burst.a", payload: Array("\(index)".utf8))
        }
        #expect(await eventually { a.count + b.count == 1_000 })
        #expect(a.all == (1...1_000).filter { $0 % 3 != 0 }.map(String.init))
        #expect(b.all == (1...1_000).filter { $0 % 3 == 0 }.map(String.init))
        first.dispose()
        second.dispose()
    }

    @Test func wildcardsMatchTokens() async throws {
        let server = try NATSTestServer()
        defer { server.stop() }
        let nats = try await NATSConnection.connected(to: server)
        defer { nats.close() }
        let star = Recorder<String>()
        let tail = Recorder<String>()
        let first = nats.messages("orders.*").start(next: { star.append($0.subject) })
        let second = nats.messages("orders.>").start(next: { tail.append($0.subject) })
        try await nats.flush()
        for subject in ["orders.a", "orders.a.b", "other.x", "orders.c"] {
            try nats.publish(subject, payload: [])
        }
        try await nats.flush()
        #expect(await eventually { tail.count == 3 && star.count == 2 })
        #expect(star.all == ["orders.a", "orders.c"])
        #expect(tail.all == ["orders.a", "orders.a.b", "orders.c"])
        first.dispose()
        second.dispose()
    }

    @Test func subscribersOfOneSubjectShareOneSubscription() async throws {
        let server = try NATSTestServer()
        defer { server.stop() }
        let nats = try await NATSConnection.connected(to: server)
        defer { nats.close() }
        let a = Recorder<String>()
        let b = Recorder<String>()
        let first = nats.messages("shared").start(next: { a.append($0.text) })
        let second = nats.messages("shared").start(next: { b.append($0.text) })
        #expect(nats.subscriptionCount == 1)
        try await nats.flush()
        try nats.publish("shared", payload: Array("1".utf8))
        #expect(await eventually { a.count == 1 && b.count == 1 })
        first.dispose()
        #expect(nats.subscriptionCount == 1)
        try nats.publish("shared", payload: Array("2".utf8))
        #expect(await eventually { b.count == 2 })
        second.dispose()
        #expect(nats.subscriptionCount == 0)
        // The server no longer sends it to this connection.
        try nats.publish("shared", payload: Array("3".utf8))
        try await nats.flush()
        #expect(a.all == ["1"])
        #expect(b.all == ["1", "2"])
    }

    @Test func aQueueGroupGivesEachMessageToExactlyOneMember() async throws {
        let server = try NATSTestServer()
        defer { server.stop() }
        let members = try await [NATSConnection.connected(to: server), NATSConnection.connected(to: server)]
        let publisher = try await NATSConnection.connected(to: server)
        defer {
            publisher.close()
            for member in members { member.close() }
        }
        let received = [Recorder<Int>(), Recorder<Int>()]
        let handles = members.indices.map { index in
            members[index].messages("work", queueGroup: "workers").start(next: { received[index].append(Int($0.text)!) })
        }
        for member in members { try await member.flush() }
        let count = 200
        for value in 0..<count { try publisher.publish("work", payload: Array(String(value).utf8)) }
        #expect(await eventually { received[0].count + received[1].count == count })
        try await publisher.flush()
        let all = received[0].all + received[1].all
        #expect(all.count == count)
        #expect(Set(all) == Set(0..<count))
        #expect(received[0].count > 0 && received[1].count > 0)
        for handle in handles { handle.dispose() }
    }

    @Test func aRequestGetsItsReply() async throws {
        let server = try NATSTestServer()
        defer { server.stop() }
        let nats = try await NATSConnection.connected(to: server)
        defer { nats.close() }
        let responder = nats.messages("double").start(next: { message in
            let value = Int(message.text) ?? 0
            try? nats.reply(to: message, payload: Array(String(value * 2).utf8))
        })
        defer { responder.dispose() }
        try await nats.flush()
        let replies = Recorder<String>()
        let ended = Recorder<String>()
        for value in [1, 21] {
            _ = nats.request("double", payload: Array(String(value).utf8), timeout: .seconds(5)).start(
                next: { replies.append($0.text) },
                error: { ended.append("error \($0)") },
                completed: { ended.append("completed") }
            )
        }
        #expect(await eventually { ended.count == 2 })
        #expect(Set(replies.all) == ["2", "42"])
        #expect(ended.all == ["completed", "completed"])
        // One inbox subscription for every request, plus the responder.
        #expect(nats.subscriptionCount == 2)
    }

    @Test func aRequestTimesOutOrFindsNoResponders() async throws {
        let server = try NATSTestServer()
        defer { server.stop() }
        let nats = try await NATSConnection.connected(to: server)
        defer { nats.close() }
        let silent = nats.messages("silent").start()
        defer { silent.dispose() }
        try await nats.flush()
        let ended = Recorder<NATSError>()
        let clock = ContinuousClock()
        let start = clock.now
        _ = nats.request("silent", payload: [], timeout: .milliseconds(100)).start(error: { ended.append($0) })
        _ = nats.request("nobody.listens", payload: [], timeout: .seconds(5)).start(error: { ended.append($0) })
        #expect(await eventually { ended.count == 2 })
        #expect(Set(ended.all.map { "\($0)" }) == ["timeout", "noResponders"])
        #expect(clock.now - start >= .milliseconds(100))
    }

    @Test func anAwaitedRequestGetsItsReplyTimesOutFindsNoRespondersOrIsCancelled() async throws {
        let server = try NATSTestServer()
        defer { server.stop() }
        let nats = try await NATSConnection.connected(to: server)
        let responder = nats.messages("double").start(next: { message in
            let value = Int(message.text) ?? 0
            try? nats.reply(to: message, payload: Array(String(value * 2).utf8))
        })
        defer { responder.dispose() }
        let silent = nats.messages("silent").start()
        defer { silent.dispose() }
        try await nats.flush()
        // Replies, also many at once on the shared inbox.
        #expect(try await nats.requestReply("double", payload: Array("21".utf8)).text == "42")
        let many = try await withThrowingTaskGroup(of: String.self) { group in
            for value in 0..<50 {
                group.addTask { try await nats.requestReply("double", payload: Array(String(value).utf8)).text }
            }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(many == Set((0..<50).map { String($0 * 2) }))
        // A timeout, no responders.
        await #expect(throws: NATSError.timeout) {
            try await nats.requestReply("silent", payload: [], timeout: .milliseconds(100))
        }
        await #expect(throws: NATSError.noResponders) {
            try await nats.requestReply("nobody.listens", payload: [])
        }
        // Cancelled while it waits: it ends at once, not at its timeout.
        let clock = ContinuousClock()
        let waiting = Task { try await nats.requestReply("silent", payload: [], timeout: .seconds(30)) }
        try await Task.sleep(for: .milliseconds(50))
        let cancelledAt = clock.now
        waiting.cancel()
        await #expect(throws: NATSError.cancelled) { try await waiting.value }
        #expect(clock.now - cancelledAt < .seconds(10))
        // Waiting when the connection closes.
        let closing = Task { try await nats.requestReply("silent", payload: [], timeout: .seconds(30)) }
        try await Task.sleep(for: .milliseconds(50))
        nats.close()
        await #expect(throws: NATSError.closed) { try await closing.value }
        await #expect(throws: NATSError.closed) { try await nats.requestReply("double", payload: []) }
    }

    @Test func noMessageIsDeliveredAfterDisposeReturns() async throws {
        let server = try NATSTestServer()
        defer { server.stop() }
        let nats = try await NATSConnection.connected(to: server)
        let publisher = try await NATSConnection.connected(to: server)
        defer {
            nats.close()
            publisher.close()
        }
        for round in 0..<5 {
            let disposed = Atomic(false)
            let late = Atomic(0)
            let received = Atomic(0)
            let handle = nats.messages("flow.\(round)").start(next: { _ in
                if disposed.load(ordering: .acquiring) { late.add(1, ordering: .relaxed) }
                received.add(1, ordering: .relaxed)
                usleep(50)
            })
            try await nats.flush()
            let stop = Atomic(false)
            let feeder = Task.detached {
                var sent = 0
                while !stop.load(ordering: .relaxed) {
                    try? publisher.publish("flow.\(round)", payload: Array(String(sent).utf8))
                    sent += 1
                    // A round trip every 50 messages bounds what is in flight.
                    if sent % 50 == 0 { try? await publisher.flush() }
                }
            }
            #expect(await eventually { received.load(ordering: .relaxed) >= 200 })
            handle.dispose()
            disposed.store(true, ordering: .releasing)
            try await Task.sleep(for: .milliseconds(20))
            stop.store(true, ordering: .relaxed)
            await feeder.value
            #expect(late.load(ordering: .relaxed) == 0, "round \(round)")
            #expect(nats.subscriptionCount == 0)
        }
    }

    @Test func aPayloadOverTheServersMaxPayloadIsRefused() async throws {
        let server = try NATSTestServer(config: "max_payload: 1024\n")
        defer { server.stop() }
        let nats = try await NATSConnection.connected(to: server)
        defer { nats.close() }
        #expect(nats.serverInfo?.maxPayload == 1024)
        try nats.publish("ok", payload: Array(repeating: 1, count: 1024))
        #expect(throws: NATSError.payloadTooLarge(size: 1025, limit: 1024)) {
            try nats.publish("big", payload: Array(repeating: 1, count: 1025))
        }
        #expect(throws: NATSError.invalidSubject("a.*")) { try nats.publish("a.*", payload: []) }
        try await nats.flush()
    }

    @Test func aTokenOrAUserAndPasswordAuthenticates() async throws {
        let tokenServer = try NATSTestServer(arguments: ["--auth", "s3cret"])
        defer { tokenServer.stop() }
        let withToken = try await NATSConnection.connected(to: tokenServer) { $0.authentication = .token("s3cret") }
        withToken.close()
        let userServer = try NATSTestServer(arguments: ["--user", "ann", "--pass", "pw"])
        defer { userServer.stop() }
        let withUser = try await NATSConnection.connected(to: userServer) {
            $0.authentication = .userPassword(user: "ann", password: "pw")
        }
        withUser.close()
    }

    @Test func theServersAreTriedInTurn() async throws {
        let server = try NATSTestServer()
        defer { server.stop() }
        // Port 1 refuses: the next server in the list is tried after the backoff.
        let nats = try await NATSConnection.connected(to: server) {
            $0.servers = ["nats://127.0.0.1:1", server.url]
            $0.reconnect = NATSReconnectPolicy(initialDelay: .milliseconds(5))
        }
        defer { nats.close() }
        #expect(nats.currentState == .connected(server: "127.0.0.1:\(server.port)"))
    }

    @Test func aRefusedHandshakeEndsInATypedError() async throws {
        let server = try NATSTestServer(arguments: ["--auth", "s3cret"])
        defer { server.stop() }
        let errors = Recorder<NATSError>()
        var options = NATSOptions(servers: [server.url])
        options.authentication = .token("wrong")
        options.reconnect = NATSReconnectPolicy(initialDelay: .milliseconds(5), maximumAttempts: 2)
        let nats = NATSConnection(options)
        let states = Recorder<NATSConnectionState>()
        let handle = nats.state.start(next: { states.append($0) })
        _ = nats.errors.start(next: { errors.append($0) })
        #expect(await eventually { if case .closed = nats.currentState { true } else { false } })
        guard case .closed(.gaveUp(let attempts, let last)) = nats.currentState else {
            Issue.record("state \(nats.currentState)")
            return
        }
        #expect(attempts == 2)
        #expect(last.contains("Authorization Violation"))
        #expect(states.all.first == .connecting)
        handle.dispose()
        // A closed connection fails what starts later.
        let late = Recorder<NATSError>()
        _ = nats.messages("x").start(error: { late.append($0) })
        #expect(late.all == [.closed])
        #expect(throws: NATSError.closed) { try nats.publish("x", payload: []) }
    }

    @Test func aSubscriptionThePermissionsDenyFailsWithATypedError() async throws {
        let server = try NATSTestServer(
            config: #"authorization { users = [{user: ann, password: pw, permissions: {subscribe: {deny: ["secret"]}}}] }"#
                + "\n")
        defer { server.stop() }
        let nats = try await NATSConnection.connected(to: server) {
            $0.authentication = .userPassword(user: "ann", password: "pw")
        }
        defer { nats.close() }
        let denied = Recorder<String>()
        let allowed = Recorder<String>()
        let first = nats.messages("secret").start(next: { denied.append($0.text) }, error: { denied.append("error \($0)") })
        let second = nats.messages("public").start(next: { allowed.append($0.text) })
        defer {
            first.dispose()
            second.dispose()
        }
        #expect(await eventually { denied.count == 1 })
        #expect(denied.all.first?.hasPrefix("error permissionViolation(") == true)
        #expect(denied.all.first?.contains("secret") == true)
        // The connection stays, and so do its other subscriptions.
        try await nats.flush()
        try nats.publish("public", payload: Array("still here".utf8))
        #expect(await eventually { allowed.count == 1 })
        #expect(nats.isConnected)
        #expect(nats.subscriptionCount == 1)
    }

    @Test func publishesWhileDisconnectedWaitInTheBoundedBuffer() async throws {
        let server = try NATSTestServer()
        let port = server.port
        server.kill()
        let nats = NATSConnection(
            NATSOptions(
                servers: ["127.0.0.1:\(port)"],
                reconnect: NATSReconnectPolicy(initialDelay: .milliseconds(5), maximumDelay: .milliseconds(20)),
                publishBuffer: .failing(beyond: 2, with: .publishBufferFull(limit: 2))
            ))
        defer { nats.close() }
        let received = Recorder<String>()
        let handle = nats.messages("later").start(next: { received.append($0.text) })
        defer { handle.dispose() }
        try nats.publish("later", payload: Array("a".utf8))
        try nats.publish("later", payload: Array("b".utf8))
        #expect(throws: NATSError.publishBufferFull(limit: 2)) { try nats.publish("later", payload: Array("c".utf8)) }
        #expect(nats.pendingPublishes == 2)
        try server.restart()
        defer { server.stop() }
        // The subscription is made before the waiting publishes go out: they come back.
        #expect(await eventually { received.count == 2 })
        #expect(received.all == ["a", "b"])
        #expect(nats.pendingPublishes == 0)
    }

    @Test func aDroppingPublishBufferCountsItsDrops() async throws {
        let nats = NATSConnection(
            NATSOptions(
                servers: ["127.0.0.1:1"],
                reconnect: NATSReconnectPolicy(initialDelay: .milliseconds(50)),
                publishBuffer: .droppingOldest(beyond: 3)
            ))
        defer { nats.close() }
        for value in 0..<10 { try nats.publish("x", payload: [UInt8(value)]) }
        #expect(nats.pendingPublishes == 3)
        #expect(nats.droppedPublishes == 7)
    }

    @Test func aPublisherFasterThanTheSocketFillsTheBoundedBuffersNotMemory() async throws {
        let server = try NATSTestServer()
        defer { server.stop() }
        let nats = try await NATSConnection.connected(to: server) {
            $0.writeBufferLimit = 64 << 10
            $0.publishBuffer = .failing(beyond: 100, with: .publishBufferFull(limit: 100))
        }
        defer { nats.close() }
        let received = Recorder<Int>()
        let handle = nats.messages("firehose").start(next: { _ in received.append(1) })
        defer { handle.dispose() }
        try await nats.flush()
        // A stopped server reads nothing: the socket's buffers fill, then
        // SwiftNIO's, then the write buffer (64 KiB), then the publish
        // buffer (100), and the next publish fails. A first refusal may
        // only mean the publisher outran the event loop while the kernel
        // still takes bytes (its windows grow as data arrives): the
        // buffers are full once 20 tries 10 ms apart are all refused.
        server.pause(true)
        let payload = [UInt8](repeating: 7, count: 1_024)
        var accepted = 0
        var refused: NATSError?
        var refusedInARow = 0
        while accepted < 200_000 && refusedInARow < 20 {
            do {
                try nats.publish("firehose", payload: payload)
                accepted += 1
                refusedInARow = 0
            } catch {
                refused = error
                refusedInARow += 1
                try await Task.sleep(for: .milliseconds(10))
            }
        }
        #expect(refused == .publishBufferFull(limit: 100))
        #expect(refusedInARow == 20)
        #expect(nats.pendingPublishes == 100)
        #expect(nats.isConnected)
        print("NATS write backpressure: \(accepted) publishes of 1 KiB accepted before the server was read again")
        // Once the server reads again, everything accepted arrives, in order
        // behind the flush's PING.
        server.pause(false)
        try await nats.flush(timeout: .seconds(20))
        #expect(nats.pendingPublishes == 0)
        #expect(await eventually { received.count == accepted })
        #expect(nats.statistics.messagesOut == accepted)
    }

    @Test func eachPublishBufferPolicyKeepsItsRule() async throws {
        func filled(_ policy: SignalBuffer<NATSError>) throws -> NATSConnection {
            let nats = NATSConnection(
                NATSOptions(
                    servers: ["127.0.0.1:1"],
                    reconnect: NATSReconnectPolicy(initialDelay: .milliseconds(50)),
                    publishBuffer: policy
                ))
            for value in 0..<2 { try nats.publish("x", payload: [UInt8(value)]) }
            return nats
        }
        // `failing` throws the policy's own error.
        let failing = try filled(.failing(beyond: 2, with: .invalidSubject("full")))
        defer { failing.close() }
        #expect(throws: NATSError.invalidSubject("full")) { try failing.publish("x", payload: [2]) }
        // `blocking` fails too: a publish never waits.
        let blocking = try filled(.blocking(beyond: 2))
        defer { blocking.close() }
        #expect(throws: NATSError.publishBufferFull(limit: 2)) { try blocking.publish("x", payload: [2]) }
        #expect(blocking.pendingPublishes == 2)
        // `droppingNewest` keeps the waiting ones and counts the arriving one.
        let newest = try filled(.droppingNewest(beyond: 2))
        defer { newest.close() }
        try newest.publish("x", payload: [2])
        #expect(newest.pendingPublishes == 2)
        #expect(newest.droppedPublishes == 1)
    }

    @Test func theConnectionCountsWhatCrossesItAndExportsIt() async throws {
        let server = try NATSTestServer()
        defer { server.stop() }
        let nats = try await NATSConnection.connected(to: server) { $0.name = "orders" }
        defer { nats.close() }
        let metrics = TestMetrics()
        let clock = VirtualTimeScheduler()
        let reporting = nats.reportMetrics(every: .seconds(10), on: clock.makeQueue(), factory: metrics)
        defer { reporting.dispose() }
        let received = Recorder<String>()
        let subject = nats.messages("counted")
        #expect(subject.description == "nats.messages(counted)")
        #expect(nats.messages("counted", queueGroup: "g").description == "nats.messages(counted, queueGroup: g)")
        let handle = subject.start(next: { received.append($0.text) })
        defer { handle.dispose() }
        try await nats.flush()
        for payload in ["ab", "cde", "f"] { try nats.publish("counted", payload: Array(payload.utf8)) }
        #expect(await eventually { received.count == 3 })
        let statistics = nats.statistics
        #expect(statistics.messagesOut == 3)
        #expect(statistics.bytesOut == 6)
        #expect(statistics.messagesIn == 3)
        #expect(statistics.bytesIn == 6)
        #expect(statistics.connections == 1)
        #expect(statistics.reconnects == 0)
        #expect(statistics.subscriptions == 1)
        // The reporter's first record was at zero; the next adds the increments.
        clock.advance(by: 10)
        let dimensions = [("connection", "orders")]
        #expect(metrics.counterTotal(label: "signalkit_nats_messages_out_total", dimensions: dimensions) == 3)
        #expect(metrics.counterTotal(label: "signalkit_nats_bytes_in_total", dimensions: dimensions) == 6)
        #expect(metrics.counterTotal(label: "signalkit_nats_reconnects_total", dimensions: dimensions) == 0)
        let gauge = try metrics.expectGauge("signalkit_nats_subscriptions", dimensions)
        #expect(gauge.lastValue == 1)
    }

    @Test func jsonPayloadsRoundTrip() async throws {
        struct Order: Codable, Equatable, Sendable {
            let id: Int
            let item: String
        }
        let server = try NATSTestServer()
        defer { server.stop() }
        let nats = try await NATSConnection.connected(to: server)
        defer { nats.close() }
        let received = Recorder<Order>()
        let handle = nats.messages("orders", decoding: Order.self).start(next: { received.append($0) })
        try await nats.flush()
        let sink = Signal<Order, NoError> { subscriber in
            subscriber.putNext(Order(id: 1, item: "tea"))
            subscriber.putNext(Order(id: 2, item: "cake"))
            subscriber.putCompletion()
            return EmptyDisposable
        }.publishJSON(to: "orders", on: nats)
        let published = Recorder<String>()
        _ = sink.start(next: { published.append("\($0)") }, completed: { published.append("completed") })
        #expect(published.all == ["1", "2", "completed"])
        #expect(await eventually { received.count == 2 })
        #expect(received.all == [Order(id: 1, item: "tea"), Order(id: 2, item: "cake")])
        handle.dispose()
        // A payload that does not decode fails the signal with `coding`, and
        // nothing is delivered after it.
        let events = Recorder<String>()
        let strict = nats.messages("orders", decoding: Order.self).start(
            next: { events.append("next \($0.id)") },
            error: { error in
                if case .coding = error { events.append("coding") } else { events.append("\(error)") }
            })
        defer { strict.dispose() }
        try await nats.flush()
        try nats.publish("orders", payload: Array("not json".utf8))
        try nats.publish("orders", json: Order(id: 3, item: "pie"))
        #expect(await eventually { events.count >= 1 })
        try await Task.sleep(for: .milliseconds(50))
        #expect(events.all == ["coding"])
    }
}
#endif
