// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

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

private enum Boom: Error, Equatable { case boom }

// The async bridges added for Swift 6 servers: Signal.task, values with a
// buffering policy, the non-throwing values of a NoError signal, get()'s
// defined end, and SubscriptionProbe.
@Suite struct AsyncBridgeTests {
    @Test func aTaskSignalSendsItsValuesThenCompletes() async throws {
        let signal = Signal<Int, Boom>.task { subscriber in
            for value in 1...3 {
                await Task.yield()
                subscriber.putNext(value)
            }
        }
        var received: [Int] = []
        for try await value in signal.values { received.append(value) }
        #expect(received == [1, 2, 3])
    }

    @Test func aTaskSignalsThrownErrorIsTheSignalsError() async {
        // A closure's thrown type is inferred as `any Error`: state it.
        let signal = Signal<Int, Boom>.task { (subscriber) throws(Boom) in
            subscriber.putNext(1)
            throw .boom
        }
        var received: [Int] = []
        do {
            for try await value in signal.values { received.append(value) }
            Issue.record("expected the signal to fail")
        } catch {
            guard case .error(.boom) = error else {
                Issue.record("unexpected \(error)")
                return
            }
        }
        #expect(received == [1])
    }

    @Test func disposingATaskSignalCancelsTheTaskAndNothingFollows() async {
        let log = EventLog()
        let started = SubscriptionProbe()
        let cancelled = SubscriptionProbe()
        let signal = Signal<Int, NoError>.task { subscriber in
            subscriber.putNext(1)
            _ = started.watch(Signal<Int, NoError>.complete()).start()
            while !Task.isCancelled { await Task.yield() }
            subscriber.putNext(2)  // after the disposal: dropped
            _ = cancelled.watch(Signal<Int, NoError>.complete()).start()
        }
        let handle = log.start(signal)
        await started.waitForSubscriptions(1)
        handle.dispose()
        await cancelled.waitForSubscriptions(1)
        #expect(log.events == ["next 1"])
    }

    @Test func valuesOfANoErrorSignalDoNotThrow() async {
        var received: [Int] = []
        for await value in Signal<Int, NoError>.sequence([1, 2, 3]).values { received.append(value) }
        #expect(received == [1, 2, 3])
    }

    @Test(arguments: [
        (SignalBufferingPolicy.unbounded, [1, 2, 3, 4, 5]),
        (.bufferingOldest(2), [1, 2]),
        (.bufferingNewest(2), [4, 5]),
    ])
    func valuesBufferAsTheirPolicySays(_ policy: SignalBufferingPolicy, _ expected: [Int]) async {
        // The signal sends everything while being subscribed by the first
        // `next()`, before the consumer waits: the buffer alone decides.
        var received: [Int] = []
        for await value in Signal<Int, NoError>.sequence([1, 2, 3, 4, 5]).values(bufferingPolicy: policy) {
            received.append(value)
        }
        #expect(received == expected)
    }

    // Dropping every value would hang `first`: the time limit turns that into a failure.
    @Test(.timeLimit(.minutes(1))) func aValueForAWaitingConsumerIsNeverDropped() async {
        let pipe = ValuePipe<Int>()
        let probe = SubscriptionProbe()
        var iterator = probe.watch(pipe.signal()).values(bufferingPolicy: .bufferingOldest(0)).makeAsyncIterator()
        async let first = iterator.next()
        await probe.waitForSubscriptions(1)
        // The consumer may not wait yet: send until it has taken one, from a
        // thread of its own (a sending task would compete with the consumer
        // for the few Swift concurrency threads; under a sanitizer, beside
        // other tests, the consumer could then wait for minutes).
        let taken = Synchronization.Atomic<Bool>(false)
        async let sent: Void = onDedicatedThread {
            var value = 0
            let deadline = ContinuousClock.now.advanced(by: .seconds(60))
            while !taken.load(ordering: .acquiring) && ContinuousClock.now < deadline {
                value += 1
                pipe.putNext(value)
                sched_yield()
            }
        }
        let value = await first
        taken.store(true, ordering: .releasing)
        await sent
        #expect(value != nil)
    }

    @Test func theProbeTellsWhenAChildTaskHasSubscribed() async throws {
        let pipe = ValuePipe<Int>()
        let probe = SubscriptionProbe()
        async let value = probe.watch(pipe.signal()).first()
        await probe.waitForSubscriptions(1)
        #expect(probe.subscriptionCount == 1)
        pipe.putNext(42)
        #expect(try await value == 42)
    }

    @Test func getStopsWithAMessageWhenTheSignalCompletesWithoutAValue() async {
        await #expect(processExitsWith: .failure) {
            _ = await Signal<Int, NoError>.complete().get()
        }
    }

    @Test func getStopsWithAMessageWhenTheTaskIsCancelled() async {
        await #expect(processExitsWith: .failure) {
            let pipe = ValuePipe<Int>()
            let task = Task { await pipe.signal().get() }
            task.cancel()
            _ = await task.value
        }
    }
}
