// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Synchronization
import Testing

// `take(n)` fed by several threads at once (a source breaking the serial
// contract): at most n values, no duplicates, exactly one completion, the
// upstream disposed exactly once. Run under ThreadSanitizer and
// AddressSanitizer by scripts/test.
//
// Nested in `StressSuite` (serialized, recursively), so this suite never runs
// in parallel with the other stress tests: LeakCheck's counters are
// process-wide.

extension StressSuite {
    @Suite(.serialized) struct TakeStressTests {
        /// One round: a `take(limit)` subscription whose upstream subscriber the
        /// racing threads share.
        final class Round: @unchecked Sendable {
            // `@unchecked Sendable`: `subscriber` and `handle` are set in setup,
            // before the threads are released; the counters are atomics and
            // `delivered` is a SignalKit.Atomic (a pthread mutex, which
            // ThreadSanitizer understands even when contended; a contended
            // Synchronization.Mutex hands over through the kernel, which it
            // does not see).
            let upstreamDisposals = Counter()
            let completions = Synchronization.Atomic<Int>(0)
            let delivered = SignalKit.Atomic<[Int]>(value: [])
            var subscriber: Subscriber<Int, NoError>?
            var handle: (any Disposable)?
        }

        private static func makeRound(limit: Int) -> Round {
            let round = Round()
            let held = _LockedState<Subscriber<Int, NoError>?>(nil)
            let disposals = round.upstreamDisposals
            let upstream = Signal<Int, NoError> { subscriber in
                held.withLock { $0 = subscriber }
                return disposals
            }
            round.handle = (upstream |> take(limit)).start(
                next: { [round] value in round.delivered.modify { $0 + [value] } },
                completed: { [round] in round.completions.add(1, ordering: .relaxed) }
            )
            round.subscriber = held.withLock { $0 }
            return round
        }

        private static let valuesPerThread = 8

        @Test(arguments: [1, 3, 16])
        func concurrentEmissionDeliversAtMostNValuesAndCompletesOnce(limit: Int) {
            let check = LeakCheck()
            let threads = 4
            raceRounds(
                threads: threads,
                rounds: 4_000 * stressScale,
                setup: { _ in TakeStressTests.makeRound(limit: limit) },
                body: { index, round in
                    let subscriber = round.subscriber!
                    for offset in 0..<TakeStressTests.valuesPerThread {
                        subscriber.putNext(index * TakeStressTests.valuesPerThread + offset)
                    }
                },
                check: { round in
                    let delivered = round.delivered.with { $0 }
                    #expect(delivered.count <= limit)
                    #expect(Set(delivered).count == delivered.count, "no duplicates")
                    // 32 values were sent, more than any limit: exactly one completion.
                    #expect(round.completions.load(ordering: .relaxed) == 1)
                    #expect(round.upstreamDisposals.count.load(ordering: .relaxed) == 1)
                    round.handle?.dispose()
                    #expect(round.upstreamDisposals.count.load(ordering: .relaxed) == 1)
                    round.subscriber = nil
                    round.handle = nil
                }
            )
            #expect(check.leaks() == nil)
        }

        @Test func concurrentEmissionRacesHandleDisposal() {
            let check = LeakCheck()
            let limit = 4
            raceRounds(
                threads: 3,
                rounds: 4_000 * stressScale,
                setup: { _ in TakeStressTests.makeRound(limit: limit) },
                body: { index, round in
                    if index == 2 {
                        round.handle?.dispose()
                    } else {
                        let subscriber = round.subscriber!
                        for offset in 0..<TakeStressTests.valuesPerThread {
                            subscriber.putNext(index * TakeStressTests.valuesPerThread + offset)
                        }
                    }
                },
                check: { round in
                    let delivered = round.delivered.with { $0 }
                    #expect(delivered.count <= limit)
                    #expect(Set(delivered).count == delivered.count, "no duplicates")
                    #expect(round.completions.load(ordering: .relaxed) <= 1)
                    #expect(round.upstreamDisposals.count.load(ordering: .relaxed) == 1)
                    round.subscriber = nil
                    round.handle = nil
                }
            )
            #expect(check.leaks() == nil)
        }
    }
}
