// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

@Suite struct StartEagerlyTests {
    @Test func startEagerlyRunsTheBlockOnceOnTheQueueRightAway() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue(name: "work")
        let log = EventLog()
        let signal = Signal<Int, String>.startEagerly(on: queue) { subscriber in
            log.append("block on queue: \(queue.isCurrent())")
            subscriber.putNext(1)
            queue.after(1) {
                subscriber.putNext(2)
                subscriber.putCompletion()
            }
        }
        #expect(log.take() == [], "posted to the queue, not run inline")
        scheduler.advance(by: 0)
        #expect(log.take() == ["block on queue: true"], "runs with no subscriber")
        let a = log.start(signal, prefix: "a:")
        scheduler.run()
        let b = log.start(signal, prefix: "b:")
        #expect(
            log.events == [
                "a:next 1", "a:next 2", "a:completed", "b:next 1", "b:next 2", "b:completed",
            ])
        a.dispose()
        b.dispose()
    }

    @Test func startLazilyRunsTheBlockOnceOnTheFirstSubscription() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue(name: "work")
        let log = EventLog()
        let signal = Signal<Int, String>.startLazily(on: queue) { subscriber in
            log.append("block")
            subscriber.putNext(1)
            subscriber.putError("e")
        }
        scheduler.run()
        #expect(log.take() == [], "nothing without a subscriber")
        let a = log.start(signal, prefix: "a:")
        let b = log.start(signal, prefix: "b:")
        #expect(log.take() == [], "posted to the queue")
        scheduler.run()
        a.dispose()
        b.dispose()
        let c = log.start(signal, prefix: "c:")
        scheduler.run()
        #expect(
            log.events == [
                "block", "a:next 1", "b:next 1", "a:error e", "b:error e", "c:next 1", "c:error e",
            ])
        c.dispose()
    }

    @Test func startLazilyRunsInlineWhenTheFirstSubscriberIsOnTheQueue() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue(name: "work")
        let log = EventLog()
        let signal = Signal<Int, NoError>.startLazily(on: queue) { subscriber in
            subscriber.putNext(1)
            subscriber.putCompletion()
        }
        queue.sync {
            _ = log.start(signal)
            log.append("start returned")
        }
        #expect(log.events == ["next 1", "completed", "start returned"])
    }

    @Test func theWorkIsNeverDisposed() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue(name: "work")
        let log = EventLog()
        let held = Shared<Subscriber<Int, NoError>?>(nil)
        let signal = Signal<Int, NoError>.startLazily(on: queue) { subscriber in
            held.value = subscriber
        }
        let a = log.start(signal, prefix: "a:")
        scheduler.run()
        a.dispose()
        held.value?.putNext(1)
        let b = log.start(signal, prefix: "b:")
        held.value?.putNext(2)
        #expect(log.events == ["b:next 1", "b:next 2"])
        b.dispose()
        held.value = nil
    }
}
