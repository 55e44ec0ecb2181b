// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

/// A source that logs, when subscribed, the virtual time and whether it runs
/// on `queue`.
private func timedSource<T, E>(
    _ name: String,
    log: EventLog,
    scheduler: VirtualTimeScheduler,
    queue: Queue,
    keepsSubscribers: Bool = true,
    body: @escaping @Sendable (Subscriber<T, E>) -> Void = { _ in }
) -> TestSource<T, E> {
    TestSource(name, log: log, keepsSubscribers: keepsSubscribers) { subscriber in
        log.append("\(name) at \(scheduler.now) onQueue=\(queue.isCurrent())")
        body(subscriber)
    }
}

@Suite struct DelayTests {
    @Test func subscribesUpstreamOnTheQueueAfterTheTimeout() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let a: TestSource<Int, String> = timedSource("a", log: log, scheduler: scheduler, queue: queue, keepsSubscribers: false) {
            $0.putNext(1)
            $0.putCompletion()
        }
        _ = log.start(a.signal |> delay(2, queue: queue))
        scheduler.advance(to: 1.999)
        #expect(log.take() == [])
        scheduler.advance(to: 2)
        #expect(log.take() == ["a.subscribe#1", "a at 2.0 onQueue=true", "next 1", "completed", "a.dispose#1"])
        #expect(a.disposeCount == 1)
    }

    @Test func theTimerIsArmedWhenTheHopToTheQueueRuns() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let a: TestSource<Int, String> = timedSource("a", log: log, scheduler: scheduler, queue: queue)
        scheduler.advance(by: 5)
        let handle = log.start(a.signal |> delay(1, queue: queue))
        scheduler.advance(by: 10)
        #expect(log.take() == ["a.subscribe#1", "a at 6.0 onQueue=true"])
        handle.dispose()
        #expect(log.take() == ["a.dispose#1"])
    }

    @Test func subscribingOnTheQueueArmsTheTimerInline() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let a: TestSource<Int, String> = timedSource("a", log: log, scheduler: scheduler, queue: queue)
        let handle = Shared<(any Disposable)?>(nil)
        queue.after(1) { handle.value = log.start(a.signal |> delay(2, queue: queue)) }
        scheduler.advance(to: 2.999)
        #expect(log.take() == [])
        scheduler.advance(to: 3)
        #expect(log.take() == ["a.subscribe#1", "a at 3.0 onQueue=true"])
        handle.value?.dispose()
        #expect(log.take() == ["a.dispose#1"])
    }

    @Test func errorsAreDelayedToo() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let a: TestSource<Int, String> = timedSource("a", log: log, scheduler: scheduler, queue: queue) { $0.putError("e") }
        _ = log.start(a.signal |> delay(3, queue: queue))
        scheduler.advance(to: 2.9)
        #expect(log.take() == [])
        scheduler.advance(to: 3)
        #expect(log.take() == ["a.subscribe#1", "a at 3.0 onQueue=true", "error e", "a.dispose#1"])
    }

    @Test func disposingBeforeTheHopToTheQueueRunsPreventsTheTimer() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let a: TestSource<Int, String> = timedSource("a", log: log, scheduler: scheduler, queue: queue)
        let handle = log.start(a.signal |> delay(2, queue: queue))
        handle.dispose()
        scheduler.run()
        #expect(log.events == [])
        #expect(a.subscribeCount == 0)
    }

    @Test func disposingAfterTheTimerFiredDisposesUpstreamOnce() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let a: TestSource<Int, String> = timedSource("a", log: log, scheduler: scheduler, queue: queue)
        let handle = log.start(a.signal |> delay(2, queue: queue))
        scheduler.advance(by: 2)
        a.putNext(1)
        handle.dispose()
        handle.dispose()
        a.putNext(2)
        #expect(log.events == ["a.subscribe#1", "a at 2.0 onQueue=true", "next 1", "a.dispose#1"])
        #expect(a.disposeCount == 1)
    }

    @Test func laterEventsArriveOnTheThreadUpstreamUses() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let handle = (a.signal |> delay(1, queue: queue)).start(next: { log.append("next \($0) onQueue=\(queue.isCurrent())") })
        scheduler.advance(by: 1)
        a.putNext(1)
        #expect(log.take() == ["a.subscribe#1", "next 1 onQueue=false"])
        handle.dispose()
    }

    @Test func eachSubscriptionHasItsOwnTimer() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let a: TestSource<Int, String> = timedSource("a", log: log, scheduler: scheduler, queue: queue, keepsSubscribers: false) {
            $0.putCompletion()
        }
        let signal = a.signal |> delay(2, queue: queue)
        _ = log.start(signal, prefix: "1:")
        scheduler.advance(by: 1)
        _ = log.start(signal, prefix: "2:")
        scheduler.advance(by: 5)
        #expect(
            log.events == [
                "a.subscribe#1", "a at 2.0 onQueue=true", "1:completed", "a.dispose#1",
                "a.subscribe#2", "a at 3.0 onQueue=true", "2:completed", "a.dispose#2",
            ])
    }
}

@Suite struct SuspendAwareDelayTests {
    @Test(arguments: [(4.0, 4.0), (4.4, 4.0), (0.5, 4.0), (0.0, 1.0)])
    func aShortDelayIsOneTimer(timeout: Double, granularity: Double) {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let a: TestSource<Int, String> = timedSource("a", log: log, scheduler: scheduler, queue: queue)
        let handle = log.start(a.signal |> suspendAwareDelay(timeout, granularity: granularity, queue: queue))
        scheduler.advance(by: 0)
        if timeout > 0 {
            scheduler.advance(by: timeout * 0.999)
            #expect(log.take() == [])
        }
        scheduler.advance(to: timeout)
        #expect(log.take() == ["a.subscribe#1", "a at \(timeout) onQueue=true"])
        handle.dispose()
    }

    /// A long delay checks the clock every `granularity` seconds and arms a
    /// final timer for the rest once fewer than 1.1 × granularity remain; the
    /// subscription happens exactly at `timeout` (no artificial minimum wait).
    @Test(arguments: [(10.0, 4.0), (9.0, 2.0), (5.0, 4.0), (4.5, 4.0), (100.0, 4.0), (3.0, 0.5)])
    func aLongDelayChecksTheClockThenWaitsTheRemainder(timeout: Double, granularity: Double) {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let a: TestSource<Int, String> = timedSource("a", log: log, scheduler: scheduler, queue: queue)
        let handle = log.start(a.signal |> suspendAwareDelay(timeout, granularity: granularity, queue: queue))
        scheduler.advance(to: timeout - 0.001)
        #expect(log.take() == [])
        scheduler.advance(to: timeout)
        #expect(log.take() == ["a.subscribe#1", "a at \(timeout) onQueue=true"])
        scheduler.advance(by: 100)
        #expect(log.take() == [], "no timer keeps running")
        handle.dispose()
        #expect(log.take() == ["a.dispose#1"])
    }

    @Test func theDefaultGranularityIsFourSeconds() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let a: TestSource<Int, String> = timedSource("a", log: log, scheduler: scheduler, queue: queue) { $0.putCompletion() }
        _ = log.start(a.signal |> suspendAwareDelay(6, queue: queue))
        scheduler.advance(to: 5.99)
        #expect(log.take() == [])
        scheduler.advance(to: 6)
        #expect(log.take() == ["a.subscribe#1", "a at 6.0 onQueue=true", "completed", "a.dispose#1"])
    }

    @Test func errorsAreDelayedAndDisposalAfterwardsDisposesUpstreamOnce() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let a: TestSource<Int, String> = timedSource("a", log: log, scheduler: scheduler, queue: queue)
        let handle = log.start(a.signal |> suspendAwareDelay(10, granularity: 4, queue: queue))
        scheduler.advance(by: 10)
        a.putNext(1)
        a.putError("e")
        handle.dispose()
        #expect(log.events == ["a.subscribe#1", "a at 10.0 onQueue=true", "next 1", "error e", "a.dispose#1"])
        #expect(a.disposeCount == 1)
    }

    /// The timers `suspendAwareDelay` arms: a repeating one of period
    /// `granularity`, then a one-shot one for the remainder.
    @Test func theTimersItArms() {
        let scheduler = VirtualTimeScheduler()
        let log = EventLog()
        let skewed = SkewedScheduler(scheduler.makeQueue().scheduler!, log: log, now: { scheduler.now })
        let queue = Queue(scheduler: skewed)
        let a: TestSource<Int, String> = timedSource("a", log: log, scheduler: scheduler, queue: queue)
        let handle = log.start(a.signal |> suspendAwareDelay(10, granularity: 4, queue: queue))
        scheduler.run()
        #expect(
            log.take() == [
                "timer 4.0 armed at 0.0",  // repeating: checks at 4 and 8
                "timer 4.0 armed at 4.0",
                "timer 4.0 armed at 8.0",
                "timer 2.0 armed at 8.0",  // the remainder
                "a.subscribe#1", "a at 10.0 onQueue=true",
            ])
        handle.dispose()
    }

    /// When the machine sleeps, timers stop but the wall clock goes on: the
    /// next check notices and the subscription happens `timeout` seconds of
    /// wall-clock time after the start.
    @Test func wallClockTimeThatPassedWhileSuspendedCounts() {
        let scheduler = VirtualTimeScheduler()
        let log = EventLog()
        let skewed = SkewedScheduler(scheduler.makeQueue().scheduler!, log: log, now: { scheduler.now })
        let queue = Queue(scheduler: skewed)
        let a: TestSource<Int, String> = timedSource("a", log: log, scheduler: scheduler, queue: queue)
        let handle = log.start(a.signal |> suspendAwareDelay(100, granularity: 4, queue: queue))
        scheduler.advance(to: 5)
        skewed.skew = 81  // 81 s asleep: the timers did not fire meanwhile
        scheduler.advance(to: 18.999)
        // Checks at 8 (wall clock 89) and 12 (93) find more than 4.4 s left;
        // the one at 16 (97) arms the final timer for the remaining 3 s.
        #expect(log.take().suffix(2) == ["timer 4.0 armed at 16.0", "timer 3.0 armed at 16.0"])
        scheduler.advance(to: 19)
        #expect(log.take() == ["a.subscribe#1", "a at 19.0 onQueue=true"])
        handle.dispose()
    }
}

/// A delayed subscription (`delay`, `suspendAwareDelay`), for the tables of
/// `DelayedSubscriptionTests`.
struct DelayingOperator: CustomTestStringConvertible, Sendable {
    let testDescription: String
    let apply: @Sendable (Signal<Int, String>, Queue) -> Signal<Int, String>

    static let delay2 = DelayingOperator(testDescription: "delay(2)") { $0 |> delay(2, queue: $1) }
    static let suspendAware10 = DelayingOperator(testDescription: "suspendAwareDelay(10, granularity: 4)") {
        $0 |> suspendAwareDelay(10, granularity: 4, queue: $1)
    }
    static let suspendAware20 = DelayingOperator(testDescription: "suspendAwareDelay(20, granularity: 1)") {
        $0 |> suspendAwareDelay(20, granularity: 1, queue: $1)
    }
}

/// What `delay` and `suspendAwareDelay` share: disposal before the end
/// prevents the subscription and releases the waiting one at once.
@Suite struct DelayedSubscriptionTests {
    /// Disposed at `disposeAt`; the clock then runs `then` seconds more.
    @Test(
        arguments: [
            (DelayingOperator.delay2, 1.0, 10.0),
            (.suspendAware10, 1.0, 100.0), (.suspendAware10, 4.0, 100.0), (.suspendAware10, 7.9, 100.0),
            (.suspendAware10, 8.0, 100.0), (.suspendAware10, 9.99, 100.0),
        ] as [(DelayingOperator, Double, Double)])
    func disposingBeforeTheEndPreventsTheSubscription(
        _ operator: DelayingOperator, disposeAt: Double, then: Double
    ) {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let a: TestSource<Int, String> = timedSource("a", log: log, scheduler: scheduler, queue: queue)
        let handle = log.start(`operator`.apply(a.signal, queue))
        scheduler.advance(to: disposeAt)
        handle.dispose()
        scheduler.advance(by: then)
        #expect(log.events == [])
        #expect(a.subscribeCount == 0)
    }

    /// Disposed after `waited` seconds; then the clock runs `then` seconds
    /// more (nil: to the end). `timers`: what the message calls the timers.
    @Test(
        arguments: [
            (DelayingOperator.delay2, 1.0, nil, "timer"),
            (.suspendAware20, 3.0, 30.0, "timers"),
        ] as [(DelayingOperator, Double, Double?, String)])
    func disposalReleasesTheWaitingSubscription(
        _ operator: DelayingOperator, waited: Double, then: Double?, timers: String
    ) {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let upstream = WeakBox<Probe>(nil)
        let handle: any Disposable
        do {
            let probe = Probe()
            upstream.value = probe
            let signal = Signal<Int, String> { _ in
                probe.touch()
                return EmptyDisposable
            }
            handle = `operator`.apply(signal, queue).start()
        }
        scheduler.advance(by: waited)
        #expect(upstream.value != nil, "the upstream signal waits for the \(timers)")
        handle.dispose()
        #expect(upstream.value == nil, "disposal releases it (and the \(timers)) at once")
        if let then { scheduler.advance(by: then) } else { scheduler.run() }
    }
}

@Suite struct TimeoutTests {
    @Test func aSourceEventBeforeTheDeadlineCancelsTheTimer() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let alternate = TestSource<Int, String>("alt", log: log)
        let handle = log.start(a.signal |> timeout(3, queue: queue, alternate: alternate.signal))
        scheduler.advance(by: 2.9)
        a.putNext(1)
        scheduler.advance(by: 10)
        a.putNext(2)
        #expect(log.take() == ["a.subscribe#1", "next 1", "next 2"])
        #expect(alternate.subscribeCount == 0)
        handle.dispose()
        #expect(log.take() == ["a.dispose#1"])
    }

    @Test(arguments: ["error", "completion"])
    func aTerminalSourceEventCancelsTheTimer(event: String) {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let alternate = TestSource<Int, String>("alt", log: log)
        _ = log.start(a.signal |> timeout(3, queue: queue, alternate: alternate.signal))
        scheduler.advance(by: 1)
        if event == "error" { a.putError("e") } else { a.putCompletion() }
        scheduler.advance(by: 10)
        #expect(log.events == ["a.subscribe#1", event == "error" ? "error e" : "completed", "a.dispose#1"])
        #expect(alternate.subscribeCount == 0)
        #expect(a.disposeCount == 1)
    }

    @Test func whenTheTimerFiresTheAlternateIsSubscribedOnTheQueueBeforeTheSourceIsDisposed() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let alternate: TestSource<Int, String> = timedSource("alt", log: log, scheduler: scheduler, queue: queue)
        let handle = log.start(a.signal |> timeout(3, queue: queue, alternate: alternate.signal))
        scheduler.advance(to: 2.999)
        #expect(log.take() == ["a.subscribe#1"])
        scheduler.advance(to: 3)
        #expect(log.take() == ["alt.subscribe#1", "alt at 3.0 onQueue=true", "a.dispose#1"])
        a.putNext(1)
        alternate.putNext(2)
        alternate.putCompletion()
        #expect(log.take() == ["next 2", "completed", "alt.dispose#1"])
        handle.dispose()
        #expect(log.take() == [])
        #expect(a.disposeCount == 1 && alternate.disposeCount == 1)
    }

    @Test func disposingBeforeTheDeadlineDisposesTheSourceAndStopsTheTimer() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let alternate = TestSource<Int, String>("alt", log: log)
        let handle = log.start(a.signal |> timeout(3, queue: queue, alternate: alternate.signal))
        scheduler.advance(by: 1)
        handle.dispose()
        scheduler.advance(by: 10)
        #expect(log.events == ["a.subscribe#1", "a.dispose#1"])
        #expect(alternate.subscribeCount == 0)
    }

    @Test func disposingAfterTheSwitchDisposesTheAlternateOnce() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let alternate = TestSource<Int, String>("alt", log: log)
        let handle = log.start(a.signal |> timeout(1, queue: queue, alternate: alternate.signal))
        scheduler.advance(by: 1)
        alternate.putNext(5)
        handle.dispose()
        handle.dispose()
        #expect(log.events == ["a.subscribe#1", "alt.subscribe#1", "a.dispose#1", "next 5", "alt.dispose#1"])
        #expect(a.disposeCount == 1 && alternate.disposeCount == 1)
    }

    /// SwiftSignalKit's quirk: a value sent synchronously during the source's
    /// subscription invalidates the timer before it is started, so the timer
    /// still fires later.
    @Test func aSynchronousValueDoesNotCancelTheTimer() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log) { $0.putNext(1) }
        let alternate = TestSource<Int, String>("alt", log: log)
        let handle = log.start(a.signal |> timeout(3, queue: queue, alternate: alternate.signal))
        #expect(log.take() == ["a.subscribe#1", "next 1"])
        scheduler.advance(by: 3)
        #expect(log.take() == ["alt.subscribe#1", "a.dispose#1"])
        handle.dispose()
        #expect(log.take() == ["alt.dispose#1"])
    }

    @Test func aSynchronousCompletionEndsEverythingBeforeTheTimerMatters() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log, keepsSubscribers: false) {
            $0.putNext(1); $0.putCompletion()
        }
        let alternate = TestSource<Int, String>("alt", log: log)
        _ = log.start(a.signal |> timeout(3, queue: queue, alternate: alternate.signal))
        scheduler.advance(by: 10)
        #expect(log.events == ["a.subscribe#1", "next 1", "completed", "a.dispose#1"])
        #expect(alternate.subscribeCount == 0)
    }

    @Test func theAlternateCanFailAndItsEventsAreForwarded() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let alternate = TestSource<Int, String>("alt", log: log, keepsSubscribers: false) {
            $0.putNext(7); $0.putError("late")
        }
        _ = log.start(a.signal |> timeout(0.5, queue: queue, alternate: alternate.signal))
        scheduler.advance(by: 0.5)
        #expect(log.events == ["a.subscribe#1", "alt.subscribe#1", "next 7", "error late", "a.dispose#1", "alt.dispose#1"])
    }

    @Test func eachSubscriptionHasItsOwnTimer() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let alternate = TestSource<Int, String>("alt", log: log, keepsSubscribers: false) { $0.putCompletion() }
        let signal = a.signal |> timeout(2, queue: queue, alternate: alternate.signal)
        _ = log.start(signal, prefix: "1:")
        scheduler.advance(by: 1)
        _ = log.start(signal, prefix: "2:")
        a.subscribers[1].putNext(9)
        scheduler.advance(by: 5)
        #expect(
            log.events == [
                "a.subscribe#1", "a.subscribe#2", "2:next 9",
                "alt.subscribe#1", "1:completed", "a.dispose#1", "alt.dispose#1",
            ])
        a.subscribers[1].putCompletion()
        #expect(log.take().suffix(2) == ["2:completed", "a.dispose#2"])
    }
}

/// A queue scheduler over a virtual queue whose clock runs `skew` seconds
/// ahead (time spent suspended) and which logs the timers armed on it.
private final class SkewedScheduler: QueueScheduler, @unchecked Sendable {
    // `@unchecked Sendable`: `skew` is only touched by the thread driving the
    // virtual clock.
    private let inner: any QueueScheduler
    private let log: EventLog
    private let now: @Sendable () -> Double
    var skew = 0.0

    init(_ inner: any QueueScheduler, log: EventLog, now: @escaping @Sendable () -> Double) {
        self.inner = inner
        self.log = log
        self.now = now
    }

    func isCurrent() -> Bool { inner.isCurrent() }
    func schedule(_ work: @escaping @Sendable () -> Void) { inner.schedule(work) }
    func performSync(_ work: () -> Void) { inner.performSync(work) }
    var currentTime: Double { inner.currentTime + skew }

    func schedule(after delay: Double, _ work: @escaping @Sendable () -> Void) -> any Disposable {
        log.append("timer \(delay) armed at \(now())")
        return inner.schedule(after: delay, work)
    }
}
