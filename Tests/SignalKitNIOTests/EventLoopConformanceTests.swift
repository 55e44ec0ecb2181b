// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if NIO
import NIOCore
import NIOPosix
import SignalKit
import SignalKitConformance
import SignalKitNIO
import SignalKitTesting
import Testing

// SignalKitNIO's hop onto an event loop, in both forms, checked by the
// conformance kit as a bridge into a real loop's thread. The two
// process-wide checks (live objects, context) stay off: this target's other
// tests run beside these.

@Suite struct EventLoopConformanceTests {
    /// A subject delivering on `loop`, through `buffer` when it is bounded.
    private static func hop(_ name: String, on loop: any EventLoop, buffer: SignalBuffer<ConformanceError>?)
        -> ConformanceSubject
    {
        let executor = ConformanceExecutor.custom(
            "event loop", isCurrent: { loop.inEventLoop }, settle: { try? loop.submit {}.wait() })
        return .bridge(name, on: executor, buffer: buffer ?? .unbounded) { inputs, buffer, sink in
            sink.subscribe(to: inputs.first |> (buffer.isUnbounded ? deliverOn(loop) : deliverOn(loop, buffer: buffer)))
        }
    }

    private static func check(_ name: String, buffer: SignalBuffer<ConformanceError>?) async throws -> ConformanceReport {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let subject = hop(name, on: group.next(), buffer: buffer)
        // Synchronous and waiting: on a thread of its own, not a Swift
        // concurrency thread.
        let report = await onDedicatedThread {
            SignalConformance.check(subject, options: ConformanceOptions(exceptions: ConformanceException.signalKit))
        }
        try await group.shutdownGracefully()
        return report
    }

    @Test func deliverOnAnEventLoopConforms() async throws {
        let report = try await Self.check("deliverOn(EventLoop)", buffer: nil)
        #expect(report.failures.isEmpty, "\(report)")
    }

    @Test func deliverOnAnEventLoopWithABufferConforms() async throws {
        let report = try await Self.check("deliverOn(EventLoop, buffer: droppingOldest)", buffer: .droppingOldest(beyond: 4))
        #expect(report.failures.isEmpty, "\(report)")
    }
}
#endif
