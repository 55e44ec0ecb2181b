// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

// Flattening: merge, flatten, flattenMap, flatten(maxConcurrent:), concat,
// ignoreValuesThen (Sources/SignalKit/Operators/Flattening/).

@Suite struct RACMergeTests {
    @Test func mergeForwardsValuesAsTheyArriveAndCompletesAfterAllInputs() {
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let b = TestSource<Int, String>("b", log: log)
        let handle = log.start(merge([a.signal, b.signal]))
        a.putNext(1)
        b.putNext(2)
        a.putNext(3)
        a.putCompletion()
        #expect(log.take() == ["a.subscribe#1", "b.subscribe#1", "next 1", "next 2", "next 3", "a.dispose#1"])
        b.putNext(4)
        b.putCompletion()
        #expect(log.take() == ["next 4", "completed", "b.dispose#1"])
        handle.dispose()
        #expect(log.take() == [])
        #expect(a.disposeCount == 1 && b.disposeCount == 1)
    }

    @Test func anEmptyMergeCompletesAtOnce() {
        let log = EventLog()
        _ = log.start(merge([Signal<Int, String>]()))
        #expect(log.events == ["completed"])
    }

    @Test func theFirstErrorFailsTheMergeAndDisposesEveryInputInArrayOrder() {
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let b = TestSource<Int, String>("b", log: log)
        let c = TestSource<Int, String>("c", log: log)
        let handle = log.start(merge([a.signal, b.signal, c.signal]))
        b.putError("e")
        a.putNext(1)
        c.putError("f")
        #expect(
            log.take() == [
                "a.subscribe#1", "b.subscribe#1", "c.subscribe#1",
                "error e", "a.dispose#1", "b.dispose#1", "c.dispose#1",
            ])
        handle.dispose()
        #expect(log.take() == [])
    }

    @Test func aSynchronousErrorStopsTheRemainingInputsFromBeingSubscribed() {
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log) { $0.putError("e") }
        let b = TestSource<Int, String>("b", log: log)
        _ = log.start(merge([a.signal, b.signal]))
        #expect(log.events == ["a.subscribe#1", "error e", "a.dispose#1"])
        #expect(b.subscribeCount == 0)
    }

    @Test func disposalDisposesTheLiveInputsInArrayOrder() {
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let b = TestSource<Int, String>("b", log: log)
        let c = TestSource<Int, String>("c", log: log)
        let handle = log.start(merge([a.signal, b.signal, c.signal]))
        b.putCompletion()
        log.take()
        handle.dispose()
        handle.dispose()
        a.putNext(1)
        #expect(log.take() == ["a.dispose#1", "c.dispose#1"])
        #expect(a.disposeCount == 1 && b.disposeCount == 1 && c.disposeCount == 1)
    }

    @Test func synchronousInputsAreMergedInSubscriptionOrder() {
        let log = EventLog()
        _ = log.start(merge([Signal<Int, String>.sequence([1, 2]), .sequence([3]), .single(4)]))
        #expect(log.events == ["next 1", "next 2", "next 3", "next 4", "completed"])
    }

    @Test func pairwiseMergeIsTheArrayForm() {
        let log = EventLog()
        let a = TestSource<String, String>("a", log: log)
        let b = TestSource<String, String>("b", log: log)
        _ = log.start(a.signal |> merge(b.signal))
        a.putNext("x")
        b.putNext("y")
        b.putCompletion()
        a.putCompletion()
        #expect(
            log.events == [
                "a.subscribe#1", "b.subscribe#1", "next x", "next y", "b.dispose#1", "completed", "a.dispose#1",
            ])
    }

    @Test func mergeOfASignalOfSignalsIsFlatten() {
        let log = EventLog()
        let outer = TestSource<Signal<Int, String>, String>("o", log: log)
        _ = log.start(outer.signal |> merge)
        outer.putNext(.single(1))
        outer.putNext(.single(2))
        outer.putCompletion()
        #expect(log.events == ["o.subscribe#1", "next 1", "next 2", "completed", "o.dispose#1"])
    }

    @Test func aValueSentReentrantlyWhileTheDownstreamIsBusyIsDeliveredRightAfter() {
        // The downstream's callback for a's value makes b send; b's value
        // waits for that callback to return (no nested delivery).
        let log = EventLog()
        let b = TestSource<String, String>("b", log: log)
        let a = TestSource<String, String>("a", log: log)
        let handle = (merge([a.signal, b.signal])).start(next: { value in
            log.append("begin \(value)")
            if value == "a1" { b.putNext("b1") }
            log.append("end \(value)")
        })
        a.putNext("a1")
        #expect(log.events == ["a.subscribe#1", "b.subscribe#1", "begin a1", "end a1", "begin b1", "end b1"])
        // The callback captures a source that holds the subscription: only
        // disposal (or termination) breaks that cycle.
        handle.dispose()
    }
}

@Suite struct RACFlattenTests {
    typealias Inner = Signal<Int, String>

    @Test func flattenKeepsEveryInnerRunning() {
        let log = EventLog()
        let outer = TestSource<Inner, String>("o", log: log)
        let a = TestSource<Int, String>("a", log: log)
        let b = TestSource<Int, String>("b", log: log)
        let handle = log.start(outer.signal |> flatten)
        outer.putNext(a.signal)
        outer.putNext(b.signal)
        a.putNext(1)
        b.putNext(2)
        a.putNext(3)
        outer.putCompletion()
        #expect(
            log.take() == [
                "o.subscribe#1", "a.subscribe#1", "b.subscribe#1", "next 1", "next 2", "next 3", "o.dispose#1",
            ])
        a.putCompletion()
        #expect(log.take() == ["a.dispose#1"], "b keeps the output open")
        b.putNext(4)
        b.putCompletion()
        #expect(log.take() == ["next 4", "completed", "b.dispose#1"])
        handle.dispose()
        #expect(log.take() == [])
    }

    @Test func completesWhenTheOuterCompletesAfterTheInners() {
        let log = EventLog()
        let outer = TestSource<Inner, String>("o", log: log)
        let a = TestSource<Int, String>("a", log: log)
        _ = log.start(outer.signal |> flatten)
        outer.putNext(a.signal)
        a.putCompletion()
        #expect(log.take() == ["o.subscribe#1", "a.subscribe#1", "a.dispose#1"])
        outer.putCompletion()
        #expect(log.take() == ["completed", "o.dispose#1"])
    }

    @Test func anInnerErrorFailsTheOutputAndDisposesInnersThenOuter() {
        let log = EventLog()
        let outer = TestSource<Inner, String>("o", log: log)
        let a = TestSource<Int, String>("a", log: log)
        let b = TestSource<Int, String>("b", log: log)
        _ = log.start(outer.signal |> flatten)
        outer.putNext(a.signal)
        outer.putNext(b.signal)
        log.take()
        b.putError("e")
        outer.putNext(.single(9))
        a.putNext(1)
        #expect(log.take() == ["error e", "a.dispose#1", "b.dispose#1", "o.dispose#1"])
    }

    @Test func anOuterErrorFailsTheOutput() {
        let log = EventLog()
        let outer = TestSource<Inner, String>("o", log: log)
        let a = TestSource<Int, String>("a", log: log)
        _ = log.start(outer.signal |> flatten)
        outer.putNext(a.signal)
        outer.putError("e")
        #expect(log.events == ["o.subscribe#1", "a.subscribe#1", "error e", "a.dispose#1", "o.dispose#1"])
    }

    @Test func disposalDisposesInnersInSubscriptionOrderThenTheOuter() {
        let log = EventLog()
        let outer = TestSource<Inner, String>("o", log: log)
        let a = TestSource<Int, String>("a", log: log)
        let b = TestSource<Int, String>("b", log: log)
        let c = TestSource<Int, String>("c", log: log)
        let handle = log.start(outer.signal |> flatten)
        outer.putNext(a.signal)
        outer.putNext(b.signal)
        outer.putNext(c.signal)
        b.putCompletion()
        log.take()
        handle.dispose()
        #expect(log.take() == ["a.dispose#1", "c.dispose#1", "o.dispose#1"])
        #expect(a.disposeCount == 1 && b.disposeCount == 1 && c.disposeCount == 1 && outer.disposeCount == 1)
    }

    @Test func flattenMapMergesTheMappedSignals() {
        // RAC's flattenMap merges; SwiftSignalKit's mapToSignal would have
        // disposed a when b arrived.
        let log = EventLog()
        let outer = TestSource<String, String>("o", log: log)
        let inners = ["a": TestSource<Int, String>("a", log: log), "b": TestSource<Int, String>("b", log: log)]
        _ = log.start(outer.signal |> flattenMap { inners[$0]!.signal })
        outer.putNext("a")
        outer.putNext("b")
        inners["a"]!.putNext(1)
        inners["b"]!.putNext(2)
        #expect(log.events == ["o.subscribe#1", "a.subscribe#1", "b.subscribe#1", "next 1", "next 2"])
    }

    @Test func flattenMapOverSynchronousSignalsKeepsOrder() {
        // Seed 002: "Contains: 1 1 2 2 3 3 …" and "1_ 3_ 5_ 7_ 9_".
        let numbers = Signal<String, NoError>.sequence("1 2 3 4 5 6 7 8 9".split(separator: " ").map(String.init))
        let log = EventLog()
        _ = log.start(numbers |> flattenMap { Signal<String, NoError>.sequence([$0, $0]) })
        #expect(log.take() == "1 1 2 2 3 3 4 4 5 5 6 6 7 7 8 8 9 9".split(separator: " ").map { "next \($0)" } + ["completed"])
        _ = log.start(
            numbers
                |> flattenMap { number -> Signal<String, NoError> in
                    Int(number)! % 2 == 0 ? .complete() : .single(number + "_")
                })
        #expect(log.take() == ["next 1_", "next 3_", "next 5_", "next 7_", "next 9_", "completed"])
    }

    @Test func maxConcurrentOneRunsInnersOneAfterAnother() {
        let log = EventLog()
        let outer = TestSource<Inner, String>("o", log: log)
        let a = TestSource<Int, String>("a", log: log)
        let b = TestSource<Int, String>("b", log: log)
        let handle = log.start(outer.signal |> flatten(maxConcurrent: 1))
        outer.putNext(a.signal)
        outer.putNext(b.signal)
        outer.putCompletion()
        #expect(log.take() == ["o.subscribe#1", "a.subscribe#1", "o.dispose#1"])
        a.putNext(1)
        a.putCompletion()
        #expect(
            log.take() == ["next 1", "b.subscribe#1", "a.dispose#1"],
            "the next inner is subscribed before the old one is disposed")
        b.putNext(2)
        b.putCompletion()
        #expect(log.take() == ["next 2", "completed", "b.dispose#1"])
        handle.dispose()
        #expect(log.take() == [])
    }

    @Test func maxConcurrentTwoStartsTheFirstWaitingInnerWhenOneCompletes() {
        let log = EventLog()
        let outer = TestSource<Inner, String>("o", log: log)
        let sources = (0..<4).map { TestSource<Int, String>("i\($0)", log: log) }
        let handle = log.start(outer.signal |> flatten(maxConcurrent: 2))
        for source in sources {
            outer.putNext(source.signal)
        }
        #expect(log.take() == ["o.subscribe#1", "i0.subscribe#1", "i1.subscribe#1"])
        sources[1].putCompletion()
        #expect(log.take() == ["i2.subscribe#1", "i1.dispose#1"])
        sources[0].putError("e")
        #expect(log.take() == ["error e", "i0.dispose#1", "i2.dispose#1", "o.dispose#1"])
        #expect(sources[3].subscribeCount == 0, "a waiting inner is never subscribed after an error")
        handle.dispose()
        #expect(log.take() == [])
    }

    @Test func maxConcurrentZeroMeansNoLimit() {
        let log = EventLog()
        let outer = TestSource<Inner, String>("o", log: log)
        let sources = (0..<3).map { TestSource<Int, String>("i\($0)", log: log) }
        _ = log.start(outer.signal |> flatten(maxConcurrent: 0))
        for source in sources {
            outer.putNext(source.signal)
        }
        #expect(log.events == ["o.subscribe#1", "i0.subscribe#1", "i1.subscribe#1", "i2.subscribe#1"])
    }

    @Test func flattenMapWithMaxConcurrentCallsTheTransformEagerly() {
        let log = EventLog()
        let outer = TestSource<Int, String>("o", log: log)
        let a = TestSource<Int, String>("a", log: log)
        _ = log.start(
            outer.signal
                |> flattenMap(maxConcurrent: 1) { value -> Signal<Int, String> in
                    log.append("f(\(value))")
                    return value == 1 ? a.signal : .single(value * 10)
                })
        outer.putNext(1)
        outer.putNext(2)
        #expect(log.take() == ["o.subscribe#1", "f(1)", "a.subscribe#1", "f(2)"])
        a.putCompletion()
        #expect(log.take() == ["next 20", "a.dispose#1"])
    }

    @Test func waitingInnersAreReleasedUnsubscribedOnDisposal() {
        let log = EventLog()
        let outer = TestSource<Inner, String>("o", log: log)
        let a = TestSource<Int, String>("a", log: log)
        weak var weakWaiting: Signal<Int, String>?
        let handle: any Disposable
        do {
            let waiting = Signal<Int, String>.single(1)
            weakWaiting = waiting
            handle = log.start(outer.signal |> flatten(maxConcurrent: 1))
            outer.putNext(a.signal)
            outer.putNext(waiting)
        }
        #expect(weakWaiting != nil)
        handle.dispose()
        #expect(weakWaiting == nil)
        #expect(log.events == ["o.subscribe#1", "a.subscribe#1", "a.dispose#1", "o.dispose#1"])
    }

    @Test func manySynchronousInnersRunInConstantStack() {
        // Every inner completes while being subscribed: with
        // maxConcurrent 1, each completion admits the next waiting inner,
        // which the running loop subscribes (a recursive scheme would nest
        // one subscription per inner).
        let iterations = StackSafety.iterations
        let (count, completed) = StackSafety.run {
            let outer = TestSource<Inner, String>("o", log: EventLog())
            let first = TestSource<Int, String>("first", log: EventLog())
            let inner = Signal<Int, String>.single(1)
            let count = Shared(0)
            let completed = Shared(false)
            _ = (outer.signal |> flatten(maxConcurrent: 1)).start(
                next: { value in count.withLock { $0 += value } },
                completed: { completed.value = true }
            )
            outer.putNext(first.signal)
            for _ in 0..<iterations {
                outer.putNext(inner)
            }
            outer.putCompletion()
            first.putCompletion()
            return (count.value, completed.value)
        }
        #expect(count == iterations)
        #expect(completed)
    }
}

@Suite struct RACConcatTests {
    @Test func pairwiseConcatIsThen() {
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let b = TestSource<Int, String>("b", log: log)
        _ = log.start(a.signal |> concat(b.signal))
        a.putNext(1)
        a.putCompletion()
        b.putNext(2)
        b.putCompletion()
        #expect(
            log.events == [
                "a.subscribe#1", "next 1", "b.subscribe#1", "a.dispose#1", "next 2", "completed", "b.dispose#1",
            ])
    }

    @Test func arrayConcatRunsTheSignalsInOrder() {
        // Seed 002: letters concat numbers → A…I 1…9.
        let letters = Signal<String, NoError>.sequence("A B C D E F G H I".split(separator: " ").map(String.init))
        let numbers = Signal<String, NoError>.sequence("1 2 3 4 5 6 7 8 9".split(separator: " ").map(String.init))
        let log = EventLog()
        _ = log.start(concat([letters, numbers]))
        #expect(log.events == "A B C D E F G H I 1 2 3 4 5 6 7 8 9".split(separator: " ").map { "next \($0)" } + ["completed"])
        _ = log.start(letters |> concat(numbers))
        #expect(log.events.count == 2 * 19)
    }

    @Test func emptyArrayConcatCompletes() {
        let log = EventLog()
        _ = log.start(concat([Signal<Int, String>]()))
        #expect(log.events == ["completed"])
    }

    @Test func anErrorStopsTheConcatenation() {
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let b = TestSource<Int, String>("b", log: log)
        _ = log.start(concat([a.signal, b.signal]))
        a.putError("e")
        #expect(log.events == ["a.subscribe#1", "error e", "a.dispose#1"])
        #expect(b.subscribeCount == 0)
    }

    @Test func concatOfASignalOfSignalsIsQueue() {
        let log = EventLog()
        let outer = TestSource<Signal<Int, String>, String>("o", log: log)
        let a = TestSource<Int, String>("a", log: log)
        let b = TestSource<Int, String>("b", log: log)
        _ = log.start(outer.signal |> concat)
        outer.putNext(a.signal)
        outer.putNext(b.signal)
        a.putNext(1)
        a.putCompletion()
        #expect(log.events == ["o.subscribe#1", "a.subscribe#1", "next 1", "b.subscribe#1", "a.dispose#1"])
    }

    @Test func aLongArrayConcatRunsInConstantStack() {
        let count = StackSafety.iterations
        let (sum, completed) = StackSafety.run {
            let signals = Array(repeating: Signal<Int, NoError>.single(1), count: count)
            let sum = Shared(0)
            let completed = Shared(false)
            _ = concat(signals).start(next: { value in sum.withLock { $0 += value } }, completed: { completed.value = true })
            return (sum.value, completed.value)
        }
        #expect(sum == count && completed)
    }
}

@Suite struct RACIgnoreValuesThenTests {
    @Test func dropsTheFirstSignalsValuesThenForwardsTheNextOnes() {
        // Seed 002 (RAC's then:): the side effects of letters run, the new
        // signal only contains the numbers.
        let log = EventLog()
        let letters = Signal<String, NoError>.sequence(["A", "B", "C"])
        let numbers = Signal<String, NoError>.sequence(["1", "2", "3"])
        let sequenced =
            letters
            |> doNext { log.append("side effect \($0)") }
            |> ignoreValuesThen { numbers }
        _ = log.start(sequenced)
        #expect(
            log.events == [
                "side effect A", "side effect B", "side effect C", "next 1", "next 2", "next 3", "completed",
            ])
    }

    @Test func theFactoryRunsAtCompletionAndNotOnError() {
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let b = TestSource<String, String>("b", log: log)
        _ = log.start(
            a.signal
                |> ignoreValuesThen { () -> Signal<String, String> in
                    log.append("factory")
                    return b.signal
                })
        a.putNext(1)
        a.putCompletion()
        b.putNext("x")
        #expect(log.take() == ["a.subscribe#1", "factory", "b.subscribe#1", "a.dispose#1", "next x"])
        let c = TestSource<Int, String>("c", log: log)
        _ = log.start(
            c.signal
                |> ignoreValuesThen { () -> Signal<String, String> in
                    log.append("factory")
                    return b.signal
                })
        c.putError("e")
        #expect(log.take() == ["c.subscribe#1", "error e", "c.dispose#1"])
    }

    @Test func sswkThenKeepsTheFirstValuesUnlikeRACThen() {
        // SwiftSignalKit's then(_:) is RAC's concat: (values kept).
        let log = EventLog()
        _ = log.start(Signal<Int, NoError>.single(1) |> then(.single(2)))
        _ = log.start(Signal<Int, NoError>.single(1) |> ignoreValuesThen { .single(2) })
        #expect(log.events == ["next 1", "next 2", "completed", "next 2", "completed"])
    }
}
