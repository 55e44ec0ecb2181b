// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Dispatch
import SignalKit
import SignalKitTesting
import Testing

@Suite struct TimerTests {
    @Test func aOneShotTimerFiresOnceAfterItsTimeout() {
        let scheduler = VirtualTimeScheduler()
        let log = EventLog()
        let timer = SignalKit.Timer(
            timeout: 2, repeat: false, completion: { log.append("fired at \(scheduler.now)") }, queue: scheduler.makeQueue())
        timer.start()
        scheduler.advance(by: 1.9)
        #expect(log.events == [])
        scheduler.advance(by: 10)
        #expect(log.events == ["fired at 2.0"])
    }

    @Test func aRepeatingTimerFiresUntilInvalidated() {
        let scheduler = VirtualTimeScheduler()
        let log = EventLog()
        let timer = SignalKit.Timer(
            timeout: 1, repeat: true, completion: { log.append("tick \(scheduler.now)") }, queue: scheduler.makeQueue())
        timer.start()
        scheduler.advance(by: 3)
        timer.invalidate()
        scheduler.advance(by: 3)
        #expect(log.events == ["tick 1.0", "tick 2.0", "tick 3.0"])
    }

    @Test func startRestartsAndInvalidateBeforeStartIsANoOp() {
        let scheduler = VirtualTimeScheduler()
        let log = EventLog()
        let timer = SignalKit.Timer(
            timeout: 2, repeat: false, completion: { log.append("fired at \(scheduler.now)") }, queue: scheduler.makeQueue())
        timer.invalidate()
        timer.start()
        scheduler.advance(by: 1)
        timer.start()
        scheduler.advance(by: 5)
        #expect(log.events == ["fired at 3.0"])
    }

    @Test func aOneShotTimerCanBeRestartedFromItsCompletion() {
        let scheduler = VirtualTimeScheduler()
        let log = EventLog()
        let count = Shared(0)
        let timer = Shared<SignalKit.Timer?>(nil)
        timer.value = SignalKit.Timer(
            timeout: 1, repeat: false,
            completion: { (t: SignalKit.Timer) in
                count.value += 1
                log.append("fired at \(scheduler.now)")
                if count.value < 3 { t.start() }
            }, queue: scheduler.makeQueue())
        timer.value?.start()
        scheduler.advance(by: 10)
        #expect(log.events == ["fired at 1.0", "fired at 2.0", "fired at 3.0"])
    }

    @Test func releasingARunningTimerStopsIt() {
        let scheduler = VirtualTimeScheduler()
        let log = EventLog()
        do {
            let timer = SignalKit.Timer(
                timeout: 1, repeat: true, completion: { log.append("tick") }, queue: scheduler.makeQueue())
            timer.start()
        }
        scheduler.advance(by: 3)
        #expect(log.events == [])
    }

    @Test func aDispatchTimerFiresOnItsQueue() {
        let queue = Queue(name: "timer")
        let fired = Shared<Bool?>(nil)
        let timer = SignalKit.Timer(timeout: 0.002, repeat: false, completion: { fired.value = queue.isCurrent() }, queue: queue)
        timer.start()
        waitUntil { queue.syncResult { fired.value != nil } }
        #expect(queue.syncResult { fired.value } == true)
    }
}
