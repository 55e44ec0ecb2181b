// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

// EventObserver tokens: cancelsAfterNextFire on the three delivery paths,
// last-data replay, targeted fire, tokens and emitters outliving each other,
// Lifetime. Queued delivery runs on VirtualTimeScheduler queues.

@Suite struct CancelsAfterNextFireTests {
    /// An emitter whose `observerRemoved` hook logs "removed".
    private func makeEmitter(log: EventLog) -> EventEmitter<Int> {
        let emitter = EventEmitter<Int>()
        emitter.observerRemoved = { _ in log.append("removed") }
        return emitter
    }

    @Test func theNextFireRemovesTheObserverBeforeItsCallbackAndIsTheLast() {
        let log = EventLog()
        let emitter = makeEmitter(log: log)
        let owner = Probe()
        let token = Shared<EventObserver?>(nil)
        token.value = emitter.addObserver(owner) { _, value in
            log.append("next \(value) cancelled=\(token.value!.isCancelled)")
        }
        token.value!.cancelsAfterNextFire = true
        emitter.fire(1)
        emitter.fire(2)
        #expect(log.events == ["removed", "next 1 cancelled=true"])
        #expect(emitter.observerCount == 0)
        token.value = nil  // the callback captures the box holding its own token
    }

    @Test func settingItAfterAFireAffectsOnlyLaterFires() {
        let log = EventLog()
        let emitter = makeEmitter(log: log)
        let owner = Probe()
        let token = emitter.addObserver(owner) { _, value in log.append("next \(value)") }
        emitter.fire(1)
        token.cancelsAfterNextFire = true
        emitter.fire(2)
        emitter.fire(3)
        #expect(log.events == ["next 1", "removed", "next 2"], "two deliveries (Uber's testCancelsAfterFire)")
    }

    @Test func severalQueuedFiresDeliverExactlyOnce() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let emitter = makeEmitter(log: log)
        let owner = Probe()
        let token = emitter.addObserver(owner, queue: queue) { _, value in
            log.append("next \(value) onQueue=\(queue.isCurrent())")
        }
        token.cancelsAfterNextFire = true
        emitter.fire(1)
        emitter.fire(2)
        emitter.fire(3)
        #expect(scheduler.pendingCount == 3, "all three were dispatched before the first ran")
        #expect(log.events == [])
        scheduler.run()
        #expect(log.events == ["removed", "next 1 onQueue=true"], "Uber Signals would deliver all three")
        #expect(token.isCancelled)
        #expect(emitter.observerCount == 0)
    }

    @Test func itAppliesToTargetedFires() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let emitter = makeEmitter(log: log)
        let owner = Probe()
        let synchronous = emitter.addObserver(owner) { _, value in log.append("sync \(value)") }
        synchronous.cancelsAfterNextFire = true
        emitter.fire(for: synchronous, 1)
        emitter.fire(for: synchronous, 2)
        #expect(log.take() == ["removed", "sync 1"])

        let queued = emitter.addObserver(owner, queue: queue) { _, value in log.append("queued \(value)") }
        queued.cancelsAfterNextFire = true
        emitter.fire(for: queued, 3)
        emitter.fire(for: queued, 4)
        scheduler.run()
        #expect(log.take() == ["removed", "queued 3"])
    }

    @Test func itAppliesToFirePreviousData() {
        let log = EventLog()
        let emitter = makeEmitter(log: log)
        emitter.fire(1)
        let owner = Probe()
        let token = emitter.addObserver(owner) { _, value in log.append("next \(value)") }
        token.cancelsAfterNextFire = true
        #expect(token.firePreviousData())
        #expect(!token.firePreviousData(), "removed by the first replay")
        emitter.fire(2)
        #expect(log.events == ["removed", "next 1"], "Uber's testCancelsAfterFireWithPreviousData")
    }

    @Test func aQueuedReplayAndQueuedFiresShareTheOneDelivery() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let emitter = makeEmitter(log: log)
        emitter.fire(1)
        let owner = Probe()
        let token = emitter.addObserver(owner, queue: queue) { _, value in log.append("next \(value)") }
        token.cancelsAfterNextFire = true
        #expect(token.firePreviousData())
        emitter.fire(2)
        emitter.fire(for: token, 3)
        scheduler.run()
        #expect(log.events == ["removed", "next 1"])
    }
}

@Suite struct LastDataReplayTests {
    @Test func firePreviousDataReplaysTheLastArgumentsToThatObserverOnly() {
        let log = EventLog()
        let emitter = EventEmitter<Int, String?>()
        let a = Probe("a")
        let b = Probe("b")
        let first = emitter.addObserver(a) { owner, number, text in log.append("\(owner.name) \(number) \(text ?? "nil")") }
        emitter.addObserver(b) { owner, number, text in log.append("\(owner.name) \(number) \(text ?? "nil")") }
        #expect(!first.firePreviousData(), "nothing fired yet")
        #expect(log.events == [])
        emitter.fire(1, "x")
        emitter.fire(2, nil)
        log.take()
        #expect(first.firePreviousData())
        #expect(first.firePreviousData())
        #expect(log.take() == ["a 2 nil", "a 2 nil"])
        emitter.removeAllObservers()
    }

    @Test func thereIsNoAutomaticReplayOnAdd() {
        let log = EventLog()
        let emitter = EventEmitter<Int>()
        emitter.fire(1)
        let owner = Probe()
        let token = emitter.addObserver(owner) { _, value in log.append("next \(value)") }
        #expect(log.events == [])
        token.firePreviousData()  // the opt-in: "subscribe and get the current state"
        #expect(log.events == ["next 1"])
        token.cancel()
    }

    @Test func anEmitterWithoutArgumentsNeverHasData() {
        let log = EventLog()
        // An empty parameter pack needs `< >`: the formatter would make it the operator `<>`.
        // swift-format-ignore
        let emitter = EventEmitter< >()
        let owner = Probe()
        let token = emitter.addObserver(owner) { _ in log.append("fired") }
        emitter.fire()
        emitter.fire(for: token)
        #expect(!token.firePreviousData())
        #expect(log.events == ["fired", "fired"])
        token.cancel()
    }

    @Test func aTargetedFireOverwritesTheLastData() {
        let log = EventLog()
        let emitter = EventEmitter<Int>()
        let a = Probe("a")
        let b = Probe("b")
        let first = emitter.addObserver(a) { owner, value in log.append("\(owner.name) \(value)") }
        let second = emitter.addObserver(b) { owner, value in log.append("\(owner.name) \(value)") }
        emitter.fire(1)
        emitter.fire(for: first, 5)
        #expect(log.take() == ["a 1", "b 1", "a 5"], "targeted: only that observer")
        #expect(second.firePreviousData())
        #expect(log.take() == ["b 5"], "but it is the emitter's last data")
        emitter.removeAllObservers()
    }

    @Test func replayGoesThroughTheObserversQueue() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let emitter = EventEmitter<Int>()
        emitter.fire(7)
        let owner = Probe()
        let token = emitter.addObserver(owner, queue: queue) { _, value in
            log.append("\(value) onQueue=\(queue.isCurrent())")
        }
        #expect(token.firePreviousData())
        #expect(log.events == [])
        scheduler.run()
        #expect(log.events == ["7 onQueue=true"])
        token.cancel()
    }

    @Test func aRemovedOrDeadObserverGetsNoReplay() {
        let log = EventLog()
        let emitter = EventEmitter<Int>()
        emitter.observerRemoved = { _ in log.append("removed") }
        emitter.fire(1)
        let owner = Probe()
        let cancelled = emitter.addObserver(owner) { _, value in log.append("cancelled \(value)") }
        cancelled.cancel()
        #expect(!cancelled.firePreviousData())
        let dead: EventObserver
        do {
            let short = Probe()
            dead = emitter.addObserver(short) { _, value in log.append("dead \(value)") }
        }
        #expect(!dead.firePreviousData())
        #expect(log.events == ["removed", "removed"], "the dead owner's registration was purged")
        #expect(dead.isCancelled)
    }

    @Test func theLastDataIsReleasedWhenReplacedAndWithTheEmitter() {
        let weakFirst = WeakBox<Probe>(nil)
        let weakSecond = WeakBox<Probe>(nil)
        do {
            let emitter = EventEmitter<Probe>()
            do {
                let first = Probe("first")
                weakFirst.value = first
                emitter.fire(first)
            }
            #expect(weakFirst.value != nil, "kept as last data")
            do {
                let second = Probe("second")
                weakSecond.value = second
                emitter.fire(second)
            }
            #expect(weakFirst.value == nil, "replaced")
            #expect(weakSecond.value != nil)
        }
        #expect(weakSecond.value == nil, "released with the emitter")
    }
}

@Suite struct TargetedFireTests {
    @Test func fireForDeliversToThatObserverOnly() {
        let log = EventLog()
        let emitter = EventEmitter<String>()
        let a = Probe("a")
        let b = Probe("b")
        emitter.addObserver(a) { owner, value in log.append("\(owner.name) \(value)") }
        let second = emitter.addObserver(b) { owner, value in log.append("\(owner.name) \(value)") }
        emitter.fire(for: second, "only b")
        #expect(log.events == ["b only b"])
        emitter.removeAllObservers()
    }

    @Test func fireForARemovedObserverDeliversNothingAndADeadOwnerIsPurged() {
        let log = EventLog()
        let emitter = EventEmitter<Int>()
        emitter.observerRemoved = { _ in log.append("removed") }
        let owner = Probe()
        let token = emitter.addObserver(owner) { _, value in log.append("next \(value)") }
        token.cancel()
        emitter.fire(for: token, 1)
        #expect(log.take() == ["removed"])
        let dead: EventObserver
        do {
            let short = Probe()
            dead = emitter.addObserver(short) { _, value in log.append("dead \(value)") }
        }
        emitter.fire(for: dead, 2)
        #expect(log.take() == ["removed"])
        #expect(emitter.observerCount == 0)
    }

    @Test func fireForAnotherEmittersTokenIsAProgrammingError() async {
        await #expect(processExitsWith: .failure) {
            let one = EventEmitter<Int>()
            let other = EventEmitter<Int>()
            let owner = Probe()
            let token = other.addObserver(owner) { _, _ in }
            one.fire(for: token, 1)
        }
    }
}

@Suite struct EventObserverLifetimeTests {
    @Test func tokensOutlivingTheEmitterAreHarmless() {
        let log = EventLog()
        let weakEmitter = WeakBox<EventEmitter<Int>>(nil)
        let owner = Probe()
        let first: EventObserver
        let second: EventObserver
        do {
            let emitter = EventEmitter<Int>()
            weakEmitter.value = emitter
            emitter.observerRemoved = { _ in log.append("removed") }
            first = emitter.addObserver(owner) { _, value in log.append("first \(value)") }
            second = emitter.addObserver(owner) { _, value in log.append("second \(value)") }
            emitter.fire(1)
        }
        #expect(weakEmitter.value == nil, "tokens hold the emitter weakly")
        #expect(!first.firePreviousData())
        first.cancel()
        #expect(first.isCancelled)
        second.cancelsAfterNextFire = true
        second.queue = nil
        #expect(!second.isCancelled)
        #expect(log.events == ["first 1", "second 1"], "no hook: the emitter is gone")
    }

    @Test func aDeliveryDispatchedBeforeTheEmitterDiedStillRuns() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let owner = Probe()
        let token: EventObserver
        do {
            let emitter = EventEmitter<Int>()
            token = emitter.addObserver(owner, queue: queue) { _, value in log.append("next \(value)") }
            token.cancelsAfterNextFire = true
            emitter.fire(1)
            emitter.fire(2)
        }
        scheduler.run()
        #expect(log.events == ["next 1"], "the fire happened while the emitter lived; still exactly once")
        #expect(token.isCancelled)
    }

    @Test func cancellingSkipsDeliveriesAlreadyDispatched() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let emitter = EventEmitter<Int>()
        let owner = Probe()
        let token = emitter.addObserver(owner, queue: queue) { _, value in log.append("next \(value)") }
        emitter.fire(1)
        token.cancel()
        scheduler.run()
        #expect(log.events == [])
    }

    @Test func aLifetimeEndsRegistrationsEagerlyWhenItsHolderIsDeallocated() {
        final class View: Sendable {
            let lifetime = Lifetime()
            let log: EventLog
            init(log: EventLog) { self.log = log }
        }
        let log = EventLog()
        let emitter = EventEmitter<Int>()
        emitter.observerRemoved = { _ in log.append("removed") }
        let token: EventObserver
        do {
            let view = View(log: log)
            token = emitter.addObserver(view, lifetime: view.lifetime) { view, value in view.log.append("next \(value)") }
            emitter.addObserver(view, lifetime: view.lifetime) { view, value in view.log.append("second \(value)") }
            emitter.fire(1)
        }
        #expect(log.events == ["next 1", "second 1", "removed", "removed"], "removed at once, not at the next fire")
        #expect(emitter.observerCount == 0)
        #expect(token.isCancelled)
    }

    @Test func aLifetimeDisposesWhatIsAddedAfterItEndedAtOnce() {
        let log = EventLog()
        let lifetime = Lifetime()
        lifetime.add(log.disposable("a"))
        #expect(!lifetime.hasEnded)
        lifetime.end()
        #expect(lifetime.hasEnded)
        lifetime.add(log.disposable("b"))
        lifetime.end()
        #expect(log.events == ["a.dispose", "b.dispose"])

        let emitter = EventEmitter<Int>()
        let owner = Probe()
        let token = emitter.addObserver(owner, lifetime: lifetime) { _, _ in }
        #expect(token.isCancelled)
        #expect(emitter.observerCount == 0)
    }

    @Test func aLifetimeDropsCancelledTokensAsItGrows() {
        let lifetime = Lifetime()
        let emitter = EventEmitter<Int>()
        let owner = Probe()
        let weakToken = WeakBox<EventObserver>(nil)
        do {
            let token = emitter.addObserver(owner, lifetime: lifetime) { _, _ in }
            weakToken.value = token
            token.cancel()
        }
        #expect(weakToken.value != nil, "still listed")
        for _ in 0..<40 {
            emitter.addObserver(owner, lifetime: lifetime) { _, _ in }.cancel()
        }
        #expect(weakToken.value == nil, "pruned")
        emitter.addObserver(owner, lifetime: lifetime) { _, _ in }
        lifetime.end()
        #expect(emitter.observerCount == 0)
    }
}
