// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

// Combining: zip (arities, array, zipWith) and sample
// (Sources/SignalKit/Operators/Combining/Signal+Zip.swift,
// GENERATED-Signal+Zip+Arities.swift and Signal+Sample.swift).

@Suite struct RACZipTests {
    @Test func pairsTheNthValuesOfEachInput() {
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let b = TestSource<String, String>("b", log: log)
        let handle = log.start(zip(a.signal, b.signal))
        a.putNext(1)
        a.putNext(2)
        b.putNext("x")
        a.putNext(3)
        b.putNext("y")
        #expect(log.take() == ["a.subscribe#1", "b.subscribe#1", "next (1, \"x\")", "next (2, \"y\")"])
        handle.dispose()
        #expect(log.take() == ["a.dispose#1", "b.dispose#1"])
    }

    @Test func completesWhenACompletedInputHasNoUnpairedValueLeft() {
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let b = TestSource<Int, String>("b", log: log)
        _ = log.start(zip(a.signal, b.signal))
        a.putNext(1)
        a.putNext(2)
        a.putCompletion()
        #expect(log.take() == ["a.subscribe#1", "b.subscribe#1", "a.dispose#1"], "a still has unpaired values")
        b.putNext(10)
        #expect(log.take() == ["next (1, 10)"])
        b.putNext(20)
        #expect(log.take() == ["next (2, 20)", "completed", "b.dispose#1"])
    }

    @Test func completesAtOnceWhenAnInputCompletesWithNothingBuffered() {
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let b = TestSource<Int, String>("b", log: log)
        _ = log.start(zip(a.signal, b.signal))
        b.putNext(1)
        a.putCompletion()
        #expect(log.events == ["a.subscribe#1", "b.subscribe#1", "completed", "a.dispose#1", "b.dispose#1"])
    }

    @Test func theFirstErrorFailsTheZip() {
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let b = TestSource<Int, String>("b", log: log)
        _ = log.start(zip(a.signal, b.signal))
        a.putNext(1)
        b.putError("e")
        a.putNext(2)
        #expect(log.events == ["a.subscribe#1", "b.subscribe#1", "error e", "a.dispose#1", "b.dispose#1"])
    }

    @Test func threeInputsAndTheLargestArity() {
        let log = EventLog()
        _ = log.start(zip(Signal<Int, String>.sequence([1, 2]), .sequence(["a", "b", "c"]), .sequence([true])))
        #expect(log.take() == ["next (1, \"a\", true)", "completed"])
        let s = Signal<Int, NoError>.sequence([1, 2])
        let zipped = zip(s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s)
        let count = Shared(0)
        _ = zipped.start(next: { tuple in
            #expect(tuple.0 == tuple.25)
            count.withLock { $0 += 1 }
        })
        #expect(count.value == 2)
    }

    @Test func arrayZip() {
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let b = TestSource<Int, String>("b", log: log)
        let c = TestSource<Int, String>("c", log: log)
        _ = log.start(zip([a.signal, b.signal, c.signal]))
        a.putNext(1)
        b.putNext(2)
        c.putNext(3)
        c.putNext(4)
        c.putCompletion()
        a.putNext(5)
        b.putNext(6)
        #expect(
            log.events == [
                "a.subscribe#1", "b.subscribe#1", "c.subscribe#1", "next [1, 2, 3]", "c.dispose#1",
                "next [5, 6, 4]", "completed", "a.dispose#1", "b.dispose#1",
            ])
    }

    @Test func anEmptyArrayZipCompletesAtOnce() {
        let log = EventLog()
        _ = log.start(zip([Signal<Int, String>]()))
        #expect(log.events == ["completed"])
    }

    @Test func zipWithIsThePairForm() {
        let log = EventLog()
        _ = log.start(Signal<Int, NoError>.sequence([1, 2, 3]) |> zipWith(Signal<String, NoError>.sequence(["a", "b"])))
        #expect(log.events == ["next (1, \"a\")", "next (2, \"b\")", "completed"])
    }

    @Test func synchronousInputsArePairedAsTheyArrive() {
        let log = EventLog()
        _ = log.start(zip(Signal<Int, String>.sequence([1, 2, 3]), .sequence([4, 5, 6])) |> map { $0 + $1 })
        #expect(log.events == ["next 5", "next 7", "next 9", "completed"])
    }

    @Test func aTupleFormedDuringADownstreamCallbackIsDeliveredAfterIt() {
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let b = TestSource<Int, String>("b", log: log)
        a.putNext(0)  // no subscriber yet
        let handle = zip(a.signal, b.signal).start(next: { pair in
            log.append("begin \(pair)")
            if pair.0 == 1 {
                a.putNext(2)
                b.putNext(20)
            }
            log.append("end \(pair)")
        })
        a.putNext(1)
        b.putNext(10)
        #expect(
            log.events == [
                "a.subscribe#1", "b.subscribe#1", "begin (1, 10)", "end (1, 10)", "begin (2, 20)", "end (2, 20)",
            ])
        // The callback captures the sources, which hold the subscription:
        // only disposal (or termination) breaks that cycle.
        handle.dispose()
    }

    @Test func bufferedValuesAreReleasedAtTermination() {
        final class Box: @unchecked Sendable {}
        weak var weakBox: Box?
        let a = TestSource<Box, String>("a", log: EventLog())
        let b = TestSource<Box, String>("b", log: EventLog())
        let handle = zip(a.signal, b.signal).start()
        do {
            let box = Box()
            weakBox = box
            a.putNext(box)
        }
        #expect(weakBox != nil)
        b.putError("e")
        #expect(weakBox == nil)
        handle.dispose()
    }
}

@Suite struct RACSampleTests {
    @Test func sendsTheLatestValueAtEachTick() {
        let log = EventLog()
        let source = TestSource<String, String>("s", log: log)
        let sampler = TestSource<Void, String>("t", log: log)
        let handle = log.start(source.signal |> sample(sampler.signal))
        sampler.putNext(())
        source.putNext("a")
        sampler.putNext(())
        sampler.putNext(())
        source.putNext("b")
        source.putNext("c")
        sampler.putNext(())
        #expect(log.take() == ["s.subscribe#1", "t.subscribe#1", "next a", "next a", "next c"])
        handle.dispose()
        #expect(log.take() == ["s.dispose#1", "t.dispose#1"])
    }

    @Test func completesWhenEitherCompletes() {
        let log = EventLog()
        let source = TestSource<String, String>("s", log: log)
        let sampler = TestSource<Void, String>("t", log: log)
        _ = log.start(source.signal |> sample(sampler.signal))
        source.putNext("a")
        source.putCompletion()
        #expect(log.take() == ["s.subscribe#1", "t.subscribe#1", "completed", "s.dispose#1", "t.dispose#1"])
        let source2 = TestSource<String, String>("s2", log: log)
        let sampler2 = TestSource<Void, String>("t2", log: log)
        _ = log.start(source2.signal |> sample(sampler2.signal))
        sampler2.putCompletion()
        #expect(log.take() == ["s2.subscribe#1", "t2.subscribe#1", "completed", "s2.dispose#1", "t2.dispose#1"])
    }

    @Test func eitherErrorFails() {
        let log = EventLog()
        let source = TestSource<String, String>("s", log: log)
        let sampler = TestSource<Void, String>("t", log: log)
        _ = log.start(source.signal |> sample(sampler.signal))
        sampler.putError("e")
        source.putNext("a")
        #expect(log.events == ["s.subscribe#1", "t.subscribe#1", "error e", "s.dispose#1", "t.dispose#1"])
    }
}
