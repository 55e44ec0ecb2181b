// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

@Suite struct ValuePipeTests {
    @Test func deliversToCurrentSubscribersInSubscriptionOrderWithoutReplay() {
        let log = EventLog()
        let pipe = ValuePipe<Int>()
        pipe.putNext(0)
        let a = log.start(pipe.signal(), prefix: "a:")
        let b = log.start(pipe.signal(), prefix: "b:")
        pipe.putNext(1)
        a.dispose()
        pipe.putNext(2)
        let c = log.start(pipe.signal(), prefix: "c:")
        pipe.putNext(3)
        #expect(log.events == ["a:next 1", "b:next 1", "b:next 2", "b:next 3", "c:next 3"])
        b.dispose()
        c.dispose()
    }

    @Test func neitherTheSignalNorASubscriptionKeepsThePipeAlive() {
        let log = EventLog()
        let weakPipe = WeakBox<ValuePipe<Int>>(nil)
        let signal: Signal<Int, NoError>
        let handle: any Disposable
        let probe = WeakBox<Probe>(nil)
        do {
            let pipe = ValuePipe<Int>()
            weakPipe.value = pipe
            signal = pipe.signal()
            let object = Probe()
            probe.value = object
            handle = signal.start(next: { _ in object.touch() })
        }
        #expect(weakPipe.value == nil)
        #expect(probe.value == nil, "the subscription died with the pipe")
        _ = log.start(signal)
        #expect(log.events == [], "starting after the pipe died does nothing")
        handle.dispose()
    }

    @Test func aSubscriberAddedDuringDeliveryMissesTheCurrentValue() {
        let log = EventLog()
        let pipe = ValuePipe<Int>()
        let handles = Shared<[any Disposable]>([])
        handles.value.append(
            pipe.signal().start(next: { value in
                log.append("first \(value)")
                if value == 1 { handles.value.append(log.start(pipe.signal(), prefix: "added:")) }
            }))
        pipe.putNext(1)
        pipe.putNext(2)
        #expect(log.events == ["first 1", "first 2", "added:next 2"])
        handles.value.forEach { $0.dispose() }  // the callback captures the pipe
    }

    @Test func disposingDuringDeliveryStopsThatSubscriber() {
        let log = EventLog()
        let pipe = ValuePipe<Int>()
        let b = Shared<(any Disposable)?>(nil)
        _ = pipe.signal().start(next: { value in
            log.append("a \(value)")
            b.value?.dispose()
        })
        b.value = log.start(pipe.signal(), prefix: "b:")
        pipe.putNext(1)
        pipe.putNext(2)
        #expect(log.events == ["a 1", "a 2"])
    }

    @Test func theSignalIsSharedAndNeverTerminates() {
        let pipe = ValuePipe<Int>()
        #expect(pipe.signal() === pipe.signal())
    }
}
