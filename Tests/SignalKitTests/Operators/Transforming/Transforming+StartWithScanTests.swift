// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

// Transforming and Aggregating: startWith, scan, aggregate, combinePrevious,
// collect, mapReplace, ignore (Sources/SignalKit/Operators/Transforming/,
// Aggregating/Signal+Scan.swift, Aggregating/Signal+Collect.swift,
// Filtering/Signal+Filtering.swift).

@Suite struct RACTransformTests {
    @Test func startWithSendsTheValueBeforeSubscribingTheSource() {
        let log = EventLog()
        let source = TestSource<Int, String>("s", log: log)
        _ = log.start(source.signal |> startWith(0))
        source.putNext(1)
        source.putCompletion()
        #expect(log.events == ["next 0", "s.subscribe#1", "next 1", "completed", "s.dispose#1"])
    }

    @Test func startWithThenTakeOneStillSubscribesAndDisposesTheSource() {
        let log = EventLog()
        let source = TestSource<Int, String>("s", log: log)
        _ = log.start(source.signal |> startWith(0) |> take(1))
        #expect(log.events == ["next 0", "completed", "s.subscribe#1", "s.dispose#1"])
    }

    @Test func scanSendsEveryIntermediateAccumulator() {
        let log = EventLog()
        let source = TestSource<Int, String>("s", log: log)
        _ = log.start(source.signal |> scan(0, +))
        source.putNext(1)
        source.putNext(2)
        source.putNext(3)
        source.putError("e")
        #expect(log.events == ["s.subscribe#1", "next 1", "next 3", "next 6", "error e", "s.dispose#1"])
    }

    @Test func scanWithIndexAndTypeChange() {
        let log = EventLog()
        _ = log.start(Signal<String, NoError>.sequence(["a", "b"]) |> scan("", reduceWithIndex: { $0 + "\($2)\($1)" }))
        #expect(log.events == ["next 0a", "next 0a1b", "completed"])
    }

    @Test func eachSubscriptionScansFromTheStart() {
        let log = EventLog()
        let scanned = Signal<Int, NoError>.sequence([1, 2]) |> scan(10, +)
        _ = log.start(scanned)
        _ = log.start(scanned)
        #expect(log.events == ["next 11", "next 13", "completed", "next 11", "next 13", "completed"])
    }

    @Test func aggregateSendsTheFoldAtCompletion() {
        let log = EventLog()
        let source = TestSource<Int, String>("s", log: log)
        _ = log.start(source.signal |> aggregate(0, +))
        source.putNext(1)
        source.putNext(2)
        #expect(log.take() == ["s.subscribe#1"])
        source.putCompletion()
        #expect(log.take() == ["next 3", "completed", "s.dispose#1"])
        _ = log.start(Signal<Int, String>.complete() |> aggregate("start", { $0 + "\($1)" }))
        _ = log.start(Signal<Int, String>.fail("e") |> aggregate(0, +))
        #expect(log.take() == ["next start", "completed", "error e"])
    }

    @Test func aggregateWithIndexAndWithAStartFactory() {
        let log = EventLog()
        _ = log.start(Signal<String, NoError>.sequence(["a", "b"]) |> aggregate("", reduceWithIndex: { $0 + "\($2)\($1)" }))
        #expect(log.take() == ["next 0a1b", "completed"])
        final class Accumulator: @unchecked Sendable {
            var values: [Int] = []
        }
        let factoryCalls = Shared(0)
        let folded =
            Signal<Int, NoError>.sequence([1, 2])
            |> aggregate(
                startFactory: { () -> Accumulator in
                    factoryCalls.withLock { $0 += 1 }
                    return Accumulator()
                },
                { accumulator, value in
                    accumulator.values.append(value)
                    return accumulator
                })
            |> map { $0.values }
        _ = log.start(folded)
        _ = log.start(folded)
        #expect(log.take() == ["next [1, 2]", "completed", "next [1, 2]", "completed"])
        #expect(factoryCalls.value == 2, "one accumulator per subscription")
    }

    @Test func combinePreviousPairsEachValueWithItsPredecessor() {
        let log = EventLog()
        _ = log.start(Signal<Int, NoError>.sequence([1, 2, 4]) |> combinePrevious(0) { $1 - $0 })
        #expect(log.events == ["next 1", "next 1", "next 2", "completed"])
    }

    @Test func collectSendsOneArrayAtCompletion() {
        let log = EventLog()
        let source = TestSource<Int, String>("s", log: log)
        _ = log.start(source.signal |> collect)
        source.putNext(1)
        source.putNext(2)
        source.putCompletion()
        _ = log.start(Signal<Int, String>.complete() |> collect)
        _ = log.start(Signal<Int, String>.fail("e") |> collect)
        #expect(log.events == ["s.subscribe#1", "next [1, 2]", "completed", "s.dispose#1", "next []", "completed", "error e"])
    }

    @Test func mapReplaceAndIgnore() {
        let log = EventLog()
        _ = log.start(Signal<Int, NoError>.sequence([1, 2]) |> mapReplace("x"))
        _ = log.start(Signal<String, NoError>.sequence(["a", "b", "a", "c"]) |> ignore("a"))
        _ = log.start(Signal<Int?, NoError>.sequence([1, nil, 2]) |> ignore(nil) |> map { $0! })
        #expect(
            log.events == [
                "next x", "next x", "completed", "next b", "next c", "completed", "next 1", "next 2", "completed",
            ])
    }
}
