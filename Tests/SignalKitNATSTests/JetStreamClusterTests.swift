// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if NATS
import Foundation
import SignalKit
import SignalKitNATS
import Synchronization
import Testing

/// A flag set once, read from any thread.
final class Flag: Sendable {
    private let value = Atomic(false)
    func set() { value.store(true, ordering: .relaxed) }
    var isSet: Bool { value.load(ordering: .relaxed) }
}

/// JetStream under faults, with figures printed: a consumer that dies
/// mid-stream and starts again, and a three-node cluster that loses its
/// stream leader under a running publish and consume.
@Suite(.serialized) struct JetStreamClusterTests {
    @Test func aConsumerKilledMidStreamAndRestartedProcessesEveryMessageAtLeastOnce() async throws {
        let server = try NATSTestServer(jetStream: true)
        defer { server.stop() }
        let nats = try await NATSConnection.connected(to: server)
        defer { nats.close() }
        let js = nats.jetStream()
        try await js.createOrUpdateStream(NATSStreamConfig(name: "WORK", subjects: ["work"]))
        try await js.createOrUpdateConsumer(
            stream: "WORK", NATSConsumerConfig(durableName: "worker", ackWait: .milliseconds(800)))
        let total = 500
        for index in 1...total {
            try await js.publish(to: "work", payload: Array(String(index).utf8))
        }
        // The first worker acknowledges with a confirmation and "dies"
        // (its subscription disposed, nothing more acknowledged) after 150
        // messages, with messages in flight.
        let first = Recorder<UInt64>()
        let confirmed = Recorder<UInt64>()
        let died = Flag()
        let handle = js.consume(stream: "WORK", consumer: "worker", buffer: .blocking(beyond: 32)).start(next: {
            message in
            guard !died.isSet else { return }
            first.append(message.streamSequence)
            // Every third message is never acknowledged (in flight when it dies).
            guard message.streamSequence % 3 != 0 else { return }
            Task {
                if (try? await message.ackConfirmed()) != nil {
                    confirmed.append(message.streamSequence)
                }
            }
        })
        #expect(await eventually { first.count >= 150 })
        died.set()
        handle.dispose()
        // Confirmations under way when it died still count as confirmed.
        try await Task.sleep(for: .milliseconds(100))
        let confirmedBeforeRestart = Set(confirmed.all)

        let clock = ContinuousClock()
        let restarted = clock.now
        let second = Recorder<UInt64>()
        let secondHandle = js.consume(stream: "WORK", consumer: "worker", buffer: .blocking(beyond: 32)).start(
            next: { message in
                second.append(message.streamSequence)
                try? message.ack()
            })
        defer { secondHandle.dispose() }
        let processed = { Set(first.all).union(second.all) }
        #expect(await eventually(timeout: .seconds(20)) { processed().count == total })
        let tookToCatchUp = clock.now - restarted
        try await Task.sleep(for: .milliseconds(1_000))
        let duplicates = second.all.filter { Set(first.all).contains($0) }
        let afterConfirmedAck = second.all.filter { confirmedBeforeRestart.contains($0) }
        print(
            "JetStream consumer killed mid-stream: \(total) stored, first worker processed \(first.count)"
                + " (\(confirmedBeforeRestart.count) acknowledgements confirmed), the restarted one \(second.count)"
                + " in \(tookToCatchUp); all \(processed().count) processed at least once,"
                + " \(duplicates.count) processed twice, \(afterConfirmedAck.count) after a confirmed acknowledgement"
        )
        #expect(processed() == Set((1...total).map(UInt64.init)))
        #expect(afterConfirmedAck.isEmpty)
        #expect(Set(second.all).count == second.count, "the restarted worker acks: no second delivery to it")
    }

    /// A JetStream server to kill and restart, a connection to it that
    /// reconnects within 100 ms, and a stream on file (it outlives a
    /// restart).
    static func restartable(stream: String, subjects: [String]) async throws -> (
        NATSTestServer, NATSConnection, NATSJetStream
    ) {
        let server = try NATSTestServer(jetStream: true)
        let nats = try await NATSConnection.connected(to: server) {
            $0.reconnect = NATSReconnectPolicy(initialDelay: .milliseconds(10), maximumDelay: .milliseconds(100))
        }
        let js = nats.jetStream()
        do {
            try await js.createOrUpdateStream(NATSStreamConfig(name: stream, subjects: subjects, storage: .file))
        } catch {
            nats.close()
            server.stop()
            throw error
        }
        return (server, nats, js)
    }

    /// A durable consumer ("reader") and an ephemeral one (nil).
    @Test(arguments: ["reader", nil] as [String?])
    func aConsumerPullsAgainAfterTheConnectionIsBack(_ consumer: String?) async throws {
        let (server, nats, js) = try await Self.restartable(stream: "FEED", subjects: ["feed"])
        defer { server.stop() }
        defer { nats.close() }
        let received = Recorder<Int>()
        let consume = js.consume(stream: "FEED", consumer: consumer, acknowledgement: .automatic)
        let handle = consume.start(next: { received.append(Int($0.text)!) })
        defer { handle.dispose() }
        for index in 1...10 { try await js.publish(to: "feed", payload: Array(String(index).utf8)) }
        #expect(await eventually { received.count == 10 })
        let clock = ContinuousClock()
        server.kill()
        let killed = clock.now
        try await Task.sleep(for: .milliseconds(200))
        try server.restart()
        // Published after the restart (the stream is on file): pulled on the new connection.
        for index in 11...20 { try await js.publish(to: "feed", payload: Array(String(index).utf8)) }
        #expect(await eventually { Set(received.all) == Set(1...20) })
        let resumed = clock.now - killed
        try await Task.sleep(for: .milliseconds(100))
        // Acknowledgements the server had not written when it was killed
        // are lost with it: those messages come again (at least once).
        let values = received.all
        print(
            "JetStream server killed (SIGKILL) and restarted after 200 ms under a consumer"
                + " (\(consumer ?? "ephemeral")): pulling again,"
                + " all 20 messages consumed \(resumed) after the kill, \(values.count - 20) delivered again"
        )
        #expect(Set(values) == Set(1...20))
        #expect(Array(values.drop { $0 <= 10 }.filter { $0 > 10 }) == Array(11...20), "in order after the restart")
    }

    @Test(.timeLimit(.minutes(1)))
    func replayThenFollowRecoversALostConsumerAndAKilledServerWithNoGapAndNoDuplicate() async throws {
        let (server, nats, js) = try await Self.restartable(stream: "LOG", subjects: ["log.>"])
        defer { server.stop() }
        defer { nats.close() }
        func publish(_ range: ClosedRange<Int>) async throws {
            for index in range { try await js.publish(to: "log.a", payload: Array(String(index).utf8)) }
        }
        try await publish(1...100)
        let received = Recorder<Int>()
        let consumers = Recorder<String>()
        // A small buffer: the reads are many pulls. A pull's expiry longer
        // than the waits below: recovering must not wait for a lost pull to
        // expire.
        let follow = js.replayThenFollow(
            stream: "LOG", subject: "log.a", buffer: .blocking(beyond: 16), pullExpiry: .seconds(30))
        let handle = follow.start(next: { message in
            received.append(Int(message.text)!)
            consumers.append(message.consumer)
        })
        defer { handle.dispose() }
        #expect(await eventually { received.count == 100 })

        // 1. Its consumer is lost (deleted here; a server drops an idle
        // one after its inactive threshold): it makes another, from after
        // the last message delivered.
        let clock = ContinuousClock()
        let lost = consumers.all.last!
        try await js.deleteConsumer(stream: "LOG", consumer: lost)
        let deleted = clock.now
        try await publish(101...200)
        #expect(await eventually(timeout: .seconds(10)) { received.count >= 200 })
        let afterDelete = clock.now - deleted
        #expect(!consumers.all.suffix(50).contains(lost))

        // 2. The server is killed (SIGKILL) and restarted: the stream is on
        // file, the ordered consumer is made again where the reading was.
        server.kill()
        let killed = clock.now
        try await Task.sleep(for: .milliseconds(200))
        try server.restart()
        try await publish(201...300)
        let published = clock.now - killed
        #expect(await eventually(timeout: .seconds(10)) { received.count >= 300 })
        let afterKill = clock.now - killed
        try await Task.sleep(for: .milliseconds(200))
        print(
            "replayThenFollow: consumer deleted, all 200 delivered \(afterDelete) after it (100 published meanwhile);"
                + " server killed (SIGKILL) and restarted after 200 ms, the next 100 acknowledged \(published) and all 300 delivered \(afterKill) after the kill;"
                + " \(Set(consumers.all).count) consumers made"
        )
        #expect(received.all == Array(1...300), "every message once, in order")
        #expect(Set(consumers.all).count >= 3)
    }

    @Test(.timeLimit(.minutes(1)))
    func aClusterLosesItsStreamLeaderUnderLoadAndLosesNothingAcknowledged() async throws {
        let cluster = try NATSTestCluster()
        defer { cluster.stop() }
        let nats = try await NATSConnection.connected(to: cluster.servers[0]) {
            $0.servers = cluster.urls
            $0.reconnect = NATSReconnectPolicy(initialDelay: .milliseconds(20), maximumDelay: .milliseconds(200))
            $0.connectTimeout = .milliseconds(500)
        }
        defer { nats.close() }
        let js = nats.jetStream(timeout: .seconds(2))
        // The meta leader is elected a moment after the servers start.
        var created = false
        for _ in 0..<100 where !created {
            created =
                (try? await js.createOrUpdateStream(
                    NATSStreamConfig(name: "TICKS", subjects: ["ticks"], replicas: 3, duplicateWindow: .seconds(60))))
                != nil
            if !created { try await Task.sleep(for: .milliseconds(100)) }
        }
        try #require(created, "the cluster made no R3 stream")
        var consumerMade = false
        for _ in 0..<50 where !consumerMade {
            consumerMade =
                (try? await js.createOrUpdateConsumer(
                    stream: "TICKS", NATSConsumerConfig(durableName: "reader", ackWait: .seconds(2), replicas: 3)))
                != nil
            if !consumerMade { try await Task.sleep(for: .milliseconds(100)) }
        }
        try #require(consumerMade)

        let received = Recorder<Int>()
        let handle = js.consume(
            stream: "TICKS", consumer: "reader", buffer: .blocking(beyond: 64), acknowledgement: .automatic,
            pullExpiry: .seconds(1)
        ).start(next: { received.append(Int($0.text)!) })
        defer { handle.dispose() }

        // One publisher, one publish at a time; each acknowledged payload
        // and when its acknowledgement came.
        let clock = ContinuousClock()
        let acknowledged = Recorder<(Int, ContinuousClock.Instant, Int)>()
        let failed = Recorder<String>()
        let stop = Atomic(false)
        let publisher = Task.detached {
            var index = 0
            while !stop.load(ordering: .relaxed) {
                index += 1
                do {
                    let ack = try await js.publish(
                        to: "ticks", payload: Array(String(index).utf8), messageID: "tick-\(index)",
                        attemptTimeout: .milliseconds(250), deadline: .seconds(20))
                    acknowledged.append((index, clock.now, ack.attempts))
                } catch {
                    failed.append("\(index): \(error)")
                }
            }
        }
        #expect(await eventually(timeout: .seconds(15)) { acknowledged.count >= 300 && received.count >= 200 })
        let info = try await js.streamInfo("TICKS")
        let leaderName = try #require(info.leader)
        let leader = try #require(cluster.server(named: leaderName))
        let killedAt = clock.now
        let acknowledgedAtKill = acknowledged.count
        leader.kill()
        #expect(await eventually(timeout: .seconds(30)) { acknowledged.count >= acknowledgedAtKill + 300 })
        stop.store(true, ordering: .relaxed)
        await publisher.value
        let acks = acknowledged.all
        let sentTotal = acks.count
        #expect(await eventually(timeout: .seconds(20)) { Set(received.all).isSuperset(of: acks.map(\.0)) })
        // The election gap: the longest time without an acknowledgement
        // from the kill on (the publishes are one at a time).
        var times = [killedAt] + acks.map(\.1).filter { $0 > killedAt }
        times.sort()
        let gap = zip(times, times.dropFirst()).map { $1 - $0 }.max() ?? .zero
        let gapMilliseconds = gap.components.seconds * 1_000 + gap.components.attoseconds / 1_000_000_000_000_000
        let retried = acks.filter { $0.2 > 1 }.count
        let mostAttempts = acks.map(\.2).max() ?? 0
        let receivedSet = Set(received.all)
        let lost = acks.filter { !receivedSet.contains($0.0) }.count
        let survivor = try await js.streamInfo("TICKS")
        print(
            "JetStream R3 cluster, stream leader \(leaderName) killed (SIGKILL) under load: election gap (longest"
                + " time without a publish acknowledgement after the kill) \(gapMilliseconds) ms;"
                + " \(sentTotal) acknowledged (\(acknowledgedAtKill) before the kill, \(retried) after a retry, up to"
                + " \(mostAttempts) attempts with the same Nats-Msg-Id),"
                + " \(failed.count) failed, \(received.count) consumed (\(received.count - receivedSet.count)"
                + " redelivered), \(lost) acknowledged and lost; new leader \(survivor.leader ?? "?"),"
                + " \(survivor.messages) stored, client on \(nats.currentState)"
        )
        #expect(lost == 0)
        #expect(failed.all.isEmpty)
        #expect(survivor.messages == UInt64(survivor.lastSequence))
        #expect(survivor.messages >= UInt64(sentTotal))
        #expect(survivor.leader != nil && survivor.leader != leaderName)
        #expect(nats.isConnected)
        if case .connected(let server) = nats.currentState {
            #expect(!leader.url.hasSuffix(server), "the client is on a live node")
        }
    }
}
#endif
