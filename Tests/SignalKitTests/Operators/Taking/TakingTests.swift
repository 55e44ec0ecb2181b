// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Synchronization
import Testing

@Suite struct TakeTests {
    // MARK: take(_:)

    @Test func takeCompletesRightAfterTheNthValueThenDisposesUpstream() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let handle = log.start(source.signal |> take(2))
        source.putNext(1)
        source.putNext(2)
        source.putNext(3)
        source.putCompletion()
        #expect(log.take() == ["a.subscribe#1", "next 1", "next 2", "completed", "a.dispose#1"])
        handle.dispose()
        #expect(log.take() == [])
        #expect(source.disposeCount == 1, "the generator's disposable is disposed exactly once")
    }

    @Test func takeOnASynchronousSourceWithoutCompletionDisposesItOnceItsGeneratorReturns() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log) { s in
            s.putNext(1)
            s.putNext(2)
            s.putNext(3)
            log.append("a.generator returns")
        }
        let handle = log.start(source.signal |> take(2))
        log.append("start returned")
        #expect(
            log.events == [
                "a.subscribe#1", "next 1", "next 2", "completed", "a.generator returns", "a.dispose#1", "start returned",
            ])
        handle.dispose()
        #expect(source.disposeCount == 1)
    }

    @Test func takeForwardsCompletionAndErrorBeforeTheLimit() {
        let log = EventLog()
        let completing = TestSource<Int, String>("a", log: log) { s in
            s.putNext(1)
            s.putCompletion()
        }
        _ = log.start(completing.signal |> take(3))
        #expect(log.take() == ["a.subscribe#1", "next 1", "completed", "a.dispose#1"])

        let failing = TestSource<Int, String>("b", log: log)
        _ = log.start(failing.signal |> take(3))
        failing.putNext(1)
        failing.putError("e")
        #expect(log.take() == ["b.subscribe#1", "next 1", "error e", "b.dispose#1"])
    }

    @Test func takeZeroCompletesOnlyWhenUpstreamCompletes() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let handle = log.start(source.signal |> take(0))
        source.putNext(1)
        source.putNext(2)
        #expect(log.take() == ["a.subscribe#1"], "take(0) never completes on values")
        source.putCompletion()
        #expect(log.take() == ["completed", "a.dispose#1"])
        handle.dispose()
    }

    @Test func takeZeroOfSingleJustCompletes() {
        let log = EventLog()
        _ = log.start(Signal<Int, String>.single(1) |> take(0))
        #expect(log.events == ["completed"])
    }

    @Test func takeZeroOfNeverNeverCompletesAndForwardsErrors() {
        let log = EventLog()
        let handle = log.start(Signal<Int, String>.never() |> take(0))
        #expect(log.take() == [])
        handle.dispose()
        _ = log.start(Signal<Int, String>.fail("e") |> take(0))
        #expect(log.take() == ["error e"])
    }

    @Test func takeCountsPerSubscription() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log) { s in
            s.putNext(1)
            s.putNext(2)
        }
        let signal = source.signal |> take(1)
        _ = log.start(signal, prefix: "1:")
        _ = log.start(signal, prefix: "2:")
        #expect(
            log.events == [
                "a.subscribe#1", "1:next 1", "1:completed", "a.dispose#1",
                "a.subscribe#2", "2:next 1", "2:completed", "a.dispose#2",
            ])
    }

    @Test func disposingATakeOneChainDisposesUpstreamOnce() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let handle = log.start(source.signal |> take(1))
        handle.dispose()
        handle.dispose()
        source.putNext(1)
        #expect(log.events == ["a.subscribe#1", "a.dispose#1"])
        #expect(source.disposeCount == 1)
    }

    @Test func takeCompletionReachesTheDownstreamOfAChainOnce() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let handle = log.start(source.signal |> map { $0 * 10 } |> take(1) |> map { $0 + 1 })
        source.putNext(1)
        source.putNext(2)
        #expect(log.events == ["a.subscribe#1", "next 11", "completed", "a.dispose#1"])
        handle.dispose()
        #expect(source.disposeCount == 1)
    }

    @Test func takeIsReentrant() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let handle = (source.signal |> take(2)).start(
            next: { value in
                log.append("next \(value)")
                if value == 1 { source.putNext(2) }
                log.append("end \(value)")
            },
            completed: { log.append("completed") }
        )
        source.putNext(1)
        source.putNext(3)
        #expect(log.events == ["a.subscribe#1", "next 1", "next 2", "end 2", "completed", "a.dispose#1", "end 1"])
        handle.dispose()
    }

    @Test func takeUnderConcurrentEmissionDeliversAtMostNAndCompletesOnce() {
        for _ in 0..<50 {
            let limit = 5
            let values = Synchronization.Atomic<Int>(0)
            let completions = Synchronization.Atomic<Int>(0)
            let inner = CountingDisposable()
            let held = Shared<Subscriber<Int, NoError>?>(nil)
            let handle =
                (Signal<Int, NoError> { subscriber in
                    held.value = subscriber
                    return inner
                } |> take(limit)).start(
                    next: { _ in values.add(1, ordering: .relaxed) },
                    completed: { completions.add(1, ordering: .relaxed) }
                )
            let subscriber = UncheckedSendableBox(held.value!)
            race(threads: 4) { _ in
                for value in 0..<10 { subscriber.value.putNext(value) }
            }
            #expect(values.load(ordering: .relaxed) <= limit)
            #expect(completions.load(ordering: .relaxed) == 1)
            #expect(inner.disposeCount == 1)
            handle.dispose()
            #expect(inner.disposeCount == 1)
            held.value = nil
        }
    }

    // MARK: takeLast

    @Test func takeLastEmitsTheLastValueOnCompletion() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let handle = log.start(source.signal |> takeLast)
        source.putNext(1)
        source.putNext(2)
        source.putNext(3)
        #expect(log.take() == ["a.subscribe#1"])
        source.putCompletion()
        #expect(log.take() == ["next 3", "completed", "a.dispose#1"])
        handle.dispose()
        #expect(source.disposeCount == 1)
    }

    @Test func takeLastOfASynchronousSource() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log) { s in
            s.putNext(1)
            s.putNext(2)
            s.putCompletion()
        }
        _ = log.start(takeLast(source.signal))
        #expect(log.events == ["a.subscribe#1", "next 2", "completed", "a.dispose#1"])
    }

    @Test func takeLastOfAnEmptySignalJustCompletes() {
        let log = EventLog()
        _ = log.start(Signal<Int, String>.complete() |> takeLast)
        #expect(log.events == ["completed"])
    }

    @Test func takeLastForwardsOnlyTheError() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        _ = log.start(source.signal |> takeLast)
        source.putNext(1)
        source.putError("e")
        #expect(log.events == ["a.subscribe#1", "error e", "a.dispose#1"])
    }

    @Test func takeLastDisposalBeforeCompletionEmitsNothing() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let handle = log.start(source.signal |> takeLast)
        source.putNext(1)
        handle.dispose()
        source.putCompletion()
        #expect(log.events == ["a.subscribe#1", "a.dispose#1"])
    }

    @Test func takeLastEmitsOptionalNilValues() {
        let log = EventLog()
        let source = TestSource<Int?, String>("a", log: log) { s in
            s.putNext(1)
            s.putNext(nil)
            s.putCompletion()
        }
        _ = log.start(source.signal |> takeLast)
        #expect(log.events == ["a.subscribe#1", "next nil", "completed", "a.dispose#1"])
    }

    // MARK: take(until:)

    @Test func takeUntilEmitsThenCompletes() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let handle = log.start(source.signal |> take(until: { SignalTakeAction(passthrough: true, complete: $0 == 3) }))
        source.putNext(1)
        source.putNext(2)
        source.putNext(3)
        source.putNext(4)
        #expect(log.events == ["a.subscribe#1", "next 1", "next 2", "next 3", "completed", "a.dispose#1"])
        handle.dispose()
        #expect(source.disposeCount == 1)
    }

    @Test func takeUntilCanCompleteWithoutPassingTheValue() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        _ = log.start(source.signal |> take(until: { SignalTakeAction(passthrough: $0 < 3, complete: $0 >= 3) }))
        source.putNext(1)
        source.putNext(3)
        #expect(log.events == ["a.subscribe#1", "next 1", "completed", "a.dispose#1"])
    }

    @Test func takeUntilCanDropValuesWithoutCompleting() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        _ = log.start(source.signal |> take(until: { SignalTakeAction(passthrough: $0 % 2 == 0, complete: false) }))
        source.putNext(1)
        source.putNext(2)
        source.putNext(3)
        source.putCompletion()
        #expect(log.events == ["a.subscribe#1", "next 2", "completed", "a.dispose#1"])
    }

    @Test func takeUntilForwardsErrors() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        _ = log.start(source.signal |> take(until: { _ in SignalTakeAction(passthrough: true, complete: false) }))
        source.putNext(1)
        source.putError("e")
        #expect(log.events == ["a.subscribe#1", "next 1", "error e", "a.dispose#1"])
    }

    @Test func takeUntilKeepsEvaluatingForValuesASynchronousSourceEmitsAfterCompletion() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log) { s in
            for value in 1...3 { s.putNext(value) }
        }
        let handle = log.start(
            source.signal
                |> take(until: { value in
                    log.append("until \(value)")
                    return SignalTakeAction(passthrough: true, complete: value == 1)
                }))
        #expect(
            log.events == [
                "a.subscribe#1", "until 1", "next 1", "completed", "until 2", "until 3", "a.dispose#1",
            ])
        handle.dispose()
    }

    @Test func signalTakeActionStoresItsFlags() {
        let action = SignalTakeAction(passthrough: false, complete: true)
        #expect(action.passthrough == false)
        #expect(action.complete == true)
    }

    // MARK: last

    @Test func lastEmitsTheLastValueAsAnOptional() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let handle = log.start(source.signal |> last)
        source.putNext(1)
        source.putNext(2)
        #expect(log.take() == ["a.subscribe#1"])
        source.putCompletion()
        #expect(log.take() == ["next Optional(2)", "completed", "a.dispose#1"])
        handle.dispose()
        #expect(source.disposeCount == 1)
    }

    @Test func lastEmitsNilWhenThereWasNoValue() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log) { s in s.putCompletion() }
        _ = log.start(last(signal: source.signal))
        #expect(log.events == ["a.subscribe#1", "next nil", "completed", "a.dispose#1"])
    }

    @Test func lastForwardsOnlyTheError() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log) { s in
            s.putNext(1)
            s.putError("e")
        }
        _ = log.start(source.signal |> last)
        #expect(log.events == ["a.subscribe#1", "error e", "a.dispose#1"])
    }

    @Test func lastReleasesTheValueItHeldAfterEmittingIt() {
        let probe = WeakBox<Probe>(nil)
        let log = EventLog()
        let source = TestSource<Probe, String>("a", log: log)
        let received = Shared<Probe?>(nil)
        let handle = (source.signal |> last).start(next: { received.value = $0 })
        do {
            let object = Probe()
            probe.value = object
            source.putNext(object)
        }
        #expect(probe.value != nil)
        source.putCompletion()
        #expect(received.value === probe.value)
        received.value = nil
        #expect(probe.value == nil)
        handle.dispose()
    }
}
