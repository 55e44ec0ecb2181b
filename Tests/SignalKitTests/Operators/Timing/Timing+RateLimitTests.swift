// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

// Timing under the usual names: throttle(for:queue:latest:), debounce, and
// the Duration overloads (Sources/SignalKit/Operators/Timing/), on virtual
// time.

private enum Failure: Error, Equatable { case boom }

/// Sends `values` (time, value) through a pipe on virtual time, then runs the
/// scheduler to the end; returns the log.
private func feed(
    _ values: [(Double, String)],
    completeAt end: Double? = nil,
    through transform: (Signal<String, NoError>, Queue) -> Signal<String, NoError>
) -> [String] {
    let scheduler = VirtualTimeScheduler()
    let queue = scheduler.makeQueue()
    let log = EventLog()
    let source = TestSource<String, NoError>("source", log: EventLog())
    let handle = timedLog(transform(source.signal, queue), log, scheduler, queue)
    for (time, value) in values {
        scheduler.advance(to: time)
        source.putNext(value)
    }
    if let end {
        scheduler.advance(to: end)
        source.putCompletion()
    }
    scheduler.advance(by: 100)
    handle.dispose()
    return log.events
}

/// One scenario of `throttle(for: .seconds(3), queue:latest:)`: values fed at
/// their times, completion at `completeAt`, and the expected log.
struct RateLimitCase: CustomTestStringConvertible, Sendable {
    let testDescription: String
    let values: [(Double, String)]
    let completeAt: Double
    /// nil: the default (`latest: true`).
    var latest: Bool?
    let expected: [String]
}

@Suite struct RateLimitingThrottleTests {
    @Test(arguments: [
        RateLimitCase(
            testDescription: "sends the first value at once, then the latest of each window",
            values: [(0, "a"), (0.5, "b"), (1, "c"), (4, "d"), (10, "e")], completeAt: 10.5,
            expected: [
                "next a at 0.0 onQueue=false",
                "next c at 3.0 onQueue=true",  // the latest of [0, 3); opens [3, 6)
                "next d at 6.0 onQueue=true",  // arrived in [3, 6); opens [6, 9), which stays quiet
                "next e at 10.0 onQueue=false",  // after a quiet window: at once
                "completed at 10.5",
            ]),
        RateLimitCase(
            testDescription: "latest: false sends the first value of each window",
            values: [(0, "a"), (0.5, "b"), (1, "c")], completeAt: 5, latest: false,
            expected: ["next a at 0.0 onQueue=false", "next b at 3.0 onQueue=true", "completed at 5.0"]),
        RateLimitCase(
            testDescription: "completion flushes the waiting value",
            values: [(0, "a"), (1, "b")], completeAt: 2,
            expected: ["next a at 0.0 onQueue=false", "next b at 2.0 onQueue=false", "completed at 2.0"]),
    ])
    func windows(_ scenario: RateLimitCase) {
        let events = feed(scenario.values, completeAt: scenario.completeAt) { signal, queue in
            if let latest = scenario.latest {
                signal |> throttle(for: .seconds(3), queue: queue, latest: latest)
            } else {
                signal |> throttle(for: .seconds(3), queue: queue)
            }
        }
        #expect(events == scenario.expected)
    }

    @Test func aOneMillisecondFeedThroughAFiveMillisecondThrottleSendsOneValuePerWindow() {
        // The rate limit the name promises: 100 values 1 ms apart, 5 ms
        // windows → the first value, then one per window (20 windows).
        let feedValues = (0..<100).map { (Double($0) / 1000, "\($0)") }
        let events = feed(feedValues, completeAt: 0.1) { signal, queue in
            signal |> throttle(for: .milliseconds(5), queue: queue)
        }
        let values = events.filter { $0.hasPrefix("next") }
        #expect(values.count == 21)
        #expect(values.first == "next 0 at 0.0 onQueue=false")
        #expect(events.last == "completed at 0.1")
    }

    @Test func anErrorIsForwardedAtOnceAndTheWaitingValueDropped() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let source = TestSource<Int, Failure>("source", log: log)
        _ = timedLog(source.signal |> throttle(for: .seconds(2), queue: queue), log, scheduler, queue)
        source.putNext(1)
        source.putNext(2)
        scheduler.advance(to: 1)
        source.putError(.boom)
        scheduler.advance(by: 10)
        #expect(log.events == ["source.subscribe#1", "next 1 at 0.0 onQueue=false", "error boom at 1.0", "source.dispose#1"])
        #expect(scheduler.pendingCount == 0)
    }

    @Test func disposingCancelsTheWindowTimer() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let source = TestSource<Int, NoError>("source", log: log)
        let handle = timedLog(source.signal |> throttle(for: .seconds(2), queue: queue), log, scheduler, queue)
        source.putNext(1)
        source.putNext(2)
        handle.dispose()
        scheduler.advance(by: 10)
        #expect(scheduler.pendingCount == 0)
        #expect(log.events == ["source.subscribe#1", "next 1 at 0.0 onQueue=false", "source.dispose#1"])
    }
}

@Suite struct DebounceTests {
    @Test func debounceIsReactiveCocoasThrottle() {
        let input: [(Double, String)] = [(0, "a"), (1, "b"), (7, "c")]
        let debounced = feed(input, completeAt: 8) { signal, queue in signal |> debounce(for: .seconds(2), queue: queue) }
        let racThrottle = feed(input, completeAt: 8) { signal, queue in signal |> throttle(2, queue: queue) }
        #expect(
            debounced == [
                "next b at 3.0 onQueue=true",  // `a` was replaced by `b`; `b` waited 2 s
                "next c at 8.0 onQueue=false",  // flushed by the completion
                "completed at 8.0",
            ])
        #expect(debounced == racThrottle)
    }
}

@Suite struct DurationOverloadTests {
    /// Each pair runs one scenario with the `Double` form and the `Duration`
    /// form of an operator: the logs must be identical (and not empty).
    @Test(arguments: [
        "delay", "timeout", "throttle", "bufferWithTime", "delayEvents", "failAfterTimeout", "suspendAwareDelay",
    ])
    func durationFormBehavesAsTheSecondsForm(_ name: String) {
        func run(_ useDuration: Bool) -> [String] {
            feed([(0, "a"), (0.25, "b"), (2, "c")], completeAt: 3) { signal, queue in
                switch name {
                case "delay":
                    return useDuration ? signal |> delay(.milliseconds(1500), queue: queue) : signal |> delay(1.5, queue: queue)
                case "timeout":
                    let alternate = Signal<String, NoError>.single("alternate")
                    return useDuration
                        ? signal |> timeout(.seconds(1), queue: queue, alternate: alternate)
                        : signal |> timeout(1, queue: queue, alternate: alternate)
                case "throttle":
                    return useDuration ? signal |> throttle(.seconds(1), queue: queue) : signal |> throttle(1, queue: queue)
                case "bufferWithTime":
                    let buffered =
                        useDuration
                        ? signal |> bufferWithTime(.seconds(1), queue: queue) : signal |> bufferWithTime(1, queue: queue)
                    return buffered |> map { $0.joined(separator: "+") }
                case "delayEvents":
                    return useDuration
                        ? signal |> delayEvents(.milliseconds(500), queue: queue) : signal |> delayEvents(0.5, queue: queue)
                case "failAfterTimeout":
                    let failing = signal |> castError(String.self)
                    let timed =
                        useDuration
                        ? failing |> failAfterTimeout(.seconds(1), queue: queue, error: "late")
                        : failing |> failAfterTimeout(1, queue: queue, error: "late")
                    return timed |> `catch` { Signal<String, NoError>.single("error \($0)") }
                default:
                    return useDuration
                        ? signal |> suspendAwareDelay(.seconds(1), granularity: .milliseconds(250), queue: queue)
                        : signal |> suspendAwareDelay(1, granularity: 0.25, queue: queue)
                }
            }
        }
        let seconds = run(false)
        #expect(!seconds.isEmpty)
        #expect(run(true) == seconds)
    }

    @Test func intervalTimerQueueAndTimerTakeDurations() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let ticks = timedLog(interval(.milliseconds(500), queue: queue) |> take(3), log, scheduler, queue)
        _ = timedLog(timer(.seconds(2), queue: queue), log, scheduler, queue)
        queue.after(.milliseconds(1250)) { log.append("after at \(scheduler.now)") }
        let oneShot = SignalKit.Timer(
            timeout: .seconds(3), repeat: false, completion: { log.append("timer at \(scheduler.now)") }, queue: queue)
        oneShot.start()
        scheduler.advance(to: 10)
        ticks.dispose()
        #expect(
            log.events == [
                "next 0 at 0.5 onQueue=true", "next 1 at 1.0 onQueue=true", "after at 1.25", "next 2 at 1.5 onQueue=true",
                "completed at 1.5", "next () at 2.0 onQueue=true", "completed at 2.0", "timer at 3.0",
            ])
    }

    @Test func retryTakesDurations() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let attempts = Shared(0)
        let flaky = Signal<Int, Failure> { subscriber in
            let attempt = attempts.withLock {
                $0 += 1; return $0
            }
            log.append("attempt \(attempt) at \(scheduler.now)")
            if attempt < 3 { subscriber.putError(.boom) } else { subscriber.putNext(attempt); subscriber.putCompletion() }
            return EmptyDisposable
        }
        _ = timedLog(flaky |> retry(.seconds(1), maxDelay: .seconds(4), onQueue: queue), log, scheduler, queue)
        scheduler.run()
        #expect(
            log.events == [
                "attempt 1 at 0.0", "attempt 2 at 1.0", "attempt 3 at 3.0", "next 3 at 3.0 onQueue=true", "completed at 3.0",
            ])
    }
}
