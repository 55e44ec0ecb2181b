// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

// Source compatibility with SwiftSignalKit: every operator function of
// SwiftSignalKit's public API (81 with the 27 combineLatest overloads, of
// which the 2-, 3- and 26-ary ones stand for the generated arities), taken as
// a value of its exact legacy type (argument labels, currying, `@escaping`,
// defaults) with the one deliberate change, `@Sendable` on every closure SignalKit
// may call on another thread, and the call forms legacy code writes. This file fails to
// COMPILE when a signature drifts; the test bodies only check that the
// references are real functions.

private struct Failure: Error, Equatable {}
private typealias S = Signal<Int, Failure>

@Suite struct SwiftSignalKitAPITests {
    @Test func catchFamilyHasTheLegacySignatures() {
        let catchOp: (@escaping @Sendable (Failure) -> Signal<Int, NoError>) -> (S) -> Signal<Int, NoError> = `catch`
        let restartOp: (S) -> S = restart
        let recurseOp: (Int?) -> (S) -> S = recurse
        let retryOp: (Double, Double, Queue) -> (S) -> Signal<Int, NoError> = { retry($0, maxDelay: $1, onQueue: $2) }
        let retryIfOp: (@escaping @Sendable (Failure) -> Bool, Double, Double, Int?, Queue) -> (S) -> S = {
            retry(retryOnError: $0, delayIncrement: $1, maxDelay: $2, maxRetries: $3, onQueue: $4)
        }
        let restartIfErrorOp: (S) -> Signal<Int, NoError> = restartIfError
        let restartOrMapErrorOp:
            (@escaping @Sendable (Failure) -> RestartOrMapErrorCondition<String>) -> (S) -> Signal<Int, String> =
                restartOrMapError(condition:)
        _ = (catchOp, restartOp, recurseOp, retryOp, retryIfOp, restartIfErrorOp, restartOrMapErrorOp)
    }

    @Test func combineFamilyHasTheLegacySignatures() {
        let two: (Queue?, S, Signal<String, Failure>) -> Signal<(Int, String), Failure> = combineLatest(queue:_:_:)
        let three: (Queue?, S, S, S) -> Signal<(Int, Int, Int), Failure> = combineLatest(queue:_:_:_:)
        let initial: (Queue?, S, Int, Signal<String, Failure>, String) -> Signal<(Int, String), Failure> =
            combineLatest(queue:_:_:_:_:)
        let array: (Queue?, [S]) -> Signal<[Int], Failure> = combineLatest(queue:_:)
        let s = S.single(1)
        // The default `queue:` and the largest arity.
        let withoutQueue = combineLatest(s, s)
        let twentySix = combineLatest(
            s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s
        )
        _ = (two, three, initial, array, withoutQueue, twentySix)
    }

    @Test func dispatchFamilyHasTheLegacySignatures() {
        let deliverOnQueue: (Queue) -> (S) -> S = deliverOn
        let deliverOnMain: (S) -> S = deliverOnMainQueue
        let deliverOnPool: (ThreadPool) -> (S) -> S = deliverOn
        let runOnQueue: (Queue) -> (S) -> S = runOn
        let runOnPool: (ThreadPool) -> (S) -> S = runOn
        _ = (deliverOnQueue, deliverOnMain, deliverOnPool, runOnQueue, runOnPool)
    }

    @Test func loopAndMappingFamiliesHaveTheLegacySignatures() {
        let loop:
            (
                @escaping @Sendable (SignalFeedbackLoopState<Int>) -> Signal<Int, Failure>?,
                @escaping @Sendable (Int, Int) -> Int
            ) -> Signal<Int, Failure> = feedbackLoop(once:reduce:)
        let mapOp: (@escaping @Sendable (Int) -> String) -> (S) -> Signal<String, Failure> = map
        let filterOp: (@escaping @Sendable (Int) -> Bool) -> (S) -> S = filter
        let flatMapOp: (@escaping @Sendable (Int) -> String) -> (Signal<Int?, Failure>) -> Signal<String?, Failure> = flatMap
        let mapErrorOp: (@escaping @Sendable (Failure) -> String) -> (S) -> Signal<Int, String> = mapError
        let castErrorOp: (Failure.Type) -> (Signal<Int, NoError>) -> S = castError
        let distinct: (S) -> S = distinctUntilChanged
        let distinctBy: (@escaping @Sendable (Int, Int) -> Bool) -> (S) -> S = distinctUntilChanged(isEqual:)
        _ = (loop, mapOp, filterOp, flatMapOp, mapErrorOp, castErrorOp, distinct, distinctBy)
    }

    @Test func materializeAndMetaFamiliesHaveTheLegacySignatures() {
        let dematerializeOp: (S) -> Signal<SignalEvent<Int, Failure>, NoError> = dematerialize(signal:)
        let materializeOp: (Signal<SignalEvent<Int, Failure>, NoError>) -> S = materialize(signal:)
        let switchOp: (Signal<S, Failure>) -> S = switchToLatest
        let queueOp: (Signal<S, Failure>) -> S = queue
        let throttledOp: (Signal<S, Failure>) -> S = throttled
        let mapToSignalOp: (@escaping @Sendable (Int) -> Signal<String, Failure>) -> (S) -> Signal<String, Failure> = mapToSignal
        let ignore: (S) -> Signal<Never, Failure> = ignoreValues
        let promoting: (@escaping @Sendable (Int) -> S) -> (Signal<Int, NoError>) -> S = mapToSignalPromotingError
        let mapToQueueOp: (@escaping @Sendable (Int) -> S) -> (S) -> S = mapToQueue
        let mapToThrottledOp: (@escaping @Sendable (Int) -> S) -> (S) -> S = mapToThrottled
        let thenOp: (S) -> (S) -> S = then
        let deferredOp: (@escaping @Sendable () -> S) -> S = deferred
        let measure: (String) -> (S) -> S = debug_measureTimeToFirstEvent(label:)
        _ = (
            dematerializeOp, materializeOp, switchOp, queueOp, throttledOp, mapToSignalOp, ignore, promoting,
            mapToQueueOp, mapToThrottledOp, thenOp, deferredOp, measure
        )
    }

    @Test func reduceSideEffectsSingleTakeAndTimingHaveTheLegacySignatures() {
        let reduce: (Int, @escaping @Sendable (Int, Int) -> Int) -> (S) -> S = reduceLeft(value:f:)
        let reduceEmitting: (Int, @escaping @Sendable (Int, Int, (Int) -> Void) -> Int) -> (S) -> S = reduceLeft(value:f:)
        let reduceGenerator: (Int, @escaping @Sendable (Int, Int) -> Signal<(Int, Passthrough<Int>), Failure>) -> (S) -> S =
            reduceLeft(_:generator:)
        let beforeNextOp: (@escaping @Sendable (Int) -> Void) -> (S) -> S = beforeNext
        let afterNextOp: (@escaping @Sendable (Int) -> Void) -> (S) -> S = afterNext
        let beforeStartedOp: (@escaping @Sendable () -> Void) -> (S) -> S = beforeStarted
        let beforeCompletedOp: (@escaping @Sendable () -> Void) -> (S) -> S = beforeCompleted
        let afterCompletedOp: (@escaping @Sendable () -> Void) -> (S) -> S = afterCompleted
        let afterDisposedOp: (@escaping @Sendable () -> Void) -> (S) -> S = afterDisposed
        let withStateOp = withState(
            S.single(1), { 0 }, next: { _, _ in }, error: { _, _ in }, completed: { _ in }, disposed: { _ in })
        let withStateDefaults = withState(S.single(1), { 0 })
        let single: Signal<Int, Failure> = SignalKit.single(1, Failure.self)
        let fail: Signal<Int, Failure> = SignalKit.fail(Int.self, Failure())
        let complete: Signal<Int, Failure> = SignalKit.complete(Int.self, Failure.self)
        let never: Signal<Int, Failure> = SignalKit.never(Int.self, Failure.self)
        let takeOp: (Int) -> (S) -> S = take
        let takeLastOp: (S) -> S = takeLast
        let takeUntilOp: (@escaping @Sendable (Int) -> SignalTakeAction) -> (S) -> S = take(until:)
        let lastOp: (S) -> Signal<Int?, Failure> = last(signal:)
        let delayOp: (Double, Queue) -> (S) -> S = delay(_:queue:)
        let suspendAware: (Double, Double, Queue) -> (S) -> S = suspendAwareDelay(_:granularity:queue:)
        let suspendAwareDefault = suspendAwareDelay(1.0, queue: Queue(name: "api")) as (S) -> S
        let timeoutOp: (Double, Queue, S) -> (S) -> S = timeout(_:queue:alternate:)
        _ = (
            reduce, reduceEmitting, reduceGenerator, beforeNextOp, afterNextOp, beforeStartedOp, beforeCompletedOp,
            afterCompletedOp, afterDisposedOp, withStateOp, withStateDefaults, single, fail, complete, never, takeOp,
            takeLastOp, takeUntilOp, lastOp, delayOp, suspendAware, suspendAwareDefault, timeoutOp
        )
    }

    @Test func signalSubscriberAndHotValuesHaveTheLegacyShape() async {
        // Statics, start methods, get(), |>, identity.
        let statics: [S] = [.single(1), .complete(), .fail(Failure()), .never()]
        let started = statics[0].start(next: { _ in }, error: { _ in }, completed: {})
        let standalone = statics[0].startStandalone()
        let strict = statics[0].startStrict(next: { _ in })
        started.dispose()
        standalone.dispose()
        strict.dispose()
        let value = await (Signal<Int, NoError>.single(7) |> map(identity)).get()
        #expect(value == 7)

        // Subscriber, disposables.
        let subscriber = Subscriber<Int, Failure>(next: { _ in }, error: { _ in }, completed: {})
        subscriber.keepAlive(ActionDisposable {})
        subscriber.putNext(1)
        subscriber.putError(Failure())
        subscriber.putCompletion()
        let meta = MetaDisposable()
        meta.set(ActionDisposable {})
        let set = DisposableSet()
        set.add(EmptyDisposable)
        let dict = DisposableDict<String>()
        dict.set(ActionDisposable {}, forKey: "a")
        for disposable in [meta, set, dict] as [any Disposable] { disposable.dispose() }

        // Promise, ValuePromise, ValuePipe, Multicast, Atomic, Queue.
        let promise = Promise<Int>(1)
        promise.set(.single(2))
        let valuePromise = ValuePromise(1, ignoreRepeated: true)
        valuePromise.set(2)
        let pipe = ValuePipe<Int>()
        pipe.putNext(1)
        let handles = [promise.get().start(), valuePromise.get().start(), pipe.signal().start()]
        handles.forEach { $0.dispose() }
        let atomic = Atomic(value: 0)
        #expect(atomic.modify { $0 + 1 } == 1)
        #expect(atomic.with { $0 } == 1)
        #expect(atomic.swap(5) == 1)
        let queue = Queue(name: "api")
        queue.sync {}
        #expect(!queue.isCurrent())
        _ = (Queue.mainQueue(), Queue.concurrentDefaultQueue(), Queue.concurrentBackgroundQueue(), Multicast<Int>())
    }
}
