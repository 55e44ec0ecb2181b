// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SignalKit
import SignalKitTesting
import Testing

// The rules of ReactiveCocoa's Design Guidelines (spec §C) that concern the
// RAC operators, as tests. C5 (grammar) is checked for every operator by the
// randomized model test (Model/OperatorModelTests.swift); C6 (serialized
// delivery from concurrent inputs) by the stress suite
// (SignalKitStressTests/RACOperatorsStressTests.swift); C20 (naming) by
// Debugging/DebuggingTests.swift; C24 (stack-safe retry) by
// RACRetryTests.manySynchronousRetriesRunInConstantStack and
// RACFlattenTests.manySynchronousInnersRunInConstantStack.

@Suite struct RACDesignGuidelineTests {
    // MARK: C8 — errors propagate immediately and dispose the other inputs

    @Test(arguments: ["merge", "zip", "combineLatest", "flatten", "takeUntil", "sample"])
    func c8AnInputErrorTerminatesAtOnceAndDisposesTheOtherInputs(operatorName: String) {
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let b = TestSource<Int, String>("b", log: log)
        let combined: Signal<Int, String>
        switch operatorName {
        case "merge": combined = merge([a.signal, b.signal])
        case "zip": combined = zip(a.signal, b.signal) |> map { $0 + $1 }
        case "combineLatest": combined = combineLatest(a.signal, b.signal) |> map { $0 + $1 }
        case "flatten":
            combined = Signal<Signal<Int, String>, String>.sequence([a.signal, b.signal]) |> then(.never()) |> flatten
        case "takeUntil": combined = a.signal |> takeUntil(b.signal |> ignoreValues)
        default: combined = a.signal |> sample(b.signal)
        }
        _ = combined.start(
            next: { log.append("next \($0)") },
            error: { log.append("error \($0)") }
        )
        log.take()
        a.putError("e")
        a.putNext(1)
        b.putNext(2)
        let events = log.take()
        #expect(events.first == "error e", "\(operatorName): \(events)")
        #expect(a.disposeCount == 1 && b.disposeCount == 1, "\(operatorName): \(events)")
        #expect(!events.contains { $0.hasPrefix("next") }, "\(operatorName): \(events)")
    }

    // MARK: C9 — side effects run once per subscription

    @Test func c9OperatorClosuresRunForEachSubscription() {
        let generatorRuns = Shared(0)
        let closureRuns = Shared(0)
        let source = Signal<Int, NoError> { subscriber in
            generatorRuns.withLock { $0 += 1 }
            subscriber.putNext(1)
            subscriber.putCompletion()
            return EmptyDisposable
        }
        let chain =
            source
            |> doNext { _ in closureRuns.withLock { $0 += 1 } }
            |> scan(0, +)
            |> flattenMap { Signal<Int, NoError>.single($0) }
            |> merge(.complete())
        _ = chain.start()
        _ = chain.start()
        #expect(generatorRuns.value == 2)
        #expect(closureRuns.value == 2)
    }

    // MARK: C10 — termination disposes once and releases the callbacks

    @Test(arguments: ["merge", "zip", "flatten", "takeUntil", "throttle", "bufferWithTime", "delayEvents"])
    func c10CompletionDisposesExactlyOnceAndReleasesTheCallbacks(operatorName: String) {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let signal: Signal<Int, String>
        switch operatorName {
        case "merge": signal = merge([a.signal])
        case "zip": signal = zip([a.signal]) |> map { $0[0] }
        case "flatten": signal = Signal<Signal<Int, String>, String>.single(a.signal) |> flatten
        case "takeUntil": signal = a.signal |> takeUntil(Signal<Int, NoError>.never())
        case "throttle": signal = a.signal |> throttle(1, queue: queue)
        case "bufferWithTime": signal = a.signal |> bufferWithTime(1, queue: queue) |> map { $0.count }
        default: signal = a.signal |> delayEvents(1, queue: queue)
        }
        weak var weakProbe: Probe?
        var handle: (any Disposable)?
        do {
            let probe = Probe()
            weakProbe = probe
            handle = signal.start(completed: {
                probe.touch(); log.append("completed")
            })
        }
        a.putCompletion()
        scheduler.run()
        #expect(log.events.contains("completed"), "\(operatorName)")
        #expect(a.disposeCount == 1, "\(operatorName)")
        #expect(weakProbe == nil, "\(operatorName): the callbacks are released at termination")
        handle?.dispose()
        #expect(a.disposeCount == 1, "\(operatorName)")
    }

    // MARK: C11 — disposal cancels timers and upstream work

    @Test func c11DisposalCancelsEveryTimer() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let source = TestSource<Int, String>("s", log: log)
        let handles = [
            log.start(source.signal |> throttle(1, queue: queue)),
            log.start(source.signal |> bufferWithTime(1, queue: queue)),
            log.start(source.signal |> delayEvents(1, queue: queue)),
            log.start(source.signal |> failAfterTimeout(1, queue: queue, error: "late")),
            log.start(interval(1, queue: queue) |> castError(String.self)),
            log.start(timer(1, queue: queue) |> castError(String.self)),
        ]
        for subscriber in source.subscribers {
            subscriber.putNext(1)
        }
        #expect(log.take().filter { !$0.hasPrefix("s.subscribe") } == ["next 1"], "only failAfterTimeout forwards at once")
        for handle in handles {
            handle.dispose()
        }
        scheduler.advance(by: 10)
        #expect(log.take() == ["s.dispose#1", "s.dispose#2", "s.dispose#3", "s.dispose#4"])
        #expect(source.disposeCount == 4)
    }

    // MARK: C12 — disposing one subscription leaves the others running

    @Test func c12DisposingOneSubscriptionLeavesTheOthers() {
        let pipe = ValuePipe<Int>()
        let log = EventLog()
        let merged = merge([pipe.signal(), .never()]) |> scan(0, +)
        let first = log.start(merged, prefix: "1 ")
        let second = log.start(merged, prefix: "2 ")
        pipe.putNext(1)
        first.dispose()
        pipe.putNext(2)
        #expect(log.events == ["1 next 1", "2 next 1", "2 next 3"])
        second.dispose()
    }

    // MARK: C13 — a subscription keeps its signal alive

    @Test func c13CallersNeedNotRetainSignals() {
        let pipe = ValuePipe<Int>()
        let log = EventLog()
        weak var weakSignal: Signal<Int, NoError>?
        var handle: (any Disposable)?
        do {
            let signal = pipe.signal() |> zipWith(pipe.signal()) |> map { $0 + $1 }
            weakSignal = signal
            handle = log.start(signal)
        }
        pipe.putNext(1)
        #expect(log.events == ["next 2"])
        _ = weakSignal
        handle?.dispose()
    }

    // MARK: C14 — takeUntil terminates the upstream at once

    @Test func c14TakeUntilDisposesTheUpstreamRightAfterTheTrigger() {
        let log = EventLog()
        let source = TestSource<Int, String>("s", log: log)
        let trigger = ValuePipe<Void>()
        _ = log.start(source.signal |> takeUntil(trigger.signal()))
        trigger.putNext(())
        #expect(log.events == ["s.subscribe#1", "completed", "s.dispose#1"])
    }

    // MARK: C18 — explicit side effects run before the value reaches downstream

    @Test func c18DoNextRunsBeforeTheSubscriber() {
        let log = EventLog()
        _ = log.start(Signal<Int, NoError>.sequence([1, 2]) |> doNext { log.append("doNext \($0)") })
        #expect(log.events == ["doNext 1", "next 1", "doNext 2", "next 2", "completed"])
    }

    // MARK: C21 — operators without a scheduler never hop threads

    @Test func c21OperatorsDeliverOnTheSourcesThread() {
        let log = EventLog()
        let source = TestSource<Int, String>("s", log: log)
        let other = TestSource<Int, String>("o", log: log)
        let chain =
            merge([source.signal, other.signal])
            |> scan(0, +)
            |> skip(0)
            |> takeWhile { $0 < 100 }
            |> flattenMap { Signal<Int, String>.single($0) }
            |> zipWith(other.signal |> startWith(0))
            |> map { $0.0 }
        let delivered = SignalKit.Atomic<[pthread_t]>(value: [])
        let handle = chain.start(next: { _ in
            let current = pthread_self()
            delivered.modify { $0 + [current] }
        })
        let thread = SignalKit.Atomic<pthread_t?>(value: nil)
        race(threads: 1) { _ in
            thread.modify { _ in pthread_self() }
            source.putNext(1)
        }
        let values = delivered.with { $0 }
        #expect(values.count == 1)
        #expect(values.allSatisfy { pthread_equal($0, thread.with { $0 }!) != 0 })
        handle.dispose()
    }

    // MARK: C22 — building a chain does no work

    @Test func c22BuildingAChainHasNoSideEffects() {
        let generatorRuns = Shared(0)
        let closureRuns = Shared(0)
        let lines = Shared(0)
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let source = Signal<Int, NoError> { subscriber in
            generatorRuns.withLock { $0 += 1 }
            return EmptyDisposable
        }
        let chain =
            merge([source, source])
            |> flattenMap { _ -> Signal<Int, NoError> in
                closureRuns.withLock { $0 += 1 }; return source
            }
            |> throttle(1, queue: queue)
            |> zipWith(source)
            |> map { $0.0 }
            |> takeUntil(source)
            |> logAll(to: SignalLogSink { _ in lines.withLock { $0 += 1 } })
        _ = chain
        #expect(generatorRuns.value == 0 && closureRuns.value == 0 && lines.value == 0 && scheduler.pendingCount == 0)
    }
}
