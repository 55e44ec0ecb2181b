// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

@Suite struct VirtualTimeSchedulerTests {
    @Test func runsWorkInDeadlineOrderFIFOAmongEqualDeadlines() {
        let scheduler = VirtualTimeScheduler()
        let a = scheduler.makeQueue(name: "a")
        let b = scheduler.makeQueue(name: "b")
        let log = EventLog()
        a.after(2) { log.append("a2") }
        b.after(1) { log.append("b1") }
        a.after(1) { log.append("a1") }
        b.async { log.append("b0") }
        scheduler.run()
        #expect(log.events == ["b0", "b1", "a1", "a2"])
        #expect(scheduler.now == 2)
    }

    /// Many items with colliding deadlines, scheduled in a scrambled order
    /// on several queues, and one scheduled while others run: they run in
    /// (deadline, scheduling order), exactly as sorting them gives.
    @Test func manyItemsRunInDeadlineThenSchedulingOrder() {
        let scheduler = VirtualTimeScheduler()
        let queues = (0..<3).map { scheduler.makeQueue(name: "q\($0)") }
        let log = EventLog()
        var scheduled: [(deadline: Int, order: Int)] = []
        var seed: UInt64 = 42
        for order in 0..<2_000 {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let deadline = Int((seed >> 33) % 50)
            scheduled.append((deadline, order))
            queues[order % 3].after(Double(deadline)) { log.append("\(order)") }
        }
        // Scheduled last among the items due at 10, it schedules "late" for
        // now: "late" runs right after it, before anything due at 11.
        queues[0].after(10) { queues[1].after(0) { log.append("late") } }
        scheduler.run()
        let sorted = scheduled.sorted { ($0.deadline, $0.order) < ($1.deadline, $1.order) }
        var expected = sorted.map { "\($0.order)" }
        expected.insert("late", at: sorted.lastIndex { $0.deadline <= 10 }! + 1)
        #expect(log.events == expected)
        #expect(scheduler.pendingCount == 0)
        #expect(scheduler.now == 49)
    }

    @Test func advanceMovesTheClockEvenWhenIdle() {
        let scheduler = VirtualTimeScheduler()
        scheduler.advance(by: 3)
        #expect(scheduler.now == 3)
        scheduler.advance(to: 2)
        #expect(scheduler.now == 3, "time never goes back")
    }

    @Test func workScheduledWhileRunningRunsInTheSameAdvanceIfDue() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        queue.after(1) {
            log.append("first at \(scheduler.now)")
            queue.after(1) { log.append("second at \(scheduler.now)") }
        }
        scheduler.advance(by: 2)
        #expect(log.events == ["first at 1.0", "second at 2.0"])
    }

    @Test func syncFromOutsideRunsAtOnceAsCurrent() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        var current = false
        queue.sync { current = queue.isCurrent() }
        #expect(current)
        #expect(!queue.isCurrent())
    }
}
