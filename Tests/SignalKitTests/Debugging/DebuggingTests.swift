// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Synchronization
import Testing

// Debugging: names, description chains, named(_:) with #fileID and #line,
// and the logging operators (Sources/SignalKit/Debugging/).
//
// Naming is switched on with `SignalKitDebug.withSignalNaming`, which affects
// the calling thread only, so tests running in parallel are not affected.

/// A sink that keeps the lines.
private final class CapturedLines: Sendable {
    private let storage = SignalKit.Atomic<[String]>(value: [])
    var sink: SignalLogSink { SignalLogSink { [storage] line in storage.modify { $0 + [line] } } }
    var lines: [String] { storage.with { $0 } }
}

@Suite struct SignalNamingTests {
    @Test func descriptionChainOfUnaryOperators() {
        let description = SignalKitDebug.withSignalNaming {
            let username = ValuePromise("", ignoreRepeated: true).get() |> named("username")
            let signal = username |> distinctUntilChanged |> take(3) |> filter { $0 == "joshaber" }
            return signal.description
        }
        #expect(description == "[[[username] -distinctUntilChanged] -take: 3] -filter")
    }

    @Test func combiningOperatorsAndFactories() {
        let (merged, zipped, single, concatenated, flattened) = SignalKitDebug.withSignalNaming {
            let a = Signal<Int, NoError>.never() |> named("a")
            let b = Signal<Int, NoError>.never() |> named("b")
            return (
                (a |> merge(b)).description,
                zip(a, b).description,
                (Signal<Int, NoError>.single(1) |> map { $0 }).description,
                concat([a, b]).description,
                (Signal<Signal<Int, NoError>, NoError>.single(a) |> flatten(maxConcurrent: 2)).description
            )
        }
        #expect(merged == "[a] -merge: b")
        #expect(zipped == "+zip: (a, b)")
        #expect(single == "[+single: 1] -map")
        #expect(concatenated == "+concat: (a, b)")
        #expect(flattened == "[+single: a] -flatten: 2")
    }

    @Test func withNamingOffOperatorsAttachNothing() {
        let named = Signal<Int, NoError>.single(1) |> named("source")
        let mapped = named |> map { $0 + 1 } |> filter { _ in true }
        #expect(mapped.description == "Signal<Int, NoError>")
        #expect(mapped.name == nil)
        #expect(named.description == "source")
    }

    @Test func argumentsAreNotFormattedWhileNamingIsOff() {
        // C20: names are computed only when the debug flag is on.
        final class Counting: CustomStringConvertible, @unchecked Sendable {
            let calls = Synchronization.Atomic<Int>(0)
            var description: String {
                calls.add(1, ordering: .relaxed)
                return "counting"
            }
        }
        let argument = Counting()
        _ = Signal<Counting, NoError>.never() |> startWith(argument)
        #expect(argument.calls.load(ordering: .relaxed) == 0)
        let description = SignalKitDebug.withSignalNaming {
            (Signal<Counting, NoError>.never() |> startWith(argument)).description
        }
        #expect(argument.calls.load(ordering: .relaxed) == 1)
        #expect(description == "[+never] -startWith: counting")
    }

    @Test func namedCapturesFileAndLine() {
        let line = #line + 1
        let signal = Signal<Int, NoError>.single(1) |> named("login")
        #expect(signal.name == "login")
        #expect(signal.nameLocation == SignalSourceLocation(fileID: #fileID, line: line))
        #expect(signal.nameLocation?.fileID == "SignalKitTests/DebuggingTests.swift")
        #expect(signal.debugDescription == "login (SignalKitTests/DebuggingTests.swift:\(line))")
    }

    @Test func aNamedSignalBehavesExactlyAsItsInput() {
        let log = EventLog()
        let source = TestSource<Int, String>("s", log: log)
        let handle = log.start(source.signal |> named("s"))
        source.putNext(1)
        handle.dispose()
        #expect(log.events == ["s.subscribe#1", "next 1", "s.dispose#1"])
    }

    @Test func namingKeepsThenChainsStackSafe() {
        // A named `then` chain still exposes its segments to the next `then`.
        let description = SignalKitDebug.withSignalNaming { () -> String in
            var chain = Signal<Int, NoError>.single(0)
            for index in 1...3 {
                chain = chain |> then(.single(index))
            }
            return chain.description
        }
        #expect(description == "[[[+single: 0] -then: +single: 1] -then: +single: 2] -then: +single: 3")
        let log = EventLog()
        StackSafety.run {
            _ = SignalKitDebug.withSignalNaming { () -> any Disposable in
                var chain = Signal<Int, NoError>.single(0) |> named("start")
                for index in 1...StackSafety.iterations {
                    chain = chain |> then(.single(index))
                }
                return chain.start(completed: { log.append("completed") })
            }
        }
        #expect(log.events == ["completed"])
    }

    @Test func longUnaryChainsDescribeWithoutRecursion() {
        let description = SignalKitDebug.withSignalNaming { () -> Int in
            var signal = Signal<Int, NoError>.never() |> named("root")
            for _ in 0..<10_000 {
                signal = signal |> map { $0 }
            }
            return signal.description.count
        }
        #expect(description == "root".count + 10_000 * "[] -map".count)
    }

    @Test func theScopeIsPerThreadAndNests() {
        let inner = SignalKitDebug.withSignalNaming {
            SignalKitDebug.withSignalNaming { (Signal<Int, NoError>.never() |> skip(1)).description }
        }
        let afterScopes = (Signal<Int, NoError>.never() |> skip(1)).description
        #expect(inner == "[+never] -skip: 1")
        #expect(afterScopes == "Signal<Int, NoError>")
    }
}

@Suite struct SignalLoggingTests {
    @Test func logAllWritesEveryEventWithTheDescription() {
        let captured = CapturedLines()
        let log = EventLog()
        let source = TestSource<Int, String>("s", log: log)
        _ = log.start(source.signal |> named("login") |> logAll(to: captured.sink))
        source.putNext(1)
        source.putError("boom")
        #expect(captured.lines == ["login subscribed", "login next: 1", "login error: boom", "login disposed"])
        #expect(log.events == ["s.subscribe#1", "next 1", "error boom", "s.dispose#1"])
    }

    @Test func logAllOnCompletionAndExplicitDisposal() {
        let captured = CapturedLines()
        _ = (Signal<Int, NoError>.single(7) |> named("x") |> logAll(to: captured.sink)).start()
        let handle = (Signal<Int, NoError>.never() |> named("y") |> logAll(to: captured.sink)).start()
        handle.dispose()
        handle.dispose()
        #expect(captured.lines == ["x subscribed", "x next: 7", "x completed", "x disposed", "y subscribed", "y disposed"])
    }

    @Test func selectiveLogging() {
        let captured = CapturedLines()
        let source = Signal<Int, String>.sequence([1, 2]) |> then(.fail("e")) |> named("n")
        _ = (source |> logNext(to: captured.sink)).start()
        _ = (source |> logError(to: captured.sink)).start()
        _ = (Signal<Int, String>.single(1) |> named("c") |> logCompleted(to: captured.sink)).start()
        _ = (Signal<Int, String>.single(1) |> named("e") |> logEvents([.subscribed, .disposed], to: captured.sink)).start()
        #expect(captured.lines == ["n next: 1", "n next: 2", "n error: e", "c completed", "e subscribed", "e disposed"])
    }

    @Test func withNamingOnTheLinesCarryTheOperatorChain() {
        let captured = CapturedLines()
        let logged = SignalKitDebug.withSignalNaming {
            Signal<Int, NoError>.single(2) |> named("src") |> map { $0 * 10 } |> logNext(to: captured.sink)
        }
        _ = logged.start()
        #expect(captured.lines == ["[src] -map next: 20"])
        #expect(SignalKitDebug.withSignalNaming { logged.description } == "[[src] -map] -logNext")
    }

    @Test func withoutANameTheLinesCarryTheType() {
        let captured = CapturedLines()
        _ = (Signal<Int, NoError>.single(1) |> logNext(to: captured.sink)).start()
        #expect(captured.lines == ["Signal<Int, NoError> next: 1"])
    }

    @Test func nothingIsLoggedUnlessALoggingOperatorIsApplied() {
        let captured = CapturedLines()
        let logged = Signal<Int, NoError>.single(1) |> logAll(to: captured.sink)
        #expect(captured.lines == [], "building the chain logs nothing")
        _ = logged.start()
        #expect(captured.lines.count == 4)
    }
}
