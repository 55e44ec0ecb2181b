// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if NATS
import Dispatch
import Foundation
import SignalKit
import SignalKitConformance
import SignalKitNATS
import SignalKitTesting
import Synchronization
import Testing

// SignalKitNATS checked by the conformance kit against a real nats-server:
// `messages(_:)` as a source driven by publishes, `replayThenFollow` as a
// source driven by publishes into a stream, and `publish(to:on:)` as an
// operator. The two process-wide checks (live objects, context) stay off:
// this target's other tests run beside these.

/// libdispatch's `dispatch_queue_get_label` (the Dispatch overlay does not
/// export it on Linux): with nil, the label of the current queue.
@_silgen_name("dispatch_queue_get_label")
private func dispatchQueueLabel(_ queue: OpaquePointer?) -> UnsafePointer<CChar>?

@Suite struct NATSConformanceTests {
    /// Where the connection's signals deliver: the threads of SignalKitNATS's
    /// queues (`SignalKitNATS.delivery`, `SignalKitNATS.consume`), told by the
    /// current Dispatch queue's label. Settling flushes the connection (every
    /// publish before it has reached the server, and every message the
    /// server sent back before its PONG has been read), then waits for what
    /// the connection handed its queues (`settle` repeats until no event
    /// arrives).
    private static func executor(_ nats: NATSConnection) -> ConformanceExecutor {
        .custom(
            "SignalKitNATS queues",
            isCurrent: { currentQueueLabel().hasPrefix("SignalKitNATS.") },
            settle: {
                let flushed = DispatchSemaphore(value: 0)
                Task {
                    try? await nats.flush(timeout: .seconds(2))
                    flushed.signal()
                }
                flushed.wait()
                // Pulls and deliveries already on their way.
                usleep(2_000)
            })
    }

    /// The label of the Dispatch queue running the calling thread
    /// ("com.apple.main-thread", "" on a thread of no queue).
    private static func currentQueueLabel() -> String {
        dispatchQueueLabel(nil).map { String(cString: $0) } ?? ""
    }

    /// A fresh subject name per run: a run never sees another's messages.
    private static let runs = Atomic<Int>(0)

    private static func nextSubject(_ prefix: String) -> String {
        "\(prefix).\(runs.add(1, ordering: .relaxed).newValue)"
    }

    private static func payload(_ value: Int) -> [UInt8] { Array(String(value).utf8) }

    private static func value(_ payload: [UInt8]) -> Int { Int(String(decoding: payload, as: UTF8.self)) ?? -1 }

    private static let options = ConformanceOptions(exceptions: ConformanceException.signalKit)

    private static func check(_ subject: ConformanceSubject) async -> ConformanceReport {
        await onDedicatedThread { SignalConformance.check(subject, options: options) }
    }

    @Test func messagesConform() async throws {
        let server = try NATSTestServer()
        defer { server.stop() }
        let nats = try await NATSConnection.connected(to: server)
        defer { nats.close() }
        // Subscribing and publishing on one connection: the server reads the
        // SUB before any PUB sent after it, so every value sent while the
        // subscription lives reaches it.
        let subject = ConformanceSubject.source("nats.messages", on: Self.executor(nats)) { _ in
            let name = Self.nextSubject("conformance.messages")
            return ConformanceSource(
                signal: nats.messages(name) |> map { Self.value($0.payload) },
                send: { value in try? nats.publish(name, payload: Self.payload(value)) })
        }
        let report = await Self.check(subject)
        #expect(report.failures.isEmpty, "\(report)")
        #expect(nats.subscriptionCount == 0)
    }

    @Test func publishConforms() async throws {
        let server = try NATSTestServer()
        defer { server.stop() }
        let nats = try await NATSConnection.connected(to: server) { $0.publishBuffer = .unbounded }
        defer { nats.close() }
        // An operator on the sending thread: each value published, then the
        // count of published values sent on; the input's completion and
        // error are passed on.
        let subject = ConformanceSubject.operator("publish(to:on:)") { inputs in
            inputs.first
                |> map { Self.payload($0) }
                |> { $0.publish(to: Self.nextSubject("conformance.publish"), on: nats, mapError: { _ in .closed }) }
        }
        .model { received in received.indices.map { $0 + 1 } }
        let report = await Self.check(subject)
        #expect(report.failures.isEmpty, "\(report)")
    }

    @Test func replayThenFollowConforms() async throws {
        let server = try NATSTestServer(jetStream: true)
        defer { server.stop() }
        let nats = try await NATSConnection.connected(to: server)
        defer { nats.close() }
        let jetStream = nats.jetStream()
        _ = try await jetStream.createOrUpdateStream(
            NATSStreamConfig(name: "CONFORMANCE", subjects: ["conformance.stream.>"], storage: .memory))
        // Each run reads its own subject of the stream from the first
        // message: what was published before the consumer exists is
        // replayed, so every value sent is delivered, in order.
        let subject = ConformanceSubject.source("nats.replayThenFollow", on: Self.executor(nats)) { _ in
            let name = Self.nextSubject("conformance.stream")
            return ConformanceSource(
                signal: jetStream.replayThenFollow(stream: "CONFORMANCE", subject: name)
                    |> map { Self.value($0.payload) },
                send: { value in try? nats.publish(name, payload: Self.payload(value)) })
        }
        let report = await Self.check(subject)
        #expect(report.failures.isEmpty, "\(report)")
    }
}
#endif
