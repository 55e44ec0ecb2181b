// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

// Filtering: skip, skipWhile, skipUntil
// (Sources/SignalKit/Operators/Filtering/Signal+Filtering.swift).

@Suite struct RACSkipTests {
    @Test func skipDropsTheFirstValues() {
        let log = EventLog()
        _ = log.start(Signal<Int, String>.sequence([1, 2, 3, 4]) |> skip(2))
        _ = log.start(Signal<Int, String>.sequence([1, 2]) |> skip(0))
        _ = log.start(Signal<Int, String>.sequence([1, 2]) |> skip(5))
        #expect(log.events == ["next 3", "next 4", "completed", "next 1", "next 2", "completed", "completed"])
    }

    @Test func skipForwardsErrors() {
        let log = EventLog()
        let source = TestSource<Int, String>("s", log: log)
        _ = log.start(source.signal |> skip(1))
        source.putNext(1)
        source.putError("e")
        #expect(log.events == ["s.subscribe#1", "error e", "s.dispose#1"])
    }

    @Test func eachSubscriptionCountsOnItsOwn() {
        let log = EventLog()
        let skipped = Signal<Int, String>.sequence([1, 2, 3]) |> skip(1)
        _ = log.start(skipped)
        _ = log.start(skipped)
        #expect(log.events == ["next 2", "next 3", "completed", "next 2", "next 3", "completed"])
    }

    @Test func skipWhileAndSkipUntil() {
        let log = EventLog()
        let calls = Shared<[Int]>([])
        _ = log.start(
            Signal<Int, String>.sequence([1, 2, 3, 1])
                |> skipWhile { value in
                    calls.withLock { $0.append(value) }; return value < 3
                })
        #expect(log.take() == ["next 3", "next 1", "completed"])
        #expect(calls.value == [1, 2, 3], "the predicate is not called once values pass")
        _ = log.start(Signal<Int, String>.sequence([1, 2, 3, 1]) |> skipUntil { $0 == 2 })
        #expect(log.take() == ["next 2", "next 3", "next 1", "completed"])
    }
}
