// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

// Flattening: queue, mapToQueue, throttled, mapToThrottled (spec §2.7,
// §4.4, §4.5, §4.11).

@Suite struct MetaQueueTests {
    typealias Inner = Signal<Int, String>

    // MARK: - queue

    @Test func queueRunsInnersOneAfterAnotherSubscribingTheNextBeforeDisposingThePrevious() {
        let log = EventLog()
        let outer = TestSource<Inner, String>("o", log: log)
        let a = TestSource<Int, String>("a", log: log)
        let b = TestSource<Int, String>("b", log: log)
        let c = TestSource<Int, String>("c", log: log)
        let handle = log.start(outer.signal |> queue)
        outer.putNext(a.signal)
        outer.putNext(b.signal)
        outer.putNext(c.signal)
        a.putNext(1)
        #expect(log.take() == ["o.subscribe#1", "a.subscribe#1", "next 1"])
        a.putCompletion()
        #expect(log.take() == ["b.subscribe#1", "a.dispose#1"])
        b.putNext(2)
        outer.putCompletion()
        b.putCompletion()
        #expect(log.take() == ["next 2", "o.dispose#1", "c.subscribe#1", "b.dispose#1"])
        c.putNext(3)
        c.putCompletion()
        #expect(log.take() == ["next 3", "completed", "c.dispose#1"])
        handle.dispose()
        #expect(log.take() == [])
        #expect(outer.disposeCount == 1)
        #expect([a, b, c].allSatisfy { $0.disposeCount == 1 })
    }

    @Test func queueCompletesAtOnceWhenTheOuterCompletesIdle() {
        let log = EventLog()
        let outer = TestSource<Inner, String>("o", log: log)
        let a = TestSource<Int, String>("a", log: log)
        _ = log.start(outer.signal |> queue)
        outer.putNext(a.signal)
        a.putCompletion()
        outer.putCompletion()
        #expect(log.events == ["o.subscribe#1", "a.subscribe#1", "a.dispose#1", "completed", "o.dispose#1"])
    }

    @Test func queueOfSynchronousInners() {
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log) { subscriber in
            subscriber.putNext(1)
            subscriber.putCompletion()
        }
        let b = TestSource<Int, String>("b", log: log) { subscriber in
            subscriber.putNext(2)
            subscriber.putCompletion()
        }
        let outer = Signal<Inner, String> { subscriber in
            subscriber.putNext(a.signal)
            subscriber.putNext(b.signal)
            subscriber.putCompletion()
            return EmptyDisposable
        }
        _ = log.start(outer |> queue)
        #expect(
            log.events == [
                "a.subscribe#1", "next 1", "a.dispose#1", "b.subscribe#1", "next 2", "b.dispose#1", "completed",
            ])
    }

    @Test func queuedSynchronousInnersAreDrainedByALoopInsideTheAsynchronousCompletion() {
        // When a completes (asynchronously) the loop runs in its completion
        // callback: b is subscribed before a is disposed; b, completing
        // synchronously, disposes itself as its subscription returns; a is
        // disposed when b's handle replaces it; then c.
        let log = EventLog()
        let outer = TestSource<Inner, String>("o", log: log)
        let a = TestSource<Int, String>("a", log: log)
        let b = TestSource<Int, String>("b", log: log) { subscriber in
            subscriber.putNext(2)
            subscriber.putCompletion()
        }
        let c = TestSource<Int, String>("c", log: log) { subscriber in
            subscriber.putNext(3)
            subscriber.putCompletion()
        }
        let handle = log.start(outer.signal |> queue)
        outer.putNext(a.signal)
        outer.putNext(b.signal)
        outer.putNext(c.signal)
        outer.putCompletion()
        #expect(log.take() == ["o.subscribe#1", "a.subscribe#1", "o.dispose#1"])
        a.putCompletion()
        #expect(
            log.take() == [
                "b.subscribe#1", "next 2", "b.dispose#1", "a.dispose#1", "c.subscribe#1", "next 3", "completed",
                "c.dispose#1",
            ])
        handle.dispose()
        #expect(outer.disposeCount == 1)
        #expect([a, b, c].allSatisfy { $0.disposeCount == 1 })
    }

    @Test func anInnerErrorStopsTheQueueWaitingInnersAreNeverSubscribed() {
        let log = EventLog()
        let outer = TestSource<Inner, String>("o", log: log)
        let a = TestSource<Int, String>("a", log: log)
        let b = TestSource<Int, String>("b", log: log)
        let handle = log.start(outer.signal |> queue)
        outer.putNext(a.signal)
        outer.putNext(b.signal)
        a.putError("e")
        #expect(log.take() == ["o.subscribe#1", "a.subscribe#1", "error e", "a.dispose#1", "o.dispose#1"])
        handle.dispose()
        #expect(b.subscribeCount == 0)
    }

    @Test func aSynchronousInnerErrorStopsTheQueue() {
        let log = EventLog()
        let outer = TestSource<Inner, String>("o", log: log)
        let a = TestSource<Int, String>("a", log: log)
        let handle = log.start(outer.signal |> queue)
        outer.putNext(a.signal)
        outer.putNext(.fail("e"))
        outer.putNext(.single(9))
        a.putCompletion()
        outer.putNext(.single(10))
        #expect(log.take() == ["o.subscribe#1", "a.subscribe#1", "error e", "a.dispose#1", "o.dispose#1"])
        handle.dispose()
    }

    @Test func anOuterErrorStopsTheQueue() {
        let log = EventLog()
        let outer = TestSource<Inner, String>("o", log: log)
        let a = TestSource<Int, String>("a", log: log)
        let b = TestSource<Int, String>("b", log: log)
        _ = log.start(outer.signal |> queue)
        outer.putNext(a.signal)
        outer.putNext(b.signal)
        outer.putError("e")
        a.putCompletion()
        #expect(log.events == ["o.subscribe#1", "a.subscribe#1", "error e", "a.dispose#1", "o.dispose#1"])
        #expect(b.subscribeCount == 0)
    }

    @Test func queueDisposalDisposesTheCurrentInnerThenTheOuterAndStartsNothing() {
        let log = EventLog()
        let outer = TestSource<Inner, String>("o", log: log)
        let a = TestSource<Int, String>("a", log: log)
        let b = TestSource<Int, String>("b", log: log)
        let handle = log.start(outer.signal |> queue)
        outer.putNext(a.signal)
        outer.putNext(b.signal)
        handle.dispose()
        a.putCompletion()
        #expect(log.events == ["o.subscribe#1", "a.subscribe#1", "a.dispose#1", "o.dispose#1"])
        #expect(b.subscribeCount == 0)
    }

    @Test func aCompletionEmittedWhileTheQueueIsDisposedStartsNoWaitingInner() {
        let log = EventLog()
        let inner = Signal<Int, String> { subscriber in
            ActionDisposable {
                log.append("inner.dispose")
                subscriber.putNext(99)
                subscriber.putCompletion()
            }
        }
        let outer = TestSource<Inner, String>("o", log: log)
        let b = TestSource<Int, String>("b", log: log)
        let handle = log.start(outer.signal |> queue)
        outer.putNext(inner)
        outer.putNext(b.signal)
        handle.dispose()
        #expect(log.events == ["o.subscribe#1", "inner.dispose", "next 99", "o.dispose#1"])
        #expect(b.subscribeCount == 0)
    }

    @Test func mapToQueueCallsTheTransformEagerlyAtArrival() {
        let log = EventLog()
        let outer = TestSource<Int, String>("o", log: log)
        let sources = (0..<3).map { index in TestSource<Int, String>("s\(index)", log: log) }
        let handle = log.start(
            outer.signal
                |> mapToQueue { (value: Int) -> Signal<Int, String> in
                    log.append("f \(value)")
                    return sources[value].signal
                })
        outer.putNext(0)
        outer.putNext(1)
        outer.putNext(2)
        #expect(log.take() == ["o.subscribe#1", "f 0", "s0.subscribe#1", "f 1", "f 2"])
        sources[0].putCompletion()
        sources[1].putNext(10)
        sources[1].putCompletion()
        #expect(log.take() == ["s1.subscribe#1", "s0.dispose#1", "next 10", "s2.subscribe#1", "s1.dispose#1"])
        handle.dispose()
        #expect(log.take() == ["s2.dispose#1", "o.dispose#1"])
    }

    // MARK: - throttled

    @Test func throttledKeepsOnlyTheLatestWaitingInner() {
        let log = EventLog()
        let outer = TestSource<Inner, String>("o", log: log)
        let a = TestSource<Int, String>("a", log: log)
        let b = TestSource<Int, String>("b", log: log)
        let c = TestSource<Int, String>("c", log: log)
        let handle = log.start(outer.signal |> throttled)
        outer.putNext(a.signal)
        outer.putNext(b.signal)
        outer.putNext(c.signal)
        #expect(log.take() == ["o.subscribe#1", "a.subscribe#1"])
        a.putNext(1)
        a.putCompletion()
        #expect(log.take() == ["next 1", "c.subscribe#1", "a.dispose#1"])
        #expect(b.subscribeCount == 0, "a waiting inner replaced by a newer one is never subscribed")
        outer.putCompletion()
        c.putCompletion()
        #expect(log.take() == ["o.dispose#1", "completed", "c.dispose#1"])
        handle.dispose()
        #expect(a.disposeCount == 1 && c.disposeCount == 1 && outer.disposeCount == 1)
    }

    @Test func throttledStartsAtOnceWhenIdle() {
        let log = EventLog()
        let outer = TestSource<Inner, String>("o", log: log)
        let a = TestSource<Int, String>("a", log: log)
        let b = TestSource<Int, String>("b", log: log)
        let handle = log.start(outer.signal |> throttled)
        outer.putNext(a.signal)
        a.putCompletion()
        outer.putNext(b.signal)
        #expect(log.take() == ["o.subscribe#1", "a.subscribe#1", "a.dispose#1", "b.subscribe#1"])
        handle.dispose()
        #expect(log.take() == ["b.dispose#1", "o.dispose#1"])
    }

    @Test func throttledCompletesOnlyWhenNothingRunsOrWaits() {
        let log = EventLog()
        let outer = TestSource<Inner, String>("o", log: log)
        let a = TestSource<Int, String>("a", log: log)
        let b = TestSource<Int, String>("b", log: log)
        _ = log.start(outer.signal |> throttled)
        outer.putNext(a.signal)
        outer.putNext(b.signal)
        outer.putCompletion()
        a.putCompletion()
        #expect(log.take() == ["o.subscribe#1", "a.subscribe#1", "o.dispose#1", "b.subscribe#1", "a.dispose#1"])
        b.putCompletion()
        #expect(log.take() == ["completed", "b.dispose#1"])
    }

    @Test func throttledReleasesADroppedInnerAtOnce() {
        let log = EventLog()
        let outer = TestSource<Inner, String>("o", log: log)
        let a = TestSource<Int, String>("a", log: log)
        let probe = WeakBox<Probe>(nil)
        let handle = log.start(outer.signal |> throttled)
        outer.putNext(a.signal)
        do {
            let captured = Probe()
            probe.value = captured
            outer.putNext(
                Signal { _ in
                    captured.touch()
                    return EmptyDisposable
                })
        }
        #expect(probe.value != nil)
        outer.putNext(.never())
        #expect(probe.value == nil)
        handle.dispose()
    }

    @Test func throttledErrorStopsEverything() {
        let log = EventLog()
        let outer = TestSource<Inner, String>("o", log: log)
        let a = TestSource<Int, String>("a", log: log)
        let b = TestSource<Int, String>("b", log: log)
        _ = log.start(outer.signal |> throttled)
        outer.putNext(a.signal)
        outer.putNext(b.signal)
        a.putError("e")
        #expect(log.events == ["o.subscribe#1", "a.subscribe#1", "error e", "a.dispose#1", "o.dispose#1"])
        #expect(b.subscribeCount == 0)
    }

    @Test func mapToThrottledCallsTheTransformForEveryValue() {
        let log = EventLog()
        let outer = TestSource<Int, String>("o", log: log)
        let sources = (0..<3).map { index in TestSource<Int, String>("s\(index)", log: log) }
        let handle = log.start(
            outer.signal
                |> mapToThrottled { (value: Int) -> Signal<Int, String> in
                    log.append("f \(value)")
                    return sources[value].signal
                })
        outer.putNext(0)
        outer.putNext(1)
        outer.putNext(2)
        sources[0].putCompletion()
        #expect(log.take() == ["o.subscribe#1", "f 0", "s0.subscribe#1", "f 1", "f 2", "s2.subscribe#1", "s0.dispose#1"])
        #expect(sources[1].subscribeCount == 0)
        handle.dispose()
        #expect(log.take() == ["s2.dispose#1", "o.dispose#1"])
    }

    // MARK: - Lifetimes

    @Test func disposalReleasesTheWaitingInners() {
        let waitingSource = WeakBox<TestSource<Int, String>>(nil)
        let handle: any Disposable
        do {
            let outer = TestSource<Inner, String>("o", log: EventLog())
            let a = TestSource<Int, String>("a", log: EventLog())
            let b = TestSource<Int, String>("b", log: EventLog())
            waitingSource.value = b
            handle = (outer.signal |> queue).start()
            outer.putNext(a.signal)
            outer.putNext(b.signal)
        }
        #expect(waitingSource.value != nil, "b waits in the queue")
        handle.dispose()
        #expect(waitingSource.value == nil)
    }

    @Test func droppingTheHandleOfAnIdleQueueReleasesEverything() {
        let probe = WeakBox<Probe>(nil)
        do {
            let captured = Probe()
            probe.value = captured
            let outer = Signal<Inner, String> { subscriber in
                subscriber.putNext(.never())
                subscriber.putNext(.never())
                return EmptyDisposable
            }
            _ = (outer |> queue).start(next: { _ in captured.touch() })
            _ = (outer |> throttled).start(next: { _ in captured.touch() })
        }
        #expect(probe.value == nil)
    }
}
