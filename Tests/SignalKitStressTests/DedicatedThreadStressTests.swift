// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SignalKit
import SignalKitTesting
import Synchronization
import Testing

// The dedicated-thread queue under ThreadSanitizer and AddressSanitizer:
// many producers against its one thread, producers racing the thread's park,
// the queue released with work pending, and shutdown racing producers. Every
// scheduled closure captures a `TrackedObject`, so a closure run twice, never
// released or released twice shows in the live counters (or as an ASan
// report).

extension StressSuite {
    @Suite(.serialized) struct DedicatedThreadStressTests {
        static let strategies: [DedicatedThreadScheduler.WaitStrategy] = [
            .park, .spinThenPark(.microseconds(20)), .busySpin,
        ]

        /// Four producers into a ring of 8 cells (most of them spill), each
        /// checking that the thread runs its own work in its order.
        @Test(arguments: strategies)
        func manyProducersKeepTheirOrder(strategy: DedicatedThreadScheduler.WaitStrategy) {
            let check = LeakCheck()
            do {
                let scheduler = DedicatedThreadScheduler(name: "stress.many", waitStrategy: strategy, capacity: 8)
                let queue = Queue(scheduler: scheduler)
                let perProducer = 5_000 * stressScale
                let next = Shared([Int](repeating: 0, count: 4))
                let outOfOrder = Synchronization.Atomic<Int>(0)
                let offThread = Synchronization.Atomic<Int>(0)
                race(threads: 4) { producer in
                    for sequence in 0..<perProducer {
                        let tracked = TrackedObject()
                        queue.async {
                            withExtendedLifetime(tracked) {
                                if !queue.isCurrent() { offThread.add(1, ordering: .relaxed) }
                                let expected = next.withLock { next in
                                    defer { next[producer] = sequence + 1 }
                                    return next[producer]
                                }
                                if expected != sequence { outOfOrder.add(1, ordering: .relaxed) }
                            }
                        }
                    }
                }
                queue.sync {}
                scheduler.shutdown()
                #expect(outOfOrder.load(ordering: .relaxed) == 0)
                #expect(offThread.load(ordering: .relaxed) == 0)
                #expect(next.withLock { $0 } == [Int](repeating: perProducer, count: 4))
                let statistics = scheduler.statistics
                #expect(statistics.executed == 4 * perProducer + 1)
                #expect(statistics.spilledTotal > 0)
            }
            #expect(check.leaks() == nil)
        }

        /// One value at a time, each after a pause long enough for the
        /// thread to spin out and park: every send races the park (the race
        /// the model checks). A lost wake-up is a wait that does not end: the
        /// round gives up after 10 s and counts it.
        @Test(arguments: [DedicatedThreadScheduler.WaitStrategy.park, .spinThenPark(.microseconds(5))])
        func aProducerRacingTheParkAlwaysWakesTheThread(strategy: DedicatedThreadScheduler.WaitStrategy) {
            let check = LeakCheck()
            do {
                let scheduler = DedicatedThreadScheduler(name: "stress.park", waitStrategy: strategy)
                let queue = Queue(scheduler: scheduler)
                let lost = Synchronization.Atomic<Int>(0)
                let ran = DispatchSemaphore(value: 0)
                race(threads: 2) { producer in
                    for round in 0..<(300 * stressScale) {
                        // Vary the pause so that sends land before, during
                        // and after the announcement of the park.
                        usleep(UInt32((round + producer) % 7) * 3)
                        let tracked = TrackedObject()
                        queue.async { withExtendedLifetime(tracked) { _ = ran.signal() } }
                        if ran.wait(timeout: .now() + 10) == .timedOut { lost.add(1, ordering: .relaxed) }
                    }
                }
                #expect(lost.load(ordering: .relaxed) == 0)
                #expect(scheduler.statistics.parks > 0)
                scheduler.shutdown()
            }
            #expect(check.leaks() == nil)
        }

        /// The last reference goes while work is pending: the work runs, the
        /// thread exits, everything is released (no leak, no use after free).
        @Test func releasingAQueueWithWorkPendingLetsGoOfEverything() {
            let check = LeakCheck()
            let ran = Synchronization.Atomic<Int>(0)
            let rounds = 50 * stressScale
            for round in 0..<rounds {
                let queue = Queue(
                    dedicatedThread: "stress.release",
                    waitStrategy: round % 2 == 0 ? .park : .spinThenPark(.microseconds(10)),
                    capacity: 16
                )
                for _ in 0..<40 {
                    let tracked = TrackedObject()
                    queue.async { withExtendedLifetime(tracked) { _ = ran.add(1, ordering: .relaxed) } }
                }
                let tracked = TrackedObject()
                _ = queue.scheduler!.schedule(after: 3_600) { withExtendedLifetime(tracked) {} }
            }
            for _ in 0..<5_000 where ran.load(ordering: .relaxed) < rounds * 40 { usleep(1_000) }
            #expect(ran.load(ordering: .relaxed) == rounds * 40)
            #expect(check.leaks(timeout: 5) == nil)
        }

        /// `statisticsByName()` reads every live thread's core without
        /// retaining it, while schedulers come and go: a core freed during a
        /// read is a use-after-free AddressSanitizer reports.
        @Test func statisticsReadsRaceSchedulersGoingAway() {
            let check = LeakCheck()
            let name = "stress.registry"
            let found = Synchronization.Atomic<Int>(0)
            let done = Synchronization.Atomic<Bool>(false)
            race(threads: 2) { index in
                if index == 0 {
                    for round in 0..<(100 * stressScale) {
                        let queue = Queue(dedicatedThread: name, waitStrategy: .park, capacity: 4)
                        for _ in 0..<(round % 5) { queue.async {} }
                        if round % 2 == 0 { (queue.scheduler as? DedicatedThreadScheduler)?.shutdown() }
                    }
                    done.store(true, ordering: .releasing)
                } else {
                    while !done.load(ordering: .acquiring) {
                        if DedicatedThreadScheduler.statisticsByName().contains(where: { $0.name == name }) {
                            found.add(1, ordering: .relaxed)
                        }
                    }
                }
            }
            #expect(found.load(ordering: .relaxed) > 0)
            #expect(check.leaks(timeout: 5) == nil)
        }

        /// Producers racing `shutdown()`: every closure either ran or was
        /// refused (and released), none is lost or run twice.
        @Test func shutdownRacingProducersLosesNothing() {
            let check = LeakCheck()
            for _ in 0..<(20 * stressScale) {
                let scheduler = DedicatedThreadScheduler(name: "stress.stop", waitStrategy: .spinThenPark(.microseconds(5)))
                let queue = Queue(scheduler: scheduler)
                let ran = Synchronization.Atomic<Int>(0)
                let sent = 2_000
                race(threads: 3) { index in
                    if index == 2 {
                        usleep(100)
                        scheduler.shutdown()
                    } else {
                        for _ in 0..<sent {
                            let tracked = TrackedObject()
                            queue.async { withExtendedLifetime(tracked) { _ = ran.add(1, ordering: .relaxed) } }
                        }
                    }
                }
                let statistics = scheduler.statistics
                #expect(ran.load(ordering: .relaxed) == statistics.executed)
                #expect(statistics.executed + statistics.refused == 2 * sent)
            }
            #expect(check.leaks() == nil)
        }
    }
}
