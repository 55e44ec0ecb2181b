// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import CSignalRuntime
import SignalKitTesting
import Synchronization
import Testing

extension CSignalRuntimeSuite {
    @Suite struct BagRaceTests {
        @Test(arguments: [2, 4, 8])
        func insertRemoveAndWalkRace(threads: Int) {
            let bag = csr_bag_create()!
            let freed = Synchronization.Atomic<Int>(0)
            let inserted = Synchronization.Atomic<Int>(0)
            let badCanaries = Synchronization.Atomic<Int>(0)
            let bagBox = UncheckedBox(bag)
            let perThread = 20_000 * stressScale / threads
            race(threads: threads) { index in
                let bag = bagBox.value
                var buffer = [UnsafeMutableRawPointer?](repeating: nil, count: 16)
                func reclaim() {
                    while true {
                        let count = buffer.withUnsafeMutableBufferPointer { csr_bag_reclaim(bag, $0.baseAddress, 16) }
                        for slot in 0..<count { freeItem(buffer[slot]!) }
                        freed.add(count, ordering: .relaxed)
                        if count < 16 { break }
                    }
                }
                if index == 0 {
                    // The delivering thread: walk continuously, touching items.
                    for _ in 0..<perThread {
                        var read = csr_bag_read_begin(bag)
                        var position = 0
                        while true {
                            let count = buffer.withUnsafeMutableBufferPointer {
                                csr_bag_read_next(&read, &position, $0.baseAddress, 16)
                            }
                            for slot in 0..<count where buffer[slot]!.load(as: UInt64.self) != canary {
                                badCanaries.add(1, ordering: .relaxed)
                            }
                            if count < 16 { break }
                        }
                        if csr_bag_read_end(bag, &read) { reclaim() }
                    }
                } else {
                    // Subscribers coming and going.
                    var mine: [UInt64] = []
                    for step in 0..<perThread {
                        if step % 3 == 2, !mine.isEmpty {
                            var found = false
                            var mustReclaim = false
                            if let item = csr_bag_remove(bag, mine.removeFirst(), &found, &mustReclaim) {
                                freeItem(item)
                                freed.add(1, ordering: .relaxed)
                            }
                            #expect(found)
                            reclaim()
                        } else {
                            let key = csr_bag_insert(bag, makeItem())
                            #expect(key != 0)
                            inserted.add(1, ordering: .relaxed)
                            mine.append(key)
                        }
                    }
                    for key in mine {
                        var found = false
                        var mustReclaim = false
                        if let item = csr_bag_remove(bag, key, &found, &mustReclaim) {
                            freeItem(item)
                            freed.add(1, ordering: .relaxed)
                        }
                        #expect(found)
                    }
                    reclaim()
                }
            }
            var buffer = [UnsafeMutableRawPointer?](repeating: nil, count: 16)
            while true {
                let count = buffer.withUnsafeMutableBufferPointer { csr_bag_reclaim(bag, $0.baseAddress, 16) }
                for slot in 0..<count { freeItem(buffer[slot]!) }
                freed.add(count, ordering: .relaxed)
                if count < 16 { break }
            }
            #expect(badCanaries.load(ordering: .relaxed) == 0)
            #expect(freed.load(ordering: .relaxed) == inserted.load(ordering: .relaxed))
            #expect(csr_bag_count(bag) == 0)
            #expect(csr_bag_pending(bag) == 0)
            csr_bag_destroy(bag)
        }

        @Test func liveCountersReturnToZero() {
            let bags = csr_debug_live_bags()
            let arrays = csr_debug_live_arrays()
            let retired = csr_debug_retired_items()
            do {
                let bag = csr_bag_create()!
                for index in 1...100 { _ = csr_bag_insert(bag, UnsafeMutableRawPointer(bitPattern: index * 16)!) }
                _ = csr_bag_remove_all(bag)
                var buffer = [UnsafeMutableRawPointer?](repeating: nil, count: 128)
                let count = buffer.withUnsafeMutableBufferPointer { csr_bag_reclaim(bag, $0.baseAddress, 128) }
                #expect(count == 100)
                csr_bag_destroy(bag)
            }
            #expect(csr_debug_live_bags() == bags)
            #expect(csr_debug_live_arrays() == arrays)
            #expect(csr_debug_retired_items() == retired)
        }
    }
}
