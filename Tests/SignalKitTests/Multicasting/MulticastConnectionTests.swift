// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

@Suite struct MulticastConnectionTests {
    // MARK: publish / connect

    @Test func publishSubscribesNothingUntilConnect() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let connection = source.signal |> publish
        let handle = log.start(connection.signal)
        #expect(source.subscribeCount == 0)
        #expect(log.take() == [])
        let link = connection.connect()
        source.putNext(1)
        source.putCompletion()
        #expect(log.take() == ["a.subscribe#1", "next 1", "completed", "a.dispose#1"])
        link.dispose()
        handle.dispose()
        #expect(source.disposeCount == 1)
    }

    /// Rule C19: one source subscription for any number of subscribers;
    /// `connect` is idempotent.
    @Test func theSourceIsSubscribedOnceForAllSubscribersAndConnectIsIdempotent() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let connection = source.signal |> publish
        let handles = (1...4).map { log.start(connection.signal, prefix: "\($0):") }
        let first = connection.connect()
        let second = connection.connect()
        let third = connection.connect()
        #expect(first === second && second === third, "later calls return the same disposable")
        source.putNext(7)
        #expect(source.subscribeCount == 1)
        #expect(log.take() == ["a.subscribe#1", "1:next 7", "2:next 7", "3:next 7", "4:next 7"])
        handles.forEach { $0.dispose() }
        first.dispose()
    }

    /// Rule C9 vs C19: a cold signal runs its side effects per subscription,
    /// a published one once.
    @Test func sideEffectsRunPerSubscriptionWhenColdAndOnceWhenPublished() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log, keepsSubscribers: false) { s in
            s.putNext(1)
            s.putCompletion()
        }
        _ = log.start(source.signal, prefix: "cold1:")
        _ = log.start(source.signal, prefix: "cold2:")
        #expect(source.subscribeCount == 2)
        log.take()

        let connection = source.signal |> publish
        _ = log.start(connection.signal, prefix: "hot1:")
        _ = log.start(connection.signal, prefix: "hot2:")
        connection.connect()
        #expect(source.subscribeCount == 3)
        #expect(
            log.take() == [
                "a.subscribe#3", "hot1:next 1", "hot2:next 1", "hot1:completed", "hot2:completed", "a.dispose#3",
            ])
    }

    @Test func disposingTheConnectionDisposesTheSourceExactlyOnceAndLeavesSubscribersOpen() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let connection = source.signal |> publish
        let handle = log.start(connection.signal)
        let link = connection.connect()
        source.putNext(1)
        link.dispose()
        link.dispose()
        connection.connect().dispose()
        source.putNext(2)
        #expect(log.events == ["a.subscribe#1", "next 1", "a.dispose#1"])
        #expect(source.disposeCount == 1)
        #expect(connection.connect() === link, "never reconnects: the same (disposed) connection")
        #expect(source.subscribeCount == 1)
        handle.dispose()
    }

    @Test func disposingOneSubscriberLeavesTheConnectionAndTheOthers() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let connection = source.signal |> publish
        let a = log.start(connection.signal, prefix: "a:")
        let b = log.start(connection.signal, prefix: "b:")
        let link = connection.connect()
        source.putNext(1)
        a.dispose()
        source.putNext(2)
        #expect(log.events == ["a.subscribe#1", "a:next 1", "b:next 1", "b:next 2"])
        #expect(source.disposeCount == 0)
        link.dispose()
        b.dispose()
    }

    @Test func aSynchronousSourceDeliversInsideConnect() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log, keepsSubscribers: false) { s in
            s.putNext(1)
            s.putNext(2)
        }
        let connection = source.signal |> publish
        let handle = log.start(connection.signal)
        let link = connection.connect()
        log.append("connect returned")
        #expect(log.events == ["a.subscribe#1", "next 1", "next 2", "connect returned"])
        link.dispose()
        handle.dispose()
    }

    // MARK: multicast(_:)

    @Test func multicastThroughAReplaySubjectReplaysToLateSubscribers() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let connection = source.signal |> multicast(ReplaySubject(capacity: 2))
        connection.connect()
        source.putNext(1)
        source.putNext(2)
        source.putNext(3)
        let late = log.start(connection.signal, prefix: "late:")
        source.putCompletion()
        _ = log.start(connection.signal, prefix: "after:")
        #expect(
            log.events == [
                "a.subscribe#1", "late:next 2", "late:next 3", "late:completed", "a.dispose#1",
                "after:next 2", "after:next 3", "after:completed",
            ])
        late.dispose()
    }

    @Test func multicastIntoAPlainSubjectThatAlreadyHasSubscribers() {
        let log = EventLog()
        let subject = Subject<Int, String>()
        let early = log.start(subject.signal(), prefix: "early:")
        let source = TestSource<Int, String>("a", log: log, keepsSubscribers: false) { s in
            s.putNext(1)
            s.putCompletion()
        }
        let connection = source.signal |> multicast(subject)
        connection.connect()
        #expect(log.events == ["a.subscribe#1", "early:next 1", "early:completed", "a.dispose#1"])
        early.dispose()
    }

    /// §E.2 item 9: connecting to a subject that already terminated does not
    /// subscribe the source.
    @Test func connectingThroughATerminatedSubjectDoesNotSubscribeTheSource() {
        let log = EventLog()
        let subject = ReplaySubject<Int, String>()
        subject.putNext(1)
        subject.putCompletion()
        let source = TestSource<Int, String>("a", log: log)
        let connection = source.signal |> multicast(subject)
        connection.connect().dispose()
        _ = log.start(connection.signal)
        #expect(log.events == ["next 1", "completed"])
        #expect(source.subscribeCount == 0)
    }

    // MARK: autoconnect

    @Test func autoconnectConnectsOnTheFirstSubscriberAndSharesTheSource() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let shared = (source.signal |> publish).autoconnect()
        #expect(source.subscribeCount == 0)
        let a = log.start(shared, prefix: "a:")
        let b = log.start(shared, prefix: "b:")
        source.putNext(1)
        #expect(source.subscribeCount == 1)
        #expect(log.events == ["a.subscribe#1", "a:next 1", "b:next 1"])
        a.dispose()
        b.dispose()
    }

    /// §E.2 item 5: the count drops to 0 → disconnect; never reconnect.
    @Test func autoconnectDisconnectsAtZeroSubscribersAndNeverReconnects() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let connection = source.signal |> publish
        let shared = connection.autoconnect()
        let a = log.start(shared, prefix: "a:")
        let b = log.start(shared, prefix: "b:")
        source.putNext(1)
        a.dispose()
        source.putNext(2)
        b.dispose()
        #expect(log.take() == ["a.subscribe#1", "a:next 1", "b:next 1", "b:next 2", "a.dispose#1"])

        let late = log.start(shared, prefix: "late:")
        source.putNext(3)
        #expect(log.take() == [], "the late subscriber gets nothing and the source is not resubscribed")
        #expect(source.subscribeCount == 1)
        late.dispose()
        #expect(source.disposeCount == 1, "disposed exactly once")
        late.dispose()
    }

    @Test func autoconnectDeliversWhatTheSourceSendsSynchronouslyToTheFirstSubscriber() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log, keepsSubscribers: false) { s in
            s.putNext(1)
            s.putNext(2)
        }
        let shared = (source.signal |> publish).autoconnect()
        let handle = log.start(shared)
        #expect(log.events == ["a.subscribe#1", "next 1", "next 2"])
        handle.dispose()
        #expect(log.events.last == "a.dispose#1")
    }

    @Test func autoconnectCountsSubscriptionsThatTerminated() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let shared = (source.signal |> publish).autoconnect()
        let a = log.start(shared, prefix: "a:")
        source.putNext(1)
        source.putCompletion()
        #expect(log.take() == ["a.subscribe#1", "a:next 1", "a:completed", "a.dispose#1"])
        a.dispose()
        _ = log.start(shared, prefix: "late:")
        #expect(log.take() == [])
        #expect(source.subscribeCount == 1 && source.disposeCount == 1)
    }

    /// Rule C14: `take(n)` on an autoconnected signal ends the subscription
    /// right after the nth value, which disconnects the source at once.
    @Test func takeOnAnAutoconnectedSignalDisconnectsRightAfterTheNthValue() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let shared = (source.signal |> publish).autoconnect()
        let handle = log.start(shared |> take(2))
        source.putNext(1)
        source.putNext(2)
        source.putNext(3)
        #expect(log.events == ["a.subscribe#1", "next 1", "next 2", "completed", "a.dispose#1"])
        handle.dispose()
    }

    @Test func autoconnectThroughAReplaySubjectReplaysButNeverReconnects() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let shared = (source.signal |> multicast(ReplaySubject())).autoconnect()
        let a = log.start(shared, prefix: "a:")
        source.putNext(1)
        a.dispose()
        let b = log.start(shared, prefix: "b:")
        source.putNext(2)
        #expect(log.events == ["a.subscribe#1", "a:next 1", "a.dispose#1", "b:next 1"])
        #expect(source.subscribeCount == 1)
        b.dispose()
    }

    @Test func everyAutoconnectSignalOfAConnectionSharesOneCount() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let connection = source.signal |> publish
        let a = log.start(connection.autoconnect(), prefix: "a:")
        let b = log.start(connection.autoconnect(), prefix: "b:")
        a.dispose()
        source.putNext(1)
        #expect(log.take() == ["a.subscribe#1", "b:next 1"], "b still counts: no disconnection")
        b.dispose()
        #expect(log.take() == ["a.dispose#1"])
    }

    @Test func theConnectionOutlivesItsOwnerWhileConnected() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let handle: any Disposable
        let link: any Disposable
        do {
            let connection = source.signal |> publish
            handle = log.start(connection.signal)
            link = connection.connect()
        }
        source.putNext(1)
        link.dispose()
        #expect(log.events == ["a.subscribe#1", "next 1", "a.dispose#1"])
        handle.dispose()
    }
}
