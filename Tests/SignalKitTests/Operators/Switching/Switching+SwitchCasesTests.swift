// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

// Switching: switchCases, ifThenElse
// (Sources/SignalKit/Operators/Switching/Signal+Switching.swift).

@Suite struct RACSwitchCasesTests {
    @Test func switchCasesFollowsTheLatestKey() {
        let log = EventLog()
        let key = TestSource<String, String>("k", log: log)
        let a = TestSource<Int, String>("a", log: log)
        let b = TestSource<Int, String>("b", log: log)
        _ = log.start(switchCases(key.signal, cases: ["a": a.signal, "b": b.signal], default: .fail("no match")))
        key.putNext("a")
        a.putNext(1)
        key.putNext("b")
        a.putNext(9)
        b.putNext(2)
        key.putNext("z")
        #expect(
            log.events == [
                "k.subscribe#1", "a.subscribe#1", "next 1", "b.subscribe#1", "a.dispose#1", "next 2",
                "error no match", "b.dispose#1", "k.dispose#1",
            ])
    }

    @Test func ifThenElseFollowsTheLatestCondition() {
        let log = EventLog()
        let condition = ValuePipe<Bool>()
        let handle = log.start(
            ifThenElse(
                condition.signal(), then: Signal<String, NoError>.single("yes") |> then(.never()),
                else: .single("no") |> then(.never())))
        condition.putNext(true)
        condition.putNext(false)
        condition.putNext(true)
        #expect(log.events == ["next yes", "next no", "next yes"])
        handle.dispose()
    }
}
