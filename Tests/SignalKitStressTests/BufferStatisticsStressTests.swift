// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Synchronization
import Testing

// The table of SignalKitDebug.bufferStatistics() under threads: subscriptions
// of one name start and end on two threads at once while a third reads the
// table, with no retention for the name, so its entry goes and comes back
// all the time. A subscription that starts while the last one ends must
// count into a live entry (never into one the table has dropped), and the
// table must never drop an entry a live subscription counts into.

extension StressSuite {
    @Suite(.serialized) struct BufferStatisticsStressTests {
        @Test func oneNameStartingAndEndingOnThreadsKeepsEveryLiveSubscriptionsCounters() {
            let name = "stress.statistics.churn"
            SignalKitDebug._setBufferStatisticsRetention(.zero, forNamesWithPrefix: name)
            defer { SignalKitDebug._setBufferStatisticsRetention(nil, forNamesWithPrefix: name) }
            let check = LeakCheck()
            let live = TrackedObject.liveCount
            let rounds = 2_000 * stressScale
            let counts = ChurnCounts()
            do {
                // Never run during the race: every value sent waits or is
                // dropped (4 sent, 1 waits, 3 dropped per subscription).
                let scheduler = VirtualTimeScheduler()
                race(threads: 3) { index in
                    guard index < 2 else {
                        // The reader: the table while entries go and come.
                        while counts.finishedSubscribers.load(ordering: .acquiring) < 2 {
                            for entry in SignalKitDebug.bufferStatistics() where entry.name == name {
                                if entry.liveSubscriptions > 2 || entry.depth > 2 { counts.wrong.add(1, ordering: .relaxed) }
                            }
                        }
                        return
                    }
                    let queue = scheduler.makeQueue()
                    for _ in 0..<rounds {
                        let probe = SignalBufferProbe()
                        let pipe = ValuePipe<TrackedObject>()
                        let handle =
                            (pipe.signal() |> named(name)
                            |> deliverOn(queue, buffer: SignalBuffer.droppingNewest(beyond: 1).counted(by: probe)))
                            .start()
                        for value in 0..<4 { pipe.putNext(TrackedObject("\(value)")) }
                        // This subscription is live: the name's entry is the
                        // one it counts into, with its 3 drops.
                        let entry = SignalKitDebug.bufferStatistics().first { $0.name == name }
                        if entry == nil || entry!.drops < 3 || entry!.liveSubscriptions < 1 {
                            counts.lost.add(1, ordering: .relaxed)
                        }
                        if probe.statistics.drops != 3 { counts.wrong.add(1, ordering: .relaxed) }
                        handle.dispose()
                        if probe.statistics.liveSubscriptions != 0 { counts.wrong.add(1, ordering: .relaxed) }
                        counts.probeDrops.add(Int(probe.statistics.drops), ordering: .relaxed)
                    }
                    counts.finishedSubscribers.add(1, ordering: .releasing)
                }
                // The drains the hops scheduled find them disposed.
                scheduler.run()
                #expect(counts.lost.load(ordering: .relaxed) == 0, "a live subscription's entry lacked its drops")
                #expect(counts.wrong.load(ordering: .relaxed) == 0)
                #expect(counts.probeDrops.load(ordering: .relaxed) == 2 * rounds * 3)
                #expect(!SignalKitDebug.bufferStatistics().contains { $0.name == name }, "nothing alive: no entry")
            }
            #expect(check.leaks() == nil)
            #expect(TrackedObject.liveCount == live, "every value released exactly once")
        }
    }
}

/// What the threads saw, across rounds.
private final class ChurnCounts: Sendable {
    let lost = Synchronization.Atomic<Int>(0)
    let wrong = Synchronization.Atomic<Int>(0)
    let probeDrops = Synchronization.Atomic<Int>(0)
    let finishedSubscribers = Synchronization.Atomic<Int>(0)
}
