// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Dispatch
import SignalKit
import SignalKitTesting
import Synchronization
import Testing

// deliverOn(queue / thread pool, buffer:): the bounded hop. Virtual-time
// queues make the consumer run only when the test says so: values sent
// before `scheduler.run()` wait in the buffer, which is what the policies
// act on. Real queues and pools where the policy needs threads (`blocking`).
// Statistics live in a process-wide table keyed by the signal's name: each
// test names its signal uniquely.

@Suite struct DeliverOnBufferTests {
    init() { _ = statisticsKeptForTheTestRun }

    /// `a` with its values sent by the test (`a.putNext`), named `name`,
    /// delivered on a virtual-time queue through `buffer`.
    private func boundedLog(
        _ name: String,
        _ buffer: SignalBuffer<String>,
        scheduler: VirtualTimeScheduler,
        log: EventLog
    ) -> (TestSource<Int, String>, any Disposable) {
        let a = TestSource<Int, String>("a", log: log)
        let handle = log.start(a.signal |> named(name) |> deliverOn(scheduler.makeQueue(), buffer: buffer))
        return (a, handle)
    }

    private func statistics(_ name: String) -> SignalBufferStatistics? {
        SignalKitDebug.bufferStatistics().first { $0.name == name }
    }

    @Test func droppingOldestKeepsTheNewestValuesInOrder() {
        let scheduler = VirtualTimeScheduler()
        let log = EventLog()
        let (a, handle) = boundedLog("buffer.dropOldest", .droppingOldest(beyond: 2), scheduler: scheduler, log: log)
        for value in 1...5 { a.putNext(value) }
        #expect(log.take() == ["a.subscribe#1"])
        #expect(statistics("buffer.dropOldest")?.depth == 2)
        scheduler.run()
        #expect(log.take() == ["next 4", "next 5"])
        a.putNext(6)
        a.putCompletion()
        scheduler.run()
        #expect(log.take() == ["a.dispose#1", "next 6", "completed"])
        let stats = statistics("buffer.dropOldest")
        #expect(stats?.drops == 3)
        #expect(stats?.policy == "droppingOldest(beyond: 2)")
        #expect(stats?.maximumDepth == 2)
        #expect(stats?.depth == 0)
        handle.dispose()
    }

    @Test func droppingNewestKeepsTheOldestValuesInOrder() {
        let scheduler = VirtualTimeScheduler()
        let log = EventLog()
        let (a, handle) = boundedLog("buffer.dropNewest", .droppingNewest(beyond: 2), scheduler: scheduler, log: log)
        for value in 1...5 { a.putNext(value) }
        scheduler.run()
        #expect(log.take() == ["a.subscribe#1", "next 1", "next 2"])
        #expect(statistics("buffer.dropNewest")?.drops == 3)
        handle.dispose()
    }

    @Test func latestKeepsOnlyTheNewestValue() {
        let scheduler = VirtualTimeScheduler()
        let log = EventLog()
        let (a, handle) = boundedLog("buffer.latest", .latest, scheduler: scheduler, log: log)
        for value in 1...5 { a.putNext(value) }
        scheduler.run()
        a.putNext(6)
        scheduler.run()
        #expect(log.take() == ["a.subscribe#1", "next 5", "next 6"])
        #expect(statistics("buffer.latest")?.drops == 4)
        #expect(statistics("buffer.latest")?.policy == "latest")
        handle.dispose()
    }

    @Test func theTerminalEventIsNeverDroppedAndFollowsTheValues() {
        let scheduler = VirtualTimeScheduler()
        let log = EventLog()
        let (a, _) = boundedLog("buffer.terminal", .droppingNewest(beyond: 1), scheduler: scheduler, log: log)
        a.putNext(1)
        a.putNext(2)
        a.putError("e")
        #expect(log.take() == ["a.subscribe#1", "a.dispose#1"], "upstream disposed at once on termination")
        scheduler.run()
        #expect(log.take() == ["next 1", "error e"])
    }

    @Test func failingDropsTheWaitingValuesAndDeliversTheErrorNext() {
        let scheduler = VirtualTimeScheduler()
        let log = EventLog()
        let (a, _) = boundedLog(
            "buffer.fail", .failing(beyond: 2, with: "overflow"), scheduler: scheduler, log: log)
        a.putNext(1)
        a.putNext(2)
        a.putNext(3)
        #expect(log.take() == ["a.subscribe#1", "a.dispose#1"], "upstream disposed at the overflow")
        a.putNext(4)
        scheduler.run()
        #expect(log.take() == ["error overflow"])
        let stats = statistics("buffer.fail")
        #expect(stats?.drops == 3)
        #expect(stats?.overflows == 1)
    }

    @Test func failingStopsTheBatchBeingDeliveredAfterTheCurrentValue() {
        let scheduler = VirtualTimeScheduler()
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let queue = scheduler.makeQueue()
        _ = (a.signal |> named("buffer.failMidBatch") |> deliverOn(queue, buffer: .failing(beyond: 2, with: "overflow")))
            .start(
                next: { value in
                    log.append("next \(value)")
                    // The consumer is slow: three more arrive during value 1.
                    if value == 1 { for more in 3...5 { a.putNext(more) } }
                },
                error: { log.append("error \($0)") }
            )
        a.putNext(1)
        a.putNext(2)
        scheduler.run()
        #expect(log.events == ["a.subscribe#1", "next 1", "a.dispose#1", "error overflow"])
        // 3 and 4 waiting, 5 arriving, 2 in the batch.
        #expect(statistics("buffer.failMidBatch")?.drops == 4)
    }

    @Test func burstsAreDeliveredByOneDrainEach() {
        let scheduler = VirtualTimeScheduler()
        let log = EventLog()
        let (a, handle) = boundedLog("buffer.bursts", .droppingOldest(beyond: 100), scheduler: scheduler, log: log)
        for value in 1...3 { a.putNext(value) }
        #expect(scheduler.pendingCount == 1, "one drain for the burst")
        scheduler.run()
        for value in 4...5 { a.putNext(value) }
        #expect(scheduler.pendingCount == 1)
        scheduler.run()
        #expect(log.take() == ["a.subscribe#1", "next 1", "next 2", "next 3", "next 4", "next 5"])
        #expect(statistics("buffer.bursts")?.drops == 0)
        handle.dispose()
    }

    @Test func valuesSentDuringADrainFollowTheBatchInOrder() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let handle = (a.signal |> deliverOn(queue, buffer: .droppingOldest(beyond: 10))).start(next: { value in
            log.append("next \(value)")
            // On the queue, but values wait: queued behind them, not inline.
            if value == 1 { a.putNext(3) }
        })
        a.putNext(1)
        a.putNext(2)
        scheduler.run()
        #expect(log.events == ["a.subscribe#1", "next 1", "next 2", "next 3"])
        handle.dispose()
    }

    @Test func aValueSentOnTheQueueWithNothingWaitingIsDeliveredInline() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log, keepsSubscribers: false) {
            $0.putNext(1)
            $0.putCompletion()
        }
        queue.sync {
            _ = log.start(a.signal |> deliverOn(queue, buffer: .latest))
            log.append("start returned")
        }
        #expect(log.events == ["a.subscribe#1", "next 1", "completed", "a.dispose#1", "start returned"])
        #expect(scheduler.pendingCount == 0)
    }

    @Test func disposingReleasesTheWaitingValuesAtOnce() {
        let scheduler = VirtualTimeScheduler()
        let pipe = ValuePipe<TrackedObject>()
        let handle = (pipe.signal() |> deliverOn(scheduler.makeQueue(), buffer: .droppingOldest(beyond: 4))).start()
        let live = TrackedObject.liveCount
        for index in 0..<6 { pipe.putNext(TrackedObject("v\(index)")) }
        #expect(TrackedObject.liveCount == live + 4, "four wait; two were dropped and released")
        handle.dispose()
        #expect(TrackedObject.liveCount == live, "released by dispose, before the queue runs")
        scheduler.run()
    }

    @Test func nothingIsDeliveredAfterDisposal() {
        let scheduler = VirtualTimeScheduler()
        let log = EventLog()
        let (a, handle) = boundedLog("buffer.dispose", .droppingOldest(beyond: 4), scheduler: scheduler, log: log)
        a.putNext(1)
        a.putCompletion()
        handle.dispose()
        scheduler.run()
        #expect(log.events == ["a.subscribe#1", "a.dispose#1"])
        #expect(statistics("buffer.dispose")?.liveSubscriptions == 0)
    }

    @Test func unboundedIsTheUnboundedHop() {
        let scheduler = VirtualTimeScheduler()
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let handle = log.start(a.signal |> deliverOn(scheduler.makeQueue(), buffer: .unbounded))
        for value in 1...3 { a.putNext(value) }
        #expect(scheduler.pendingCount == 3, "one block per value, as deliverOn(queue)")
        scheduler.run()
        #expect(log.take() == ["a.subscribe#1", "next 1", "next 2", "next 3"])
        handle.dispose()
    }

    @Test func policiesDescribeThemselves() {
        #expect(SignalBuffer<NoError>.unbounded.description == "unbounded")
        #expect(SignalBuffer<NoError>.unbounded.limit == nil)
        #expect(SignalBuffer<NoError>.droppingNewest(beyond: 3).description == "droppingNewest(beyond: 3)")
        #expect(SignalBuffer<String>.failing(beyond: 7, with: "x").limit == 7)
        #expect(SignalBuffer<NoError>.blocking(beyond: 1).description == "blocking(beyond: 1)")
        #expect(SignalBuffer<NoError>.latest.limit == 1)
    }

    @Test func aLimitBelowOneStopsWithAMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = SignalBuffer<NoError>.droppingOldest(beyond: 0)
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("SignalBuffer.droppingOldest(beyond:): the limit must be at least 1 (it is 0)"))
    }

    // MARK: blocking, on real queues

    @Test func blockingHoldsTheProducerUntilTheConsumerTakesTheValues() {
        let queue = Queue(name: "buffer.block")
        let received = _LockedState<[Int]>([])
        let gate = DispatchSemaphore(value: 0)
        let pipe = ValuePipe<Int>()
        let handle = (pipe.signal() |> named("buffer.block") |> deliverOn(queue, buffer: .blocking(beyond: 2)))
            .start(next: { value in
                if value == 0 { gate.wait() }
                received.withLock { $0.append(value) }
            })
        let producerDone = Atomic<Bool>(false)
        let producer = DispatchGroup()
        DispatchQueue(label: "buffer.block.producer").async(group: producer) {
            for value in 0..<50 { pipe.putNext(value) }
            producerDone.store(true, ordering: .releasing)
        }
        // The consumer holds value 0: the producer fills two and waits.
        waitUntil { (statistics("buffer.block")?.blockedSends ?? 0) >= 1 }
        let doneWhileBlocked = producerDone.load(ordering: .acquiring)
        #expect(!doneWhileBlocked)
        gate.signal()
        waitUntil { producerDone.load(ordering: .acquiring) }
        queue.sync {}
        #expect(received.withLock { $0 } == Array(0..<50), "nothing dropped, in order")
        #expect(statistics("buffer.block")?.drops == 0)
        producer.wait()
        handle.dispose()
    }

    @Test func disposingReleasesABlockedProducer() {
        let queue = Queue(name: "buffer.blockDispose")
        let gate = DispatchSemaphore(value: 0)
        let pipe = ValuePipe<Int>()
        let handle = (pipe.signal() |> named("buffer.blockDispose") |> deliverOn(queue, buffer: .blocking(beyond: 1)))
            .start(next: { value in if value == 0 { gate.wait() } })
        let producer = DispatchGroup()
        DispatchQueue(label: "buffer.blockDispose.producer").async(group: producer) {
            for value in 0..<3 { pipe.putNext(value) }
        }
        waitUntil { (statistics("buffer.blockDispose")?.blockedSends ?? 0) >= 1 }
        handle.dispose()
        producer.wait()
        gate.signal()
        queue.sync {}
        #expect(statistics("buffer.blockDispose")?.drops == 1, "the blocked value")
    }

    @Test func blockingOnTheConsumersOwnQueueStopsWithAMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let queue = Queue(name: "buffer.deadlock")
            let pipe = ValuePipe<Int>()
            let handle = (pipe.signal() |> deliverOn(queue, buffer: .blocking(beyond: 1))).start()
            let sent = DispatchSemaphore(value: 0)
            let done = DispatchSemaphore(value: 0)
            queue.queue.async {
                // Value 1 waits behind this block; 2 finds the buffer full,
                // sent from the queue that must empty it.
                sent.wait()
                pipe.putNext(2)
                done.signal()
            }
            pipe.putNext(1)
            sent.signal()
            done.wait()
            handle.dispose()
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("from the queue that empties it; waiting for room would deadlock"))
    }

    // MARK: thread pool

    @Test func aThreadPoolDeliversEachBurstInOrderWithTheSamePolicies() {
        let pool = ThreadPool(threadCount: 2, threadPriority: 0.5)
        let received = _LockedState<[Int]>([])
        let gate = DispatchSemaphore(value: 0)
        let entered = Atomic<Bool>(false)
        let completed = Atomic<Bool>(false)
        let a = TestSource<Int, String>("a", log: EventLog())
        _ = (a.signal |> named("buffer.pool") |> deliverOn(pool, buffer: .droppingNewest(beyond: 3))).start(
            next: { value in
                if value == 0 {
                    entered.store(true, ordering: .releasing)
                    gate.wait()
                }
                received.withLock { $0.append(value) }
            },
            completed: { completed.store(true, ordering: .releasing) }
        )
        a.putNext(0)
        // Value 0 is being delivered: the rest waits.
        waitUntil { entered.load(ordering: .acquiring) }
        for value in 1...6 { a.putNext(value) }
        a.putCompletion()
        gate.signal()
        waitUntil { completed.load(ordering: .acquiring) }
        #expect(received.withLock { $0 } == [0, 1, 2, 3])
        #expect(statistics("buffer.pool")?.drops == 3)
    }
}
