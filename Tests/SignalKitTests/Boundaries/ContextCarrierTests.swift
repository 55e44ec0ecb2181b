// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Dispatch
import SignalKit
import SignalKitTesting
import Testing

// Context propagation across the boundaries that keep values in a buffer
// (the bounded hop, the bounded `delayEvents`, the actor deliveries) and
// across `queue`'s waiting inner signals: one drain, timer or actor job
// delivers several senders' values, each in its own sender's context; an
// inner signal that waits is subscribed in the context of the code that
// sent it, not of the code whose completion starts it. (The bounded pool hop
// is tested in ContextPropagationTests.swift, beside the unbounded one.)

struct CarriedContextError: Error {}

/// The bounded policies that keep every value of these tests.
let roomyBuffers: [SignalBuffer<CarriedContextError>] = [
    .droppingOldest(beyond: 64), .droppingNewest(beyond: 64), .failing(beyond: 64, with: CarriedContextError()),
    .blocking(beyond: 64),
]

@Suite struct BoundedContextPropagationTests {
    init() { _ = testTraceInstalled }

    @Test(arguments: QueueKind.allCases, roomyBuffers)
    func aBoundedHopDeliversEachEventInItsSendersContext(kind: QueueKind, buffer: SignalBuffer<CarriedContextError>) {
        kind.withQueue { queue in
            let log = EventLog()
            let source = TestSource<Int, CarriedContextError>("source", log: EventLog())
            let handle = (source.signal |> deliverOn(queue, buffer: buffer)).start(
                next: { log.append("\($0) \(traceName())") },
                completed: { log.append("completed \(traceName())") }
            )
            // A burst: one drain delivers all four.
            for (value, trace) in [(1, "A"), (2, "B"), (3, nil), (4, "A")] {
                TestTrace.$current.withValue(trace) { source.putNext(value) }
            }
            TestTrace.$current.withValue("C") { source.putCompletion() }
            queue.sync {}
            #expect(log.events == ["1 A", "2 B", "3 none", "4 A", "completed C"])
            handle.dispose()
        }
    }

    @Test func aBoundedHopDeliversAnErrorInItsSendersContext() {
        let queue = Queue(name: "context.bounded.error")
        let log = EventLog()
        let source = TestSource<Int, CarriedContextError>("source", log: EventLog())
        let handle = (source.signal |> deliverOn(queue, buffer: .droppingOldest(beyond: 8))).start(
            next: { log.append("\($0) \(traceName())") },
            error: { _ in log.append("error \(traceName())") }
        )
        TestTrace.$current.withValue("A") { source.putNext(1) }
        TestTrace.$current.withValue("E") { source.putError(CarriedContextError()) }
        queue.sync {}
        #expect(log.events == ["1 A", "error E"])
        handle.dispose()
    }

    /// `latest` keeps the newest value: it goes out in its own sender's
    /// context, not in the context of the value it replaced.
    @Test func aConflatedValueKeepsItsOwnSendersContext() {
        let queue = Queue(name: "context.bounded.latest")
        let log = EventLog()
        let pipe = ValuePipe<Int>()
        let handle = (pipe.signal() |> deliverOn(queue, buffer: .latest)).start(next: { log.append("\($0) \(traceName())") })
        // The queue is held, so the three values wait together.
        let hold = DispatchSemaphore(value: 0)
        queue.async { hold.wait() }
        send(pipe, [(1, "A"), (2, "B"), (3, "C")])
        hold.signal()
        queue.sync {}
        #expect(log.events == ["3 C"])
        handle.dispose()
    }

    /// Two subscriptions' values interleaved on one queue, each drained in
    /// batches: neither ever sees the other's context.
    @Test func twoBoundedHopsOnOneQueueNeverSeeEachOthersContext() {
        let queue = Queue(name: "context.bounded.shared")
        let log = EventLog()
        let first = ValuePipe<Int>()
        let second = ValuePipe<Int>()
        let buffer = SignalBuffer<NoError>.droppingOldest(beyond: 1_000)
        let handles = [
            (first.signal() |> deliverOn(queue, buffer: buffer)).start(next: { log.append("first \($0) \(traceName())") }),
            (second.signal() |> deliverOn(queue, buffer: buffer)).start(next: { log.append("second \($0) \(traceName())") }),
        ]
        for round in 0..<50 {
            send(first, [(round, "X"), (round, nil)])
            send(second, [(round, nil), (round, "Y")])
        }
        queue.sync {}
        let firsts = log.events.filter { $0.hasPrefix("first") }
        let seconds = log.events.filter { $0.hasPrefix("second") }
        #expect(firsts == (0..<50).flatMap { ["first \($0) X", "first \($0) none"] })
        #expect(seconds == (0..<50).flatMap { ["second \($0) none", "second \($0) Y"] })
        handles.forEach { $0.dispose() }
    }

    /// One timer firing sends every due value: each in its own sender's
    /// context, not in the context of the value that armed the timer.
    @Test func aBoundedDelayDeliversEachEventInItsSendersContext() {
        let scheduler = VirtualTimeScheduler()
        let log = EventLog()
        let source = TestSource<Int, CarriedContextError>("source", log: EventLog())
        let handle = (source.signal |> delayEvents(1, queue: scheduler.makeQueue(), buffer: .droppingOldest(beyond: 8)))
            .start(
                next: { log.append("\($0) \(traceName())") },
                completed: { log.append("completed \(traceName())") }
            )
        for (value, trace) in [(1, "A"), (2, "B"), (3, nil)] {
            TestTrace.$current.withValue(trace) { source.putNext(value) }
        }
        TestTrace.$current.withValue("C") { source.putCompletion() }
        TestTrace.$current.withValue("runner") { scheduler.advance(by: 2) }
        #expect(log.events == ["1 A", "2 B", "3 none", "completed C"])
        handle.dispose()
    }

    @Test func aBoundedDelayRearmedByItsTimerKeepsEachValuesContext() {
        let scheduler = VirtualTimeScheduler()
        let log = EventLog()
        let pipe = ValuePipe<Int>()
        let handle = (pipe.signal() |> delayEvents(1, queue: scheduler.makeQueue(), buffer: .droppingOldest(beyond: 8)))
            .start(next: { log.append("\($0) \(traceName())") })
        send(pipe, [(1, "A")])
        TestTrace.$current.withValue("runner") { scheduler.advance(by: 0.5) }
        send(pipe, [(2, "B")])
        // The firing for 1 re-arms the timer for 2.
        TestTrace.$current.withValue("runner") { scheduler.advance(by: 0.5) }
        TestTrace.$current.withValue("runner") { scheduler.advance(by: 0.5) }
        #expect(log.events == ["1 A", "2 B"])
        handle.dispose()
    }

    @Test(arguments: [SignalBuffer<CarriedContextError>.unbounded] + roomyBuffers.filter { $0.description.hasPrefix("dropping") })
    func anActorDeliveryDeliversEachEventInItsSendersContext(buffer: SignalBuffer<CarriedContextError>) async {
        let recorder = TraceRecorder()
        let source = TestSource<Int, CarriedContextError>("source", log: EventLog())
        await recorder.attach(source.signal, buffer: buffer)
        for (value, trace) in [(1, "A"), (2, "B"), (3, nil)] {
            TestTrace.$current.withValue(trace) { source.putNext(value) }
        }
        TestTrace.$current.withValue("C") { source.putCompletion() }
        await recorder.waitForEntries(4)
        #expect(await recorder.log == ["1 A", "2 B", "3 none", "completed C"])
        await recorder.detach()
    }

    @Test(arguments: [SignalBuffer<CarriedContextError>.unbounded, .droppingOldest(beyond: 4)])
    func anActorDeliveryDeliversAnErrorInItsSendersContext(buffer: SignalBuffer<CarriedContextError>) async {
        let recorder = TraceRecorder()
        let source = TestSource<Int, CarriedContextError>("source", log: EventLog())
        await recorder.attach(source.signal, buffer: buffer)
        TestTrace.$current.withValue("E") { source.putError(CarriedContextError()) }
        await recorder.waitForEntries(1)
        #expect(await recorder.log == ["error E"])
        await recorder.detach()
    }

    /// A waiting inner signal is subscribed when the one before it
    /// completes, on that completion's thread: in the context of the code
    /// that sent it, never in the completion's.
    @Test(arguments: [SignalBuffer<NoError>.unbounded, .droppingOldest(beyond: 4), .blocking(beyond: 4)])
    func aQueuesWaitingInnerIsSubscribedInItsSendersContext(buffer: SignalBuffer<NoError>) {
        let log = EventLog()
        let gate = ValuePipe<Int>()
        let outer = ValuePipe<Int>()
        let queued =
            outer.signal()
            |> mapToQueue(buffer: buffer) { index in
                gate.signal()
                    |> filter { $0 == index }
                    |> take(1)
                    |> beforeStarted { log.append("subscribed \(index) \(traceName())") }
            }
        let handle = queued.start(next: { log.append("\($0) \(traceName())") })
        send(outer, [(1, "A"), (2, "B"), (3, nil)])
        for index in 1...3 {
            TestTrace.$current.withValue("runner") { gate.putNext(index) }
        }
        #expect(
            log.events == [
                "subscribed 1 A", "1 runner", "subscribed 2 B", "2 runner", "subscribed 3 none", "3 runner",
            ])
        handle.dispose()
    }
}
