// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Dispatch
import SignalKit
import SignalKitTesting
import Synchronization
import Testing

// queue(buffer:) and mapToQueue(buffer:_:): the inner signals waiting for the
// running one are a bounded buffer. Inners are TestSources that complete when
// the test says so; an inner the policy drops is never subscribed.

@Suite struct QueueBufferTests {
    init() { _ = statisticsKeptForTheTestRun }

    /// An outer the test drives, with inners `a`, `b`, `c`, `d` (sent by
    /// name), queued through `buffer`.
    private struct Fixture {
        let log = EventLog()
        let outer: TestSource<String, String>
        let inners: [String: TestSource<Int, String>]
        let handle: any Disposable

        init(_ name: String, _ buffer: SignalBuffer<String>) {
            outer = TestSource<String, String>("outer", log: log)
            var inners: [String: TestSource<Int, String>] = [:]
            for inner in ["a", "b", "c", "d"] { inners[inner] = TestSource(inner, log: log) }
            self.inners = inners
            let made = inners
            handle = log.start(outer.signal |> named(name) |> mapToQueue(buffer: buffer) { made[$0]!.signal })
        }

        func send(_ names: String...) { for name in names { outer.putNext(name) } }
        func complete(_ name: String) { inners[name]!.putCompletion() }
    }

    private func drops(_ name: String) -> UInt64? {
        SignalKitDebug.bufferStatistics().first { $0.name == name }?.drops
    }

    @Test func droppingOldestReplacesTheOldestWaitingInner() {
        let f = Fixture("queue.dropOldest", .droppingOldest(beyond: 1))
        f.send("a", "b", "c")
        f.inners["a"]!.putNext(1)
        f.complete("a")
        f.inners["c"]!.putNext(3)
        f.complete("c")
        #expect(
            f.log.events == [
                "outer.subscribe#1", "a.subscribe#1", "next 1", "c.subscribe#1", "a.dispose#1", "next 3",
                "c.dispose#1",
            ])
        #expect(f.inners["b"]!.subscribeCount == 0, "b waited and was dropped: never subscribed")
        #expect(drops("queue.dropOldest") == 1)
        f.handle.dispose()
    }

    @Test func droppingNewestKeepsTheOldestWaitingInners() {
        let f = Fixture("queue.dropNewest", .droppingNewest(beyond: 2))
        f.send("a", "b", "c", "d")
        f.complete("a")
        f.complete("b")
        f.complete("c")
        #expect(
            f.log.events == [
                "outer.subscribe#1", "a.subscribe#1", "b.subscribe#1", "a.dispose#1", "c.subscribe#1", "b.dispose#1",
                "c.dispose#1",
            ])
        #expect(f.inners["d"]!.subscribeCount == 0)
        #expect(drops("queue.dropNewest") == 1)
        f.handle.dispose()
    }

    @Test func latestKeepsOnlyTheNewestWaitingInner() {
        let f = Fixture("queue.latest", .latest)
        f.send("a", "b", "c", "d")
        f.complete("a")
        #expect(f.log.events == ["outer.subscribe#1", "a.subscribe#1", "d.subscribe#1", "a.dispose#1"])
        #expect(drops("queue.latest") == 2)
        f.handle.dispose()
    }

    @Test func failingEndsTheOutputAtOnceAndSubscribesNothingWaiting() {
        let f = Fixture("queue.fail", .failing(beyond: 1, with: "too many"))
        f.send("a", "b", "c")
        #expect(
            f.log.events == [
                "outer.subscribe#1", "a.subscribe#1", "error too many", "a.dispose#1", "outer.dispose#1",
            ])
        #expect(f.inners["b"]!.subscribeCount == 0)
        #expect(drops("queue.fail") == 2)
        #expect(SignalKitDebug.bufferStatistics().first { $0.name == "queue.fail" }?.overflows == 1)
    }

    @Test func completesOnceTheOuterHasCompletedAndTheWaitingInnersRan() {
        let f = Fixture("queue.complete", .droppingOldest(beyond: 4))
        f.send("a", "b")
        f.outer.putCompletion()
        f.complete("a")
        #expect(f.log.take() == ["outer.subscribe#1", "a.subscribe#1", "outer.dispose#1", "b.subscribe#1", "a.dispose#1"])
        f.complete("b")
        #expect(f.log.take() == ["completed", "b.dispose#1"])
    }

    @Test func anInnerErrorFailsTheOutput() {
        let f = Fixture("queue.innerError", .droppingOldest(beyond: 4))
        f.send("a", "b")
        f.inners["a"]!.putError("e")
        #expect(f.log.events == ["outer.subscribe#1", "a.subscribe#1", "error e", "a.dispose#1", "outer.dispose#1"])
        #expect(f.inners["b"]!.subscribeCount == 0)
    }

    @Test func disposingReleasesTheWaitingInnersAtOnce() {
        let pipe = ValuePipe<Int>()
        let running = ValuePipe<Int>()
        let live = TrackedObject.liveCount
        let handle =
            (pipe.signal()
            |> mapToQueue(buffer: .droppingOldest(beyond: 3)) { (value: Int) -> Signal<Int, NoError> in
                if value == 0 { return running.signal() }
                let probe = TrackedObject("inner \(value)")
                return Signal { _ in
                    _ = probe
                    return EmptyDisposable
                }
            }).start()
        for value in 0..<6 { pipe.putNext(value) }
        #expect(TrackedObject.liveCount == live + 3, "three wait, two were dropped and released")
        handle.dispose()
        #expect(TrackedObject.liveCount == live)
    }

    @Test func synchronousInnersRunInConstantStack() {
        let count = StackSafety.iterations
        let received = StackSafety.run {
            let received = _LockedState(0)
            let handle =
                (Signal<Int, NoError>.sequence(Array(0..<count))
                |> mapToQueue(buffer: .droppingOldest(beyond: 1)) { Signal<Int, NoError>.single($0) })
                .start(next: { value in received.withLock { $0 += value == $0 ? 1 : 0 } })
            handle.dispose()
            return received.withLock { $0 }
        }
        #expect(received == count, "every value, in order: none ever waited")
    }

    @Test func unboundedIsTheUnboundedQueue() {
        let log = EventLog()
        let outer = TestSource<Signal<Int, String>, String>("outer", log: log)
        let a = TestSource<Int, String>("a", log: log)
        let b = TestSource<Int, String>("b", log: log)
        let handle = log.start(outer.signal |> queue(buffer: .unbounded))
        outer.putNext(a.signal)
        outer.putNext(b.signal)
        a.putCompletion()
        #expect(log.events == ["outer.subscribe#1", "a.subscribe#1", "b.subscribe#1", "a.dispose#1"])
        handle.dispose()
    }

    @Test func blockingHoldsTheOuterUntilARunningInnerCompletes() {
        let outer = ValuePipe<Int>()
        let inners = (0..<3).map { _ in ValuePipe<Int>() }
        let received = _LockedState<[Int]>([])
        let handle =
            (outer.signal()
            |> named("queue.block")
            |> mapToQueue(buffer: .blocking(beyond: 1)) { index in
                inners[index].signal() |> take(1) |> map { _ in index }
            }).start(next: { value in received.withLock { $0.append(value) } })
        let sent = Atomic<Int>(0)
        let producer = DispatchGroup()
        DispatchQueue(label: "queue.block.producer").async(group: producer) {
            for index in 0..<3 {
                outer.putNext(index)
                sent.store(index + 1, ordering: .releasing)
            }
        }
        // 0 runs, 1 waits, 2 blocks the producer.
        waitUntil { (SignalKitDebug.bufferStatistics().first { $0.name == "queue.block" }?.blockedSends ?? 0) == 1 }
        #expect(sent.load(ordering: .acquiring) == 2)
        inners[0].putNext(0)
        producer.wait()
        inners[1].putNext(0)
        inners[2].putNext(0)
        #expect(received.withLock { $0 } == [0, 1, 2])
        handle.dispose()
    }

    /// A producer waiting for room, released by the end of the output: its
    /// inner is dropped and counted (before the name's entry goes, under a
    /// retention of zero), never subscribed; waiting inners are counted after
    /// an error, not after a disposal.
    @Test(arguments: ["dispose", "inner error"])
    func aBlockedProducerIsReleasedByTheEndOfTheOutput(ending: String) {
        let name = "QueueBufferTests.blockedRelease.\(ending)"
        SignalKitDebug._setBufferStatisticsRetention(.zero, forNamesWithPrefix: name)
        defer { SignalKitDebug._setBufferStatisticsRetention(nil, forNamesWithPrefix: name) }
        let probe = SignalBufferProbe()
        let outer = ValuePipe<Int>()
        let running = ValuePipe<Int>()
        let failing = Signal<Int, String> { subscriber in
            running.signal().start(next: { _ in subscriber.putError("inner failed") })
        }
        let subscribed = _LockedState<[Int]>([])
        let log = EventLog()
        let handle = log.start(
            outer.signal()
                |> castError(String.self)
                |> named(name)
                |> mapToQueue(buffer: SignalBuffer<String>.blocking(beyond: 1).counted(by: probe)) { index in
                    deferred {
                        subscribed.withLock { $0.append(index) }
                        return failing
                    }
                })
        let producer = DispatchGroup()
        DispatchQueue(label: "queue.block.release").async(group: producer) {
            // 0 runs, 1 waits, 2 blocks until the end releases it.
            for index in 0..<3 { outer.putNext(index) }
        }
        waitUntil { probe.statistics.blockedSends == 1 }
        if ending == "dispose" {
            handle.dispose()
        } else {
            running.putNext(0)
        }
        producer.wait()
        #expect(subscribed.withLock { $0 } == [0], "nothing is subscribed after the end")
        #expect(probe.statistics.drops == (ending == "dispose" ? 1 : 2), "the blocked inner, and the waiting one after an error")
        #expect(log.events == (ending == "dispose" ? [] : ["error inner failed"]))
        #expect(SignalKitDebug.bufferStatistics().first { $0.name == name } == nil, "the entry went after the drops")
        handle.dispose()
    }

    @Test func blockingFromInsideTheRunningInnersSubscriptionStopsWithAMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let outer = ValuePipe<Int>()
            let handle =
                (outer.signal()
                |> mapToQueue(buffer: .blocking(beyond: 1)) { (value: Int) -> Signal<Int, NoError> in
                    Signal { _ in
                        // Sent on the thread subscribing the running inner:
                        // 1 waits, 2 finds the buffer full.
                        if value == 0 {
                            outer.putNext(1)
                            outer.putNext(2)
                        }
                        return EmptyDisposable
                    }
                }).start()
            outer.putNext(0)
            handle.dispose()
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("from the inner signal's subscription that empties it; waiting for room would deadlock"))
    }
}
