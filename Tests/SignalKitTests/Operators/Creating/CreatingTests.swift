// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

@Suite struct SingleTests {
    @Test func singleEmitsTheValueThenCompletesSynchronously() {
        let log = EventLog()
        let signal: Signal<Int, String> = single(1, String.self)
        _ = log.start(signal)
        log.append("start returned")
        #expect(log.events == ["next 1", "completed", "start returned"])
    }

    @Test func singleIsColdAndEmitsToEachSubscriber() {
        let log = EventLog()
        let signal = single("x", NoError.self)
        _ = log.start(signal, prefix: "1:")
        _ = log.start(signal, prefix: "2:")
        #expect(log.events == ["1:next x", "1:completed", "2:next x", "2:completed"])
    }

    @Test func singleHandleDisposeAfterCompletionIsANoOp() {
        let log = EventLog()
        let handle = log.start(single(1, String.self))
        handle.dispose()
        handle.dispose()
        #expect(log.events == ["next 1", "completed"])
        #expect("\(handle)" == "SubscriberDisposable { disposable: nil }")
    }

    @Test func failFailsSynchronously() {
        let log = EventLog()
        let signal: Signal<Int, String> = fail(Int.self, "boom")
        _ = log.start(signal)
        log.append("start returned")
        #expect(log.events == ["error boom", "start returned"])
    }

    @Test func completeCompletesSynchronously() {
        let log = EventLog()
        let signal: Signal<Int, String> = complete(Int.self, String.self)
        _ = log.start(signal)
        log.append("start returned")
        #expect(log.events == ["completed", "start returned"])
    }

    @Test func neverEmitsNothingAndCanBeDisposed() {
        let log = EventLog()
        let signal: Signal<Int, String> = never(Int.self, String.self)
        let handle = log.start(signal)
        #expect("\(handle)" == "SubscriberDisposable { disposable: hasValue }")
        handle.dispose()
        #expect(log.events == [])
        #expect("\(handle)" == "SubscriberDisposable { disposable: nil }")
    }

    @Test func neverReleasesTheCallbacksOnceTheHandleIsDisposed() {
        let probe = WeakBox<Probe>(nil)
        let handle: any Disposable
        do {
            let object = Probe()
            probe.value = object
            handle = never(Int.self, NoError.self).start(next: { _ in object.touch() })
        }
        #expect(probe.value == nil, "never() does not keep its subscriber: the callbacks go at once")
        handle.dispose()
    }

    @Test func freeFunctionsBehaveLikeTheStaticFactories() {
        let log = EventLog()
        _ = log.start(single(1, String.self), prefix: "free:")
        _ = log.start(Signal<Int, String>.single(1), prefix: "static:")
        _ = log.start(fail(Int.self, "e"), prefix: "free:")
        _ = log.start(Signal<Int, String>.fail("e"), prefix: "static:")
        _ = log.start(complete(Int.self, String.self), prefix: "free:")
        _ = log.start(Signal<Int, String>.complete(), prefix: "static:")
        #expect(
            log.events == [
                "free:next 1", "free:completed", "static:next 1", "static:completed",
                "free:error e", "static:error e",
                "free:completed", "static:completed",
            ])
    }

    @Test func singleThroughOperatorsCompletesOnce() {
        let log = EventLog()
        _ = log.start(single(2, String.self) |> map { $0 * 3 } |> take(1))
        #expect(log.events == ["next 6", "completed"])
    }

    @Test func singleReleasesItsValueWithTheSignal() {
        let probe = WeakBox<Probe>(nil)
        do {
            let object = Probe()
            probe.value = object
            let signal = single(object, NoError.self)
            let received = Shared<Probe?>(nil)
            _ = signal.start(next: { received.value = $0 })
            #expect(received.value === object)
        }
        #expect(probe.value == nil)
    }
}
