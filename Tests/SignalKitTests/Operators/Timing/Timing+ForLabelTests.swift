// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

// The `for:` spellings of `delay` and `delayEvents` (as `throttle(for:)` and
// `debounce(for:)`), free functions and methods, on virtual time.

@Suite struct ForLabelTests {
    @Test func delayForADurationSubscribesOnceItHasPassed() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log, keepsSubscribers: false) {
            $0.putNext(1)
            $0.putError("e")
        }
        _ = timedLog(a.signal |> delay(for: .milliseconds(1500), queue: queue), log, scheduler, queue)
        _ = timedLog(a.signal.delay(for: .seconds(2), queue: queue), log, scheduler, queue)
        scheduler.advance(to: 1.499)
        #expect(log.take() == [])
        scheduler.advance(to: 1.5)
        // The whole subscription is shifted, the error included.
        #expect(log.take() == ["a.subscribe#1", "next 1 at 1.5 onQueue=true", "error e at 1.5", "a.dispose#1"])
        scheduler.advance(to: 2)
        #expect(log.take() == ["a.subscribe#2", "next 1 at 2.0 onQueue=true", "error e at 2.0", "a.dispose#2"])
    }

    @Test func delayEventsForADurationDelaysEachValueAndTheCompletion() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let source = TestSource<String, String>("s", log: log)
        let handles = [
            timedLog(source.signal |> delayEvents(for: .seconds(2), queue: queue), log, scheduler, queue),
            timedLog(source.signal.delayEvents(for: .milliseconds(500), queue: queue), log, scheduler, queue),
        ]
        for subscriber in source.subscribers { subscriber.putNext("a") }
        scheduler.advance(to: 1)
        for subscriber in source.subscribers { subscriber.putNext("b") }
        scheduler.advance(to: 1.25)
        for subscriber in source.subscribers { subscriber.putCompletion() }
        scheduler.run()
        #expect(
            log.events == [
                "s.subscribe#1", "s.subscribe#2", "next a at 0.5 onQueue=true", "s.dispose#1", "s.dispose#2",
                "next b at 1.5 onQueue=true", "completed at 1.75",
                "next a at 2.0 onQueue=true", "next b at 3.0 onQueue=true", "completed at 3.25",
            ])
        handles.forEach { $0.dispose() }
    }

    @Test func delayEventsForADurationForwardsAnErrorAtOnce() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let source = TestSource<String, String>("s", log: log)
        _ = timedLog(source.signal.delayEvents(for: .seconds(2), queue: queue), log, scheduler, queue)
        source.putNext("a")
        scheduler.advance(to: 1)
        source.putError("e")
        scheduler.run()
        // The pending `a` is dropped.
        #expect(log.events == ["s.subscribe#1", "error e at 1.0", "s.dispose#1"])
    }
}
