// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

// Errors: retry(n), retry(), catchTo, tryMap
// (Sources/SignalKit/Operators/Errors/).

@Suite struct RACRetryTests {
    @Test func retriesUpToTheCountThenForwardsTheError() {
        let log = EventLog()
        let source = TestSource<Int, String>("s", log: log)
        _ = log.start(source.signal |> retry(2))
        source.putNext(1)
        source.putError("e1")
        source.putNext(2)
        source.putError("e2")
        source.putNext(3)
        source.putError("e3")
        #expect(
            log.events == [
                "s.subscribe#1", "next 1", "s.subscribe#2", "s.dispose#1", "next 2", "s.subscribe#3", "s.dispose#2",
                "next 3", "error e3", "s.dispose#3",
            ])
    }

    @Test func completesWhenAnAttemptCompletes() {
        let log = EventLog()
        let source = TestSource<Int, String>("s", log: log)
        _ = log.start(source.signal |> retry(5))
        source.putError("e")
        source.putNext(1)
        source.putCompletion()
        #expect(log.events == ["s.subscribe#1", "s.subscribe#2", "s.dispose#1", "next 1", "completed", "s.dispose#2"])
    }

    @Test func retryZeroAndRetryRetryWithoutLimit() {
        for operatorUnderTest in [retry(0), retry()] as [(Signal<Int, String>) -> Signal<Int, String>] {
            let attempts = Shared(0)
            let source = Signal<Int, String> { subscriber in
                let attempt = attempts.withLock {
                    $0 += 1; return $0
                }
                if attempt < 1000 {
                    subscriber.putError("e")
                } else {
                    subscriber.putNext(attempt)
                    subscriber.putCompletion()
                }
                return EmptyDisposable
            }
            let log = EventLog()
            _ = log.start(source |> operatorUnderTest)
            #expect(log.events == ["next 1000", "completed"])
        }
    }

    @Test func eachSubscriptionHasItsOwnCount() {
        let attempts = Shared(0)
        let source = Signal<Int, String> { subscriber in
            let attempt = attempts.withLock {
                $0 += 1; return $0
            }
            subscriber.putError("e\(attempt)")
            return EmptyDisposable
        }
        let retried = source |> retry(1)
        let log = EventLog()
        _ = log.start(retried)
        _ = log.start(retried)
        #expect(log.events == ["error e2", "error e4"])
    }

    @Test func manySynchronousRetriesRunInConstantStack() {
        let retries = StackSafety.iterations
        let (attempts, events) = StackSafety.run {
            let attempts = Shared(0)
            let source = Signal<Int, String> { subscriber in
                attempts.withLock { $0 += 1 }
                subscriber.putError("e")
                return EmptyDisposable
            }
            let log = EventLog()
            _ = log.start(source |> retry(retries))
            return (attempts.value, log.events)
        }
        #expect(attempts == retries + 1)
        #expect(events == ["error e"])
    }
}

@Suite struct RACCatchToTests {
    @Test func switchesToTheReplacementOnError() {
        let log = EventLog()
        let source = TestSource<Int, String>("s", log: log)
        let replacement = TestSource<Int, Int>("r", log: log)
        _ = log.start(source.signal |> catchTo(replacement.signal))
        source.putNext(1)
        source.putError("e")
        replacement.putNext(2)
        replacement.putError(9)
        #expect(
            log.events == [
                "s.subscribe#1", "next 1", "r.subscribe#1", "s.dispose#1", "next 2", "error 9", "r.dispose#1",
            ])
    }

    @Test func completionDoesNotSubscribeTheReplacement() {
        let log = EventLog()
        let replacement = TestSource<Int, String>("r", log: log)
        _ = log.start(Signal<Int, String>.single(1) |> catchTo(replacement.signal))
        #expect(log.events == ["next 1", "completed"])
        #expect(replacement.subscribeCount == 0)
    }
}

@Suite struct RACTryMapTests {
    struct ParseError: Error, Equatable {
        let text: String
    }

    @Test func typedThrowsFailTheSignalAndStopTheTransform() {
        let log = EventLog()
        let source = TestSource<String, ParseError>("s", log: log)
        let calls = Shared<[String]>([])
        _ = log.start(
            source.signal
                |> tryMap { (text: String) throws(ParseError) -> Int in
                    calls.withLock { $0.append(text) }
                    guard let value = Int(text) else { throw ParseError(text: text) }
                    return value
                })
        source.putNext("1")
        source.putNext("x")
        source.putNext("2")
        #expect(log.events == ["s.subscribe#1", "next 1", "error ParseError(text: \"x\")", "s.dispose#1"])
        #expect(calls.value == ["1", "x"])
    }

    @Test func untypedThrowsAreMapped() {
        struct Other: Error {}
        let log = EventLog()
        _ = log.start(
            Signal<Int, String>.sequence([1, 2, 3])
                |> tryMap(
                    { value in
                        if value == 2 { throw Other() }
                        return value * 10
                    }, mapError: { "mapped \(type(of: $0))" })
        )
        #expect(log.events == ["next 10", "error mapped Other"])
    }

    @Test func upstreamErrorsPassThrough() {
        let log = EventLog()
        _ = log.start(
            Signal<String, ParseError>.fail(ParseError(text: "up")) |> tryMap { (text: String) throws(ParseError) -> Int in 0 })
        #expect(log.events == ["error ParseError(text: \"up\")"])
    }
}
