// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

/// The method forms (`signal.map { … }`) are the `|>` operators: the same
/// events, in the same order, for the same input.
@Suite struct MethodChainingTests {
    private func run<T>(_ signal: Signal<T, String>, _ source: TestSource<Int, String>, log: EventLog) -> [String] {
        _ = log.start(signal)
        for value in [1, 2, 2, 3, 4] { source.putNext(value) }
        source.putCompletion()
        return log.take()
    }

    @Test func aChainOfMethodsEqualsTheSameChainOfOperators() {
        let methodsLog = EventLog()
        let methodsSource = TestSource<Int, String>("a", log: methodsLog)
        let methods = methodsSource.signal
            .map { $0 * 10 }
            .filter { $0 != 40 }
            .distinctUntilChanged()
            .compactMap { $0 == 30 ? nil : "v\($0)" }
            .startWith("start")
            .skip(1)
            .take(3)
            .mapError { "mapped \($0)" }
        let operatorsLog = EventLog()
        let operatorsSource = TestSource<Int, String>("a", log: operatorsLog)
        let operators =
            operatorsSource.signal
            |> map { $0 * 10 }
            |> filter { $0 != 40 }
            |> distinctUntilChanged
            |> compactMap { $0 == 30 ? nil : "v\($0)" }
            |> startWith("start")
            |> skip(1)
            |> take(3)
            |> mapError { "mapped \($0)" }
        let expected = run(operators, operatorsSource, log: operatorsLog)
        #expect(expected == ["a.subscribe#1", "next v10", "next v20", "completed", "a.dispose#1"])
        #expect(run(methods, methodsSource, log: methodsLog) == expected)
    }

    @Test func flatteningAggregatingAndSideEffectMethods() {
        let log = EventLog()
        let chained = Signal<Int, NoError>.sequence([1, 2, 3])
            .mapToSignal { Signal<Int, NoError>.single($0 * 2) }
            .flattenMap { Signal<Int, NoError>.single($0 + 1) }
            .beforeNext { log.append("before \($0)") }
            .scan(0) { $0 + $1 }
            .then(.single(100))
            .merge(with: .single(-1))
            .collect()
        _ = log.start(chained)
        #expect(log.events == ["before 3", "before 5", "before 7", "next [3, 8, 15, 100, -1]", "completed"])
    }

    @Test func combiningMethods() {
        let log = EventLog()
        let a = Signal<Int, NoError>.sequence([1, 2])
        let b = Signal<String, NoError>.single("x")
        _ = log.start(a.combineLatest(with: b).map { "\($0.0)\($0.1)" })
        _ = log.start(a.zip(with: b).map { "\($0.0)\($0.1)" })
        #expect(log.events == ["next 2x", "completed", "next 1x", "completed"])
    }
}
