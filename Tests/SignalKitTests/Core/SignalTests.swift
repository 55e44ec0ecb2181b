// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

@Suite struct SignalTests {
    @Test func startRunsTheGeneratorSynchronouslyAndDeliversBeforeReturning() {
        let log = EventLog()
        let signal = Signal<Int, String> { subscriber in
            log.append("generator start")
            subscriber.putNext(1)
            subscriber.putNext(2)
            log.append("generator end")
            return log.disposable("d")
        }
        let handle = log.start(signal)
        log.append("start returned")
        #expect(log.take() == ["generator start", "next 1", "next 2", "generator end", "start returned"])
        handle.dispose()
        #expect(log.take() == ["d.dispose"])
    }

    @Test func signalsAreColdTheGeneratorRunsPerSubscription() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log) { $0.putNext(7) }
        let first = log.start(source.signal, prefix: "1:")
        let second = log.start(source.signal, prefix: "2:")
        #expect(log.take() == ["a.subscribe#1", "1:next 7", "a.subscribe#2", "2:next 7"])
        first.dispose()
        second.dispose()
        #expect(log.take() == ["a.dispose#1", "a.dispose#2"])
    }

    @Test func synchronousCompletionDisposesTheGeneratorsDisposableRightAfterItReturns() {
        let log = EventLog()
        let signal = Signal<Int, String> { subscriber in
            subscriber.putCompletion()
            log.append("generator end")
            return log.disposable("d")
        }
        _ = log.start(signal)
        log.append("start returned")
        #expect(log.events == ["completed", "generator end", "d.dispose", "start returned"])
    }

    @Test func asynchronousTerminationDisposesUpstreamAfterTheCallbackExactlyOnce() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let handle = log.start(source.signal)
        source.putNext(1)
        source.putCompletion()
        source.putNext(2)
        source.putError("late")
        #expect(log.take() == ["a.subscribe#1", "next 1", "completed", "a.dispose#1"])
        handle.dispose()
        #expect(log.take() == [], "the generator's disposable is disposed exactly once")
        #expect(source.disposeCount == 1)
    }

    @Test func errorTerminatesAndDisposes() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log) { $0.putError("boom") }
        _ = log.start(source.signal)
        #expect(log.events == ["a.subscribe#1", "error boom", "a.dispose#1"])
    }

    @Test func handleDisposeDisposesInnerFirstThenStopsDelivery() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let handle = log.start(source.signal)
        source.putNext(1)
        handle.dispose()
        source.putNext(2)
        source.putCompletion()
        handle.dispose()
        #expect(log.events == ["a.subscribe#1", "next 1", "a.dispose#1"])
    }

    @Test func eventsEmittedWhileTheInnerDisposableIsDisposedAreDelivered() {
        let log = EventLog()
        let inner = CountingDisposable()
        let subscriberRef = Shared<Subscriber<Int, String>?>(nil)
        let signal = Signal<Int, String> { subscriber in
            subscriberRef.value = subscriber
            return ActionDisposable {
                log.append("inner.dispose")
                inner.dispose()
                subscriber.putNext(99)
                subscriber.putCompletion()
            }
        }
        let handle = log.start(signal |> mapForTest { $0 + 1 })
        handle.dispose()
        #expect(log.events == ["inner.dispose", "next 100", "completed"])
        #expect(inner.disposeCount == 1, "SignalKit disposes a generator's disposable exactly once")
        subscriberRef.value = nil
    }

    @Test func disposingTheHandleFromTheCompletionCallbackDisposesTheInnerOnce() {
        let inner = CountingDisposable()
        let source = Shared<Subscriber<Int, NoError>?>(nil)
        let handle = Shared<(any Disposable)?>(nil)
        handle.value = Signal<Int, NoError> { subscriber in
            source.value = subscriber
            return inner
        }.start(completed: { handle.value?.dispose() })
        source.value?.putCompletion()
        #expect(inner.disposeCount == 1, "legacy disposes twice here; SignalKit once")
    }

    @Test func concurrentHandleDisposalsDisposeTheInnerExactlyOnce() {
        for _ in 0..<200 {
            let inner = CountingDisposable()
            let handle = Signal<Int, NoError> { _ in inner }.start()
            let box = UncheckedSendableBox(handle)
            race(threads: 16) { _ in box.value.dispose() }
            #expect(inner.disposeCount == 1)
        }
    }

    @Test func droppingTheHandleDoesNotCancel() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        do {
            _ = log.start(source.signal)
        }
        source.putNext(1)
        source.putCompletion()
        #expect(log.events == ["a.subscribe#1", "next 1", "completed", "a.dispose#1"])
    }

    @Test func reentrantPutNextFromACallbackIsDeliveredImmediately() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let handle = source.signal.start(next: { value in
            log.append("next \(value)")
            if value == 1 { source.putNext(2) }
            log.append("end \(value)")
        })
        source.putNext(1)
        #expect(log.events == ["a.subscribe#1", "next 1", "next 2", "end 2", "end 1"])
        handle.dispose()  // the callback captures the source, which holds the subscriber
    }

    @Test func disposingFromTheNextCallbackStopsFurtherEvents() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let handle = Shared<(any Disposable)?>(nil)
        handle.value = source.signal.start(next: { value in
            log.append("next \(value)")
            handle.value?.dispose()
        })
        source.putNext(1)
        source.putNext(2)
        source.putCompletion()
        #expect(log.events == ["a.subscribe#1", "next 1", "a.dispose#1"])
    }

    @Test func handleDescription() {
        let handle = Signal<Int, NoError>.never().start()
        #expect("\(handle)" == "SubscriberDisposable { disposable: hasValue }")
        handle.dispose()
        #expect("\(handle)" == "SubscriberDisposable { disposable: nil }")
    }

    @Test func startVariants() {
        let log = EventLog()
        let signal = Signal<Int, NoError>.single(3)
        _ = signal.startStandalone(next: { log.append("standalone \($0)") })
        let strict = signal.startStrict(next: { log.append("strict \($0)") })
        #expect(strict is StrictDisposable)
        strict.dispose()
        #expect(log.events == ["standalone 3", "strict 3"])
    }

    @Test func staticConstructors() {
        let log = EventLog()
        _ = log.start(Signal<Int, String>.single(1), prefix: "single:")
        _ = log.start(Signal<Int, String>.complete(), prefix: "complete:")
        _ = log.start(Signal<Int, String>.fail("e"), prefix: "fail:")
        _ = log.start(Signal<Int, String>.never(), prefix: "never:")
        _ = log.start(single(2, String.self), prefix: "free single:")
        _ = log.start(fail(Int.self, "f"), prefix: "free fail:")
        _ = log.start(complete(Int.self, String.self), prefix: "free complete:")
        _ = log.start(never(Int.self, String.self), prefix: "free never:")
        #expect(
            log.events == [
                "single:next 1", "single:completed", "complete:completed", "fail:error e",
                "free single:next 2", "free single:completed", "free fail:error f", "free complete:completed",
            ])
    }

    @Test func aSubscriptionKeepsItsSignalAlive() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let weakSignal: WeakBox<Signal<Int, String>>
        do {
            let signal = source.signal |> mapForTest { $0 * 2 }
            weakSignal = WeakBox(signal)
            _ = log.start(signal)
        }
        source.putNext(2)
        #expect(log.events == ["a.subscribe#1", "next 4"])
        _ = weakSignal
    }
}

/// A minimal operator for core tests (the operator families have their own
/// tests): forwards values through `f`, terminal events unchanged.
func mapForTest<T, E, R>(_ f: @escaping @Sendable (T) -> R) -> (Signal<T, E>) -> Signal<R, E> {
    { signal in
        Signal { subscriber in
            signal.start(
                next: { subscriber.putNext(f($0)) },
                error: { subscriber.putError($0) },
                completed: { subscriber.putCompletion() }
            )
        }
    }
}

struct UncheckedSendableBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
