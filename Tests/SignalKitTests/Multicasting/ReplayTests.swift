// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

@Suite struct ReplayTests {
    // MARK: replay

    @Test func replaySubscribesTheSourceAtOnceAndOnlyOnce() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let shared = source.signal |> replay
        #expect(log.take() == ["a.subscribe#1"], "connected immediately, before any subscriber")
        source.putNext(1)
        let a = log.start(shared, prefix: "a:")
        source.putNext(2)
        let b = log.start(shared, prefix: "b:")
        source.putCompletion()
        let c = log.start(shared, prefix: "c:")
        #expect(
            log.take() == [
                "a:next 1", "a:next 2",
                "b:next 1", "b:next 2",
                "a:completed", "b:completed", "a.dispose#1",
                "c:next 1", "c:next 2", "c:completed",
            ])
        #expect(source.subscribeCount == 1 && source.disposeCount == 1)
        a.dispose()
        b.dispose()
        c.dispose()
    }

    @Test func replayReplaysAnError() {
        let log = EventLog()
        let shared = Signal<Int, String>.fail("e") |> replay
        _ = log.start(shared, prefix: "a:")
        _ = log.start(shared, prefix: "b:")
        #expect(log.events == ["a:error e", "b:error e"])
    }

    @Test func disposingEverySubscriberOfReplayLeavesTheSourceRunning() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let shared = source.signal |> replay
        let a = log.start(shared, prefix: "a:")
        a.dispose()
        source.putNext(1)
        let b = log.start(shared, prefix: "b:")
        #expect(log.events == ["a.subscribe#1", "b:next 1"])
        #expect(source.disposeCount == 0)
        b.dispose()
    }

    // MARK: replayLast

    @Test func replayLastReplaysTheLatestValueAndTheTerminalEvent() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let shared = source.signal |> replayLast
        #expect(log.take() == ["a.subscribe#1"])
        let early = log.start(shared, prefix: "early:")
        source.putNext(1)
        source.putNext(2)
        let late = log.start(shared, prefix: "late:")
        source.putNext(3)
        source.putError("e")
        _ = log.start(shared, prefix: "after:")
        #expect(
            log.take() == [
                "early:next 1", "early:next 2",
                "late:next 2",
                "early:next 3", "late:next 3",
                "early:error e", "late:error e", "a.dispose#1",
                "after:next 3", "after:error e",
            ])
        early.dispose()
        late.dispose()
    }

    // MARK: replayLazily

    @Test func replayLazilyConnectsOnTheFirstSubscriptionAndNeverDisconnects() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let shared = source.signal |> replayLazily
        #expect(source.subscribeCount == 0, "nothing until the first subscription")
        let a = log.start(shared, prefix: "a:")
        source.putNext(1)
        let b = log.start(shared, prefix: "b:")
        source.putNext(2)
        a.dispose()
        b.dispose()
        source.putNext(3)
        #expect(source.disposeCount == 0, "never disconnected")
        let c = log.start(shared, prefix: "c:")
        source.putCompletion()
        #expect(
            log.events == [
                "a.subscribe#1", "a:next 1", "b:next 1", "a:next 2", "b:next 2",
                "c:next 1", "c:next 2", "c:next 3", "c:completed", "a.dispose#1",
            ])
        #expect(source.subscribeCount == 1)
        c.dispose()
    }

    @Test func replayLazilyDeliversASynchronousSourceToTheFirstSubscriber() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log, keepsSubscribers: false) { s in
            s.putNext(1)
            s.putCompletion()
        }
        let shared = source.signal |> replayLazily
        _ = log.start(shared, prefix: "a:")
        _ = log.start(shared, prefix: "b:")
        #expect(log.events == ["a.subscribe#1", "a.dispose#1", "a:next 1", "a:completed", "b:next 1", "b:completed"])
    }

    /// Timing on a virtual clock: late subscribers of `replayLazily` get the
    /// past at once and the future when it happens.
    @Test func replayLazilyOnAVirtualClock() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue(name: "work")
        let log = EventLog()
        let ticks = Signal<Int, NoError> { subscriber in
            log.append("subscribed at \(scheduler.now)")
            queue.after(1) { subscriber.putNext(1) }
            queue.after(2) { subscriber.putNext(2) }
            queue.after(3) { subscriber.putCompletion() }
            return EmptyDisposable
        }
        let shared = ticks |> replayLazily
        scheduler.advance(by: 0.5)
        let a = shared.start(next: { log.append("a \($0) at \(scheduler.now)") })
        scheduler.advance(by: 2)
        let b = shared.start(
            next: { log.append("b \($0) at \(scheduler.now)") },
            completed: {
                log.append("b completed at \(scheduler.now)")
            })
        scheduler.run()
        #expect(
            log.events == [
                "subscribed at 0.5", "a 1 at 1.5", "a 2 at 2.5", "b 1 at 2.5", "b 2 at 2.5", "b completed at 3.5",
            ])
        a.dispose()
        b.dispose()
    }
}
