// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

// RACSideEffects and RACEvents: doNext, doError, doCompleted, initially,
// finally; materializeEvents, dematerializeEvents and the SignalEvent
// accessors (Sources/SignalKit/Operators/Signal+RACSideEffects.swift,
// Signal+RACEvents.swift).

@Suite struct RACSideEffectsTests {
    @Test func sideEffectsRunBeforeTheEventReachesTheSubscriber() {
        let log = EventLog()
        let source = TestSource<Int, String>("s", log: log)
        let observed = source.signal
            |> initially { log.append("initially") }
            |> doNext { log.append("doNext \($0)") }
            |> doError { log.append("doError \($0)") }
            |> doCompleted { log.append("doCompleted") }
            |> finally { log.append("finally") }
        _ = log.start(observed)
        source.putNext(1)
        source.putCompletion()
        #expect(log.take() == [
            "initially", "s.subscribe#1", "doNext 1", "next 1", "doCompleted", "finally", "completed", "s.dispose#1",
        ])
        _ = log.start(observed)
        source.putError("e")
        #expect(log.take() == ["initially", "s.subscribe#2", "doError e", "finally", "error e", "s.dispose#2"])
    }

    @Test func finallyDoesNotRunOnDisposal() {
        let log = EventLog()
        let source = TestSource<Int, String>("s", log: log)
        let handle = log.start(source.signal |> finally { log.append("finally") })
        handle.dispose()
        #expect(log.events == ["s.subscribe#1", "s.dispose#1"])
    }

    @Test func designGuidelineSideEffectsRunPerSubscription() {
        // Seed 002 "Injecting effects": doCompleted runs before the
        // subscriber's completion, once per subscription.
        let log = EventLog()
        var subscriptions = 0
        let loggingSignal = Signal<Void, NoError> { subscriber in
            subscriptions += 1
            subscriber.putCompletion()
            return EmptyDisposable
        }
        let withEffect = loggingSignal |> doCompleted { log.append("about to complete subscription \(subscriptions)") }
        #expect(log.events == [], "does not output anything yet")
        _ = withEffect.start(completed: { log.append("subscription \(subscriptions)") })
        #expect(log.events == ["about to complete subscription 1", "subscription 1"])
    }
}

@Suite struct RACEventsTests {
    @Test func materializeEventsTurnsEventsIntoValues() {
        let log = EventLog()
        _ = log.start(Signal<Int, String>.sequence([1]) |> then(.fail("e")) |> materializeEvents)
        _ = log.start(Signal<Int, String>.single(2) |> materializeEvents)
        #expect(log.events == [
            "next Next(1)", "next Error(\"e\")", "completed", "next Next(2)", "next Completion", "completed",
        ])
    }

    @Test func dematerializeEventsTurnsValuesBackIntoEvents() {
        let log = EventLog()
        let events = Signal<SignalEvent<Int, String>, NoError>.sequence([.Next(1), .Error("e"), .Next(2)])
        _ = log.start(events |> dematerializeEvents)
        #expect(log.events == ["next 1", "error e"])
    }

    @Test func roundTrip() {
        let log = EventLog()
        let source = TestSource<Int, String>("s", log: log)
        _ = log.start(source.signal |> materializeEvents |> dematerializeEvents)
        source.putNext(1)
        source.putError("e")
        #expect(log.events == ["s.subscribe#1", "next 1", "error e", "s.dispose#1"])
    }

    @Test func theRACNamesAreTheSSKNamesReversed() {
        let log = EventLog()
        _ = log.start(Signal<Int, String>.single(1) |> dematerialize)
        _ = log.start(Signal<Int, String>.single(1) |> materializeEvents)
        let events = log.take()
        #expect(events == ["next Next(1)", "next Completion", "completed", "next Next(1)", "next Completion", "completed"])
    }

    @Test func accessors() {
        let next = SignalEvent<Int, String>.Next(1)
        let error = SignalEvent<Int, String>.Error("e")
        let completion = SignalEvent<Int, String>.Completion
        #expect(!next.isTerminal && error.isTerminal && completion.isTerminal)
        #expect(next.value == 1 && error.value == nil && completion.value == nil)
        #expect(next.error == nil && error.error == "e" && completion.error == nil)
    }
}
