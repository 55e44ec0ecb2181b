// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

// Switching: switchToLatest, mapToSignal, mapToSignalPromotingError
// (spec §2.7, §4.4, §4.5, §4.11).

@Suite struct MetaSwitchTests {
    typealias Inner = Signal<Int, String>

    @Test func switchToLatestSubscribesTheNewInnerBeforeDisposingTheOld() {
        let log = EventLog()
        let outer = TestSource<Inner, String>("o", log: log)
        let a = TestSource<Int, String>("a", log: log)
        let b = TestSource<Int, String>("b", log: log)
        let handle = log.start(outer.signal |> switchToLatest)
        outer.putNext(a.signal)
        a.putNext(1)
        #expect(log.take() == ["o.subscribe#1", "a.subscribe#1", "next 1"])
        outer.putNext(b.signal)
        #expect(log.take() == ["b.subscribe#1", "a.dispose#1"])
        a.putNext(9)
        a.putCompletion()
        b.putNext(2)
        #expect(log.take() == ["next 2"])
        outer.putCompletion()
        #expect(log.take() == ["o.dispose#1"], "the running inner keeps the output open")
        b.putNext(3)
        b.putCompletion()
        #expect(log.take() == ["next 3", "completed", "b.dispose#1"])
        handle.dispose()
        #expect(log.take() == [])
        #expect(outer.disposeCount == 1 && a.disposeCount == 1 && b.disposeCount == 1)
    }

    @Test func completesWhenTheOuterCompletesAfterTheInner() {
        let log = EventLog()
        let outer = TestSource<Inner, String>("o", log: log)
        let a = TestSource<Int, String>("a", log: log)
        let handle = log.start(outer.signal |> switchToLatest)
        outer.putNext(a.signal)
        a.putCompletion()
        #expect(log.take() == ["o.subscribe#1", "a.subscribe#1", "a.dispose#1"])
        outer.putCompletion()
        #expect(log.take() == ["completed", "o.dispose#1"])
        handle.dispose()
        #expect(log.take() == [])
    }

    @Test func completesAtOnceWhenTheOuterCompletesWithNoInner() {
        let log = EventLog()
        _ = log.start(Signal<Inner, String>.complete() |> switchToLatest)
        let outer = TestSource<Inner, String>("o", log: log)
        _ = log.start(outer.signal |> switchToLatest)
        outer.putCompletion()
        #expect(log.events == ["completed", "o.subscribe#1", "completed", "o.dispose#1"])
    }

    @Test func synchronousInnersAndOuter() {
        let log = EventLog()
        let outer = Signal<Inner, String> { subscriber in
            subscriber.putNext(.single(1))
            subscriber.putNext(.single(2))
            subscriber.putCompletion()
            return EmptyDisposable
        }
        _ = log.start(outer |> switchToLatest)
        #expect(log.events == ["next 1", "next 2", "completed"])
    }

    @Test func anInnerErrorFailsTheOutputAndDisposesInnerThenOuter() {
        let log = EventLog()
        let outer = TestSource<Inner, String>("o", log: log)
        let a = TestSource<Int, String>("a", log: log)
        let handle = log.start(outer.signal |> switchToLatest)
        outer.putNext(a.signal)
        a.putError("e")
        outer.putNext(.single(5))
        #expect(log.take() == ["o.subscribe#1", "a.subscribe#1", "error e", "a.dispose#1", "o.dispose#1"])
        handle.dispose()
        #expect(log.take() == [])
    }

    @Test func anOuterErrorFailsTheOutputAndDisposesInnerThenOuter() {
        let log = EventLog()
        let outer = TestSource<Inner, String>("o", log: log)
        let a = TestSource<Int, String>("a", log: log)
        _ = log.start(outer.signal |> switchToLatest)
        outer.putNext(a.signal)
        outer.putError("e")
        a.putNext(1)
        #expect(log.events == ["o.subscribe#1", "a.subscribe#1", "error e", "a.dispose#1", "o.dispose#1"])
    }

    @Test func disposalDisposesTheCurrentInnerThenTheOuterOnce() {
        let log = EventLog()
        let outer = TestSource<Inner, String>("o", log: log)
        let a = TestSource<Int, String>("a", log: log)
        let b = TestSource<Int, String>("b", log: log)
        let handle = log.start(outer.signal |> switchToLatest)
        outer.putNext(a.signal)
        outer.putNext(b.signal)
        log.take()
        handle.dispose()
        handle.dispose()
        outer.putNext(a.signal)
        #expect(log.take() == ["b.dispose#1", "o.dispose#1"])
        #expect(outer.disposeCount == 1 && a.disposeCount == 1 && b.disposeCount == 1)
    }

    @Test func aReplacedInnerIsSilencedFromTheMomentItsSuccessorStarts() {
        // b's subscription makes the still-live a emit and complete (a is
        // disposed only once b's subscription returns): those events are
        // dropped, and a's completion does not count as the current inner's,
        // so the output stays open until b completes.
        let log = EventLog()
        let outer = TestSource<Inner, String>("o", log: log)
        let a = TestSource<Int, String>("a", log: log)
        let b = TestSource<Int, String>("b", log: log) { _ in
            a.putNext(99)
            a.putCompletion()
        }
        let handle = log.start(outer.signal |> switchToLatest)
        outer.putNext(a.signal)
        outer.putNext(b.signal)
        outer.putCompletion()
        #expect(log.take() == ["o.subscribe#1", "a.subscribe#1", "b.subscribe#1", "a.dispose#1", "o.dispose#1"])
        b.putNext(2)
        b.putCompletion()
        #expect(log.take() == ["next 2", "completed", "b.dispose#1"])
        handle.dispose()
        #expect(a.disposeCount == 1 && b.disposeCount == 1)
    }

    @Test func anInnerThatMakesTheOuterEmitIsReplacedByTheNestedOne() {
        // a's successor b synchronously makes the outer emit c: c replaces b
        // while b's subscription is still being made. With SwiftSignalKit's
        // MetaDisposable order b's handle would be stored after c's, disposing
        // the live c; SignalKit disposes the replaced b instead.
        let log = EventLog()
        let outer = TestSource<Inner, String>("o", log: log)
        let a = TestSource<Int, String>("a", log: log)
        let c = TestSource<Int, String>("c", log: log)
        let b = TestSource<Int, String>("b", log: log) { _ in outer.putNext(c.signal) }
        let handle = log.start(outer.signal |> switchToLatest)
        outer.putNext(a.signal)
        outer.putNext(b.signal)
        #expect(log.take() == ["o.subscribe#1", "a.subscribe#1", "b.subscribe#1", "c.subscribe#1", "a.dispose#1", "b.dispose#1"])
        b.putNext(8)
        c.putNext(3)
        outer.putCompletion()
        c.putCompletion()
        #expect(log.take() == ["next 3", "o.dispose#1", "completed", "c.dispose#1"])
        handle.dispose()
        #expect(a.disposeCount == 1 && b.disposeCount == 1 && c.disposeCount == 1)
    }

    @Test func anInnerIsActiveUntilItsOwnSubscriptionReturns() {
        // Issue #9 item 4: the active inner is decided with its subscription.
        // b's generator makes the outer emit c (c replaces b), then sends 7:
        // b's subscription is still being made, so 7 is delivered; after it
        // returned, b is silent.
        let log = EventLog()
        let outer = TestSource<Inner, String>("o", log: log)
        let c = TestSource<Int, String>("c", log: log)
        let b = TestSource<Int, String>("b", log: log) { subscriber in
            outer.putNext(c.signal)
            subscriber.putNext(7)
        }
        let handle = log.start(outer.signal |> switchToLatest)
        outer.putNext(b.signal)
        #expect(log.take() == ["o.subscribe#1", "b.subscribe#1", "c.subscribe#1", "next 7", "b.dispose#1"])
        b.putNext(8)
        c.putNext(3)
        #expect(log.take() == ["next 3"])
        handle.dispose()
        #expect(b.disposeCount == 1 && c.disposeCount == 1)
    }

    @Test func eventsOfTheCurrentInnerWhileTheOutputIsDisposedAreDelivered() {
        let log = EventLog()
        let inner = Signal<Int, String> { subscriber in
            ActionDisposable {
                log.append("inner.dispose")
                subscriber.putNext(99)
                subscriber.putCompletion()
            }
        }
        let outer = TestSource<Inner, String>("o", log: log)
        let handle = log.start(outer.signal |> switchToLatest)
        outer.putNext(inner)
        outer.putCompletion()
        handle.dispose()
        #expect(log.events == ["o.subscribe#1", "o.dispose#1", "inner.dispose", "next 99", "completed"])
    }

    @Test func mapToSignalCallsTheTransformAtEachValue() {
        let log = EventLog()
        let outer = TestSource<Int, String>("o", log: log)
        let a = TestSource<Int, String>("a", log: log)
        let b = TestSource<Int, String>("b", log: log)
        let handle = log.start(
            outer.signal
                |> mapToSignal { (value: Int) -> Signal<Int, String> in
                    log.append("f \(value)")
                    return value == 1 ? a.signal : b.signal
                })
        outer.putNext(1)
        a.putNext(10)
        outer.putNext(2)
        b.putNext(20)
        b.putError("e")
        #expect(
            log.events == [
                "o.subscribe#1", "f 1", "a.subscribe#1", "next 10", "f 2", "b.subscribe#1", "a.dispose#1", "next 20",
                "error e", "b.dispose#1", "o.dispose#1",
            ])
        handle.dispose()
    }

    @Test func mapToSignalPromotingErrorTakesTheInnersErrorType() {
        let log = EventLog()
        let outer = TestSource<Int, NoError>("o", log: log)
        let handle = log.start(
            outer.signal
                |> mapToSignalPromotingError { (value: Int) -> Signal<String, Int> in
                    value < 2 ? .single("v\(value)") : .fail(value)
                })
        outer.putNext(1)
        outer.putNext(2)
        #expect(log.events == ["o.subscribe#1", "next v1", "error 2", "o.dispose#1"])
        handle.dispose()
    }

    @Test func mapToSignalPromotingErrorCompletes() {
        let log = EventLog()
        _ = log.start(
            Signal<Int, NoError>.single(1)
                |> mapToSignalPromotingError { (value: Int) -> Signal<Int, String> in
                    .single(value * 10)
                })
        #expect(log.events == ["next 10", "completed"])
    }

    @Test func droppingTheHandleOfAnIdleSwitchReleasesEverything() {
        let probe = WeakBox<Probe>(nil)
        do {
            let captured = Probe()
            probe.value = captured
            _ = (Signal<Inner, String>.never() |> switchToLatest).start(next: { _ in captured.touch() })
            let withInner = Signal<Inner, String> { subscriber in
                subscriber.putNext(.never())
                return EmptyDisposable
            }
            _ = (withInner |> switchToLatest).start(next: { _ in captured.touch() })
        }
        #expect(probe.value == nil, "the switch's state must not keep its downstream alive")
    }
}
