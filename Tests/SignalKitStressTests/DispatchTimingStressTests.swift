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

// Races of the Dispatch, Timing and Combine operators on real queues, thread
// pools and threads. Nested in `CoreStressTests` so that they run one at a
// time with the other stress tests: `LeakCheck` compares process-wide
// counters, which a suite running in parallel would disturb.

extension StressSuite {
    @Suite(.serialized) struct DispatchTimingStressTests {
        // MARK: deliverOn / runOn

        /// A producer sends while another thread disposes: what is delivered
        /// is a prefix of what was sent, in order, on the queue.
        @Test func deliverOnARealQueueRacesDisposal() {
            let check = LeakCheck()
            do {
                let queue = Queue(name: "stress.deliverOn")
                let misordered = Atomic<Int>(0)
                let offQueue = Atomic<Int>(0)
                raceRounds(
                    threads: 2,
                    rounds: 3_000 * stressScale,
                    setup: { _ -> UncheckedBox<(Subscriber<Int, NoError>, any Disposable)> in
                        let source = _LockedState<Subscriber<Int, NoError>?>(nil)
                        let expected = Atomic<Int>(0)
                        let handle =
                            (Signal<Int, NoError> { subscriber in
                                source.withLock { $0 = subscriber }
                                return EmptyDisposable
                            } |> deliverOn(queue)).start(next: { value in
                                if !queue.isCurrent() { offQueue.add(1, ordering: .relaxed) }
                                if expected.exchange(value + 1, ordering: .relaxed) != value {
                                    misordered.add(1, ordering: .relaxed)
                                }
                            })
                        return UncheckedBox((source.withLock { $0 }!, handle))
                    },
                    body: { index, state in
                        if index == 0 {
                            for value in 0..<16 { state.value.0.putNext(value) }
                            state.value.0.putCompletion()
                        } else {
                            spin(Int.random(in: 0..<200))
                            state.value.1.dispose()
                        }
                    },
                    check: { _ in queue.sync {} }
                )
                #expect(misordered.load(ordering: .relaxed) == 0)
                #expect(offQueue.load(ordering: .relaxed) == 0)
            }
            #expect(check.leaks() == nil)
        }

        /// The subscription block on the queue races disposal: upstream is
        /// subscribed at most once, and then disposed exactly once.
        @Test func runOnARealQueueRacesDisposal() {
            let check = LeakCheck()
            do {
                let queue = Queue(name: "stress.runOn")
                let counts = SubscriptionCounts()
                let upstream: Signal<Int, NoError> = counts.signal()
                raceRounds(
                    threads: 2,
                    rounds: 5_000 * stressScale,
                    setup: { _ in UncheckedBox((upstream |> runOn(queue)).start()) },
                    body: { index, handle in
                        spin(index == 0 ? Int.random(in: 0..<300) : 0)
                        handle.value.dispose()
                    },
                    check: { _ in
                        queue.sync {}
                        #expect(counts.subscribed == counts.disposed)
                    }
                )
            }
            #expect(check.leaks() == nil)
        }

        @Test func runOnAThreadPoolRacesDisposal() {
            let check = LeakCheck()
            do {
                let pool = makeThreadPool(threadCount: 2)
                let counts = SubscriptionCounts()
                let upstream: Signal<Int, NoError> = counts.signal()
                let rounds = 3_000 * stressScale
                raceRounds(
                    threads: 2,
                    rounds: rounds,
                    setup: { _ in UncheckedBox((upstream |> runOn(pool)).start()) },
                    body: { index, handle in
                        spin(index == 0 ? Int.random(in: 0..<300) : 0)
                        handle.value.dispose()
                    }
                )
                // Tasks still queued are skipped (cancelled) or find the
                // subscription disposed.
                let drained = Atomic<Bool>(false)
                pool.nextQueue().addTask(ThreadPoolTask { _ in drained.store(true, ordering: .releasing) })
                waitUntil { drained.load(ordering: .acquiring) && counts.subscribed == counts.disposed }
                #expect(counts.subscribed == counts.disposed)
            }
            #expect(check.leaks() == nil)
        }

        @Test func deliverOnAThreadPoolRacesDisposal() {
            let check = LeakCheck()
            do {
                let pool = makeThreadPool(threadCount: 2)
                let misordered = Atomic<Int>(0)
                raceRounds(
                    threads: 2,
                    rounds: 3_000 * stressScale,
                    setup: { _ -> UncheckedBox<(Subscriber<Int, NoError>, any Disposable)> in
                        let source = _LockedState<Subscriber<Int, NoError>?>(nil)
                        let expected = Atomic<Int>(0)
                        let handle =
                            (Signal<Int, NoError> { subscriber in
                                source.withLock { $0 = subscriber }
                                return EmptyDisposable
                            } |> deliverOn(pool)).start(next: { value in
                                if expected.exchange(value + 1, ordering: .relaxed) != value {
                                    misordered.add(1, ordering: .relaxed)
                                }
                            })
                        return UncheckedBox((source.withLock { $0 }!, handle))
                    },
                    body: { index, state in
                        if index == 0 {
                            for value in 0..<16 { state.value.0.putNext(value) }
                        } else {
                            spin(Int.random(in: 0..<200))
                            state.value.1.dispose()
                        }
                    }
                )
                #expect(misordered.load(ordering: .relaxed) == 0)
            }
            #expect(check.leaks() == nil)
        }

        // MARK: combineLatest

        /// Three threads feed one input each. Inputs are primed first and
        /// completed after the race, so the count is exact: one tuple for the
        /// priming plus one per value. Through a queue, tuples also arrive in
        /// order per input and the last one holds every input's last value.
        @Test(arguments: [false, true])
        func combineLatestWithInputsFedFromSeveralThreads(throughQueue: Bool) {
            let check = LeakCheck()
            do {
                let queue: Queue? = throughQueue ? Queue(name: "stress.combineLatest") : nil
                let perThread = 2_000 * stressScale
                for _ in 0..<10 {
                    let slots = (0..<3).map { _ in SubscriberSlot<Int>() }
                    let inputs = slots.map { slot in
                        Signal<Int, NoError> { subscriber in
                            slot.value = subscriber
                            return EmptyDisposable
                        }
                    }
                    let outputs = Atomic<Int>(0)
                    let nonMonotonic = Atomic<Int>(0)
                    // SignalKit's Atomic (a pthread mutex): ThreadSanitizer cannot see
                    // Synchronization.Mutex's futex slow path under contention.
                    let last = SignalKit.Atomic<(Int, Int, Int)>(value: (-1, -1, -1))
                    let completions = Atomic<Int>(0)
                    let handle = combineLatest(queue: queue, inputs[0], inputs[1], inputs[2]).start(
                        next: { tuple in
                            outputs.add(1, ordering: .relaxed)
                            let previous = last.swap(tuple)
                            if tuple.0 < previous.0 || tuple.1 < previous.1 || tuple.2 < previous.2 {
                                nonMonotonic.add(1, ordering: .relaxed)
                            }
                        },
                        completed: { completions.add(1, ordering: .relaxed) }
                    )
                    let subscribers = UncheckedBox(slots.map { $0.value! })
                    for subscriber in subscribers.value { subscriber.putNext(0) }
                    race(threads: 3) { index in
                        for value in 1...perThread { subscribers.value[index].putNext(value) }
                    }
                    for subscriber in subscribers.value { subscriber.putCompletion() }
                    for slot in slots { slot.value = nil }
                    waitUntil { completions.load(ordering: .acquiring) == 1 }
                    #expect(completions.load(ordering: .acquiring) == 1)
                    #expect(outputs.load(ordering: .relaxed) == 1 + 3 * perThread)
                    if throughQueue {
                        #expect(nonMonotonic.load(ordering: .relaxed) == 0)
                        #expect(last.with { $0 == (perThread, perThread, perThread) })
                    }
                    handle.dispose()
                }
            }
            #expect(check.leaks() == nil)
        }

        // MARK: Timing

        /// A tiny timeout on a real queue races a source value and disposal:
        /// the source is disposed exactly once, and every alternate that got
        /// subscribed is disposed exactly once.
        @Test func timeoutOnARealQueueRacesDisposal() {
            let check = LeakCheck()
            do {
                let queue = Queue(name: "stress.timeout")
                let source = SubscriptionCounts()
                let alternate = SubscriptionCounts()
                let rounds = 3_000 * stressScale
                raceRounds(
                    threads: 2,
                    rounds: rounds,
                    setup: { round -> UncheckedBox<(SubscriberSlot<Int>, any Disposable)> in
                        let slot = SubscriberSlot<Int>()
                        let handle =
                            (source.signal(storingIn: slot)
                            |> timeout(
                                Double(round % 5) * 0.00005, queue: queue, alternate: alternate.signal() as Signal<Int, NoError>))
                            .start()
                        return UncheckedBox((slot, handle))
                    },
                    body: { index, state in
                        spin(Int.random(in: 0..<400))
                        if index == 0 {
                            state.value.0.value?.putNext(1)
                        } else {
                            state.value.1.dispose()
                        }
                    },
                    check: { state in
                        queue.sync {}
                        state.value.0.value = nil
                        #expect(alternate.subscribed == alternate.disposed)
                    }
                )
                #expect(source.subscribed == rounds)
                #expect(source.disposed == rounds)
            }
            #expect(check.leaks() == nil)
        }

        /// A tiny delay on a real queue races disposal: upstream is subscribed
        /// at most once per subscription and then disposed exactly once.
        @Test(arguments: ["delay", "suspendAwareDelay"])
        func delayOnARealQueueRacesDisposal(operator name: String) {
            let check = LeakCheck()
            do {
                let queue = Queue(name: "stress.delay")
                let counts = SubscriptionCounts()
                let upstream: Signal<Int, NoError> = counts.signal()
                raceRounds(
                    threads: 2,
                    rounds: 3_000 * stressScale,
                    setup: { round in
                        let timeout = Double(round % 5) * 0.00005
                        let delayed =
                            name == "delay"
                            ? upstream |> delay(timeout, queue: queue)
                            : upstream |> suspendAwareDelay(timeout, granularity: 0.00002, queue: queue)
                        return UncheckedBox(delayed.start())
                    },
                    body: { index, handle in
                        spin(index == 0 ? Int.random(in: 0..<600) : 0)
                        handle.value.dispose()
                    },
                    check: { _ in
                        queue.sync {}
                        #expect(counts.subscribed == counts.disposed)
                    }
                )
            }
            #expect(check.leaks() == nil)
        }
    }
}

/// Counts the subscriptions to, and disposals of, the signals it makes.
private final class SubscriptionCounts: Sendable {
    private let subscribeCount = Atomic<Int>(0)
    private let disposeCount = Atomic<Int>(0)

    var subscribed: Int { subscribeCount.load(ordering: .acquiring) }
    var disposed: Int { disposeCount.load(ordering: .acquiring) }

    /// A signal that never sends, counting subscriptions and disposals.
    func signal<T>() -> Signal<T, NoError> {
        Signal { _ in
            self.subscribeCount.add(1, ordering: .acquiringAndReleasing)
            return ActionDisposableLogging { self.disposeCount.add(1, ordering: .acquiringAndReleasing) }
        }
    }

    /// Like `signal()`, and stores its subscriber in `slot`.
    func signal<T>(storingIn slot: SubscriberSlot<T>) -> Signal<T, NoError> {
        Signal { subscriber in
            self.subscribeCount.add(1, ordering: .acquiringAndReleasing)
            slot.value = subscriber
            return ActionDisposableLogging { self.disposeCount.add(1, ordering: .acquiringAndReleasing) }
        }
    }
}

/// Where a test source keeps its subscriber, for threads to send through.
private final class SubscriberSlot<T>: @unchecked Sendable {
    // `@unchecked Sendable`: `subscriber` is a SignalKit Atomic.
    private let subscriber = SignalKit.Atomic<Subscriber<T, NoError>?>(value: nil)

    var value: Subscriber<T, NoError>? {
        get { subscriber.with { $0 } }
        set { _ = subscriber.swap(newValue) }
    }
}

/// Busy-waits for about `iterations` short steps (jitter between racers).
private func spin(_ iterations: Int) {
    let counter = Atomic<Int>(0)
    for _ in 0..<iterations { counter.add(1, ordering: .relaxed) }
}

/// Waits (up to two seconds, polling every millisecond) for `condition`.
private func waitUntil(_ condition: () -> Bool) {
    for _ in 0..<2000 where !condition() {
        usleep(1000)
    }
}

/// A new thread pool whose weak-reference side table stays visibly reachable
/// (see the unit tests' `makeThreadPool`): pools live for the whole process,
/// and once none of a pool's lanes is alive, LeakSanitizer cannot see the
/// side table referenced from the pool's encoded reference count.
private func makeThreadPool(threadCount: Int) -> ThreadPool {
    let pool = ThreadPool(threadCount: threadCount, threadPriority: 0.5)
    _ = immortalLanes.modify { $0 + [pool.nextQueue()] }
    return pool
}

private let immortalLanes = SignalKit.Atomic<[ThreadPoolQueue]>(value: [])
