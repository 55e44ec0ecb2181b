// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

@Suite struct MulticastTests {
    @Test func eachSubscriptionHasItsOwnUpstreamAsInSwiftSignalKit() {
        let log = EventLog()
        let multicast = Multicast<Int>()
        let source = TestSource<Int, NoError>("up", log: log)
        let a = log.start(multicast.get(key: "k", signal: source.signal), prefix: "a:")
        let b = log.start(multicast.get(key: "k", signal: source.signal), prefix: "b:")
        source.subscribers[0].putNext(1)
        source.subscribers[1].putNext(2)
        #expect(log.take() == ["up.subscribe#1", "up.subscribe#2", "a:next 1", "b:next 2"])
        source.subscribers[0].putCompletion()
        #expect(log.take() == ["up.dispose#1"], "upstream completion ends that upstream only; it is not forwarded")
        a.dispose()
        b.dispose()
        #expect(log.take() == ["up.dispose#2"])
    }

    @Test func theUpstreamIsDisposedWhenTheLastSubscriberLeaves() {
        let log = EventLog()
        let multicast = Multicast<Int>()
        let source = TestSource<Int, NoError>("up", log: log)
        let handle = log.start(multicast.get(key: "k", signal: source.signal))
        handle.dispose()
        #expect(log.events == ["up.subscribe#1", "up.dispose#1"])
    }

    @Test func multicastPromiseIsAPlainHolder() {
        let holder = MulticastPromise<Int>()
        holder.lock.locked {
            holder.value = 3
            _ = holder.subscribers.add { _ in }
        }
        #expect(holder.value == 3)
        #expect(!holder.subscribers.isEmpty)
    }
}
