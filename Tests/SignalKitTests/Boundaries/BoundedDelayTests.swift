// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Dispatch
import SignalKit
import SignalKitTesting
import Synchronization
import Testing

// delayEvents(_:queue:buffer:): the values waiting for their time are a
// bounded buffer. Virtual time; each delivered event is logged with the
// virtual time it arrived at.

@Suite struct DelayEventsBufferTests {
    init() { _ = statisticsKeptForTheTestRun }

    private struct Fixture {
        let scheduler = VirtualTimeScheduler()
        let log = EventLog()
        let source: TestSource<Int, String>
        let handle: any Disposable

        init(_ name: String, _ buffer: SignalBuffer<String>) {
            let (scheduler, log) = (scheduler, log)
            source = TestSource<Int, String>("a", log: log)
            handle = (source.signal |> named(name) |> delayEvents(2, queue: scheduler.makeQueue(), buffer: buffer))
                .start(
                    next: { log.append("next \($0) at \(scheduler.now)") },
                    error: { log.append("error \($0) at \(scheduler.now)") },
                    completed: { log.append("completed at \(scheduler.now)") }
                )
        }
    }

    private func statistics(_ name: String) -> SignalBufferStatistics? {
        SignalKitDebug.bufferStatistics().first { $0.name == name }
    }

    @Test func droppingOldestSendsTheNewestEachAtItsTime() {
        let f = Fixture("delay.dropOldest", .droppingOldest(beyond: 2))
        for value in 1...3 { f.source.putNext(value) }
        f.scheduler.advance(by: 1)
        f.source.putNext(4)
        f.source.putCompletion()
        f.scheduler.advance(to: 2)
        #expect(f.log.take() == ["a.subscribe#1", "a.dispose#1", "next 3 at 2.0"])
        f.scheduler.advance(to: 3)
        #expect(f.log.take() == ["next 4 at 3.0", "completed at 3.0"])
        #expect(statistics("delay.dropOldest")?.drops == 2)
    }

    @Test func droppingNewestKeepsTheFirstValues() {
        let f = Fixture("delay.dropNewest", .droppingNewest(beyond: 2))
        for value in 1...3 { f.source.putNext(value) }
        f.scheduler.run()
        #expect(f.log.take() == ["a.subscribe#1", "next 1 at 2.0", "next 2 at 2.0"])
        #expect(statistics("delay.dropNewest")?.drops == 1)
        f.handle.dispose()
    }

    @Test func latestKeepsTheNewestValue() {
        let f = Fixture("delay.latest", .latest)
        for value in 1...3 { f.source.putNext(value) }
        f.scheduler.advance(by: 0.5)
        f.source.putNext(4)
        f.scheduler.run()
        #expect(f.log.take() == ["a.subscribe#1", "next 4 at 2.5"])
        #expect(statistics("delay.latest")?.drops == 3)
        f.handle.dispose()
    }

    @Test func eachValueWaitsItsOwnInterval() {
        let f = Fixture("delay.each", .droppingOldest(beyond: 10))
        f.source.putNext(1)
        f.scheduler.advance(by: 0.5)
        f.source.putNext(2)
        f.scheduler.advance(by: 1)
        f.source.putNext(3)
        f.source.putCompletion()
        f.scheduler.run()
        #expect(
            f.log.take() == [
                "a.subscribe#1", "a.dispose#1", "next 1 at 2.0", "next 2 at 2.5", "next 3 at 3.5", "completed at 3.5",
            ])
    }

    @Test func failingSendsTheErrorAtOnceAndDropsTheWaitingValues() {
        let f = Fixture("delay.fail", .failing(beyond: 2, with: "behind"))
        for value in 1...3 { f.source.putNext(value) }
        #expect(f.log.take() == ["a.subscribe#1", "error behind at 0.0", "a.dispose#1"])
        f.scheduler.run()
        #expect(f.log.events == [])
        #expect(statistics("delay.fail")?.drops == 3)
        #expect(statistics("delay.fail")?.overflows == 1)
    }

    @Test func anErrorIsSentAtOnceAndCancelsTheWaitingValues() {
        let f = Fixture("delay.error", .droppingOldest(beyond: 4))
        f.source.putNext(1)
        f.source.putError("e")
        f.scheduler.run()
        #expect(f.log.events == ["a.subscribe#1", "error e at 0.0", "a.dispose#1"])
        // The value the error went ahead of is a drop: delivered + dropped == sent.
        #expect(statistics("delay.error")?.drops == 1)
    }

    @Test func disposingReleasesTheWaitingValuesAtOnce() {
        let scheduler = VirtualTimeScheduler()
        let pipe = ValuePipe<TrackedObject>()
        let live = TrackedObject.liveCount
        let handle = (pipe.signal() |> delayEvents(1, queue: scheduler.makeQueue(), buffer: .droppingOldest(beyond: 3)))
            .start()
        for index in 0..<5 { pipe.putNext(TrackedObject("v\(index)")) }
        #expect(TrackedObject.liveCount == live + 3)
        handle.dispose()
        #expect(TrackedObject.liveCount == live)
        scheduler.run()
    }

    @Test func unboundedIsTheUnboundedDelay() {
        let f = Fixture("delay.unbounded", .unbounded)
        for value in 1...3 { f.source.putNext(value) }
        #expect(f.scheduler.pendingCount == 3, "one timer per value, as delayEvents(_:queue:)")
        f.scheduler.run()
        #expect(f.log.take() == ["a.subscribe#1", "next 1 at 2.0", "next 2 at 2.0", "next 3 at 2.0"])
        f.handle.dispose()
    }

    @Test func blockingHoldsTheProducerUntilValuesAreSent() {
        let queue = Queue(name: "delay.block")
        let received = _LockedState<[Int]>([])
        let done = DispatchSemaphore(value: 0)
        let pipe = ValuePipe<Int>()
        let handle =
            (pipe.signal() |> take(20) |> named("delay.block") |> delayEvents(0.001, queue: queue, buffer: .blocking(beyond: 2)))
            .start(next: { value in received.withLock { $0.append(value) } }, completed: { done.signal() })
        for value in 0..<20 { pipe.putNext(value) }
        done.wait()
        #expect(received.withLock { $0 } == Array(0..<20), "nothing dropped, in order")
        #expect((statistics("delay.block")?.blockedSends ?? 0) >= 1)
        #expect(statistics("delay.block")?.drops == 0)
        handle.dispose()
    }

    @Test func blockingOnTheTimersQueueStopsWithAMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let queue = Queue(name: "delay.deadlock")
            let pipe = ValuePipe<Int>()
            let handle = (pipe.signal() |> delayEvents(1, queue: queue, buffer: .blocking(beyond: 1))).start()
            queue.sync {
                pipe.putNext(1)
                pipe.putNext(2)
            }
            handle.dispose()
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("from the queue that empties it; waiting for room would deadlock"))
    }
}
