// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import CSignalRuntime
import SignalKitTesting
import Synchronization
import Testing

extension CSignalRuntimeSuite {
    /// Producers racing one consumer, under ThreadSanitizer and
    /// AddressSanitizer in `scripts/test`. Every item is a heap allocation the
    /// consumer frees: an item delivered twice is a double free, an item
    /// lost is a count that does not add up, an item out of its producer's
    /// order fails the order check, and a lost wake-up leaves the consumer
    /// asleep until its deadline with items in the ring (the test fails
    /// instead of hanging).
    @Suite struct RingRaceTests {
        static let strategies = [CSR_WAIT_PARK, CSR_WAIT_SPIN_THEN_PARK, CSR_WAIT_BUSY_SPIN]

        /// `producers` threads push `perProducer` numbered items each (the
        /// number is `producer << 32 | sequence`), pausing every `pauseEvery`
        /// items so that the consumer runs dry and parks; the consumer checks
        /// per-producer order and that everything arrived.
        func run(
            producers: Int,
            perProducer: Int,
            capacity: Int,
            strategy: csr_wait_strategy,
            pauseEvery: Int
        ) -> csr_ring_statistics {
            let ring = UncheckedBox(csr_ring_create(capacity)!)
            let lostWakeUps = Synchronization.Atomic<Int>(0)
            let outOfOrder = Synchronization.Atomic<Int>(0)
            let received = Synchronization.Atomic<Int>(0)
            race(threads: producers + 1) { index in
                let ring = ring.value
                if index == producers {
                    var next = [UInt64](repeating: 0, count: producers)
                    for _ in 0..<(producers * perProducer) {
                        // Generous: only a lost wake-up (or a stalled machine) reaches it.
                        let deadline = csr_monotonic_nanoseconds() + 20_000_000_000
                        guard let item = csr_ring_pop_wait(ring, strategy, 20_000, deadline) else {
                            lostWakeUps.add(1, ordering: .relaxed)
                            return
                        }
                        let number = takeNumberedItem(item)
                        let producer = Int(number >> 32)
                        if number & 0xFFFF_FFFF != next[producer] { outOfOrder.add(1, ordering: .relaxed) }
                        next[producer] = (number & 0xFFFF_FFFF) + 1
                        received.add(1, ordering: .relaxed)
                    }
                } else {
                    for sequence in 0..<perProducer {
                        _ = csr_ring_push(ring, makeNumberedItem(UInt64(index) << 32 | UInt64(sequence)))
                        if sequence % pauseEvery == pauseEvery - 1 {
                            // Let the consumer run dry, spin out and park.
                            var pause = timespec(tv_sec: 0, tv_nsec: 50_000)
                            nanosleep(&pause, nil)
                        }
                    }
                }
            }
            #expect(lostWakeUps.load(ordering: .relaxed) == 0)
            #expect(outOfOrder.load(ordering: .relaxed) == 0)
            #expect(received.load(ordering: .relaxed) == producers * perProducer)
            let statistics = ringStatistics(ring.value)
            #expect(statistics.ring_depth == 0)
            #expect(statistics.spill_depth == 0)
            #expect(csr_ring_destroy(ring.value))
            return statistics
        }

        /// Many producers, a small ring: most pushes race for cells and many
        /// spill.
        @Test(arguments: strategies)
        func manyProducersIntoASmallRing(strategy: csr_wait_strategy) {
            let statistics = run(
                producers: 4,
                perProducer: 5_000 * stressScale,
                capacity: 8,
                strategy: strategy,
                pauseEvery: 1_000
            )
            #expect(statistics.spilled_total > 0)
        }

        /// One item at a time with a pause after each: every push meets a
        /// consumer that is parking, parked or just woken (the park/wake race
        /// the model checks exhaustively).
        @Test(arguments: [CSR_WAIT_PARK, CSR_WAIT_SPIN_THEN_PARK])
        func aProducerRacesTheConsumersPark(strategy: csr_wait_strategy) {
            let statistics = run(
                producers: 2,
                perProducer: 500 * stressScale,
                capacity: 64,
                strategy: strategy,
                pauseEvery: 1
            )
            #expect(statistics.parks > 0)
            #expect(statistics.wakes > 0)
        }
    }
}
