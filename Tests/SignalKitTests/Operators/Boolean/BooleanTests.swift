// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

// Boolean: any, any(where:), all(where:), not, and, or
// (Sources/SignalKit/Operators/Boolean/Signal+Boolean.swift).

@Suite struct RACBooleanTests {
    @Test func anyIsTrueAtTheFirstValueAndDisposesTheSource() {
        let log = EventLog()
        let source = TestSource<Int, String>("s", log: log)
        _ = log.start(source.signal |> any)
        source.putNext(1)
        source.putNext(2)
        #expect(log.events == ["s.subscribe#1", "next true", "completed", "s.dispose#1"])
    }

    @Test func anyIsFalseOnCompletionOrError() {
        let log = EventLog()
        _ = log.start(Signal<Int, String>.complete() |> any)
        _ = log.start(Signal<Int, String>.fail("e") |> any)
        #expect(log.events == ["next false", "completed", "next false", "completed"])
    }

    @Test func anyWhereWaitsForAPassingValue() {
        let log = EventLog()
        let source = TestSource<Int, String>("s", log: log)
        _ = log.start(source.signal |> any(where: { $0 > 1 }))
        source.putNext(1)
        #expect(log.take() == ["s.subscribe#1"])
        source.putNext(2)
        #expect(log.take() == ["next true", "completed", "s.dispose#1"])
        _ = log.start(Signal<Int, String>.sequence([1]) |> then(.fail("e")) |> any(where: { $0 > 1 }))
        #expect(log.take() == ["next false", "completed"], "errors are swallowed")
    }

    @Test func allWhere() {
        let log = EventLog()
        _ = log.start(Signal<Int, String>.sequence([1, 2, 3]) |> all(where: { $0 > 0 }))
        _ = log.start(Signal<Int, String>.sequence([1, 2, 3]) |> all(where: { $0 < 2 }))
        _ = log.start(Signal<Int, String>.complete() |> all(where: { $0 < 2 }))
        _ = log.start(Signal<Int, String>.sequence([1]) |> then(.fail("e")) |> all(where: { $0 > 0 }))
        #expect(
            log.events == [
                "next true", "completed", "next false", "completed", "next true", "completed", "next false", "completed",
            ])
    }

    @Test func allStopsAtTheFirstFailingValue() {
        let log = EventLog()
        let source = TestSource<Int, String>("s", log: log)
        let calls = Shared<[Int]>([])
        _ = log.start(
            source.signal
                |> all(where: { value in
                    calls.withLock { $0.append(value) }; return value < 2
                }))
        source.putNext(1)
        source.putNext(5)
        source.putNext(0)
        #expect(log.events == ["s.subscribe#1", "next false", "completed", "s.dispose#1"])
        #expect(calls.value == [1, 5])
    }

    @Test func notAndOr() {
        let log = EventLog()
        _ = log.start(Signal<Bool, String>.sequence([true, false]) |> not)
        _ = log.start(Signal<[Bool], String>.sequence([[true, true], [true, false], []]) |> and)
        _ = log.start(Signal<[Bool], String>.sequence([[false, false], [false, true], []]) |> or)
        _ = log.start(Signal<(Bool, Bool), String>.sequence([(true, true), (true, false)]) |> and)
        _ = log.start(Signal<(Bool, Bool), String>.sequence([(false, false), (false, true)]) |> or)
        #expect(
            log.events == [
                "next false", "next true", "completed",
                "next true", "next false", "next true", "completed",
                "next false", "next true", "next false", "completed",
                "next true", "next false", "completed",
                "next false", "next true", "completed",
            ])
    }

    @Test func andOverCombineLatest() {
        let log = EventLog()
        let name = ValuePipe<Bool>()
        let password = ValuePipe<Bool>()
        let handle = log.start(combineLatest([name.signal(), password.signal()]) |> and)
        name.putNext(true)
        password.putNext(false)
        password.putNext(true)
        #expect(log.events == ["next false", "next true"])
        handle.dispose()
    }
}
