// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if GRPC
import Foundation
import GRPCCore
import SignalKit
import SignalKitConformance
import SignalKitGRPC
import SignalKitTesting
import Synchronization
import Testing

// SignalKitGRPC checked by the conformance kit as a bridge: the kit's input
// is served by a `RemoteSignalService` on loopback, and the client's
// `remoteSignal` delivers into the kit's sink. Values, the completion (status
// OK) and the error (a failed status) cross the call; the client's
// `dispose()` cancels it, which disposes the server's subscription to the
// input. In GRPCSuite, whose tests run one at a time: the kit checks the
// live-object counters too (rule 6.1); the context check stays off (the
// target's tracer is the process's instrument).
extension GRPCSuite {
    @Suite struct RemoteSignalConformanceTests {
        /// The kit's input of each run, served to the call whose request names
        /// it (each call takes its own, once).
        private final class Inputs: Sendable {
            private let waiting = _LockedState<[String: Signal<Int, ConformanceError>]>([:])
            private let runs = Atomic<Int>(0)

            /// Registers `input` and returns the request that fetches it.
            func register(_ input: Signal<Int, ConformanceError>) -> String {
                let request = "run \(runs.add(1, ordering: .relaxed).newValue)"
                waiting.withLock { $0[request] = input }
                return request
            }

            /// The input `request` names, removed; a signal that fails at once
            /// for a request no run made.
            func take(_ request: String) -> Signal<Int, ConformanceError> {
                waiting.withLock { $0.removeValue(forKey: request) } ?? .fail(ConformanceError(id: -1))
            }
        }

        /// The client's events come on the task running its call; the server
        /// subscribes on the task serving it. Neither is a thread of the kit's
        /// (which runs no task), so "on the executor" is "inside a task".
        /// Settling cannot know what is in flight: a short wait, which the kit
        /// repeats until no event arrives.
        private static let executor = ConformanceExecutor.custom(
            "gRPC call tasks",
            isCurrent: { withUnsafeCurrentTask { $0 != nil } },
            settle: { usleep(2_000) })

        @Test func remoteSignalConforms() async throws {
            let inputs = Inputs()
            var service = RemoteSignalService()
            service.serve(Methods.ints, buffer: .unbounded) { request in inputs.take(request) }
            let server = try await TestServer.start(service)
            let report = try await withTestClient(port: server.port) { client in
                let subject = ConformanceSubject.bridge("remoteSignal", on: Self.executor) {
                    input, _, sink in
                    sink.subscribe(to: client.remoteSignal(Methods.ints, request: inputs.register(input.first)))
                }
                let options = ConformanceOptions(checksLiveObjects: true, exceptions: ConformanceException.signalKit)
                return await onDedicatedThread { SignalConformance.check(subject, options: options) }
            }
            await server.stop()
            #expect(report.failures.isEmpty, "\(report)")
            #expect(service.servedCalls == 0)
        }
    }
}
#endif
