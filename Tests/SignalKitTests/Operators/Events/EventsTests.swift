// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

@Suite struct MaterializeTests {
    // MARK: dematerialize (events → values)

    @Test func dematerializeTurnsValuesAndCompletionIntoEvents() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log) { s in
            s.putNext(1)
            s.putCompletion()
        }
        _ = log.start(source.signal |> dematerialize)
        #expect(log.events == ["a.subscribe#1", "next Next(1)", "next Completion", "completed", "a.dispose#1"])
    }

    @Test func dematerializeTurnsAnErrorIntoAValueThenCompletes() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let events = Shared<[SignalEvent<Int, String>]>([])
        let handle = dematerialize(signal: source.signal).start(
            next: { events.value.append($0) },
            completed: { log.append("completed") }
        )
        source.putNext(1)
        source.putError("e")
        source.putNext(2)
        #expect(events.value == [.Next(1), .Error("e")])
        #expect(log.events == ["a.subscribe#1", "completed", "a.dispose#1"])
        handle.dispose()
        #expect(source.disposeCount == 1)
    }

    @Test func dematerializeDisposalDisposesUpstream() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let handle = log.start(source.signal |> dematerialize)
        source.putNext(1)
        handle.dispose()
        source.putCompletion()
        #expect(log.events == ["a.subscribe#1", "next Next(1)", "a.dispose#1"])
    }

    // MARK: materialize (values → events)

    @Test func materializeTurnsEventValuesIntoEvents() {
        let log = EventLog()
        let source = TestSource<SignalEvent<Int, String>, NoError>("a", log: log) { s in
            s.putNext(.Next(1))
            s.putNext(.Next(2))
            s.putNext(.Completion)
            s.putNext(.Next(3))
        }
        _ = log.start(source.signal |> materialize)
        #expect(log.events == ["a.subscribe#1", "next 1", "next 2", "completed", "a.dispose#1"])
    }

    @Test func materializeTurnsAnErrorValueIntoAnError() {
        let log = EventLog()
        let source = TestSource<SignalEvent<Int, String>, NoError>("a", log: log)
        let handle = log.start(materialize(signal: source.signal))
        source.putNext(.Next(1))
        source.putNext(.Error("e"))
        source.putNext(.Next(2))
        #expect(log.events == ["a.subscribe#1", "next 1", "error e", "a.dispose#1"])
        handle.dispose()
        #expect(source.disposeCount == 1)
    }

    @Test func materializeCompletesWhenUpstreamCompletes() {
        let log = EventLog()
        let source = TestSource<SignalEvent<Int, String>, NoError>("a", log: log)
        _ = log.start(source.signal |> materialize)
        source.putNext(.Next(1))
        source.putCompletion()
        #expect(log.events == ["a.subscribe#1", "next 1", "completed", "a.dispose#1"])
    }

    @Test func roundTripRestoresTheOriginalEvents() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log) { s in
            s.putNext(1)
            s.putNext(2)
            s.putError("e")
        }
        _ = log.start(source.signal |> dematerialize |> materialize)
        #expect(log.events == ["a.subscribe#1", "next 1", "next 2", "error e", "a.dispose#1"])
    }
}
