// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

// Taking: takeUntil (trigger and predicate), takeUntilReplacement,
// takeWhile, takeLast(n), firstOrDefault, lastOrDefault
// (Sources/SignalKit/Operators/Taking/).

@Suite struct RACTakeUntilTests {
    @Test func aTriggerValueCompletesAndDisposesTriggerThenSource() {
        let log = EventLog()
        let source = TestSource<Int, String>("s", log: log)
        let trigger = TestSource<String, Never>("t", log: log)
        _ = log.start(source.signal |> takeUntil(trigger.signal))
        source.putNext(1)
        source.putNext(2)
        trigger.putNext("stop")
        source.putNext(3)
        #expect(
            log.events == [
                "t.subscribe#1", "s.subscribe#1", "next 1", "next 2", "completed", "t.dispose#1", "s.dispose#1",
            ])
    }

    @Test func aTriggerCompletionAlsoCompletes() {
        let log = EventLog()
        let source = TestSource<Int, String>("s", log: log)
        let trigger = TestSource<Void, NoError>("t", log: log)
        _ = log.start(source.signal |> takeUntil(trigger.signal))
        source.putNext(1)
        trigger.putCompletion()
        #expect(log.events == ["t.subscribe#1", "s.subscribe#1", "next 1", "completed", "t.dispose#1", "s.dispose#1"])
    }

    @Test func aTriggerErrorIsIgnored() {
        let log = EventLog()
        let source = TestSource<Int, String>("s", log: log)
        let trigger = TestSource<Void, Int>("t", log: log)
        _ = log.start(source.signal |> takeUntil(trigger.signal))
        trigger.putError(7)
        source.putNext(1)
        source.putCompletion()
        #expect(
            log.events == [
                "t.subscribe#1", "s.subscribe#1", "t.dispose#1", "next 1", "completed", "s.dispose#1",
            ])
    }

    @Test func theSourcesTerminationIsForwarded() {
        let log = EventLog()
        let source = TestSource<Int, String>("s", log: log)
        let trigger = TestSource<Void, NoError>("t", log: log)
        _ = log.start(source.signal |> takeUntil(trigger.signal))
        source.putError("e")
        #expect(log.events == ["t.subscribe#1", "s.subscribe#1", "error e", "t.dispose#1", "s.dispose#1"])
    }

    @Test func aTriggerFiringWhileSubscribedMeansTheSourceIsNeverSubscribed() {
        let log = EventLog()
        let source = TestSource<Int, String>("s", log: log)
        _ = log.start(source.signal |> takeUntil(Signal<Int, NoError>.single(0)))
        #expect(log.events == ["completed"])
        #expect(source.subscribeCount == 0)
    }

    @Test func disposalDisposesTriggerThenSource() {
        let log = EventLog()
        let source = TestSource<Int, String>("s", log: log)
        let trigger = TestSource<Void, NoError>("t", log: log)
        let handle = log.start(source.signal |> takeUntil(trigger.signal))
        handle.dispose()
        trigger.putNext(())
        #expect(log.events == ["t.subscribe#1", "s.subscribe#1", "t.dispose#1", "s.dispose#1"])
    }

    @Test func predicateFormCompletesWithoutTheMatchingValue() {
        let log = EventLog()
        let source = TestSource<Int, String>("s", log: log)
        _ = log.start(source.signal |> takeUntil { $0 == 3 })
        for value in 1...4 { source.putNext(value) }
        #expect(log.events == ["s.subscribe#1", "next 1", "next 2", "completed", "s.dispose#1"])
    }

    @Test func takeWhileCompletesAtTheFirstFailingValue() {
        let log = EventLog()
        let calls = Shared<[Int]>([])
        _ = log.start(
            Signal<Int, String>.sequence([1, 2, 3, 1])
                |> takeWhile { value in
                    calls.withLock { $0.append(value) }; return value < 3
                })
        #expect(log.events == ["next 1", "next 2", "completed"])
        #expect(calls.value == [1, 2, 3], "the predicate is not called after completing")
    }
}

@Suite struct RACTakeUntilReplacementTests {
    @Test func switchesToTheReplacementAtItsFirstEvent() {
        let log = EventLog()
        let source = TestSource<String, String>("s", log: log)
        let replacement = TestSource<String, String>("r", log: log)
        let handle = log.start(source.signal |> takeUntilReplacement(replacement.signal))
        source.putNext("a")
        source.putNext("b")
        replacement.putNext("x")
        source.putNext("c")
        replacement.putNext("y")
        replacement.putCompletion()
        #expect(
            log.events == [
                "r.subscribe#1", "s.subscribe#1", "next a", "next b", "s.dispose#1", "next x", "next y",
                "completed", "r.dispose#1",
            ])
        handle.dispose()
    }

    @Test func theSourcesCompletionDoesNotEndTheResultButItsErrorDoes() {
        let log = EventLog()
        let source = TestSource<String, String>("s", log: log)
        let replacement = TestSource<String, String>("r", log: log)
        _ = log.start(source.signal |> takeUntilReplacement(replacement.signal))
        source.putCompletion()
        replacement.putNext("x")
        #expect(log.take() == ["r.subscribe#1", "s.subscribe#1", "s.dispose#1", "next x"])
        let source2 = TestSource<String, String>("s2", log: log)
        _ = log.start(source2.signal |> takeUntilReplacement(replacement.signal))
        source2.putError("e")
        #expect(log.take() == ["r.subscribe#2", "s2.subscribe#1", "error e", "r.dispose#2", "s2.dispose#1"])
    }
}

@Suite struct RACTakeLastCountTests {
    @Test func sendsTheLastValuesOnCompletion() {
        let log = EventLog()
        let source = TestSource<Int, String>("s", log: log)
        _ = log.start(source.signal |> takeLast(2))
        for value in 1...5 { source.putNext(value) }
        #expect(log.take() == ["s.subscribe#1"])
        source.putCompletion()
        #expect(log.take() == ["next 4", "next 5", "completed", "s.dispose#1"])
    }

    @Test func fewerValuesThanTheCountAndZero() {
        let log = EventLog()
        _ = log.start(Signal<Int, String>.sequence([1]) |> takeLast(3))
        _ = log.start(Signal<Int, String>.sequence([1, 2]) |> takeLast(0))
        #expect(log.events == ["next 1", "completed", "completed"])
    }

    @Test func anErrorSendsNothing() {
        let log = EventLog()
        let source = TestSource<Int, String>("s", log: log)
        _ = log.start(source.signal |> takeLast(2))
        source.putNext(1)
        source.putError("e")
        #expect(log.events == ["s.subscribe#1", "error e", "s.dispose#1"])
    }

    @Test func theSSKTakeLastIsUnchanged() {
        let log = EventLog()
        _ = log.start(Signal<Int, String>.sequence([1, 2, 3]) |> takeLast)
        #expect(log.events == ["next 3", "completed"])
    }
}

@Suite struct RACFirstLastOrDefaultTests {
    @Test func firstOrDefaultSendsTheFirstValueAndDisposesTheUpstream() {
        let log = EventLog()
        let source = TestSource<Int, String>("s", log: log)
        _ = log.start(source.signal |> firstOrDefault(0))
        source.putNext(7)
        source.putNext(8)
        #expect(log.events == ["s.subscribe#1", "next 7", "completed", "s.dispose#1"])
    }

    @Test func firstOrDefaultSendsTheDefaultWhenEmptyAndForwardsErrors() {
        let log = EventLog()
        _ = log.start(Signal<Int, String>.complete() |> firstOrDefault(0))
        _ = log.start(Signal<Int, String>.fail("e") |> firstOrDefault(0))
        #expect(log.events == ["next 0", "completed", "error e"])
    }

    @Test func lastOrDefaultSendsTheLastValueOrTheDefault() {
        let log = EventLog()
        _ = log.start(Signal<Int, String>.sequence([1, 2]) |> lastOrDefault(0))
        _ = log.start(Signal<Int, String>.complete() |> lastOrDefault(0))
        _ = log.start(Signal<Int, String>.fail("e") |> lastOrDefault(0))
        #expect(log.events == ["next 2", "completed", "next 0", "completed", "error e"])
    }

    @Test func theSSKLastStillSendsAnOptional() {
        let log = EventLog()
        _ = log.start(Signal<Int, String>.complete() |> last)
        #expect(log.events == ["next nil", "completed"])
    }
}
