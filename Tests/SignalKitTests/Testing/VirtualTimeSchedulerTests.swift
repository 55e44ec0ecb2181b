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
