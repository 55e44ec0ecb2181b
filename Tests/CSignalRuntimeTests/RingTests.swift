// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import CSignalRuntime
import Testing

/// A heap item carrying a number: pushing the same item twice, or using one
/// after the consumer freed it, is a double free or a use-after-free that
/// AddressSanitizer reports.
func makeNumberedItem(_ number: UInt64) -> UnsafeMutableRawPointer {
    let item = UnsafeMutablePointer<UInt64>.allocate(capacity: 1)
    item.initialize(to: number)
    return UnsafeMutableRawPointer(item)
}

/// Frees an item made by `makeNumberedItem` and returns its number.
func takeNumberedItem(_ raw: UnsafeMutableRawPointer) -> UInt64 {
    let item = raw.assumingMemoryBound(to: UInt64.self)
    let number = item.pointee
    item.deinitialize(count: 1)
    item.deallocate()
    return number
}

func ringStatistics(_ ring: OpaquePointer) -> csr_ring_statistics {
    var statistics = csr_ring_statistics()
    csr_ring_get_statistics(ring, &statistics)
    return statistics
}

/// Pops without waiting; nil when empty (a single-threaded test never sees
/// a claimed, unpublished cell).
func popNumber(_ ring: OpaquePointer) -> UInt64? {
    var busy = false
    let item = csr_ring_pop(ring, &busy)
    #expect(!busy)
    return item.map(takeNumberedItem)
}

extension CSignalRuntimeSuite {
    @Suite struct RingTests {
        @Test func capacityIsRoundedUpToAPowerOfTwoOfAtLeastTwo() {
            for (asked, cells) in [(0, 2), (1, 2), (2, 2), (3, 4), (1000, 1024), (1024, 1024)] {
                let ring = csr_ring_create(asked)!
                #expect(ringStatistics(ring).capacity == UInt64(cells))
                #expect(csr_ring_destroy(ring))
            }
        }

        @Test func itemsComeOutInTheOrderTheyWentIn() {
            let ring = csr_ring_create(8)!
            for lap in 0..<5 {
                for number in 0..<6 {
                    #expect(csr_ring_push(ring, makeNumberedItem(UInt64(lap * 10 + number))) == CSR_PUSH_RING)
                }
                #expect(ringStatistics(ring).ring_depth == 6)
                #expect((0..<6).map { _ in popNumber(ring) } == (0..<6).map { UInt64(lap * 10 + $0) })
                #expect(popNumber(ring) == nil)
            }
            #expect(csr_ring_destroy(ring))
        }

        /// Beyond the capacity items spill, are counted, and keep their order;
        /// while anything is spilled new items spill too, even when cells are
        /// free again, so that one producer's order holds.
        @Test func aFullRingSpillsInOrderAndCountsIt() {
            let ring = csr_ring_create(4)!
            for number in 0..<4 { #expect(csr_ring_push(ring, makeNumberedItem(UInt64(number))) == CSR_PUSH_RING) }
            for number in 4..<7 { #expect(csr_ring_push(ring, makeNumberedItem(UInt64(number))) == CSR_PUSH_SPILLED) }
            var statistics = ringStatistics(ring)
            #expect(statistics.ring_depth == 4)
            #expect(statistics.spill_depth == 3)
            #expect(statistics.spilled_total == 3)
            #expect(popNumber(ring) == 0)
            // A cell is free, but 4...6 are spilled: 7 must follow them.
            #expect(csr_ring_push(ring, makeNumberedItem(7)) == CSR_PUSH_SPILLED)
            #expect((1..<8).map { _ in popNumber(ring) } == (1..<8).map { UInt64($0) })
            #expect(popNumber(ring) == nil)
            statistics = ringStatistics(ring)
            #expect(statistics.spill_depth == 0)
            #expect(statistics.spilled_total == 4)
            // Once the spill list is empty, items go to the ring again.
            #expect(csr_ring_push(ring, makeNumberedItem(8)) == CSR_PUSH_RING)
            #expect(popNumber(ring) == 8)
            #expect(csr_ring_destroy(ring))
        }

        @Test func destroyRefusesARingThatStillHoldsItems() {
            let ring = csr_ring_create(2)!
            #expect(csr_ring_push(ring, makeNumberedItem(1)) == CSR_PUSH_RING)
            #expect(!csr_ring_destroy(ring))
            #expect(csr_ring_push(ring, makeNumberedItem(2)) == CSR_PUSH_RING)
            #expect(csr_ring_push(ring, makeNumberedItem(3)) == CSR_PUSH_SPILLED)
            #expect(popNumber(ring) == 1)
            #expect(popNumber(ring) == 2)
            #expect(!csr_ring_destroy(ring))
            #expect(popNumber(ring) == 3)
            #expect(csr_ring_destroy(ring))
        }

        @Test(arguments: [CSR_WAIT_PARK, CSR_WAIT_SPIN_THEN_PARK, CSR_WAIT_BUSY_SPIN])
        func waitingOnAnEmptyRingEndsAtTheDeadline(strategy: csr_wait_strategy) {
            let ring = csr_ring_create(4)!
            let start = csr_monotonic_nanoseconds()
            let deadline = start + 2_000_000
            #expect(csr_ring_pop_wait(ring, strategy, 500_000, deadline) == nil)
            #expect(csr_monotonic_nanoseconds() >= deadline)
            if strategy == CSR_WAIT_BUSY_SPIN {
                #expect(ringStatistics(ring).parks == 0)
            } else {
                #expect(ringStatistics(ring).parks >= 1)
            }
            // An item already there is returned at once, deadline or not.
            #expect(csr_ring_push(ring, makeNumberedItem(42)) == CSR_PUSH_RING)
            #expect(csr_ring_pop_wait(ring, strategy, 500_000, 1).map(takeNumberedItem) == 42)
            #expect(csr_ring_destroy(ring))
        }
    }
}
