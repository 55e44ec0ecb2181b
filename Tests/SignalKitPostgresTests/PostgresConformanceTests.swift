// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if Postgres
import Dispatch
import Foundation
import PostgresNIO
import SignalKit
import SignalKitConformance
import SignalKitPostgres
import SignalKitTesting
import Synchronization
import Testing

// SignalKitPostgres checked by the conformance kit against the remote
// stage's PostgreSQL: a change feed (`notifications(channel:)`) as a source
// driven by a NOTIFY sink, and the NOTIFY sink (`notify`) as an operator.
// In PostgresTests, whose tests run one at a time: the kit checks the
// live-object counters too (rule 6.1); the context check stays off (the
// target's tracer is the process's instrument).

/// libdispatch's `dispatch_queue_get_label` (the Dispatch overlay does not
/// export it on Linux): with nil, the label of the current queue.
@_silgen_name("dispatch_queue_get_label")
private func dispatchQueueLabel(_ queue: OpaquePointer?) -> UnsafePointer<CChar>?

/// Polls `condition` every millisecond for up to `seconds`; returns whether
/// it held (for the kit's synchronous closures).
private func poll(seconds: Double, _ condition: () -> Bool) -> Bool {
    let end = DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1e9)
    while !condition() {
        if DispatchTime.now().uptimeNanoseconds > end { return false }
        usleep(1_000)
    }
    return true
}

extension PostgresTests {
    @Suite(.enabled(if: PostgresTestServer.isConfigured, PostgresTestServer.skipReason))
    struct PostgresConformanceTests {
        /// One NOTIFY sink for a whole check, fed by `pipe`: each value is
        /// `"<run>:<value>"`, and each run's feed keeps its own run's.
        private final class Sender: Sendable {
            let pipe = ValuePipe<String>()
            /// Values given to the sink, and the highest number of a
            /// committed one (the sink numbers its values from 1).
            private let given = Atomic<Int>(0)
            private let committed = Atomic<Int>(0)
            private let handle = MetaDisposable()

            init(channel: String, configuration: PostgresConnection.Configuration) {
                handle.set(
                    pipe.signal().notify(channel: channel, configuration: configuration, sender: "conformance")
                        .start(
                            next: { [self] batch in committed.store(Int(batch.sequences.upperBound), ordering: .releasing) },
                            error: { print("the conformance check's NOTIFY sink failed: \($0)") }))
            }

            func send(_ value: Int, run: Int) {
                given.add(1, ordering: .relaxed)
                pipe.putNext("\(run):\(value)")
            }

            /// Waits until every value given so far is committed.
            func waitUntilCommitted() {
                let target = given.load(ordering: .relaxed)
                _ = poll(seconds: 2) { committed.load(ordering: .acquiring) >= target }
            }

            func stop() { handle.dispose() }
        }

        /// One run's feed: whether it listens yet.
        private final class Run: Sendable {
            let number: Int
            private let subscribed = Atomic<Bool>(false)
            private let listening = Atomic<Bool>(false)
            private let disposed = Atomic<Bool>(false)

            init(number: Int) { self.number = number }

            func didSubscribe() { subscribed.store(true, ordering: .releasing) }
            func didListen() { listening.store(true, ordering: .releasing) }
            func didDispose() { disposed.store(true, ordering: .releasing) }

            /// A feed receives what is committed after its `LISTEN`: a send
            /// waits for it, once the run's feed was started and while it
            /// is not disposed.
            func waitUntilListening() {
                guard subscribed.load(ordering: .acquiring) else { return }
                _ = poll(seconds: 5) { listening.load(ordering: .acquiring) || disposed.load(ordering: .acquiring) }
            }
        }

        private static let runs = Atomic<Int>(0)

        private static func currentQueueLabel() -> String {
            dispatchQueueLabel(nil).map { String(cString: $0) } ?? ""
        }

        // A sink's task ends a round trip to the server after its
        // subscription is disposed (it holds the subscriber until then):
        // under load that took over the kit's default 2 s wait for rule 6.1.
        // A subscription that stays live is still reported, after 10 s.
        private static let options = ConformanceOptions(
            checksLiveObjects: true, exceptions: ConformanceException.signalKit, timeout: 10)

        @Test func notificationsConform() async throws {
            let configuration = PostgresTestServer.configuration()
            let channel = PostgresTestServer.uniqueChannel("conformance_feed")
            // The sink lives across the check; once stopped, its task ends on
            // its own: the test waits for it (the next test's live-object
            // counts begin where this one's end).
            let check = LeakCheck()
            do {
                let sender = Sender(channel: channel, configuration: configuration)
                // A feed delivers on its queue
                // (`SignalKitPostgres.notifications`). Settling waits until the
                // sink has committed every value sent, then a little for
                // PostgreSQL to pass them to the listener (the kit repeats it
                // until no event arrives).
                let executor = ConformanceExecutor.custom(
                    "the feed's queue",
                    isCurrent: { Self.currentQueueLabel() == "SignalKitPostgres.notifications" },
                    settle: {
                        sender.waitUntilCommitted()
                        usleep(2_000)
                    })
                let subject = ConformanceSubject.source("notifications(channel:)", on: executor) { _ in
                    let run = Run(number: Self.runs.add(1, ordering: .relaxed).newValue)
                    let prefix = "\(run.number):"
                    let feed = configuration.notifications(channel: channel)
                    let values = Signal<Int, PostgresChangeFeedError> { subscriber in
                        run.didSubscribe()
                        let listening = feed.start(
                            next: { event in
                                switch event {
                                case .listening:
                                    run.didListen()
                                case .notification(let payload):
                                    guard let body = PostgresSequencedPayload(payload)?.body,
                                        body.hasPrefix(prefix)
                                    else { return }
                                    subscriber.putNext(Int(body.dropFirst(prefix.count)) ?? -1)
                                }
                            },
                            error: { subscriber.putError($0) },
                            completed: { subscriber.putCompletion() })
                        return ActionDisposable {
                            run.didDispose()
                            listening.dispose()
                        }
                    }
                    return ConformanceSource(
                        signal: values,
                        send: { value in
                            run.waitUntilListening()
                            sender.send(value, run: run.number)
                        })
                }
                let report = await onDedicatedThread { SignalConformance.check(subject, options: Self.options) }
                sender.stop()
                #expect(report.failures.isEmpty, "\(report)")
            }
            #expect(check.leaks() == nil)
        }

        @Test func notifyConforms() async throws {
            let configuration = PostgresTestServer.configuration()
            let channel = PostgresTestServer.uniqueChannel("conformance_sink")
            // The sink's batches and its completion come on its task; its
            // source is subscribed on the thread that starts it. Settling
            // waits a little (the kit repeats it until no event arrives).
            let executor = ConformanceExecutor.custom(
                "the sink's task", isCurrent: { withUnsafeCurrentTask { $0 != nil } }, settle: { usleep(2_000) })
            // The sink's source cannot fail (`notify` is defined for
            // `Signal<String, NoError>`): the input's error ends it as a
            // completion, after which the sink sends what is left and
            // completes. Batching depends on timing, so no model of the
            // values (rule 1.3 is not checked).
            let subject = ConformanceSubject.operator("notify(channel:)", on: executor, forwards: .completion) {
                inputs in
                let input = inputs.first
                return Signal<String, NoError> { subscriber in
                    input.start(
                        next: { subscriber.putNext("\($0)") },
                        error: { _ in subscriber.putCompletion() },
                        completed: { subscriber.putCompletion() })
                }.notify(channel: channel, configuration: configuration, sender: "conformance")
            }
            let report = await onDedicatedThread { SignalConformance.check(subject, options: Self.options) }
            #expect(report.failures.isEmpty, "\(report)")
        }
    }
}
#endif
