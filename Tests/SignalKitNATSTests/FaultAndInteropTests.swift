// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if NATS
import Foundation
import InMemoryTracing
import Instrumentation
import SignalKit
import SignalKitNATS
import Synchronization
import Testing
import Tracing

/// The process's instrument in this test process: an in-memory tracer,
/// bootstrapped on first use.
let natsTestTracer: InMemoryTracer = {
    let tracer = InMemoryTracer()
    InstrumentationSystem.bootstrap(tracer)
    return tracer
}()

/// A server killed under a running feed, trace context in headers, and
/// interoperation with nats-py.
@Suite struct FaultAndInteropTests {
    @Test func aKilledServerIsReconnectedAndTheSubscriptionMadeAgain() async throws {
        let server = try NATSTestServer()
        defer { server.stop() }
        let configure: (inout NATSOptions) -> Void = {
            $0.reconnect = NATSReconnectPolicy(initialDelay: .milliseconds(10), maximumDelay: .milliseconds(100))
            $0.publishBuffer = .droppingOldest(beyond: 100_000)
        }
        let subscriber = try await NATSConnection.connected(to: server, configure)
        let publisher = try await NATSConnection.connected(to: server, configure)
        defer {
            subscriber.close()
            publisher.close()
        }
        let states = Recorder<NATSConnectionState>()
        let stateHandle = subscriber.state.start(next: { states.append($0) })
        defer { stateHandle.dispose() }
        let received = Recorder<Int>()
        let handle = subscriber.messages("ticks").start(next: { received.append(Int($0.text)!) })
        defer { handle.dispose() }
        try await subscriber.flush()

        let sent = Atomic(0)
        let stop = Atomic(false)
        let feeder = Task.detached {
            while !stop.load(ordering: .relaxed) {
                let value = sent.load(ordering: .relaxed)
                if (try? publisher.publish("ticks", payload: Array(String(value).utf8))) != nil {
                    sent.add(1, ordering: .relaxed)
                }
                try? await Task.sleep(for: .milliseconds(1))
            }
        }
        #expect(await eventually { received.count >= 100 })
        let clock = ContinuousClock()
        server.kill()
        let killed = clock.now
        let receivedAtKill = received.count
        try await Task.sleep(for: .milliseconds(200))
        try server.restart()
        #expect(await eventually { subscriber.isConnected && publisher.isConnected })
        #expect(await eventually { received.count >= receivedAtKill + 100 })
        let resumed = clock.now - killed
        stop.store(true, ordering: .relaxed)
        await feeder.value
        try await publisher.flush()
        try await subscriber.flush()
        let total = sent.load(ordering: .relaxed)
        #expect(await eventually { received.all.last == total - 1 })
        let values = received.all
        #expect(values == values.sorted(), "in order, no duplicate")
        let lost = total - values.count
        print(
            "NATS server killed (SIGKILL) and restarted after 200 ms: messages flowed again \(resumed) after the kill;"
                + " \(total) published, \(values.count) received, \(lost) lost in the gap (core NATS stores nothing)"
        )
        #expect(states.all.contains(.reconnecting(attempt: 1)))
        #expect(states.all.last.map { if case .connected = $0 { true } else { false } } == true)
        #expect(subscriber.subscriptionCount == 1)
    }

    @Test func aServerThatStopsAnsweringIsAStaleConnection() async throws {
        let server = try NATSTestServer()
        defer { server.stop() }
        let nats = try await NATSConnection.connected(to: server) {
            $0.pingInterval = .milliseconds(50)
            $0.maximumPingsOutstanding = 2
            $0.reconnect = NATSReconnectPolicy(initialDelay: .milliseconds(10), maximumDelay: .milliseconds(50))
            $0.connectTimeout = .milliseconds(200)
        }
        defer { nats.close() }
        let errors = Recorder<NATSError>()
        let states = Recorder<NATSConnectionState>()
        let handles = [
            nats.errors.start(next: { errors.append($0) }), nats.state.start(next: { states.append($0) }),
        ]
        defer { for handle in handles { handle.dispose() } }
        server.pause(true)
        #expect(await eventually { errors.all.contains(.staleConnection) })
        #expect(await eventually { states.all.contains(.reconnecting(attempt: 1)) })
        server.pause(false)
        #expect(await eventually { nats.isConnected })
    }

    @Test func aMessageCarriesItsPublishersTrace() async throws {
        let tracer = natsTestTracer
        let server = try NATSTestServer()
        defer { server.stop() }
        let nats = try await NATSConnection.connected(to: server)
        defer { nats.close() }
        let traces = Recorder<String>()
        let handle = nats.messages("traced").start(next: { message in
            traces.append(ServiceContext.current?.inMemorySpanContext?.traceID ?? "none")
        })
        defer { handle.dispose() }
        try await nats.flush()
        let span = tracer.startSpan("publisher")
        ServiceContext.withValue(span.context) {
            try? nats.publish("traced", payload: Array("1".utf8))
        }
        try nats.publish("traced", payload: Array("2".utf8))
        span.end()
        #expect(await eventually { traces.count == 2 })
        #expect(traces.all == [span.traceID, "none"])
    }

    // MARK: - nats-py

    static let script = #"""
        import asyncio, json, sys
        import nats

        async def main():
            mode, url, subject, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
            nc = await nats.connect(url)
            if mode == "publish":
                for i in range(count):
                    await nc.publish(subject, f"py {i}".encode(), headers={"X-Index": str(i), "X-From": "nats-py"})
                await nc.flush()
            else:
                done = asyncio.Event()
                got = []
                async def received(msg):
                    got.append({"subject": msg.subject, "data": msg.data.decode(), "headers": msg.headers or {}})
                    if len(got) == count:
                        done.set()
                await nc.subscribe(subject, cb=received)
                await nc.flush()
                print("ready", flush=True)
                await asyncio.wait_for(done.wait(), 20)
                for entry in got:
                    print(json.dumps(entry, sort_keys=True), flush=True)
            await nc.close()

        asyncio.run(main())
        """#

    /// Runs the script with `arguments`, its output into a file; returns
    /// the process and the file.
    static func runPython(_ arguments: [String]) throws -> (Process, URL) {
        try runPythonScript(script, named: "interop.py", arguments: arguments)
    }

    static func lines(_ file: URL) -> [String] {
        ((try? String(contentsOf: file, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    @Test func natsPyPublishesAndSignalKitReceivesWithHeaders() async throws {
        let server = try NATSTestServer()
        defer { server.stop() }
        let nats = try await NATSConnection.connected(to: server)
        defer { nats.close() }
        let received = Recorder<NATSMessage>()
        let handle = nats.messages("interop.py").start(next: { received.append($0) })
        defer { handle.dispose() }
        try await nats.flush()
        let (process, output) = try Self.runPython(["publish", server.url, "interop.py", "5"])
        defer { try? FileManager.default.removeItem(at: output.deletingLastPathComponent()) }
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(Self.lines(output))")
        #expect(await eventually { received.count == 5 })
        #expect(received.all.map(\.text) == (0..<5).map { "py \($0)" })
        #expect(received.all.map { $0.headers["X-Index"] } == (0..<5).map { String($0) })
        #expect(received.all.allSatisfy { $0.headers["x-from"] == "nats-py" })
    }

    @Test func signalKitPublishesAndNatsPyReceivesWithHeaders() async throws {
        let server = try NATSTestServer()
        defer { server.stop() }
        let nats = try await NATSConnection.connected(to: server)
        defer { nats.close() }
        let (process, output) = try Self.runPython(["subscribe", server.url, "interop.swift", "3"])
        defer { try? FileManager.default.removeItem(at: output.deletingLastPathComponent()) }
        defer { if process.isRunning { process.terminate() } }
        #expect(await eventually(timeout: .seconds(20)) { Self.lines(output).contains("ready") || !process.isRunning })
        for index in 0..<3 {
            try nats.publish("interop.swift", payload: Array("swift \(index)".utf8), headers: ["X-Index": String(index)])
        }
        try await nats.flush()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(Self.lines(output))")
        let entries = Self.lines(output).filter { $0 != "ready" }
        #expect(
            entries
                == (0..<3).map {
                    #"{"data": "swift \#($0)", "headers": {"X-Index": "\#($0)"}, "subject": "interop.swift"}"#
                })
    }
}
#endif
