// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Dispatch
import SignalKit
import SignalKitTesting
import Synchronization
import Testing

// Context propagation under threads and across propagation changes.
//
// Concurrent senders: an operator fed by several inputs delivers an event
// that one thread sends while another thread is delivering from that other
// thread, in the event's own sender's context.
//
// Replacing and removing the process's context propagation while events are
// in flight (`SignalContext.install(_:)`, `SignalContext.uninstall()`): an
// event captured by a propagation that has since been replaced is delivered
// with no context under the new one (the delivering thread's context never
// leaks into it); after `uninstall()` an event in flight still carries the
// context it captured.
//
// Here, not in SignalKitTests: installing a propagation is process-wide, and
// the unit tests run in parallel under a propagation of their own. Nested in
// `StressSuite` (serialized), and it uninstalls what it installs.

enum FirstTrace {
    @TaskLocal static var current: String?
}

enum SecondTrace {
    @TaskLocal static var current: String?
}

struct FirstTracePropagation: SignalContextPropagation {
    func currentContext() -> String? { FirstTrace.current }
    func withContext(_ context: String?, _ body: () -> Void) { FirstTrace.$current.withValue(context, operation: body) }
}

struct SecondTracePropagation: SignalContextPropagation {
    func currentContext() -> String? { SecondTrace.current }
    func withContext(_ context: String?, _ body: () -> Void) { SecondTrace.$current.withValue(context, operation: body) }
}

/// Both traces, as a delivery sees them.
private func traces() -> String {
    "first=\(FirstTrace.current ?? "none") second=\(SecondTrace.current ?? "none")"
}

extension StressSuite {
    @Suite(.serialized) struct PropagationReplacementTests {
        /// The boundaries that capture per event, per subscription (the
        /// bounded hop decides at start) and per flushed value.
        static let boundaries: [(String, @Sendable (Queue) -> (Signal<Int, NoError>) -> Signal<Int, NoError>)] = [
            ("delayEvents", { queue in delayEvents(1, queue: queue) }),
            ("delayEvents(buffer:)", { queue in delayEvents(1, queue: queue, buffer: .droppingOldest(beyond: 8)) }),
            ("deliverOn", { queue in deliverOn(queue) }),
            ("deliverOn(buffer:)", { queue in deliverOn(queue, buffer: .droppingOldest(beyond: 8)) }),
            ("throttle", { queue in throttle(1, queue: queue) }),
        ]

        /// Installs `FirstTracePropagation`, starts a subscription through
        /// `boundary` on virtual time, and sends 1 under FirstTrace "OLD":
        /// the event waits in the boundary.
        private func startWithAnEventInFlight(
            through boundary: @Sendable (Queue) -> (Signal<Int, NoError>) -> Signal<Int, NoError>
        ) -> (VirtualTimeScheduler, EventLog, ValuePipe<Int>, any Disposable) {
            SignalContext.install(FirstTracePropagation())
            let scheduler = VirtualTimeScheduler()
            let log = EventLog()
            let pipe = ValuePipe<Int>()
            let handle = (pipe.signal() |> boundary(scheduler.makeQueue())).start(next: { log.append("\($0) \(traces())") })
            FirstTrace.$current.withValue("OLD") { pipe.putNext(1) }
            return (scheduler, log, pipe, handle)
        }

        @Test(arguments: boundaries)
        func anEventInFlightWhenThePropagationIsReplacedIsDeliveredWithNone(
            named: String,
            boundary: @Sendable (Queue) -> (Signal<Int, NoError>) -> Signal<Int, NoError>
        ) {
            defer { SignalContext.uninstall() }
            let (scheduler, log, pipe, handle) = startWithAnEventInFlight(through: boundary)
            SignalContext.install(SecondTracePropagation())
            // The thread that runs the delivery has a context of the new
            // propagation: it must not leak into the old event.
            SecondTrace.$current.withValue("RUNNER") { scheduler.advance(by: 2) }
            SecondTrace.$current.withValue("NEW") { pipe.putNext(2) }
            SecondTrace.$current.withValue("RUNNER") { scheduler.advance(by: 2) }
            #expect(log.events == ["1 first=none second=none", "2 first=none second=NEW"], "\(named)")
            handle.dispose()
        }

        @Test(arguments: boundaries)
        func anEventInFlightWhenThePropagationIsRemovedKeepsItsContext(
            named: String,
            boundary: @Sendable (Queue) -> (Signal<Int, NoError>) -> Signal<Int, NoError>
        ) {
            defer { SignalContext.uninstall() }
            let (scheduler, log, _, handle) = startWithAnEventInFlight(through: boundary)
            SignalContext.uninstall()
            FirstTrace.$current.withValue("RUNNER") { scheduler.advance(by: 2) }
            #expect(log.events == ["1 first=OLD second=none"], "\(named)")
            handle.dispose()
        }
    }

    @Suite(.serialized) struct ConcurrentSendersContextTests {
        /// Two threads send into `merge` at once, each under its own trace
        /// (even values from "EVEN", odd from "ODD"): whichever thread
        /// delivers, every value sees its own sender's trace.
        @Test func mergeDeliversEveryValueInItsSendersContextUnderConcurrentSenders() {
            defer { SignalContext.uninstall() }
            SignalContext.install(FirstTracePropagation())
            let check = LeakCheck()
            let perThread = 20_000 * stressScale
            do {
                let even = ValuePipe<Int>()
                let odd = ValuePipe<Int>()
                let delivered = Synchronization.Atomic<Int>(0)
                let mismatches = Synchronization.Atomic<Int>(0)
                let handle = merge([even.signal(), odd.signal()]).start(next: { value in
                    delivered.add(1, ordering: .relaxed)
                    if FirstTrace.current != (value.isMultiple(of: 2) ? "EVEN" : "ODD") {
                        mismatches.add(1, ordering: .relaxed)
                    }
                })
                DispatchQueue.concurrentPerform(iterations: 2) { index in
                    let (pipe, trace) = index == 0 ? (even, "EVEN") : (odd, "ODD")
                    FirstTrace.$current.withValue(trace) {
                        for step in 0..<perThread { pipe.putNext(2 * step + index) }
                    }
                }
                #expect(delivered.load(ordering: .relaxed) == 2 * perThread)
                #expect(mismatches.load(ordering: .relaxed) == 0)
                handle.dispose()
            }
            #expect(check.leaks() == nil)
        }
    }
}
