// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Dispatch
import SignalKit
import SignalKitTesting
import Synchronization
import Testing

// deliverOn / runOn. Virtual-time queues where the behaviour allows it; real
// Dispatch queues and thread pools are waited for with `queue.sync {}`, a
// marker task, or by polling an atomic flag (`waitUntil`, a millisecond per
// poll), with gates instead of sleeps to order threads. Logs are read only
// once the threads writing them are done.

@Suite struct DeliverOnQueueTests {
    @Test func deliversInlineWhenTheSourceRunsOnTheQueue() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log, keepsSubscribers: false) {
            $0.putNext(1)
            $0.putNext(2)
            $0.putCompletion()
        }
        queue.sync {
            _ = log.start(a.signal |> deliverOn(queue))
            log.append("start returned")
        }
        #expect(log.events == ["a.subscribe#1", "next 1", "next 2", "completed", "a.dispose#1", "start returned"])
        #expect(scheduler.pendingCount == 0)
    }

    @Test func defersInOrderOtherwiseAndDisposesUpstreamAtOnceOnTheProducingThread() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log, keepsSubscribers: false) {
            $0.putNext(1)
            $0.putNext(2)
            $0.putCompletion()
        }
        _ = (a.signal |> deliverOn(queue)).start(
            next: { log.append("next \($0) onQueue=\(queue.isCurrent())") },
            completed: { log.append("completed onQueue=\(queue.isCurrent())") }
        )
        #expect(log.take() == ["a.subscribe#1", "a.dispose#1"], "upstream terminated: disposed before delivery")
        scheduler.run()
        #expect(log.take() == ["next 1 onQueue=true", "next 2 onQueue=true", "completed onQueue=true"])
        #expect(a.disposeCount == 1)
    }

    @Test func errorsAreDeferredToo() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log) { $0.putError("e") }
        _ = (a.signal |> deliverOn(queue)).start(error: { log.append("error \($0) onQueue=\(queue.isCurrent())") })
        #expect(log.take() == ["a.subscribe#1", "a.dispose#1"])
        scheduler.run()
        #expect(log.take() == ["error e onQueue=true"])
    }

    @Test func eventsNotYetDeliveredAreDroppedAfterDisposal() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let handle = log.start(a.signal |> deliverOn(queue))
        a.putNext(1)
        scheduler.run()
        a.putNext(2)
        a.putCompletion()
        handle.dispose()
        scheduler.run()
        #expect(log.events == ["a.subscribe#1", "next 1", "a.dispose#1"])
        #expect(a.disposeCount == 1)
    }

    @Test func disposingFromADeliveredEventDropsTheRest() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log, keepsSubscribers: false) {
            for value in 1...3 { $0.putNext(value) }
        }
        let handle = Shared<(any Disposable)?>(nil)
        handle.value = (a.signal |> deliverOn(queue)).start(next: { value in
            log.append("next \(value)")
            handle.value?.dispose()
        })
        scheduler.run()
        #expect(log.events == ["a.subscribe#1", "next 1", "a.dispose#1"])
        handle.value = nil
    }

    @Test func eventsFromAnotherThreadKeepTheirOrderOnARealQueue() {
        let queue = Queue(name: "deliver")
        let received = _LockedState<[Int]>([])
        let onQueue = Atomic<Bool>(true)
        let completed = Atomic<Bool>(false)
        let pipe = Shared<Subscriber<Int, NoError>?>(nil)
        let handle =
            (Signal<Int, NoError> { subscriber in
                pipe.value = subscriber
                return EmptyDisposable
            } |> deliverOn(queue)).start(
                next: { value in
                    if !queue.isCurrent() { onQueue.store(false, ordering: .relaxed) }
                    received.withLock { $0.append(value) }
                },
                completed: { completed.store(true, ordering: .releasing) }
            )
        for value in 0..<1000 { pipe.value?.putNext(value) }
        pipe.value?.putCompletion()
        waitUntil { completed.load(ordering: .acquiring) }
        #expect(received.withLock { $0 } == Array(0..<1000))
        let allOnQueue = onQueue.load(ordering: .relaxed)
        #expect(allOnQueue)
        handle.dispose()
        pipe.value = nil
    }

    @Test func upstreamIsDisposedOnTheProducingThreadBeforeARealQueueDelivers() {
        let queue = Queue(name: "deliver")
        let upstreamLog = EventLog()
        let log = EventLog()
        let gate = DispatchSemaphore(value: 0)
        queue.async { gate.wait() }  // holds the queue
        let a = TestSource<Int, String>("a", log: upstreamLog, keepsSubscribers: false) {
            $0.putNext(1)
            $0.putCompletion()
        }
        _ = log.start(a.signal |> deliverOn(queue))
        #expect(upstreamLog.events == ["a.subscribe#1", "a.dispose#1"])
        #expect(log.events == [])
        gate.signal()
        queue.sync {}
        #expect(log.events == ["next 1", "completed"])
    }
}

@Suite struct DeliverOnMainQueueTests {
    /// Swift Testing runs tests on a pool thread, never on the process's main
    /// thread (on Linux it is parked in `dispatchMain()` while another thread
    /// drains the main queue), so the inline branch ("already on the main
    /// thread") cannot run here; it is `deliverOn`'s inline rule, tested
    /// above, with `Queue.mainQueue().isCurrent()` meaning "on the main
    /// thread". What can be tested: events go through `DispatchQueue.main`.
    @Test func deliversThroughTheMainDispatchQueueInOrder() {
        DispatchQueue.main.setSpecific(key: mainQueueKey, value: 1)
        #expect(!Queue.mainQueue().isCurrent(), "tests do not run on the main thread")
        let upstreamLog = EventLog()
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: upstreamLog, keepsSubscribers: false) {
            $0.putNext(1)
            $0.putNext(2)
            $0.putCompletion()
        }
        let completed = Atomic<Bool>(false)
        let handle = deliverOnMainQueue(a.signal).start(
            next: { log.append("next \($0) main=\(DispatchQueue.getSpecific(key: mainQueueKey) == 1)") },
            completed: {
                log.append("completed main=\(DispatchQueue.getSpecific(key: mainQueueKey) == 1)")
                completed.store(true, ordering: .releasing)
            }
        )
        #expect(upstreamLog.events == ["a.subscribe#1", "a.dispose#1"])
        waitUntil { completed.load(ordering: .acquiring) }
        #expect(log.events == ["next 1 main=true", "next 2 main=true", "completed main=true"])
        handle.dispose()
    }

    @Test func disposalDropsWhatTheMainQueueHasNotDelivered() {
        let log = EventLog()
        let gate = DispatchSemaphore(value: 0)
        let finished = Atomic<Bool>(false)
        DispatchQueue.main.async { gate.wait() }  // holds the main queue
        let handle = deliverOnMainQueue(Signal<Int, String>.single(1)).start(
            next: { log.append("next \($0)") },
            completed: { log.append("completed") }
        )
        handle.dispose()
        gate.signal()
        DispatchQueue.main.async { finished.store(true, ordering: .releasing) }
        waitUntil { finished.load(ordering: .acquiring) }
        #expect(log.events == [])
    }
}

private let mainQueueKey = DispatchSpecificKey<Int>()

@Suite struct DeliverOnThreadPoolTests {
    @Test func deliversOnPoolThreadsInOrder() {
        let pool = makeThreadPool(threadCount: 3)
        let upstreamLog = EventLog()
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: upstreamLog, keepsSubscribers: false) {
            for value in 1...100 { $0.putNext(value) }
            $0.putCompletion()
        }
        let inPool = Atomic<Bool>(true)
        let completed = Atomic<Bool>(false)
        _ = (a.signal |> deliverOn(pool)).start(
            next: { value in
                if !pool.isCurrentThreadInPool() { inPool.store(false, ordering: .relaxed) }
                log.append("next \(value)")
            },
            completed: {
                log.append("completed")
                completed.store(true, ordering: .releasing)
            }
        )
        #expect(upstreamLog.events == ["a.subscribe#1", "a.dispose#1"], "upstream disposed at once on termination")
        waitUntil { completed.load(ordering: .acquiring) }
        #expect(log.events == (1...100).map { "next \($0)" } + ["completed"])
        let allInPool = inPool.load(ordering: .relaxed)
        #expect(allInPool)
    }

    @Test func queuedEventsAreDroppedOnceDisposed() {
        let pool = makeThreadPool(threadCount: 2)
        let log = EventLog()
        let gate = DispatchSemaphore(value: 0)
        let delivering = Atomic<Bool>(false)
        let released = Atomic<Int>(0)
        let a = TestSource<Probe, String>("a", log: EventLog())
        let handle = (a.signal |> deliverOn(pool)).start(next: { probe in
            log.append("next \(probe.name)")
            if probe.name == "1" {
                delivering.store(true, ordering: .releasing)
                gate.wait()
            }
        })
        for name in ["1", "2", "3"] {
            a.putNext(Probe(name) { _ in released.add(1, ordering: .releasing) })
        }
        waitUntil { delivering.load(ordering: .acquiring) }
        handle.dispose()
        gate.signal()
        // A task releases its value once it ran (delivering nothing).
        waitUntil { released.load(ordering: .acquiring) == 3 }
        #expect(released.load(ordering: .acquiring) == 3)
        #expect(log.events == ["next 1"])
    }

    @Test func eachSubscriptionHasItsOwnLane() {
        let pool = makeThreadPool(threadCount: 2)
        let gate = DispatchSemaphore(value: 0)
        let firstBlocks = Atomic<Bool>(false)
        let secondDelivered = Atomic<Bool>(false)
        let blocked = (Signal<Int, String>.single(1) |> deliverOn(pool)).start(next: { _ in
            firstBlocks.store(true, ordering: .releasing)
            gate.wait()
        })
        waitUntil { firstBlocks.load(ordering: .acquiring) }
        let other = (Signal<Int, String>.single(2) |> deliverOn(pool)).start(next: { _ in
            secondDelivered.store(true, ordering: .releasing)
        })
        waitUntil { secondDelivered.load(ordering: .acquiring) }
        let delivered = secondDelivered.load(ordering: .acquiring)
        #expect(delivered, "the second subscription's lane runs while the first one's is blocked")
        gate.signal()
        blocked.dispose()
        other.dispose()
    }
}

@Suite struct RunOnQueueTests {
    @Test func subscribesInlineWhenAlreadyOnTheQueue() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log) { subscriber in
            log.append("onQueue=\(queue.isCurrent())")
            subscriber.putNext(1)
        }
        let handle = Shared<(any Disposable)?>(nil)
        queue.sync {
            handle.value = log.start(a.signal |> runOn(queue))
            log.append("start returned")
        }
        #expect(log.take() == ["a.subscribe#1", "onQueue=true", "next 1", "start returned"])
        #expect(scheduler.pendingCount == 0)
        handle.value?.dispose()
        #expect(log.take() == ["a.dispose#1"])
    }

    @Test func subscribesFromABlockOnTheQueueOtherwise() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log) { subscriber in
            log.append("onQueue=\(queue.isCurrent())")
            subscriber.putNext(1)
        }
        let handle = (a.signal |> runOn(queue)).start(next: { log.append("next \($0) onQueue=\(queue.isCurrent())") })
        log.append("start returned")
        scheduler.run()
        #expect(log.take() == ["start returned", "a.subscribe#1", "onQueue=true", "next 1 onQueue=true"])
        a.putNext(2)
        #expect(log.take() == ["next 2 onQueue=false"], "events are not re-dispatched")
        handle.dispose()
        handle.dispose()
        #expect(log.take() == ["a.dispose#1"])
        #expect(a.disposeCount == 1)
    }

    @Test func disposingBeforeTheBlockRunsPreventsTheSubscription() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let handle = log.start(a.signal |> runOn(queue))
        handle.dispose()
        scheduler.run()
        #expect(log.events == [])
        #expect(a.subscribeCount == 0)
    }

    @Test func terminationIsForwardedAndDisposesUpstreamOnce() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log, keepsSubscribers: false) {
            $0.putNext(1)
            $0.putError("e")
        }
        let handle = log.start(a.signal |> runOn(queue))
        scheduler.run()
        handle.dispose()
        #expect(log.events == ["a.subscribe#1", "next 1", "error e", "a.dispose#1"])
        #expect(a.disposeCount == 1)
    }

    @Test func aWrapperOfADispatchQueueIsNeverCurrentSoItAlwaysDispatches() {
        let named = Queue(name: "named")
        let wrapper = Queue(queue: named.queue)
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log) { _ in
            log.append("wrapper current=\(wrapper.isCurrent()) named current=\(named.isCurrent())")
        }
        let handle = Shared<(any Disposable)?>(nil)
        named.sync {
            handle.value = log.start(a.signal |> runOn(wrapper))
            log.append("start returned")
        }
        named.sync {}
        #expect(log.events == ["start returned", "a.subscribe#1", "wrapper current=false named current=true"])
        handle.value?.dispose()
        #expect(a.disposeCount == 1)
    }

    @Test func onARealQueueTheSubscriptionHappensThere() {
        let queue = Queue(name: "run")
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log, keepsSubscribers: false) { subscriber in
            log.append("onQueue=\(queue.isCurrent())")
            subscriber.putCompletion()
        }
        _ = log.start(a.signal |> runOn(queue))
        queue.sync {}
        #expect(log.events == ["a.subscribe#1", "onQueue=true", "completed", "a.dispose#1"])
    }
}

@Suite struct RunOnThreadPoolTests {
    @Test func subscribesOnAPoolThread() {
        let pool = makeThreadPool(threadCount: 1)
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log, keepsSubscribers: false) { subscriber in
            log.append("inPool=\(pool.isCurrentThreadInPool())")
            subscriber.putNext(1)
            subscriber.putCompletion()
        }
        let handle = (a.signal |> runOn(pool)).start(
            next: { log.append("next \($0) inPool=\(pool.isCurrentThreadInPool())") },
            completed: { log.append("completed") }
        )
        pool.waitForQueuedTasks()
        #expect(log.events == ["a.subscribe#1", "inPool=true", "next 1 inPool=true", "completed", "a.dispose#1"])
        handle.dispose()
        #expect(a.disposeCount == 1)
    }

    @Test func disposingBeforeTheTaskRunsPreventsTheSubscription() {
        let pool = makeThreadPool(threadCount: 1)
        let gate = DispatchSemaphore(value: 0)
        pool.addTask(ThreadPoolTask { _ in gate.wait() })  // holds the only thread
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let handle = log.start(a.signal |> runOn(pool))
        handle.dispose()
        gate.signal()
        pool.waitForQueuedTasks()
        #expect(log.events == [])
        #expect(a.subscribeCount == 0)
    }

    @Test func disposalAfterTheSubscriptionDisposesUpstreamAndReleasesEverything() {
        let pool = makeThreadPool(threadCount: 1)
        let log = EventLog()
        let upstream = WeakBox<Probe>(nil)
        let handle: any Disposable
        do {
            let probe = Probe()
            upstream.value = probe
            let a = TestSource<Int, String>("a", log: log) { _ in probe.touch() }
            handle = log.start(a.signal |> runOn(pool))
        }
        pool.waitForQueuedTasks()
        #expect(log.events == ["a.subscribe#1"])
        handle.dispose()
        #expect(log.events == ["a.subscribe#1", "a.dispose#1"])
        waitUntil { upstream.value == nil }
        #expect(upstream.value == nil, "the subscription, its task and the signal are released")
    }

    @Test func disposalBeforeTheTaskRunsReleasesEverything() {
        let pool = makeThreadPool(threadCount: 1)
        let gate = DispatchSemaphore(value: 0)
        pool.addTask(ThreadPoolTask { _ in gate.wait() })
        let upstream = WeakBox<Probe>(nil)
        let handle: any Disposable
        do {
            let probe = Probe()
            upstream.value = probe
            handle =
                (Signal<Int, String> { _ in
                    probe.touch()
                    return EmptyDisposable
                } |> runOn(pool)).start()
        }
        handle.dispose()
        gate.signal()
        waitUntil { upstream.value == nil }
        #expect(upstream.value == nil)
    }
}

extension ThreadPool {
    /// Waits until the tasks queued so far have run (for a one-thread pool:
    /// a marker task runs after them).
    func waitForQueuedTasks() {
        let finished = Atomic<Bool>(false)
        addTask(ThreadPoolTask { _ in finished.store(true, ordering: .releasing) })
        waitUntil { finished.load(ordering: .acquiring) }
    }
}

/// A new thread pool whose weak-reference side table stays visibly reachable.
///
/// Pools live for the whole process (their threads keep them alive) and a
/// `ThreadPoolQueue` refers to its pool weakly. Once no lane is left, the
/// side table of that weak reference is referenced only from the pool's
/// (encoded) reference count, which LeakSanitizer cannot read: it then reports
/// the side table as leaked. Keeping one lane per pool avoids the false report.
func makeThreadPool(threadCount: Int) -> ThreadPool {
    let pool = ThreadPool(threadCount: threadCount, threadPriority: 0.5)
    _ = immortalLanes.modify { $0 + [pool.nextQueue()] }
    return pool
}

private let immortalLanes = SignalKit.Atomic<[ThreadPoolQueue]>(value: [])
