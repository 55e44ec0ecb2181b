// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Dispatch
import SignalKit
import SignalKitTesting
import Testing

// Context propagation on the less-travelled paths:
// - a stored value that a terminal event or another input flushes keeps the
//   context it was sent in (throttle, debounce, the rate limit,
//   bufferWithTime, sample, takeLast, last, lastOrDefault); the terminal
//   event itself, and a value an aggregate makes at completion, go out in
//   the completer's;
// - an event left for another feeder's thread to deliver keeps its pusher's
//   context (every operator fed through one serial delivery: merge, zip,
//   takeUntil, the timing operators);
// - a resubscription is subscription-time work: it runs in the context
//   current at `start`, not in the context of the event that caused it
//   (retry in every form, restart, restartIfError, restartOrMapError,
//   recurse, then, concat, ignoreValuesThen, feedbackLoop).

struct FlushContextError: Error, Equatable {}

@Suite struct FlushContextTests {
    init() { _ = testTraceInstalled }

    /// A source with one subscriber, whose events the test sends under a
    /// trace of its choice.
    private func source() -> TestSource<Int, FlushContextError> {
        TestSource("source", log: EventLog())
    }

    private func put(_ source: TestSource<Int, FlushContextError>, _ values: [(Int, String?)]) {
        for (value, trace) in values {
            TestTrace.$current.withValue(trace) { source.putNext(value) }
        }
    }

    private func complete(_ source: TestSource<Int, FlushContextError>, under trace: String?) {
        TestTrace.$current.withValue(trace) { source.putCompletion() }
    }

    private func start<R>(_ signal: Signal<R, FlushContextError>, log: EventLog) -> any Disposable {
        signal.start(
            next: { log.append("\($0) \(traceName())") },
            error: { _ in log.append("error \(traceName())") },
            completed: { log.append("completed \(traceName())") }
        )
    }

    typealias Flushing = @Sendable (Queue) -> (Signal<Int, FlushContextError>) -> Signal<Int, FlushContextError>

    /// The operators that keep one waiting value and flush it at completion.
    static let debouncing: [(String, Flushing)] = [
        ("throttle", { queue in throttle(1, queue: queue) }),
        ("throttle(valuesPassingTest:)", { queue in throttle(1, queue: queue, valuesPassingTest: { _ in true }) }),
        ("debounce", { queue in debounce(1, queue: queue) }),
        ("debounce(for:)", { queue in debounce(for: .seconds(1), queue: queue) }),
    ]

    @Test(arguments: debouncing)
    func theValueACompletionFlushesKeepsItsSendersContext(named: String, op: Flushing) {
        let scheduler = VirtualTimeScheduler()
        let log = EventLog()
        let source = source()
        let handle = start(source.signal |> op(scheduler.makeQueue()), log: log)
        put(source, [(1, "FIRST"), (2, "NEWEST")])
        complete(source, under: "COMPLETER")
        #expect(log.events == ["2 NEWEST", "completed COMPLETER"], "\(named)")
        handle.dispose()
    }

    @Test func aRateLimitsWaitingValueFlushedByTheCompletionKeepsItsSendersContext() {
        let scheduler = VirtualTimeScheduler()
        let log = EventLog()
        let source = source()
        let handle = start(source.signal |> throttle(for: .seconds(1), queue: scheduler.makeQueue(), latest: true), log: log)
        put(source, [(1, "FIRST"), (2, "SECOND"), (3, "NEWEST")])
        complete(source, under: "COMPLETER")
        #expect(log.events == ["1 FIRST", "3 NEWEST", "completed COMPLETER"])
        handle.dispose()
    }

    @Test func bufferWithTimesBatchFlushedByTheCompletionKeepsItsNewestValuesContext() {
        let scheduler = VirtualTimeScheduler()
        let log = EventLog()
        let source = source()
        let handle = (source.signal |> bufferWithTime(1, queue: scheduler.makeQueue())).start(
            next: { log.append("\($0) \(traceName())") },
            completed: { log.append("completed \(traceName())") }
        )
        put(source, [(1, "FIRST"), (2, "NEWEST")])
        complete(source, under: "COMPLETER")
        #expect(log.events == ["[1, 2] NEWEST", "completed COMPLETER"])
        handle.dispose()
    }

    /// A value sent without a context and flushed by a completion sent with
    /// one goes out with none (never with the completer's).
    @Test func aFlushedValueSentWithoutContextGoesOutWithNone() {
        let scheduler = VirtualTimeScheduler()
        let log = EventLog()
        let source = source()
        let handle = start(source.signal |> throttle(1, queue: scheduler.makeQueue()), log: log)
        put(source, [(1, nil)])
        complete(source, under: "COMPLETER")
        #expect(log.events == ["1 none", "completed COMPLETER"])
        handle.dispose()
    }

    /// `sample` sends the stored value when the sampler ticks: in the
    /// context of the code that sent the value, not of the sampler's sender.
    @Test func aSampledValueKeepsItsSendersContext() {
        let log = EventLog()
        let source = source()
        let sampler = TestSource<Void, FlushContextError>("sampler", log: EventLog())
        let handle = start(source.signal |> sample(sampler.signal), log: log)
        put(source, [(1, "VALUE")])
        TestTrace.$current.withValue("TICK") { sampler.putNext(()) }
        put(source, [(2, nil)])
        TestTrace.$current.withValue("TICK") { sampler.putNext(()) }
        #expect(log.events == ["1 VALUE", "2 none"])
        handle.dispose()
    }

    @Test func takeLastFlushesEachValueInItsSendersContext() {
        let log = EventLog()
        let source = source()
        let handle = start(source.signal |> takeLast(2), log: log)
        put(source, [(1, "A"), (2, "B"), (3, nil)])
        complete(source, under: "COMPLETER")
        #expect(log.events == ["2 B", "3 none", "completed COMPLETER"])
        handle.dispose()
    }

    @Test func takeLastAndLastFlushTheLastValueInItsSendersContext() {
        let log = EventLog()
        let first = source()
        let second = source()
        let third = source()
        let handles = [
            start(takeLast(first.signal), log: log),
            last(signal: second.signal).start(
                next: { log.append("last \($0.map(String.init) ?? "nil") \(traceName())") },
                completed: { log.append("completed \(traceName())") }),
            start(third.signal |> lastOrDefault(0), log: log),
        ]
        put(first, [(1, "A"), (2, "B")])
        complete(first, under: "COMPLETER")
        put(second, [(3, "C")])
        complete(second, under: "COMPLETER")
        put(third, [(4, "D")])
        complete(third, under: "COMPLETER")
        #expect(
            log.events == [
                "2 B", "completed COMPLETER", "last 3 C", "completed COMPLETER", "4 D", "completed COMPLETER",
            ])
        handles.forEach { $0.dispose() }
    }

    /// With no value to flush, what the completion makes (`last`'s nil,
    /// `lastOrDefault`'s default) goes out in the completer's context.
    @Test func aValueTheCompletionMakesGoesOutInTheCompletersContext() {
        let log = EventLog()
        let first = source()
        let second = source()
        let handles = [
            last(signal: first.signal).start(next: { log.append("last \($0.map(String.init) ?? "nil") \(traceName())") }),
            start(second.signal |> lastOrDefault(7), log: log),
        ]
        complete(first, under: "COMPLETER")
        complete(second, under: "COMPLETER")
        #expect(log.events == ["last nil COMPLETER", "7 COMPLETER", "completed COMPLETER"])
        handles.forEach { $0.dispose() }
    }

    /// An aggregate is made by the completion: it goes out in the
    /// completer's context (see Tracing.md's table).
    @Test func anAggregateGoesOutInTheCompletersContext() {
        let log = EventLog()
        let first = source()
        let second = source()
        let handles = [
            start(first.signal |> reduceLeft(value: 0) { $0 + $1 }, log: log),
            (second.signal |> collect).start(next: { log.append("\($0) \(traceName())") }),
        ]
        put(first, [(1, "A"), (2, "B")])
        complete(first, under: "COMPLETER")
        put(second, [(3, "C")])
        complete(second, under: "COMPLETER")
        #expect(log.events == ["3 COMPLETER", "completed COMPLETER", "[3] COMPLETER"])
        handles.forEach { $0.dispose() }
    }

    /// An event pushed while another feeder is delivering (here re-entrantly,
    /// from inside the downstream's callback) is delivered by that feeder's
    /// loop, after the callback returns: in its own pusher's context, not in
    /// the context the delivering thread has then.
    @Test func anEventLeftForAnotherDelivererKeepsItsPushersContext() {
        let log = EventLog()
        let first = ValuePipe<Int>()
        let second = ValuePipe<Int>()
        let handle = merge([first.signal(), second.signal()]).start(next: { value in
            log.append("\(value) \(traceName())")
            if value == 1 {
                TestTrace.$current.withValue("SECOND") { second.putNext(2) }
                TestTrace.$current.withValue(nil) { second.putNext(3) }
            }
        })
        send(first, [(1, "FIRST")])
        #expect(log.events == ["1 FIRST", "2 SECOND", "3 none"])
        handle.dispose()
    }

    /// `failAfterTimeout`'s error is made by the timer armed at `start`: it
    /// goes out in the context current at `start`.
    @Test func failAfterTimeoutFailsInTheContextOfStart() {
        let scheduler = VirtualTimeScheduler()
        let log = EventLog()
        let source = source()
        let signal = source.signal |> failAfterTimeout(1, queue: scheduler.makeQueue(), error: FlushContextError())
        let handle = TestTrace.$current.withValue("START") { start(signal, log: log) }
        put(source, [(1, "A")])
        TestTrace.$current.withValue("runner") { scheduler.advance(by: 1) }
        #expect(log.events == ["1 A", "error START"])
        handle.dispose()
    }
}

/// An owner for the emitter test.
private final class EmitterOwner: Sendable {}

@Suite struct TimerAndEmitterContextTests {
    init() { _ = testTraceInstalled }

    /// `timeout`'s alternate signal is subscribed by the timer armed at
    /// `start`: in the context current at `start`.
    @Test func timeoutSubscribesTheAlternateInTheContextOfStart() {
        let scheduler = VirtualTimeScheduler()
        let contexts = EventLog()
        let alternate = TestSource<Int, FlushContextError>("alternate", log: EventLog()) { _ in
            contexts.append(traceName())
        }
        let source = TestSource<Int, FlushContextError>("source", log: EventLog())
        let signal = source.signal |> timeout(1, queue: scheduler.makeQueue(), alternate: alternate.signal)
        let handle = TestTrace.$current.withValue("START") { signal.start() }
        TestTrace.$current.withValue("runner") { scheduler.advance(by: 1) }
        #expect(contexts.events == ["START"])
        handle.dispose()
    }

    /// An observer with a queue runs in the context of the code that fired.
    @Test func anEmittersQueuedObserverRunsInTheFirersContext() {
        let scheduler = VirtualTimeScheduler()
        let log = EventLog()
        let owner = EmitterOwner()
        let emitter = EventEmitter<Int>()
        emitter.addObserver(owner, queue: scheduler.makeQueue()) { _, value in log.append("\(value) \(traceName())") }
        TestTrace.$current.withValue("FIRER") { emitter.fire(1) }
        emitter.fire(2)
        TestTrace.$current.withValue("runner") { scheduler.advance(by: 0) }
        #expect(log.events == ["1 FIRER", "2 none"])
        withExtendedLifetime(owner) {}
    }
}

@Suite struct ResubscriptionContextTests {
    init() { _ = testTraceInstalled }

    typealias Looping = @Sendable (Signal<Int, FlushContextError>) -> Signal<Int, FlushContextError>

    /// The loop operators whose next subscription is caused by an error.
    static let retrying: [(String, Looping)] = [
        ("retry(_:)", { $0 |> retry(3) }),
        ("retry()", { $0 |> retry() }),
        ("restartOrMapError", { $0 |> restartOrMapError(condition: { _ in .restart }) }),
        ("restartIfError", { signal in (signal |> restartIfError) |> castError(FlushContextError.self) }),
    ]

    /// The loop operators whose next subscription is caused by a completion.
    static let completing: [(String, Looping)] = [
        ("restart", { $0 |> restart }),
        ("recurse", { $0 |> recurse(nil) }),
    ]

    /// The sequencing operators: the second signal is subscribed when the
    /// first completes (here the same source twice).
    static let sequencing: [(String, Looping)] = [
        ("then", { $0 |> then($0) }),
        ("concat", { $0 |> concat($0) }),
        ("concat([])", { concat([$0, $0]) }),
        ("ignoreValuesThen", { signal in signal |> ignoreValuesThen { signal } }),
    ]

    /// Starts `signal` under START and ends each subscription of `source`
    /// under ENDER (or with no context): every subscription's generator runs
    /// in START.
    private func check(
        _ named: String,
        _ signal: Looping,
        subscriptions: Int = 3,
        end: @escaping @Sendable (TestSource<Int, FlushContextError>) -> Void
    ) {
        let contexts = EventLog()
        let source = TestSource<Int, FlushContextError>("source", log: EventLog()) { _ in
            contexts.append(traceName())
        }
        let handle = TestTrace.$current.withValue("START") { signal(source.signal).start() }
        for trace in ["ENDER", nil] {
            TestTrace.$current.withValue(trace) { end(source) }
        }
        #expect(contexts.events == Array(repeating: "START", count: subscriptions), "\(named)")
        handle.dispose()
    }

    @Test(arguments: retrying)
    func aRetryResubscribesInTheContextOfStart(named: String, op: Looping) {
        check(named, op) { $0.putError(FlushContextError()) }
    }

    @Test(arguments: completing)
    func aLoopResubscribesInTheContextOfStart(named: String, op: Looping) {
        check(named, op) { $0.putCompletion() }
    }

    @Test(arguments: sequencing)
    func theNextSignalIsSubscribedInTheContextOfStart(named: String, op: Looping) {
        check(named, op, subscriptions: 2) { $0.putCompletion() }
    }

    /// SwiftSignalKit's waiting retry: the wait's timer was armed by the
    /// failing sender, the resubscription still runs in START, also when
    /// the error carried no context.
    @Test func aWaitingRetryResubscribesInTheContextOfStart() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let forms: [(String, Looping)] = [
            (
                "retry(_:maxDelay:onQueue:)",
                { signal in
                    (signal |> retry(1, maxDelay: 4, onQueue: queue)) |> castError(FlushContextError.self)
                }
            ),
            (
                "retry(retryOnError:…)",
                { signal in
                    signal |> retry(retryOnError: { _ in true }, delayIncrement: 1, maxDelay: 4, maxRetries: nil, onQueue: queue)
                }
            ),
        ]
        for (named, op) in forms {
            let contexts = EventLog()
            let source = TestSource<Int, FlushContextError>("source", log: EventLog()) { _ in
                contexts.append(traceName())
            }
            let handle = TestTrace.$current.withValue("START") { op(source.signal).start() }
            for trace in ["ENDER", nil] {
                TestTrace.$current.withValue(trace) { source.putError(FlushContextError()) }
                TestTrace.$current.withValue("runner") { scheduler.advance(by: 4) }
            }
            #expect(contexts.events == ["START", "START", "START"], "\(named)")
            handle.dispose()
        }
    }

    /// `feedbackLoop` makes and subscribes each iteration in START.
    @Test func feedbackLoopIteratesInTheContextOfStart() {
        let contexts = EventLog()
        let source = TestSource<Int, FlushContextError>("source", log: EventLog())
        let iterations = Atomic(value: 0)
        let loop: Signal<Int, FlushContextError> = feedbackLoop(
            once: { _ in
                contexts.append(traceName())
                let count = iterations.modify { $0 + 1 }
                return count <= 3 ? source.signal : nil
            },
            reduce: { _, latest in latest }
        )
        let handle = TestTrace.$current.withValue("START") { loop.start() }
        for trace in ["ENDER", nil, "ENDER"] {
            TestTrace.$current.withValue(trace) { source.putCompletion() }
        }
        #expect(contexts.events == ["START", "START", "START", "START"])
        handle.dispose()
        // `once` holds the source, which holds its subscribers: let go.
        source.releaseSubscribers()
    }
}
