// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

@Suite struct CompactMapTests {
    @Test func sendsTheNonNilResultsAndForwardsTheTermination() {
        let log = EventLog()
        let source = TestSource<String, String>("a", log: log)
        _ = log.start(source.signal |> compactMap { Int($0) })
        source.putNext("1")
        source.putNext("x")
        source.putNext("3")
        source.putError("e")
        #expect(log.events == ["a.subscribe#1", "next 1", "next 3", "error e", "a.dispose#1"])
    }

    @Test func fusesWithMapAndFilterAndKeepsTheirOrder() {
        let log = EventLog()
        let source = TestSource<Int, NoError>("a", log: log)
        let calls = EventLog()
        let chained =
            source.signal
            |> map { value -> Int in
                calls.append("map \(value)"); return value * 10
            }
            |> compactMap { value -> Int? in
                calls.append("compactMap \(value)"); return value == 20 ? nil : value
            }
            |> filter { value in
                calls.append("filter \(value)"); return value > 0
            }
        _ = log.start(chained)
        source.putNext(1)
        source.putNext(2)
        source.putCompletion()
        #expect(calls.events == ["map 1", "compactMap 10", "filter 10", "map 2", "compactMap 20"])
        #expect(log.events == ["a.subscribe#1", "next 10", "completed", "a.dispose#1"])
    }
}
