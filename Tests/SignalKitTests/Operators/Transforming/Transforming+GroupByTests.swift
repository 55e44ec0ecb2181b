// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

// Transforming: groupBy
// (Sources/SignalKit/Operators/Transforming/Signal+GroupBy.swift).

@Suite struct RACGroupByTests {
    @Test func groupsAreSentBeforeTheirFirstValueAndTerminatedBeforeTheResult() {
        let log = EventLog()
        let source = TestSource<String, String>("s", log: log)
        let handles = Shared<[any Disposable]>([])
        _ = (source.signal |> groupBy({ String($0.first!) }, transform: { String($0.dropFirst()) })).start(
            next: { group in
                log.append("group \(group.key)")
                let handle = log.start(group.signal, prefix: "\(group.key): ")
                handles.withLock { $0.append(handle) }
            },
            error: { log.append("error \($0)") },
            completed: { log.append("completed") }
        )
        source.putNext("a1")
        source.putNext("b1")
        source.putNext("a2")
        source.putCompletion()
        #expect(
            log.events == [
                "s.subscribe#1", "group a", "a: next 1", "group b", "b: next 1", "a: next 2",
                "a: completed", "b: completed", "completed", "s.dispose#1",
            ])
        handles.value.forEach { $0.dispose() }
    }

    @Test func anErrorReachesEveryGroupThenTheResult() {
        let log = EventLog()
        let handles = Shared<[any Disposable]>([])
        _ = (Signal<Int, String>.sequence([1, 2, 3]) |> then(.fail("e")) |> groupBy { $0 % 2 }).start(
            next: { group in
                let handle = log.start(group.signal |> map { $0 * 10 }, prefix: "\(group.key): ")
                handles.withLock { $0.append(handle) }
            },
            error: { log.append("error \($0)") }
        )
        #expect(log.events == ["1: next 10", "0: next 20", "1: next 30", "1: error e", "0: error e", "error e"])
        handles.value.forEach { $0.dispose() }
    }

    @Test func groupByFeedsFlattenMap() {
        let log = EventLog()
        let words = Signal<String, NoError>.sequence(["apple", "avocado", "banana", "blueberry", "cherry"])
        _ = log.start(
            words |> groupBy { $0.first! }
                |> flattenMap { group in group.signal |> collect |> map { "\(group.key)=\($0.count)" } })
        #expect(log.events == ["next a=2", "next b=2", "next c=1", "completed"])
    }
}
