// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

@Suite struct SubjectTests {
    @Test func forwardsToCurrentSubscribersInSubscriptionOrder() {
        let log = EventLog()
        let subject = Subject<Int, String>()
        subject.putNext(0)
        let a = log.start(subject.signal(), prefix: "a:")
        let b = log.start(subject.signal(), prefix: "b:")
        subject.putNext(1)
        let c = log.start(subject.signal(), prefix: "c:")
        subject.putNext(2)
        subject.putCompletion()
        #expect(
            log.events == [
                "a:next 1", "b:next 1",
                "a:next 2", "b:next 2", "c:next 2",
                "a:completed", "b:completed", "c:completed",
            ])
        a.dispose()
        b.dispose()
        c.dispose()
    }

    /// Rule C5: values, then at most one terminal event; nothing afterwards.
    @Test func eventGrammarNothingAfterTheFirstTerminalEvent() {
        let log = EventLog()
        let completing = Subject<Int, String>()
        _ = log.start(completing.signal())
        completing.putNext(1)
        completing.putCompletion()
        completing.putNext(2)
        completing.putError("late")
        completing.putCompletion()
        #expect(log.take() == ["next 1", "completed"])

        let failing = Subject<Int, String>()
        _ = log.start(failing.signal())
        failing.putError("e")
        failing.putError("again")
        failing.putCompletion()
        failing.putNext(3)
        #expect(log.take() == ["error e"])
    }

    /// Rule C12: disposing one subscription leaves the others untouched.
    @Test func disposingOneSubscriptionLeavesTheOthers() {
        let log = EventLog()
        let subject = Subject<Int, String>()
        let a = log.start(subject.signal(), prefix: "a:")
        let b = log.start(subject.signal(), prefix: "b:")
        subject.putNext(1)
        a.dispose()
        subject.putNext(2)
        subject.putCompletion()
        #expect(log.events == ["a:next 1", "b:next 1", "b:next 2", "b:completed"])
        b.dispose()
    }

    @Test func aSubscriberAddedDuringADeliveryMissesThatEvent() {
        let log = EventLog()
        let subject = Subject<Int, String>()
        let added = Shared<(any Disposable)?>(nil)
        let first = subject.signal().start(next: { value in
            log.append("first \(value)")
            if value == 1 { added.value = log.start(subject.signal(), prefix: "added:") }
        })
        subject.putNext(1)
        subject.putNext(2)
        #expect(log.events == ["first 1", "first 2", "added:next 2"])
        first.dispose()
        added.value?.dispose()
    }

    @Test func aSubscriberDisposedDuringADeliveryGetsNothingMore() {
        let log = EventLog()
        let subject = Subject<Int, String>()
        let second = Shared<(any Disposable)?>(nil)
        let first = subject.signal().start(next: { value in
            log.append("first \(value)")
            second.value?.dispose()
        })
        second.value = log.start(subject.signal(), prefix: "second:")
        subject.putNext(1)
        subject.putNext(2)
        #expect(log.events == ["first 1", "first 2"])
        first.dispose()
    }

    @Test func aTerminalEventSentFromACallbackEndsEverySubscriber() {
        let log = EventLog()
        let subject = Subject<Int, String>()
        let first = subject.signal().start(
            next: { value in
                log.append("first \(value)")
                subject.putCompletion()
            }, completed: { log.append("first completed") })
        let second = log.start(subject.signal(), prefix: "second:")
        subject.putNext(1)
        subject.putNext(2)
        #expect(log.events == ["first 1", "first completed", "second:completed"])
        first.dispose()
        second.dispose()
    }

    /// §E.2 item 9: a plain subject does not remember termination.
    @Test func afterTerminationALateSubscriberGetsNothingAndIsReleasedAtOnce() {
        let log = EventLog()
        let subject = Subject<Int, String>()
        subject.putNext(1)
        subject.putError("e")
        let probe = WeakBox<Probe>(nil)
        let handle: any Disposable
        do {
            let object = Probe()
            probe.value = object
            handle = subject.signal().start(
                next: { _ in object.touch() },
                error: { error in log.append("error \(error)") },
                completed: { log.append("completed") }
            )
        }
        subject.putNext(2)
        subject.putCompletion()
        #expect(log.events == [], "not even the terminal event")
        #expect(probe.value == nil, "the late subscription ended silently: callbacks released")
        handle.dispose()
    }

    @Test func theSignalIsSharedAndSubscriptionsDoNotKeepTheSubjectsStateAlive() {
        let subject = Subject<Int, NoError>()
        #expect(subject.signal() === subject.signal())
        let probe = WeakBox<Probe>(nil)
        let handle: any Disposable
        do {
            let local = Subject<Int, NoError>()
            let object = Probe()
            probe.value = object
            handle = local.signal().start(next: { _ in object.touch() })
        }
        #expect(probe.value == nil, "subject and signal gone: the subscription ended silently")
        handle.dispose()
    }

    // MARK: subscribe(to:) — feeders (F014)

    @Test func aFeederForwardsEverythingAndItsTerminalEventEndsTheSubject() {
        let log = EventLog()
        let subject = Subject<Int, String>()
        let handle = log.start(subject.signal())
        let source = TestSource<Int, String>("a", log: log)
        _ = subject.subscribe(to: source.signal)
        source.putNext(1)
        source.putNext(2)
        source.putCompletion()
        subject.putNext(3)
        #expect(log.events == ["a.subscribe#1", "next 1", "next 2", "completed", "a.dispose#1"])
        handle.dispose()
    }

    @Test func theFirstTerminalEventOfAnyFeederDisposesTheOtherFeeders() {
        let log = EventLog()
        let subject = Subject<Int, String>()
        let handle = log.start(subject.signal())
        let a = TestSource<Int, String>("a", log: log)
        let b = TestSource<Int, String>("b", log: log)
        let c = TestSource<Int, String>("c", log: log)
        _ = subject.subscribe(to: a.signal)
        _ = subject.subscribe(to: b.signal)
        _ = subject.subscribe(to: c.signal)
        a.putNext(1)
        b.putNext(2)
        b.putError("e")
        c.putNext(3)
        #expect(
            log.events == [
                "a.subscribe#1", "b.subscribe#1", "c.subscribe#1",
                "next 1", "next 2", "error e",
                "a.dispose#1", "b.dispose#1", "c.dispose#1",
            ])
        #expect(a.disposeCount == 1 && b.disposeCount == 1 && c.disposeCount == 1)
        handle.dispose()
    }

    @Test func putCompletionDisposesTheFeeders() {
        let log = EventLog()
        let subject = Subject<Int, String>()
        let a = TestSource<Int, String>("a", log: log)
        _ = subject.subscribe(to: a.signal)
        subject.putCompletion()
        #expect(log.events == ["a.subscribe#1", "a.dispose#1"])
    }

    @Test func disposingAFeederStopsOnlyThatFeederAndLeavesTheSubjectOpen() {
        let log = EventLog()
        let subject = Subject<Int, String>()
        let handle = log.start(subject.signal())
        let a = TestSource<Int, String>("a", log: log)
        let b = TestSource<Int, String>("b", log: log)
        let feederA = subject.subscribe(to: a.signal)
        _ = subject.subscribe(to: b.signal)
        feederA.dispose()
        feederA.dispose()
        a.putNext(1)
        b.putNext(2)
        subject.putCompletion()
        #expect(
            log.events == [
                "a.subscribe#1", "b.subscribe#1", "a.dispose#1", "next 2", "completed", "b.dispose#1",
            ])
        handle.dispose()
    }

    @Test func aFeederAfterTerminationIsNotSubscribed() {
        let log = EventLog()
        let subject = Subject<Int, String>()
        subject.putCompletion()
        let a = TestSource<Int, String>("a", log: log)
        let feeder = subject.subscribe(to: a.signal)
        feeder.dispose()
        #expect(log.events == [])
        #expect(a.subscribeCount == 0)
    }

    @Test func aSynchronouslyCompletingFeederEndsTheSubjectInsideSubscribe() {
        let log = EventLog()
        let subject = Subject<Int, String>()
        let handle = log.start(subject.signal())
        let a = TestSource<Int, String>("a", log: log) { s in
            s.putNext(1)
            s.putCompletion()
        }
        _ = subject.subscribe(to: a.signal)
        log.append("returned")
        #expect(log.events == ["a.subscribe#1", "next 1", "completed", "a.dispose#1", "returned"])
        handle.dispose()
    }
}
