// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

@Suite struct ReplaySubjectTests {
    @Test func unlimitedByDefaultReplaysEveryValueThenGoesLive() {
        let log = EventLog()
        let subject = ReplaySubject<Int, String>()
        #expect(subject.capacity == .max)
        subject.putNext(1)
        subject.putNext(2)
        let a = log.start(subject.signal(), prefix: "a:")
        subject.putNext(3)
        let b = log.start(subject.signal(), prefix: "b:")
        subject.putNext(4)
        #expect(
            log.events == [
                "a:next 1", "a:next 2", "a:next 3",
                "b:next 1", "b:next 2", "b:next 3",
                "a:next 4", "b:next 4",
            ])
        a.dispose()
        b.dispose()
    }

    /// F099: the terminal event is replayed too, after the kept values.
    @Test func replaysTheTerminalEventToLateSubscribers() {
        let log = EventLog()
        let completed = ReplaySubject<Int, String>()
        completed.putNext(1)
        completed.putCompletion()
        _ = log.start(completed.signal(), prefix: "a:")
        _ = log.start(completed.signal(), prefix: "b:")
        #expect(log.take() == ["a:next 1", "a:completed", "b:next 1", "b:completed"])

        let failed = ReplaySubject<Int, String>()
        failed.putNext(1)
        failed.putNext(2)
        failed.putError("e")
        _ = log.start(failed.signal())
        #expect(log.take() == ["next 1", "next 2", "error e"])
    }

    @Test(arguments: [0, 1, 2, 3])
    func keepsOnlyTheLastCapacityValues(capacity: Int) {
        let log = EventLog()
        let subject = ReplaySubject<Int, String>(capacity: capacity)
        for value in 1...5 { subject.putNext(value) }
        subject.putCompletion()
        _ = log.start(subject.signal())
        let kept = (1...5).suffix(capacity).map { "next \($0)" }
        #expect(log.events == kept + ["completed"])
    }

    @Test func theRingKeepsOrderAcrossManyWraps() {
        let subject = ReplaySubject<Int, NoError>(capacity: 3)
        let log = EventLog()
        for value in 1...100 {
            subject.putNext(value)
            if value % 7 == 0 {
                let handle = log.start(subject.signal())
                handle.dispose()
                #expect(log.take() == [value - 2, value - 1, value].map { "next \($0)" })
            }
        }
    }

    /// Rule C5 and §E.2 item 9: sends after the terminal event are ignored
    /// and do not change what is replayed.
    @Test func sendsAfterTerminationAreIgnored() {
        let log = EventLog()
        let subject = ReplaySubject<Int, String>()
        let live = log.start(subject.signal(), prefix: "live:")
        subject.putNext(1)
        subject.putCompletion()
        subject.putNext(2)
        subject.putError("late")
        subject.putCompletion()
        _ = log.start(subject.signal(), prefix: "late:")
        #expect(log.events == ["live:next 1", "live:completed", "late:next 1", "late:completed"])
        live.dispose()
    }

    @Test func aSubscriberAddedDuringADeliveryGetsThatValueExactlyOnceThroughItsReplay() {
        let log = EventLog()
        let subject = ReplaySubject<Int, String>()
        let added = Shared<(any Disposable)?>(nil)
        let first = subject.signal().start(next: { value in
            log.append("first \(value)")
            if value == 2 { added.value = log.start(subject.signal(), prefix: "added:") }
        })
        subject.putNext(1)
        subject.putNext(2)
        subject.putNext(3)
        #expect(
            log.events == [
                "first 1", "first 2", "added:next 1", "added:next 2", "first 3", "added:next 3",
            ])
        first.dispose()
        added.value?.dispose()
    }

    @Test func aValueSentDuringAReplayIsDeliveredAfterTheReplayInOrder() {
        let log = EventLog()
        let subject = ReplaySubject<Int, String>()
        subject.putNext(1)
        subject.putNext(2)
        let other = log.start(subject.signal(), prefix: "other:")
        let replaying = subject.signal().start(next: { value in
            log.append("replaying \(value)")
            if value == 1 { subject.putNext(99) }
        })
        #expect(
            log.events == [
                "other:next 1", "other:next 2",
                "replaying 1", "other:next 99", "replaying 2", "replaying 99",
            ])
        other.dispose()
        replaying.dispose()
    }

    @Test func aTerminalEventSentDuringAReplayComesAfterTheReplay() {
        let log = EventLog()
        let subject = ReplaySubject<Int, String>()
        subject.putNext(1)
        subject.putNext(2)
        let handle = subject.signal().start(
            next: { value in
                log.append("next \(value)")
                if value == 1 { subject.putError("e") }
            },
            error: { log.append("error \($0)") }
        )
        #expect(log.events == ["next 1", "next 2", "error e"])
        handle.dispose()
    }

    @Test func disposingDuringTheReplayStopsIt() {
        let log = EventLog()
        let subject = ReplaySubject<Int, String>()
        for value in 1...3 { subject.putNext(value) }
        let handle = Shared<(any Disposable)?>(nil)
        handle.value = (subject.signal() |> take(2)).start(
            next: { log.append("next \($0)") },
            completed: {
                log.append("completed")
            })
        subject.putNext(4)
        #expect(log.events == ["next 1", "next 2", "completed"])
        handle.value?.dispose()
    }

    @Test func aFeederCompletingEndsTheReplaySubjectAndIsReplayed() {
        let log = EventLog()
        let subject = ReplaySubject<Int, String>(capacity: 1)
        let a = TestSource<Int, String>("a", log: log) { s in
            s.putNext(1)
            s.putNext(2)
            s.putCompletion()
        }
        _ = subject.subscribe(to: a.signal)
        _ = log.start(subject.signal())
        #expect(log.events == ["a.subscribe#1", "a.dispose#1", "next 2", "completed"])
    }

    @Test func theSignalKeepsTheReplayAliveAfterTheSubjectIsReleased() {
        let log = EventLog()
        let signal: Signal<Int, String>
        do {
            let subject = ReplaySubject<Int, String>()
            subject.putNext(1)
            subject.putCompletion()
            signal = subject.signal()
        }
        _ = log.start(signal)
        #expect(log.events == ["next 1", "completed"])
    }
}
