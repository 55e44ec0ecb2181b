// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

// Events: materializeEvents, dematerializeEvents and the SignalEvent
// accessors (Sources/SignalKit/Operators/Events/Signal+Events.swift).

@Suite struct RACEventsTests {
    @Test func materializeEventsTurnsEventsIntoValues() {
        let log = EventLog()
        _ = log.start(Signal<Int, String>.sequence([1]) |> then(.fail("e")) |> materializeEvents)
        _ = log.start(Signal<Int, String>.single(2) |> materializeEvents)
        #expect(
            log.events == [
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
