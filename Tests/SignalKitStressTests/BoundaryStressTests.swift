// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Dispatch
import SignalKit
import SignalKitTesting
import Synchronization
import Testing

// Races of the bounded hop (`deliverOn(queue, buffer:)`) on real queues (and
// of the bounded actor delivery, which drains the same way): a producer
// thread filling a bounded buffer while a slow consumer drains it and
// another thread disposes. Every value is a `TrackedObject`, so a value
// the buffer forgets to release (or releases twice) shows in the counters.

extension StressSuite {
    @Suite(.serialized) struct BoundaryStressTests {
        /// One round's subscription: its source subscriber and handle.
        private typealias Round = UncheckedBox<(Subscriber<TrackedObject, NoError>, any Disposable)>

        /// Starts `deliverOn(queue, buffer:)` over a source the test drives
        /// (named `name`, if given), checking on the queue that values arrive
        /// in order, never twice.
        private func subscribe(
            queue: Queue,
            buffer: SignalBuffer<NoError>,
            counts: HopCounts,
            name: String? = nil
        ) -> Round {
            let source = _LockedState<Subscriber<TrackedObject, NoError>?>(nil)
            let last = Atomic<Int>(-1)
            let signal = Signal<TrackedObject, NoError> { subscriber in
                source.withLock { $0 = subscriber }
                return EmptyDisposable
            }
            let handle =
                ((name.map { signal |> named($0) } ?? signal) |> deliverOn(queue, buffer: buffer)).start(next: { value in
                    if !queue.isCurrent() { counts.offQueue.add(1, ordering: .relaxed) }
                    let index = Int(value.name)!
                    if last.exchange(index, ordering: .relaxed) >= index { counts.misordered.add(1, ordering: .relaxed) }
                    // A slow consumer, so that the buffer fills.
                    for _ in 0..<Int.random(in: 0..<50) { _ = last.load(ordering: .relaxed) }
                })
            return UncheckedBox((source.withLock { $0 }!, handle))
        }

        private func race(_ buffer: SignalBuffer<NoError>, rounds: Int, values: Int) {
            let check = LeakCheck()
            let live = TrackedObject.liveCount
            do {
                let queue = Queue(name: "stress.boundary")
                let counts = HopCounts()
                raceRounds(
                    threads: 2,
                    rounds: rounds,
                    setup: { _ in subscribe(queue: queue, buffer: buffer, counts: counts) },
                    body: { index, round in
                        if index == 0 {
                            for value in 0..<values { round.value.0.putNext(TrackedObject("\(value)")) }
                            round.value.0.putCompletion()
                        } else {
                            for _ in 0..<Int.random(in: 0..<2_000) { _ = counts.misordered.load(ordering: .relaxed) }
                            round.value.1.dispose()
                        }
                    },
                    check: { _ in queue.sync {} }
                )
                #expect(counts.misordered.load(ordering: .relaxed) == 0)
                #expect(counts.offQueue.load(ordering: .relaxed) == 0)
            }
            #expect(check.leaks() == nil)
            #expect(TrackedObject.liveCount == live, "every value released exactly once")
        }

        @Test func droppingOldestRacesDisposal() {
            race(.droppingOldest(beyond: 4), rounds: 1_500 * stressScale, values: 32)
        }

        @Test func droppingNewestRacesDisposal() {
            race(.droppingNewest(beyond: 4), rounds: 1_500 * stressScale, values: 32)
        }

        @Test func latestRacesDisposal() {
            race(.latest, rounds: 1_500 * stressScale, values: 32)
        }

        @Test func blockingRacesDisposal() {
            // The producer blocks on the full buffer; disposal must release it.
            race(.blocking(beyond: 2), rounds: 1_500 * stressScale, values: 32)
        }

        /// A disposal racing a completion that waits behind values: when the
        /// completion is delivered, every value was delivered before it. (A
        /// disposal that drops waiting values drops the completion too; a
        /// completion after a gap would tell the subscriber it saw everything.)
        @Test func aCompletionRacingDisposalFollowsEveryValue() {
            let pool = ThreadPool(threadCount: 1, threadPriority: 0.5)
            let lane = pool.nextQueue()
            defer { withExtendedLifetime(lane) {} }
            for buffer in [SignalBuffer<NoError>.blocking(beyond: 4), .droppingOldest(beyond: 64)] {
                completionFollowsValues(rounds: 5_000 * stressScale) {
                    deliverOn(Queue(name: "stress.boundary.end"), buffer: buffer)
                }
                completionFollowsValues(rounds: 2_500 * stressScale) { deliverOn(pool, buffer: buffer) }
            }
        }

        /// As above for the bounded actor delivery (`start(isolation:buffer:)`),
        /// whose drain job runs on the actor while another thread disposes.
        @Test func anActorDeliveryCompletionRacingDisposalFollowsEveryValue() async {
            let host = DeliveryHost()
            let early = EarlyCompletions()
            for buffer in [SignalBuffer<NoError>.blocking(beyond: 4), .droppingOldest(beyond: 64)] {
                for _ in 0..<1_000 * stressScale {
                    let source = _LockedState<Subscriber<Int, NoError>?>(nil)
                    let signal = Signal<Int, NoError> { subscriber in
                        source.withLock { $0 = subscriber }
                        return EmptyDisposable
                    }
                    let handle = await host.start(signal, buffer: buffer, values: 8, early: early)
                    let subscriber = UncheckedBox(source.withLock { $0 }!)
                    SignalKitTesting.race(threads: 2) { index in
                        if index == 0 {
                            for value in 0..<8 { subscriber.value.putNext(value) }
                            subscriber.value.putCompletion()
                        } else {
                            for _ in 0..<Int.random(in: 0..<300) { _ = early.count.load(ordering: .relaxed) }
                            handle.value.dispose()
                        }
                    }
                }
            }
            await host.settle()
            #expect(early.count.load(ordering: .relaxed) == 0, "a completion delivered after a disposal dropped values")
        }

        private func completionFollowsValues(
            rounds: Int, _ hop: () -> (Signal<Int, NoError>) -> Signal<Int, NoError>
        ) {
            let values = 8
            let early = Atomic<Int>(0)
            let completions = Atomic<Int>(0)
            let operation = hop()
            raceRounds(
                threads: 2,
                rounds: rounds,
                setup: { _ -> UncheckedBox<(Subscriber<Int, NoError>, any Disposable)> in
                    let source = _LockedState<Subscriber<Int, NoError>?>(nil)
                    let delivered = Atomic<Int>(0)
                    let handle =
                        (Signal<Int, NoError> { subscriber in
                            source.withLock { $0 = subscriber }
                            return EmptyDisposable
                        } |> operation).start(
                            next: { _ in delivered.add(1, ordering: .relaxed) },
                            completed: {
                                completions.add(1, ordering: .relaxed)
                                if delivered.load(ordering: .relaxed) != values { early.add(1, ordering: .relaxed) }
                            })
                    return UncheckedBox((source.withLock { $0 }!, handle))
                },
                body: { index, round in
                    if index == 0 {
                        for value in 0..<values { round.value.0.putNext(value) }
                        round.value.0.putCompletion()
                    } else {
                        for _ in 0..<Int.random(in: 0..<300) { _ = early.load(ordering: .relaxed) }
                        round.value.1.dispose()
                    }
                }
            )
            #expect(
                early.load(ordering: .relaxed) == 0,
                "a completion delivered after a disposal dropped values (\(completions.load(ordering: .relaxed)) completions)")
        }

        /// `failing` racing disposal: the overflow ends the subscription from
        /// the producer while another thread disposes it.
        @Test func failingRacesDisposal() {
            let check = LeakCheck()
            let live = TrackedObject.liveCount
            do {
                let queue = Queue(name: "stress.boundary.fail")
                let terminals = Atomic<Int>(0)
                let rounds = 1_500 * stressScale
                raceRounds(
                    threads: 2,
                    rounds: rounds,
                    setup: { _ -> UncheckedBox<(Subscriber<TrackedObject, Int>, any Disposable)> in
                        let source = _LockedState<Subscriber<TrackedObject, Int>?>(nil)
                        let handle =
                            (Signal<TrackedObject, Int> { subscriber in
                                source.withLock { $0 = subscriber }
                                return EmptyDisposable
                            } |> deliverOn(queue, buffer: .failing(beyond: 3, with: -1))).start(
                                next: { _ in for _ in 0..<20 { _ = terminals.load(ordering: .relaxed) } },
                                error: { _ in terminals.add(1, ordering: .relaxed) },
                                completed: { terminals.add(1, ordering: .relaxed) }
                            )
                        return UncheckedBox((source.withLock { $0 }!, handle))
                    },
                    body: { index, round in
                        if index == 0 {
                            for value in 0..<16 { round.value.0.putNext(TrackedObject("\(value)")) }
                            round.value.0.putCompletion()
                        } else {
                            for _ in 0..<Int.random(in: 0..<500) { _ = terminals.load(ordering: .relaxed) }
                            round.value.1.dispose()
                        }
                    },
                    check: { _ in queue.sync {} }
                )
                #expect(terminals.load(ordering: .relaxed) <= rounds, "at most one terminal event per subscription")
            }
            #expect(check.leaks() == nil)
            #expect(TrackedObject.liveCount == live)
        }

        /// A bounded `mapToQueue` whose inners complete on a queue, its
        /// outer fed from one thread and disposed from another: the values
        /// arrive in order, each inner runs at most once, nothing leaks.
        @Test func boundedMapToQueueRacesDisposal() {
            let check = LeakCheck()
            do {
                let queue = Queue(name: "stress.boundary.mapToQueue")
                let counts = HopCounts()
                for buffer in [SignalBuffer<NoError>.droppingOldest(beyond: 2), .latest, .blocking(beyond: 2)] {
                    raceRounds(
                        threads: 2,
                        rounds: 500 * stressScale,
                        setup: { _ -> UncheckedBox<(Subscriber<Int, NoError>, any Disposable)> in
                            let source = _LockedState<Subscriber<Int, NoError>?>(nil)
                            let last = Atomic<Int>(-1)
                            let handle =
                                (Signal<Int, NoError> { subscriber in
                                    source.withLock { $0 = subscriber }
                                    return EmptyDisposable
                                }
                                |> mapToQueue(buffer: buffer) { value in
                                    Signal<Int, NoError>.single(value) |> deliverOn(queue)
                                }).start(next: { value in
                                    if last.exchange(value, ordering: .relaxed) >= value {
                                        counts.misordered.add(1, ordering: .relaxed)
                                    }
                                })
                            return UncheckedBox((source.withLock { $0 }!, handle))
                        },
                        body: { index, round in
                            if index == 0 {
                                for value in 0..<24 { round.value.0.putNext(value) }
                                round.value.0.putCompletion()
                            } else {
                                for _ in 0..<Int.random(in: 0..<3_000) { _ = counts.offQueue.load(ordering: .relaxed) }
                                round.value.1.dispose()
                            }
                        },
                        check: { _ in queue.sync {} }
                    )
                }
                #expect(counts.misordered.load(ordering: .relaxed) == 0)
            }
            #expect(check.leaks() == nil)
        }

        /// Several producers, each with its own subscription, share one
        /// consumer queue: each subscription's values keep their order.
        @Test func producersOnSeveralThreadsShareOneQueue() {
            let check = LeakCheck()
            let live = TrackedObject.liveCount
            do {
                let queue = Queue(name: "stress.boundary.shared")
                let counts = HopCounts()
                raceRounds(
                    threads: 3,
                    rounds: 500 * stressScale,
                    setup: { _ -> [Round] in
                        (0..<3).map { _ in subscribe(queue: queue, buffer: .droppingOldest(beyond: 8), counts: counts) }
                    },
                    body: { index, rounds in
                        for value in 0..<64 { rounds[index].value.0.putNext(TrackedObject("\(value)")) }
                        rounds[index].value.0.putCompletion()
                    },
                    check: { rounds in
                        queue.sync {}
                        for round in rounds { round.value.1.dispose() }
                    }
                )
                #expect(counts.misordered.load(ordering: .relaxed) == 0)
                #expect(counts.offQueue.load(ordering: .relaxed) == 0)
            }
            #expect(check.leaks() == nil)
            #expect(TrackedObject.liveCount == live)
        }

        /// Two threads send into one subscription at once (a misbehaving
        /// source: the hop's producers then take turns) while the drain
        /// follows the stream and the ring grows from its first size to the
        /// limit. `blocking` drops nothing, so every value arrives exactly
        /// once, each thread's in the order it sent them.
        @Test func concurrentProducersIntoOneSubscriptionLoseNothing() {
            concurrentProducers(.blocking(beyond: 48), name: "stress.boundary.producers.blocking", dropsNothing: true)
        }

        /// As above with `droppingOldest`: every value arrives at most once,
        /// in its thread's order, and arrivals plus counted drops are every
        /// value sent.
        @Test func concurrentProducersIntoOneSubscriptionAccountForEveryValue() {
            concurrentProducers(.droppingOldest(beyond: 40), name: "stress.boundary.producers.dropOldest", dropsNothing: false)
        }

        private func concurrentProducers(_ buffer: SignalBuffer<NoError>, name: String, dropsNothing: Bool) {
            let check = LeakCheck()
            let live = TrackedObject.liveCount
            let perThread = 300
            do {
                let queue = Queue(name: "stress.boundary.producers")
                let misordered = Atomic<Int>(0)
                let received = Atomic<Int>(0)
                let dropsBefore = SignalKitDebug.bufferStatistics().first { $0.name == name }?.drops ?? 0
                var sent = 0
                raceRounds(
                    threads: 2,
                    rounds: 300 * stressScale,
                    setup: { _ -> Round in
                        let source = _LockedState<Subscriber<TrackedObject, NoError>?>(nil)
                        let last = _LockedState<[String: Int]>([:])
                        let signal = Signal<TrackedObject, NoError> { subscriber in
                            source.withLock { $0 = subscriber }
                            return EmptyDisposable
                        }
                        let handle = (signal |> named(name) |> deliverOn(queue, buffer: buffer)).start(next: { value in
                            let parts = value.name.split(separator: "-")
                            let (thread, index) = (String(parts[0]), Int(parts[1])!)
                            let previous = last.withLock { seen in
                                defer { seen[thread] = index }
                                return seen[thread] ?? -1
                            }
                            if previous >= index { misordered.add(1, ordering: .relaxed) }
                            received.add(1, ordering: .relaxed)
                        })
                        sent += 2 * perThread
                        return UncheckedBox((source.withLock { $0 }!, handle))
                    },
                    body: { index, round in
                        for value in 0..<perThread { round.value.0.putNext(TrackedObject("\(index)-\(value)")) }
                    },
                    check: { round in
                        // Wait until every value is delivered or counted as dropped.
                        let deadline = DispatchTime.now().uptimeNanoseconds + 10_000_000_000
                        while DispatchTime.now().uptimeNanoseconds < deadline {
                            let drops = (SignalKitDebug.bufferStatistics().first { $0.name == name }?.drops ?? 0) - dropsBefore
                            if received.load(ordering: .relaxed) + Int(drops) >= sent { break }
                            queue.sync {}
                        }
                        round.value.1.dispose()
                    }
                )
                let drops = (SignalKitDebug.bufferStatistics().first { $0.name == name }?.drops ?? 0) - dropsBefore
                #expect(misordered.load(ordering: .relaxed) == 0, "each thread's values in the order it sent them")
                #expect(received.load(ordering: .relaxed) + Int(drops) == sent, "every value delivered once or dropped")
                if dropsNothing { #expect(drops == 0) }
            }
            #expect(check.leaks() == nil)
            #expect(TrackedObject.liveCount == live, "every value released exactly once")
        }

        /// `SignalKitDebug.bufferStatistics()` reads every live buffer of a
        /// name (its depth) while other threads subscribe, fill, dispose and
        /// release buffers of that name: the statistics hold their buffers
        /// unowned, so a buffer read after its release would be a
        /// use-after-free (ASan) or a race (TSan).
        @Test func statisticsReadRacesBufferRelease() {
            let check = LeakCheck()
            let live = TrackedObject.liveCount
            let name = "stress.boundary.statistics"
            do {
                let queue = Queue(name: name)
                let counts = HopCounts()
                let reads = Atomic<Int>(0)
                raceRounds(
                    threads: 2,
                    rounds: 1_000 * stressScale,
                    setup: { _ in
                        subscribe(queue: queue, buffer: .droppingOldest(beyond: 4), counts: counts, name: name)
                    },
                    body: { index, round in
                        if index == 0 {
                            for value in 0..<16 { round.value.0.putNext(TrackedObject("\(value)")) }
                            round.value.1.dispose()
                        } else {
                            for _ in 0..<4 {
                                if SignalKitDebug.bufferStatistics().contains(where: { $0.name == name }) {
                                    reads.add(1, ordering: .relaxed)
                                }
                            }
                        }
                    },
                    // The round's subscriber and handle go here: the buffer
                    // is released while the next round's reads may run.
                    check: { _ in queue.sync {} }
                )
                #expect(reads.load(ordering: .relaxed) > 0, "the statistics saw the buffers")
                #expect(counts.misordered.load(ordering: .relaxed) == 0)
                let statistics = SignalKitDebug.bufferStatistics().first { $0.name == name }
                #expect(statistics?.liveSubscriptions == 0)
                #expect(statistics?.depth == 0)
            }
            #expect(check.leaks() == nil)
            #expect(TrackedObject.liveCount == live)
        }
    }
}

/// What the consumers saw wrong, across rounds.
/// The actor the bounded actor delivery's stress test delivers on.
private actor DeliveryHost {
    /// Starts `signal` on this actor under `buffer`; a completion that
    /// arrives before all `values` counts in `early`.
    func start(
        _ signal: Signal<Int, NoError>, buffer: SignalBuffer<NoError>, values: Int, early: EarlyCompletions
    ) -> UncheckedBox<any Disposable> {
        var delivered = 0
        return UncheckedBox(
            signal.start(
                isolation: self, buffer: buffer, next: { _ in delivered += 1 },
                completed: { if delivered != values { early.count.add(1, ordering: .relaxed) } }))
    }

    /// Returns once the drain jobs enqueued before it ran.
    func settle() {}
}

/// Completions delivered before every value was.
private final class EarlyCompletions: Sendable {
    let count = Synchronization.Atomic<Int>(0)
}

private final class HopCounts: Sendable {
    let misordered = Synchronization.Atomic<Int>(0)
    let offQueue = Synchronization.Atomic<Int>(0)
}
