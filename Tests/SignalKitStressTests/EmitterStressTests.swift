// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Synchronization
import Testing

// EventEmitter under concurrency: fires, adds, cancels, owner deaths, targeted
// fires, replays and queue changes racing on several threads; and
// cancelsAfterNextFire delivering exactly once when fires race. Run under
// ThreadSanitizer and AddressSanitizer by scripts/test.
//
// Nested in `StressSuite` (serialized, recursively): LeakCheck's counters
// (bags, tracked objects) are process-wide. Owners and payloads are
// `TrackedObject`s, so the leak check also proves that the emitter released
// every owner, every argument and every replaced last-data box.

extension StressSuite {
    @Suite(.serialized) struct EmitterStressTests {
        /// Counts that callbacks and hooks bump from any thread.
        final class Counters: Sendable {
            let added = Synchronization.Atomic<Int>(0)
            let removed = Synchronization.Atomic<Int>(0)
            let delivered = Synchronization.Atomic<Int>(0)
            let onceDeliveries = Synchronization.Atomic<Int>(0)
            let onceObservers = Synchronization.Atomic<Int>(0)
        }

        /// Two serial queues shared by every round (queued deliveries are
        /// drained with `sync {}` before a round is checked).
        static let queues = [Queue(name: "emitter-stress-a"), Queue(name: "emitter-stress-b")]

        static func drainQueues() {
            for queue in queues { queue.sync {} }
        }

        // MARK: Everything at once

        final class MixedRound: @unchecked Sendable {
            // `@unchecked Sendable`: `tokens` and `owners` are written in setup,
            // before the threads are released, and only read by them; the
            // counters are atomics.
            let emitter = EventEmitter<Int, TrackedObject?>()
            let counters = Counters()
            var owners: [TrackedObject] = []
            var tokens: [EventObserver] = []
        }

        private static func makeMixedRound() -> MixedRound {
            let round = MixedRound()
            let counters = round.counters
            round.emitter.observerAdded = { _ in counters.added.add(1, ordering: .relaxed) }
            round.emitter.observerRemoved = { _ in counters.removed.add(1, ordering: .relaxed) }
            round.emitter.maxObserversHandler = { _ in }
            for index in 0..<4 {
                let owner = TrackedObject("owner \(index)")
                round.owners.append(owner)
                round.tokens.append(
                    round.emitter.addObserver(owner, queue: index % 2 == 0 ? nil : queues[index % 2]) { _, _, payload in
                        counters.delivered.add(1, ordering: .relaxed)
                        _ = payload?.name
                    }
                )
            }
            return round
        }

        @Test func concurrentFireAddCancelOwnerDeathAndReplayKeepTheBooks() {
            let check = LeakCheck()
            raceRounds(
                threads: 4,
                rounds: 1_000 * stressScale,
                setup: { _ in EmitterStressTests.makeMixedRound() },
                body: { thread, round in
                    let emitter = round.emitter
                    let counters = round.counters
                    switch thread {
                    case 0:
                        // Fires, with payloads whose release the leak check sees.
                        for value in 0..<40 {
                            emitter.fire(value, value % 2 == 0 ? TrackedObject("payload") : nil)
                        }
                    case 1:
                        // Adds and cancels, some observers one-shot.
                        let owner = TrackedObject("adder")
                        for index in 0..<12 {
                            let token = emitter.addObserver(owner) { _, _, _ in
                                counters.delivered.add(1, ordering: .relaxed)
                            }
                            switch index % 3 {
                            case 0: token.cancel()
                            case 1: token.cancelsAfterNextFire = true
                            default: break
                            }
                        }
                        emitter.removeObserver(owner)
                    case 2:
                        // Owners that die right after registering (purged lazily),
                        // some on a queue (the owner must survive the hop).
                        for index in 0..<12 {
                            let owner = TrackedObject("short-lived")
                            emitter.addObserver(owner, queue: index % 2 == 0 ? nil : EmitterStressTests.queues[0]) {
                                owner, _, _ in
                                _ = owner.name
                                counters.delivered.add(1, ordering: .relaxed)
                            }
                        }
                    default:
                        // Targeted fires, replays and queue changes on the
                        // pre-made tokens.
                        for index in 0..<24 {
                            let token = round.tokens[index % round.tokens.count]
                            switch index % 4 {
                            case 0: emitter.fire(for: token, index, TrackedObject("targeted"))
                            case 1: _ = token.firePreviousData()
                            case 2: token.queue = EmitterStressTests.queues[index % 2]
                            default: token.queue = nil
                            }
                        }
                    }
                },
                check: { round in
                    EmitterStressTests.drainQueues()
                    let counters = round.counters
                    // Every registration is removed at most once with a hook; the
                    // ones still listed (live, or dead but not purged yet) are
                    // the rest.
                    let added = counters.added.load(ordering: .relaxed)
                    let removed = counters.removed.load(ordering: .relaxed)
                    #expect(added == 4 + 12 + 12)
                    #expect(removed + round.emitter.observerCount == added)
                    // Thread 1's owner is alive and was removed by removeObserver;
                    // the short-lived owners are dead: a fire purges them all.
                    round.emitter.fire(-1, nil)
                    #expect(round.emitter.observerCount == 4)
                    #expect(counters.removed.load(ordering: .relaxed) == added - 4)
                    round.emitter.removeAllObservers()
                    #expect(counters.removed.load(ordering: .relaxed) == added - 4, "removeAllObservers: no hooks")
                    EmitterStressTests.drainQueues()
                    round.tokens.removeAll()
                    round.owners.removeAll()
                }
            )
            EmitterStressTests.drainQueues()
            #expect(check.leaks() == nil)
        }

        // MARK: cancelsAfterNextFire

        final class OnceRound: @unchecked Sendable {
            // `@unchecked Sendable`: `tokens` and `owner` are written in setup,
            // before the threads are released; the counters are atomics.
            let emitter = EventEmitter<Int>()
            let counters = Counters()
            let owner = TrackedObject("owner")
            var tokens: [EventObserver] = []
        }

        private static func makeOnceRound() -> OnceRound {
            let round = OnceRound()
            let counters = round.counters
            round.emitter.observerRemoved = { _ in counters.onceObservers.add(1, ordering: .relaxed) }
            round.emitter.fire(0)  // last data for the replays, before any observer
            for queue in [nil, queues[0], queues[1]] {
                let token = round.emitter.addObserver(round.owner, queue: queue) { _, _ in
                    counters.onceDeliveries.add(1, ordering: .relaxed)
                }
                token.cancelsAfterNextFire = true
                round.tokens.append(token)
            }
            return round
        }

        @Test func cancelsAfterNextFireDeliversExactlyOnceUnderConcurrentFires() {
            let check = LeakCheck()
            raceRounds(
                threads: 4,
                rounds: 2_000 * stressScale,
                setup: { _ in EmitterStressTests.makeOnceRound() },
                body: { thread, round in
                    for index in 0..<8 {
                        switch (thread + index) % 3 {
                        case 0: round.emitter.fire(index)
                        case 1: round.emitter.fire(for: round.tokens[index % 3], index)
                        default: _ = round.tokens[index % 3].firePreviousData()
                        }
                    }
                },
                check: { round in
                    EmitterStressTests.drainQueues()
                    #expect(round.counters.onceDeliveries.load(ordering: .relaxed) == 3, "one delivery per observer")
                    #expect(round.counters.onceObservers.load(ordering: .relaxed) == 3, "one removal hook per observer")
                    #expect(round.emitter.observerCount == 0)
                    #expect(round.tokens.allSatisfy { $0.isCancelled })
                    round.tokens.removeAll()
                }
            )
            #expect(check.leaks() == nil)
        }

        // MARK: Last data

        /// Values one replaying thread received, touched only by that thread
        /// (synchronous deliveries run on the replaying thread).
        final class Received: @unchecked Sendable {
            // `@unchecked Sendable`: confined to one racing thread, read by the
            // coordinator after the round (raceRounds orders the two).
            var values: [Int] = []
        }

        final class ReplayRound: @unchecked Sendable {
            // `@unchecked Sendable`: set up before the threads start; then
            // `received[i]` is only touched by thread i + 1.
            let emitter = EventEmitter<Int, TrackedObject>()
            let owner = TrackedObject("owner")
            var firingToken: EventObserver?
            var replayTokens: [EventObserver] = []
            var received: [Received] = []
        }

        @Test func aReplayNeverGoesBackToOlderDataWhileFiresReplaceIt() {
            let check = LeakCheck()
            let firesPerRound = 200
            raceRounds(
                threads: 4,
                rounds: 300 * stressScale,
                setup: { _ in
                    let round = ReplayRound()
                    // Thread 0 fires through a targeted fire to its own observer:
                    // that stores the last data without delivering to the
                    // replaying observers.
                    round.firingToken = round.emitter.addObserver(round.owner) { _, _, _ in }
                    for _ in 0..<3 {
                        let received = Received()
                        round.received.append(received)
                        round.replayTokens.append(
                            round.emitter.addObserver(round.owner) { _, value, payload in
                                _ = payload.name
                                received.values.append(value)
                            }
                        )
                    }
                    return round
                },
                body: { thread, round in
                    if thread == 0 {
                        let token = round.firingToken!
                        for value in 1...firesPerRound {
                            round.emitter.fire(for: token, value, TrackedObject("payload"))
                        }
                    } else {
                        let token = round.replayTokens[thread - 1]
                        for _ in 0..<firesPerRound {
                            _ = token.firePreviousData()
                        }
                    }
                },
                check: { round in
                    for received in round.received {
                        let values = received.values
                        #expect(values == values.sorted(), "a replay returned data older than an earlier replay")
                        #expect(values.allSatisfy { (1...firesPerRound).contains($0) })
                    }
                    #expect(round.replayTokens.allSatisfy { $0.firePreviousData() })
                    #expect(round.received.allSatisfy { $0.values.last == firesPerRound })
                    round.emitter.removeAllObservers()
                }
            )
            #expect(check.leaks() == nil)
        }

        // MARK: Queue changes

        final class QueueRound: @unchecked Sendable {
            // `@unchecked Sendable`: `token` is set in setup; counters atomic.
            let emitter = EventEmitter<Int>()
            let owner = TrackedObject("owner")
            let counters = Counters()
            var token: EventObserver?
        }

        @Test func everyFireIsDeliveredOnceWhileTheQueueChanges() {
            let check = LeakCheck()
            let firesPerThread = 30
            raceRounds(
                threads: 4,
                rounds: 600 * stressScale,
                setup: { _ in
                    let round = QueueRound()
                    let counters = round.counters
                    round.token = round.emitter.addObserver(round.owner, queue: EmitterStressTests.queues[0]) { _, _ in
                        counters.delivered.add(1, ordering: .relaxed)
                    }
                    return round
                },
                body: { thread, round in
                    if thread == 0 {
                        let token = round.token!
                        for index in 0..<firesPerThread {
                            token.queue = index % 3 == 2 ? nil : EmitterStressTests.queues[index % 3]
                            _ = token.queue
                        }
                    } else {
                        for value in 0..<firesPerThread {
                            round.emitter.fire(value)
                        }
                    }
                },
                check: { round in
                    EmitterStressTests.drainQueues()
                    #expect(round.counters.delivered.load(ordering: .relaxed) == 3 * firesPerThread)
                    round.token?.cancel()
                    round.token = nil
                }
            )
            #expect(check.leaks() == nil)
        }
    }
}
