// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

// Flattening and Creating: then, deferred, ignoreValues, debug_measureTimeToFirstEvent (spec
// §2.7, §4.4, §4.8). Long chains (stack safety) are in StackSafetyTests.

@Suite struct MetaThenTests {
    // MARK: - then

    @Test func thenSubscribesTheNextSignalInsideTheCompletionBeforeDisposingTheFirst() {
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let b = TestSource<Int, String>("b", log: log)
        let handle = log.start(a.signal |> then(b.signal))
        a.putNext(1)
        #expect(log.take() == ["a.subscribe#1", "next 1"])
        a.putCompletion()
        #expect(log.take() == ["b.subscribe#1", "a.dispose#1"])
        b.putNext(2)
        b.putCompletion()
        #expect(log.take() == ["next 2", "completed", "b.dispose#1"])
        handle.dispose()
        #expect(log.take() == [])
        #expect(a.disposeCount == 1 && b.disposeCount == 1)
    }

    @Test func theFirstSignalsErrorSkipsTheNext() {
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let b = TestSource<Int, String>("b", log: log)
        _ = log.start(a.signal |> then(b.signal))
        a.putNext(1)
        a.putError("e")
        #expect(log.events == ["a.subscribe#1", "next 1", "error e", "a.dispose#1"])
        #expect(b.subscribeCount == 0)
    }

    @Test func theSpecChain() {
        // Spec §4.8.
        let log = EventLog()
        let chain =
            Signal<Int, String>.single(1)
            |> then(.complete())
            |> then(.single(2))
            |> then(.fail("end"))
            |> then(.single(3))
        _ = log.start(chain)
        #expect(log.events == ["next 1", "next 2", "error end"])
    }

    @Test func theNextSignalIsSubscribedEvenIfTheDownstreamTerminatedDuringASynchronousFirst() {
        // Spec §4.8, with take(1)'s shape downstream: same log as SwiftSignalKit.
        // The stand-in hides its downstream (it restarts the signal with
        // `start(next:…)`); with SignalKit's own `take(1)`, `b` is not
        // subscribed (loops stop when their downstream stops;
        // LoopTerminationTests.takeOneAfterThenDoesNotSubscribeTheNextSignal).
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log) { subscriber in
            subscriber.putNext(1)
            subscriber.putCompletion()
        }
        let b = TestSource<Int, String>("b", log: log)
        _ = log.start(a.signal |> then(b.signal) |> firstValueOnlyForCatchMetaTests())
        #expect(log.events == ["a.subscribe#1", "next 1", "completed", "b.subscribe#1", "a.dispose#1", "b.dispose#1"])
        #expect(a.disposeCount == 1 && b.disposeCount == 1)
    }

    @Test func twoSynchronousSegmentsGiveSwiftSignalKitsOrder() {
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log) { subscriber in
            subscriber.putNext(1)
            subscriber.putCompletion()
        }
        let b = TestSource<Int, String>("b", log: log) { subscriber in
            subscriber.putNext(2)
            subscriber.putCompletion()
        }
        _ = log.start(a.signal |> then(b.signal))
        #expect(
            log.events == ["a.subscribe#1", "next 1", "b.subscribe#1", "next 2", "completed", "b.dispose#1", "a.dispose#1"])
    }

    @Test func longerSynchronousChainsLoopInsteadOfNesting() {
        // b follows a inside a's completion (SwiftSignalKit's order); c would
        // nest inside b's completion in SwiftSignalKit (…, c.subscribe#1,
        // next 3, completed, c.dispose#1, b.dispose#1, a.dispose#1): SignalKit
        // lets b's subscription return (disposing b) and the loop subscribes c.
        let log = EventLog()
        let sources = ["a", "b", "c"].enumerated().map { index, name in
            TestSource<Int, String>(name, log: log) { subscriber in
                subscriber.putNext(index + 1)
                subscriber.putCompletion()
            }
        }
        _ = log.start(sources[0].signal |> then(sources[1].signal) |> then(sources[2].signal))
        #expect(
            log.events == [
                "a.subscribe#1", "next 1",
                "b.subscribe#1", "next 2", "b.dispose#1",
                "c.subscribe#1", "next 3", "completed", "c.dispose#1",
                "a.dispose#1",
            ])
        #expect(sources.allSatisfy { $0.disposeCount == 1 })
    }

    @Test func asynchronousSegmentsEachSubscribeTheNextBeforeTheirDisposal() {
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let b = TestSource<Int, String>("b", log: log)
        let c = TestSource<Int, String>("c", log: log)
        let handle = log.start(a.signal |> then(b.signal) |> then(c.signal))
        a.putCompletion()
        b.putNext(2)
        b.putCompletion()
        c.putCompletion()
        #expect(
            log.take() == [
                "a.subscribe#1", "b.subscribe#1", "a.dispose#1", "next 2", "c.subscribe#1", "b.dispose#1", "completed",
                "c.dispose#1",
            ])
        handle.dispose()
        #expect(log.take() == [])
    }

    @Test func aNestedThenBehavesAsTheFlatChain() {
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let b = TestSource<Int, String>("b", log: log)
        let c = TestSource<Int, String>("c", log: log)
        let handle = log.start(a.signal |> then(b.signal |> then(c.signal)))
        a.putCompletion()
        b.putCompletion()
        c.putNext(3)
        c.putCompletion()
        #expect(
            log.take() == [
                "a.subscribe#1", "b.subscribe#1", "a.dispose#1", "c.subscribe#1", "b.dispose#1", "next 3", "completed",
                "c.dispose#1",
            ])
        handle.dispose()
    }

    @Test func aThenSignalIsColdAndReusable() {
        let log = EventLog()
        let chain = Signal<Int, String>.single(1) |> then(.single(2))
        let extended = chain |> then(.single(3))
        _ = log.start(chain, prefix: "chain:")
        _ = log.start(extended, prefix: "extended:")
        _ = log.start(chain, prefix: "again:")
        #expect(
            log.events == [
                "chain:next 1", "chain:next 2", "chain:completed",
                "extended:next 1", "extended:next 2", "extended:next 3", "extended:completed",
                "again:next 1", "again:next 2", "again:completed",
            ])
    }

    @Test func disposingDuringTheFirstNeverSubscribesTheNext() {
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let b = TestSource<Int, String>("b", log: log)
        let handle = log.start(a.signal |> then(b.signal))
        handle.dispose()
        a.putCompletion()
        #expect(log.events == ["a.subscribe#1", "a.dispose#1"])
        #expect(b.subscribeCount == 0)
    }

    @Test func disposingDuringTheNextDisposesIt() {
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let b = TestSource<Int, String>("b", log: log)
        let handle = log.start(a.signal |> then(b.signal))
        a.putCompletion()
        handle.dispose()
        handle.dispose()
        #expect(log.events == ["a.subscribe#1", "b.subscribe#1", "a.dispose#1", "b.dispose#1"])
        #expect(a.disposeCount == 1 && b.disposeCount == 1)
    }

    @Test func aCompletionEmittedWhileThenIsDisposedSubscribesTheNextAndDisposesItAtOnce() {
        // As SwiftSignalKit's DisposableSet does (an add after dispose
        // disposes at once).
        let log = EventLog()
        let first = Signal<Int, String> { subscriber in
            ActionDisposable {
                log.append("a.dispose")
                subscriber.putCompletion()
            }
        }
        let b = TestSource<Int, String>("b", log: log)
        let handle = log.start(first |> then(b.signal))
        handle.dispose()
        #expect(log.events == ["a.dispose", "b.subscribe#1", "b.dispose#1"])
    }

    @Test func anErrorOfTheNextSignalFails() {
        let log = EventLog()
        let b = TestSource<Int, String>("b", log: log)
        _ = log.start(Signal<Int, String>.single(1) |> then(b.signal))
        b.putError("e")
        #expect(log.events == ["next 1", "b.subscribe#1", "error e", "b.dispose#1"])
    }

    @Test func disposalReleasesTheSegmentsNotSubscribedYet() {
        let next = WeakBox<TestSource<Int, String>>(nil)
        let handle: any Disposable
        do {
            let a = TestSource<Int, String>("a", log: EventLog())
            let b = TestSource<Int, String>("b", log: EventLog())
            next.value = b
            handle = (a.signal |> then(b.signal)).start()
        }
        #expect(next.value != nil)
        handle.dispose()
        #expect(next.value == nil)
    }

    // MARK: - deferred

    @Test func deferredCallsTheGeneratorAtEachSubscription() {
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let signal = deferred { () -> Signal<Int, String> in
            log.append("generator")
            return a.signal
        }
        #expect(log.events == [])
        let first = log.start(signal)
        let second = log.start(signal)
        a.putNext(1)
        a.putCompletion()
        #expect(
            log.take() == ["generator", "a.subscribe#1", "generator", "a.subscribe#2", "next 1", "completed", "a.dispose#2"])
        first.dispose()
        second.dispose()
        #expect(log.take() == ["a.dispose#1"])
    }

    @Test func deferredForwardsErrors() {
        let log = EventLog()
        _ = log.start(deferred { Signal<Int, String>.fail("e") })
        #expect(log.events == ["error e"])
    }

    @Test func aDeferredSegmentOfThenIsGeneratedWhenItsTurnComes() {
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let b = TestSource<Int, String>("b", log: log)
        let handle = log.start(
            a.signal
                |> then(
                    deferred { () -> Signal<Int, String> in
                        log.append("generator")
                        return b.signal
                    }))
        a.putCompletion()
        b.putCompletion()
        #expect(
            log.take() == ["a.subscribe#1", "generator", "b.subscribe#1", "a.dispose#1", "completed", "b.dispose#1"])
        handle.dispose()
    }

    @Test func aRecursiveDeferredThenLoop() {
        let log = EventLog()
        @Sendable func countdown(_ value: Int) -> Signal<Int, String> {
            if value == 0 { return .complete() }
            return .single(value) |> then(deferred { countdown(value - 1) })
        }
        _ = log.start(countdown(3))
        #expect(log.events == ["next 3", "next 2", "next 1", "completed"])
    }

    // MARK: - ignoreValues

    @Test func ignoreValuesForwardsOnlyTheTermination() {
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let handle = log.start(a.signal |> ignoreValues)
        a.putNext(1)
        a.putNext(2)
        a.putCompletion()
        #expect(log.take() == ["a.subscribe#1", "completed", "a.dispose#1"])
        handle.dispose()
        let b = TestSource<Int, String>("b", log: log)
        let signal: Signal<Never, String> = b.signal |> ignoreValues
        let second = log.start(signal)
        b.putNext(1)
        b.putError("e")
        #expect(log.take() == ["b.subscribe#1", "error e", "b.dispose#1"])
        second.dispose()
        let c = TestSource<Int, String>("c", log: log)
        let third = log.start(c.signal |> ignoreValues)
        third.dispose()
        #expect(log.take() == ["c.subscribe#1", "c.dispose#1"])
    }

    // MARK: - debug_measureTimeToFirstEvent

    @Test func measureTimeToFirstEventPassesEverythingThrough() {
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let handle = Shared<(any Disposable)?>(nil)
        _ = captureStandardOutputForMetaTests {
            handle.value = log.start(a.signal |> debug_measureTimeToFirstEvent(label: "pass-through"))
            a.putNext(1)
            a.putNext(2)
            a.putError("e")
        }
        #expect(log.events == ["a.subscribe#1", "next 1", "next 2", "error e", "a.dispose#1"])
        handle.value?.dispose()
    }

    @Test func measureTimeToFirstEventPrintsOnceForAllSubscriptions() {
        let label = "meta-tests-\(UInt64.random(in: 0...UInt64.max))"
        let log = EventLog()
        let output = captureStandardOutputForMetaTests {
            let measured = Signal<Int, String>.single(1) |> debug_measureTimeToFirstEvent(label: label)
            _ = log.start(Signal<Int, String>.complete() |> debug_measureTimeToFirstEvent(label: label))
            _ = log.start(measured)
            _ = log.start(measured)
        }
        #expect(log.events == ["completed", "next 1", "completed", "next 1", "completed"])
        let lines = output.split(separator: "\n").filter { $0.contains(label) }
        #expect(lines.count == 1)
        let line = String(lines.first ?? "")
        let prefix = "measureTimeToFirstEvent(\(label): "
        #expect(line.hasPrefix(prefix) && line.hasSuffix(" ms"))
        let milliseconds = Double(line.dropFirst(prefix.count).dropLast(3))
        #expect(milliseconds.map { $0 >= 0 && $0 < 60_000 } == true)
    }
}
