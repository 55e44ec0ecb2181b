// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Synchronization
import Testing

// What a disposed subscription leaves behind, checked while its source lives:
// its callbacks must be released at disposal (not at the source's next
// delivery or death), and a source's subscriber bag must not grow.

/// Counts its own deinitialisation.
private final class ReleaseProbe: Sendable {
    let round: DisposeRound
    init(_ round: DisposeRound) { self.round = round }
    deinit { round.released.add(1, ordering: .relaxed) }
}

/// Per-round state: the handle (kept alive by the round, so that only the
/// disposal can release the callbacks), the subscriber, and whether the
/// round's callbacks were released.
private final class DisposeRound: @unchecked Sendable {
    // `@unchecked Sendable`: written by `setup` before the round starts, read
    // by the round's threads after (raceRounds publishes it).
    var handle: (any Disposable)?
    var subscriber: Subscriber<Int, NoError>?
    let released = Synchronization.Atomic<Int>(0)
}

extension StressSuite {
    @Suite struct ReclamationStressTests {
        /// `putNext` races `dispose()` on a pipe that lives on: every disposed
        /// subscription's callbacks are released by the time both calls
        /// returned, without a further delivery.
        @Test func aDisposedPipeSubscriptionReleasesItsCallbacksWithoutAnotherDelivery() {
            let check = LeakCheck()
            do {
                let pipe = ValuePipe<Int>()
                // A second, standing subscriber keeps the bag walking.
                let standing = pipe.signal().start(next: { _ in })
                var kept = 0
                raceRounds(
                    threads: 2,
                    rounds: 10_000 * stressScale,
                    setup: { _ in
                        let round = DisposeRound()
                        let probe = ReleaseProbe(round)
                        round.handle = pipe.signal().start(next: { _ in _ = probe })
                        return round
                    },
                    body: { (index: Int, round: DisposeRound) in
                        if index == 0 {
                            for value in 0..<4 { pipe.putNext(value) }
                        } else {
                            round.handle?.dispose()
                        }
                    },
                    check: { (round: DisposeRound) in
                        if round.released.load(ordering: .relaxed) != 1 { kept += 1 }
                    }
                )
                #expect(kept == 0, "disposed subscriptions whose callbacks outlived their disposal")
                #expect(SignalKitDebug.retiredBagItems == check.before.retiredBagItems)
                standing.dispose()
            }
            #expect(check.leaks() == nil)
        }

        /// A pipe whose callback subscribes 64 times per delivery, the new
        /// subscriptions disposed afterwards, outside any delivery: the bag's
        /// replaced arrays are freed as it goes, not when the pipe dies.
        @Test func aPipeSubscribingInsideItsDeliveriesKeepsItsArraysBounded() {
            let check = LeakCheck()
            do {
                let pipe = ValuePipe<Int>()
                let handles = _LockedState<[any Disposable]>([])
                let subscriber = pipe.signal().start(next: { _ in
                    for _ in 0..<64 {
                        let handle = pipe.signal().start(next: { _ in })
                        handles.withLock { $0.append(handle) }
                    }
                })
                var worstArrays = 0
                var cyclesWithRetiredArrays = 0
                for value in 0..<(2_000 * stressScale) {
                    pipe.putNext(value)
                    let taken = handles.withLock { handles in
                        defer { handles.removeAll(keepingCapacity: true) }
                        return handles
                    }
                    for handle in taken { handle.dispose() }
                    worstArrays = max(worstArrays, SignalKitDebug.liveBagArrays - check.before.bagArrays)
                    if SignalKitDebug.retiredBagArrays != check.before.retiredBagArrays { cyclesWithRetiredArrays += 1 }
                }
                #expect(cyclesWithRetiredArrays == 0, "cycles that left replaced arrays allocated")
                #expect(worstArrays <= 1, "the pipe's bag holds one array at rest")
                subscriber.dispose()
            }
            #expect(check.leaks() == nil)
        }

        /// `Subscriber.description` reads the callbacks; a `dispose()` on
        /// another thread releases them. The read is guarded like a delivery
        /// (AddressSanitizer reported a heap-use-after-free here).
        @Test func subscriberDescriptionRacesDispose() {
            let check = LeakCheck()
            do {
                raceRounds(
                    threads: 2,
                    rounds: 10_000 * stressScale,
                    setup: { _ in
                        let round = DisposeRound()
                        let probe = ReleaseProbe(round)
                        let captured = _LockedState<Subscriber<Int, NoError>?>(nil)
                        round.handle = Signal<Int, NoError> { subscriber in
                            captured.withLock { $0 = subscriber }
                            return EmptyDisposable
                        }.start(next: { _ in _ = probe }, completed: { _ = probe })
                        round.subscriber = captured.withLock { $0 }
                        return round
                    },
                    body: { (index: Int, round: DisposeRound) in
                        if index == 0 {
                            for _ in 0..<8 { _ = round.subscriber!.description }
                        } else {
                            round.handle?.dispose()
                        }
                    },
                    check: { (round: DisposeRound) in
                        #expect(round.released.load(ordering: .relaxed) == 1)
                    }
                )
            }
            #expect(check.leaks() == nil)
        }
    }
}
