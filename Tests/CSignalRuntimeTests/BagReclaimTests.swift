// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import CSignalRuntime
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SignalKitTesting
import Synchronization
import Testing

// Reclamation while the bag lives: nothing retired may wait for an unrelated
// later reader or for the bag's death. These tests look at the counters
// (the bag's backlog, the runtime's retired-array and retired-item counts)
// while the bag is alive, and never call `csr_bag_reclaim` unless the bag
// asked for it (`csr_bag_read_end` returned true, or `csr_bag_remove` set
// `*reclaim`): a caller that follows the protocol must be enough.

/// Per-round state of the race tests.
private final class BagRound: @unchecked Sendable {
    // `@unchecked Sendable`: `keys` is written by `setup` before the round
    // starts and only read during it; the counters are atomics.
    var keys: [[UInt64]] = []
    /// How long the reader stays inside: swept over the rounds so that its
    /// exit lands everywhere in the remover's critical section.
    var spins = 0
    let freed = Synchronization.Atomic<Int>(0)
    let inserted = Synchronization.Atomic<Int>(0)
    let badCanaries = Synchronization.Atomic<Int>(0)
}

/// Shared by an interleaving hook and the threads of one test.
private final class Interleaving: @unchecked Sendable {
    // `@unchecked Sendable`: `bag` and `point` are immutable; the rest are
    // atomics.
    let bag: OpaquePointer
    let point: Int32
    let readerInside = Synchronization.Atomic<Bool>(false)
    let removerStopped = Synchronization.Atomic<Bool>(false)
    let readerLeft = Synchronization.Atomic<Bool>(false)
    let freed = Synchronization.Atomic<Int>(0)

    init(bag: OpaquePointer, point: Int32) {
        self.bag = bag
        self.point = point
    }
}

extension CSignalRuntimeSuite {
    @Suite struct BagReclaimTests {
        @Test func arraysReplacedDuringAWalkAreFreedWhenTheWalkEnds() {
            let retiredArrays = csr_debug_retired_arrays()
            let arrays = csr_debug_live_arrays()
            let bag = csr_bag_create()!
            var read = csr_bag_read_begin(bag)
            var keys: [UInt64] = []
            // Growing from 4 to 128 entries replaces the array several times
            // while the walk pins the first one.
            for _ in 0..<100 { keys.append(csr_bag_insert(bag, makeItem())) }
            #expect(csr_debug_retired_arrays() > retiredArrays)
            #expect(csr_bag_pending(bag) != 0, "retired arrays must show in the backlog")
            #expect(csr_bag_read_end(bag, &read), "the last reader out must be told to reclaim")
            #expect(reclaimAndFree(bag) == 0)
            #expect(csr_bag_pending(bag) == 0)
            #expect(csr_debug_retired_arrays() == retiredArrays)
            #expect(csr_debug_live_arrays() == arrays + 1)
            for key in keys { removeAndFree(bag, key) }
            csr_bag_destroy(bag)
            #expect(csr_debug_live_arrays() == arrays)
        }

        /// The pattern of a pipe whose callback subscribes while it is being
        /// delivered to, the subscriptions disposed outside any delivery.
        @Test func insertingInsideWalksAndRemovingOutsideKeepsMemoryBounded() {
            let retiredArrays = csr_debug_retired_arrays()
            let retiredItems = csr_debug_retired_items()
            let arrays = csr_debug_live_arrays()
            let bag = csr_bag_create()!
            var growing = 0
            var maxLiveArrays = 0
            for _ in 0..<5_000 {
                var read = csr_bag_read_begin(bag)
                let keys = (0..<64).map { _ in csr_bag_insert(bag, makeItem()) }
                endReadAndFree(bag, &read)
                for key in keys { removeAndFree(bag, key) }
                if csr_bag_pending(bag) != 0 || csr_debug_retired_arrays() != retiredArrays { growing += 1 }
                maxLiveArrays = max(maxLiveArrays, csr_debug_live_arrays() - arrays)
            }
            #expect(growing == 0, "cycles that left retired arrays behind while the bag lived")
            #expect(maxLiveArrays <= 1)
            #expect(csr_debug_retired_items() == retiredItems)
            csr_bag_destroy(bag)
            #expect(csr_debug_live_arrays() == arrays)
        }

        /// A remover retires an item because a walk is inside; the walk ends
        /// in the gap before the remover publishes the retirement (forced
        /// with the runtime's interleaving hook, at both places where the
        /// gap is). One of them must hand the item back, with no further walk.
        @Test(arguments: [CSR_DEBUG_POINT_BAG_RETIRED, CSR_DEBUG_POINT_BAG_ADVANCED])
        func aWalkEndingWhileARemovalRetiresItsItemHandsTheItemBack(point: Int32) {
            let bag = csr_bag_create()!
            let key = csr_bag_insert(bag, makeItem())
            let state = Interleaving(bag: bag, point: point)
            csr_debug_set_interleaving_hook(
                { point, object, context in
                    let state = Unmanaged<Interleaving>.fromOpaque(context!).takeUnretainedValue()
                    guard OpaquePointer(object) == state.bag, point == state.point,
                        !state.removerStopped.exchange(true, ordering: .acquiringAndReleasing)
                    else { return }
                    while !state.readerLeft.load(ordering: .acquiring) { sched_yield() }
                },
                Unmanaged.passUnretained(state).toOpaque()
            )
            let bagBox = UncheckedBox(bag)
            race(threads: 2) { index in
                let bag = bagBox.value
                if index == 0 {
                    var read = csr_bag_read_begin(bag)
                    state.readerInside.store(true, ordering: .releasing)
                    while !state.removerStopped.load(ordering: .acquiring) { sched_yield() }
                    state.freed.add(endReadAndFree(bag, &read), ordering: .relaxed)
                    state.readerLeft.store(true, ordering: .releasing)
                } else {
                    while !state.readerInside.load(ordering: .acquiring) { sched_yield() }
                    state.freed.add(removeAndFree(bag, key), ordering: .relaxed)
                }
            }
            csr_debug_set_interleaving_hook(nil, nil)
            let stopped = state.removerStopped.load(ordering: .relaxed)
            #expect(stopped, "the remover never reached the point")
            #expect(state.freed.load(ordering: .relaxed) == 1, "the removed item was not handed back")
            #expect(csr_bag_pending(bag) == 0)
            reclaimAndFree(bag)
            csr_bag_destroy(bag)
        }

        /// The same race, left to chance: a reader whose walk ends at swept
        /// moments against a remover.
        @Test func aRemovalRacingTheEndOfAWalkIsHandedBackWithoutAnotherWalk() {
            let bag = csr_bag_create()!
            let bagBox = UncheckedBox(bag)
            var lost = 0
            var badCanaries = 0
            raceRounds(
                threads: 2,
                rounds: 20_000 * stressScale,
                setup: { index in
                    let round = BagRound()
                    round.keys = [[csr_bag_insert(bag, makeItem())]]
                    round.spins = (index * 7) % 1_000
                    return round
                },
                body: { (index: Int, round: BagRound) in
                    let bag = bagBox.value
                    if index == 0 {
                        var read = csr_bag_read_begin(bag)
                        round.badCanaries.add(walk(&read), ordering: .relaxed)
                        for _ in 0..<round.spins { _ = round.freed.load(ordering: .relaxed) }
                        round.freed.add(endReadAndFree(bag, &read), ordering: .relaxed)
                    } else {
                        round.freed.add(removeAndFree(bag, round.keys[0][0]), ordering: .relaxed)
                    }
                },
                check: { round in
                    if round.freed.load(ordering: .relaxed) != 1 || csr_bag_pending(bag) != 0 { lost += 1 }
                    badCanaries += round.badCanaries.load(ordering: .relaxed)
                    // Keep the rounds independent if one was lost.
                    reclaimAndFree(bag)
                }
            )
            #expect(lost == 0, "rounds whose removed item waited for another walk")
            #expect(badCanaries == 0)
            csr_bag_destroy(bag)
        }

        /// Several readers with nested walks, removals from inside their
        /// walks and stalls, racing a thread that grows the bag and empties
        /// it again outside any walk. After every round (all threads out),
        /// the bag must have handed everything back and freed every replaced
        /// array, while it is still alive.
        @Test func nestedStalledReadersRemovingInsideWalksLeaveNothingRetired() {
            let retiredArrays = csr_debug_retired_arrays()
            let retiredItems = csr_debug_retired_items()
            let arrays = csr_debug_live_arrays()
            let bag = csr_bag_create()!
            let bagBox = UncheckedBox(bag)
            let readers = 3
            var inserted = 0
            var freed = 0
            var leftovers = 0
            var badCanaries = 0
            raceRounds(
                threads: readers + 1,
                rounds: 2_000 * stressScale,
                setup: { _ in
                    let round = BagRound()
                    round.keys = (0..<readers).map { _ in (0..<8).map { _ in csr_bag_insert(bag, makeItem()) } }
                    inserted += readers * 8
                    return round
                },
                body: { (index: Int, round: BagRound) in
                    let bag = bagBox.value
                    var freedHere = 0
                    var bad = 0
                    if index < readers {
                        var outer = csr_bag_read_begin(bag)
                        bad += walk(&outer)
                        var inner = csr_bag_read_begin(bag)
                        for (offset, key) in round.keys[index].enumerated() {
                            freedHere += removeAndFree(bag, key)
                            if offset == 3 { bad += walk(&inner) }
                        }
                        if index == 0 {
                            // Stall inside both walks for a while.
                            for _ in 0..<20 { sched_yield() }
                        }
                        freedHere += endReadAndFree(bag, &inner)
                        bad += walk(&outer)
                        freedHere += endReadAndFree(bag, &outer)
                    } else {
                        // Grows the array while walks pin it, then empties it.
                        let keys = (0..<32).map { _ in csr_bag_insert(bag, makeItem()) }
                        round.inserted.add(keys.count, ordering: .relaxed)
                        for key in keys { freedHere += removeAndFree(bag, key) }
                    }
                    round.freed.add(freedHere, ordering: .relaxed)
                    round.badCanaries.add(bad, ordering: .relaxed)
                },
                check: { round in
                    inserted += round.inserted.load(ordering: .relaxed)
                    freed += round.freed.load(ordering: .relaxed)
                    badCanaries += round.badCanaries.load(ordering: .relaxed)
                    if csr_bag_pending(bag) != 0 || csr_bag_count(bag) != 0
                        || csr_debug_retired_arrays() != retiredArrays || csr_debug_retired_items() != retiredItems
                        || freed != inserted
                    {
                        leftovers += 1
                        freed += reclaimAndFree(bag)
                    }
                }
            )
            #expect(leftovers == 0, "rounds that left retired items or arrays in the living bag")
            #expect(badCanaries == 0)
            #expect(freed == inserted)
            #expect(csr_debug_live_arrays() == arrays + 1)
            csr_bag_destroy(bag)
            #expect(csr_debug_live_arrays() == arrays)
        }
    }
}
