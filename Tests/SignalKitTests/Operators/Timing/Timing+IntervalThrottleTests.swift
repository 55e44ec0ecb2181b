// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

// Timing: interval, timer, throttle, bufferWithTime, failAfterTimeout,
// delayEvents (Sources/SignalKit/Operators/Timing/), on
// virtual time.

@Suite struct RACIntervalTimerTests {
    @Test func intervalTicksOnTheQueueUntilDisposed() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let handle = timedLog(interval(1, queue: queue), log, scheduler, queue)
        scheduler.advance(to: 3.5)
        #expect(
            log.take() == [
                "next 0 at 1.0 onQueue=true", "next 1 at 2.0 onQueue=true", "next 2 at 3.0 onQueue=true",
            ])
        handle.dispose()
        scheduler.advance(to: 10)
        #expect(log.take() == [])
    }

    @Test func eachSubscriptionHasItsOwnTimer() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let ticks = interval(2, queue: queue)
        let first = timedLog(ticks, log, scheduler, queue)
        scheduler.advance(to: 1)
        let second = timedLog(ticks |> map { $0 + 100 }, log, scheduler, queue)
        scheduler.advance(to: 4)
        #expect(
            log.events == [
                "next 0 at 2.0 onQueue=true", "next 100 at 3.0 onQueue=true", "next 1 at 4.0 onQueue=true",
            ])
        first.dispose()
        second.dispose()
    }

    @Test func timerSendsOnceThenCompletes() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        _ = timedLog(timer(2, queue: queue), log, scheduler, queue)
        scheduler.advance(to: 1.9)
        #expect(log.take() == [])
        scheduler.run()
        #expect(log.take() == ["next () at 2.0 onQueue=true", "completed at 2.0"])
    }

    @Test func aDisposedTimerNeverFires() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let handle = timedLog(timer(2, queue: queue), log, scheduler, queue)
        handle.dispose()
        scheduler.run()
        #expect(log.events == [])
    }
}

@Suite struct RACThrottleTests {
    @Test func sendsAValueAfterAQuietIntervalAndFlushesThePendingOneBeforeCompleting() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let source = TestSource<String, String>("s", log: log)
        _ = timedLog(source.signal |> throttle(2, queue: queue), log, scheduler, queue)
        source.putNext("a")
        scheduler.advance(to: 1)
        source.putNext("b")
        scheduler.advance(to: 2.9)
        #expect(log.take() == ["s.subscribe#1"], "a was replaced by b before its time was up")
        scheduler.advance(to: 3)
        #expect(log.take() == ["next b at 3.0 onQueue=true"])
        scheduler.advance(to: 5)
        source.putNext("c")
        scheduler.advance(to: 5.5)
        source.putCompletion()
        #expect(log.take() == ["next c at 5.5 onQueue=false", "completed at 5.5", "s.dispose#1"])
        scheduler.run()
        #expect(log.take() == [], "the flushed value's timer was cancelled")
    }

    @Test func valuesFailingTheTestGoThroughAtOnceAndDropThePendingOne() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let source = TestSource<String, String>("s", log: log)
        let isLetter: @Sendable (String) -> Bool = { $0.first!.isLetter }
        _ = timedLog(source.signal |> throttle(2, queue: queue, valuesPassingTest: isLetter), log, scheduler, queue)
        source.putNext("a")
        scheduler.advance(to: 1)
        source.putNext("1")
        scheduler.advance(to: 2)
        source.putNext("b")
        scheduler.run()
        #expect(log.events == ["s.subscribe#1", "next 1 at 1.0 onQueue=false", "next b at 4.0 onQueue=true"])
    }

    @Test func aSynchronousSourceIsFlushedAtCompletion() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        _ = log.start(Signal<Int, NoError>.sequence([1, 2, 3]) |> throttle(1, queue: queue))
        #expect(log.events == ["next 3", "completed"])
    }
}

@Suite struct RACBufferWithTimeTests {
    @Test func sendsABatchIntervalSecondsAfterItsFirstValueAndFlushesAtCompletion() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let source = TestSource<String, String>("s", log: log)
        _ = timedLog(source.signal |> bufferWithTime(3, queue: queue), log, scheduler, queue)
        source.putNext("a")
        scheduler.advance(to: 1)
        source.putNext("b")
        scheduler.advance(to: 3.5)
        #expect(log.take() == ["s.subscribe#1", "next [\"a\", \"b\"] at 3.0 onQueue=true"])
        scheduler.advance(to: 10)
        #expect(log.take() == [], "quiet periods send nothing")
        source.putNext("c")
        scheduler.advance(to: 11)
        source.putNext("d")
        source.putCompletion()
        #expect(log.take() == ["next [\"c\", \"d\"] at 11.0 onQueue=false", "completed at 11.0", "s.dispose#1"])
        scheduler.run()
        #expect(log.take() == [])
    }

    @Test func completingWithAnEmptyBatchOnlyCompletes() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        _ = log.start(Signal<Int, NoError>.complete() |> bufferWithTime(1, queue: queue))
        #expect(log.events == ["completed"])
    }
}

@Suite struct RACFailAfterTimeoutTests {
    @Test func failsWhenTheSignalHasNotFinishedInTime() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let source = TestSource<Int, String>("s", log: log)
        _ = timedLog(source.signal |> failAfterTimeout(3, queue: queue, error: "timed out"), log, scheduler, queue)
        scheduler.advance(to: 1)
        source.putNext(1)
        scheduler.advance(to: 2)
        source.putNext(2)
        scheduler.advance(to: 3)
        source.putNext(3)
        #expect(
            log.events == [
                "s.subscribe#1", "next 1 at 1.0 onQueue=false", "next 2 at 2.0 onQueue=false", "error timed out at 3.0",
                "s.dispose#1",
            ])
    }

    @Test func finishingInTimeCancelsTheTimer() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let source = TestSource<Int, String>("s", log: log)
        _ = timedLog(source.signal |> failAfterTimeout(3, queue: queue, error: "timed out"), log, scheduler, queue)
        scheduler.advance(to: 2)
        source.putCompletion()
        scheduler.run()
        #expect(log.events == ["s.subscribe#1", "completed at 2.0", "s.dispose#1"])
    }

    @Test func sskTimeoutStillSwitchesToItsAlternate() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        _ = log.start(Signal<Int, String>.never() |> timeout(1, queue: queue, alternate: .single(5)))
        scheduler.run()
        #expect(log.events == ["next 5", "completed"])
    }
}

@Suite struct RACDelayEventsTests {
    @Test func delaysValuesAndCompletion() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let source = TestSource<String, String>("s", log: log)
        _ = timedLog(source.signal |> delayEvents(2, queue: queue), log, scheduler, queue)
        source.putNext("a")
        scheduler.advance(to: 1)
        source.putNext("b")
        scheduler.advance(to: 1.5)
        source.putCompletion()
        #expect(log.take() == ["s.subscribe#1", "s.dispose#1"], "the source completed; its events wait")
        scheduler.run()
        #expect(log.take() == ["next a at 2.0 onQueue=true", "next b at 3.0 onQueue=true", "completed at 3.5"])
    }

    @Test func sskDelayStillDelaysTheSubscription() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let source = TestSource<String, String>("s", log: log) { $0.putError("e") }
        _ = timedLog(source.signal |> delay(2, queue: queue), log, scheduler, queue)
        scheduler.run()
        #expect(log.events == ["s.subscribe#1", "error e at 2.0", "s.dispose#1"])
    }
}

/// A timing operator that holds values back (`throttle`, `bufferWithTime`,
/// `delayEvents`), started on a `TestSource` with `timedLog`.
struct WaitingOperator: CustomTestStringConvertible, Sendable {
    let testDescription: String
    let start: @Sendable (TestSource<String, String>, EventLog, VirtualTimeScheduler, Queue) -> any Disposable

    init<U>(_ name: String, _ apply: @escaping @Sendable (Signal<String, String>, Queue) -> Signal<U, String>) {
        testDescription = name
        start = { source, log, scheduler, queue in timedLog(apply(source.signal, queue), log, scheduler, queue) }
    }

    static let throttle = WaitingOperator("throttle(2)") { $0 |> SignalKit.throttle(2, queue: $1) }
    static let bufferWithTime = WaitingOperator("bufferWithTime(3)") { $0 |> SignalKit.bufferWithTime(3, queue: $1) }
    static let delayEvents = WaitingOperator("delayEvents(2)") { $0 |> SignalKit.delayEvents(2, queue: $1) }
}

/// What `throttle`, `bufferWithTime` and `delayEvents` share: a value waits
/// for a timer, and an error or a disposal drops it.
@Suite struct RACWaitingValueTests {
    /// The source sends `a`, then (at `errorAt`, if given) an error.
    @Test(
        arguments: [
            (WaitingOperator.throttle, 1.0, "error e at 1.0"),
            (WaitingOperator.bufferWithTime, nil, "error e at 0.0"),
            (WaitingOperator.delayEvents, 1.0, "error e at 1.0"),
        ] as [(WaitingOperator, Double?, String)])
    func anErrorIsForwardedAtOnceAndDropsTheWaitingValue(_ operator: WaitingOperator, errorAt: Double?, error: String) {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let source = TestSource<String, String>("s", log: log)
        _ = `operator`.start(source, log, scheduler, queue)
        source.putNext("a")
        if let errorAt { scheduler.advance(to: errorAt) }
        source.putError("e")
        scheduler.run()
        #expect(log.events == ["s.subscribe#1", error, "s.dispose#1"])
    }

    @Test(arguments: [WaitingOperator.throttle, .bufferWithTime, .delayEvents])
    func disposalCancelsTheWaitingValue(_ operator: WaitingOperator) {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let source = TestSource<String, String>("s", log: log)
        let handle = `operator`.start(source, log, scheduler, queue)
        source.putNext("a")
        handle.dispose()
        scheduler.run()
        #expect(log.events == ["s.subscribe#1", "s.dispose#1"])
    }
}
