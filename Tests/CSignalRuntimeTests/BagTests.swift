// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import CSignalRuntime
import SignalKitTesting
import Synchronization
import Testing

private func item(_ value: Int) -> UnsafeMutableRawPointer { UnsafeMutableRawPointer(bitPattern: value * 16)! }
private func value(_ item: UnsafeMutableRawPointer) -> Int { Int(bitPattern: item) / 16 }

/// Walks the bag like a delivery does and returns the items seen.
private func walk(_ bag: OpaquePointer) -> [Int] {
    var read = csr_bag_read_begin(bag)
    var position = 0
    var buffer = [UnsafeMutableRawPointer?](repeating: nil, count: 3)
    var seen: [Int] = []
    while true {
        let count = buffer.withUnsafeMutableBufferPointer { csr_bag_read_next(&read, &position, $0.baseAddress, 3) }
        seen += buffer.prefix(count).map { value($0!) }
        if count < 3 { break }
    }
    _ = csr_bag_read_end(bag, &read)
    return seen
}

/// Removes `key`; returns whether it was found and the item if it came back
/// at once (no reader inside).
private func remove(_ bag: OpaquePointer, _ key: UInt64) -> (found: Bool, item: Int?) {
    var found = false
    var reclaim = false
    let item = csr_bag_remove(bag, key, &found, &reclaim)
    return (found, item.map(value))
}

private func reclaimAll(_ bag: OpaquePointer) -> [Int] {
    var buffer = [UnsafeMutableRawPointer?](repeating: nil, count: 4)
    var all: [Int] = []
    while true {
        let count = buffer.withUnsafeMutableBufferPointer { csr_bag_reclaim(bag, $0.baseAddress, 4) }
        all += buffer.prefix(count).map { value($0!) }
        if count < 4 { break }
    }
    return all.sorted()
}

extension CSignalRuntimeSuite {
    @Suite struct BagTests {
        @Test func keysIncreaseAndWalksFollowInsertionOrder() {
            let bag = csr_bag_create()!
            defer { csr_bag_destroy(bag) }
            let keys = (1...5).map { csr_bag_insert(bag, item($0)) }
            #expect(keys == [1, 2, 3, 4, 5])
            #expect(walk(bag) == [1, 2, 3, 4, 5])
            #expect(csr_bag_count(bag) == 5)
            let removed = remove(bag, keys[1])
            #expect(removed.found && removed.item == 2, "no reader inside: the item comes back at once")
            #expect(!remove(bag, keys[1]).found, "removing twice is a no-op")
            #expect(!remove(bag, 999).found)
            #expect(csr_bag_insert(bag, item(6)) == 6, "keys are never reused")
            #expect(walk(bag) == [1, 3, 4, 5, 6])
            #expect(reclaimAll(bag) == [])
            #expect(csr_bag_remove_all(bag) == 5)
            #expect(reclaimAll(bag) == [1, 3, 4, 5, 6])
            #expect(csr_bag_count(bag) == 0)
        }

        @Test func aRemovedItemStaysAliveUntilTheReadThatMaySeeItEnds() {
            let bag = csr_bag_create()!
            defer { csr_bag_destroy(bag) }
            let key = csr_bag_insert(bag, item(1))
            _ = csr_bag_insert(bag, item(2))
            var read = csr_bag_read_begin(bag)
            let removed = remove(bag, key)
            #expect(removed.found && removed.item == nil, "a reader is inside: retired, not handed back")
            #expect(reclaimAll(bag) == [], "still not reclaimable")
            #expect(csr_bag_pending(bag) == 1)
            // The pinned walk skips the removed entry.
            var position = 0
            var buffer = [UnsafeMutableRawPointer?](repeating: nil, count: 4)
            let count = buffer.withUnsafeMutableBufferPointer { csr_bag_read_next(&read, &position, $0.baseAddress, 4) }
            #expect(buffer.prefix(count).map { value($0!) } == [2])
            #expect(csr_bag_read_end(bag, &read), "the last reader out is told to reclaim")
            #expect(reclaimAll(bag) == [1])
            #expect(csr_bag_pending(bag) == 0)
            #expect(csr_bag_remove_all(bag) == 1)
            #expect(reclaimAll(bag) == [2])
        }

        @Test func readsAreSnapshots() {
            let bag = csr_bag_create()!
            defer { csr_bag_destroy(bag) }
            _ = csr_bag_insert(bag, item(1))
            var read = csr_bag_read_begin(bag)
            _ = csr_bag_insert(bag, item(2))
            var position = 0
            var buffer = [UnsafeMutableRawPointer?](repeating: nil, count: 4)
            let count = buffer.withUnsafeMutableBufferPointer { csr_bag_read_next(&read, &position, $0.baseAddress, 4) }
            #expect(buffer.prefix(count).map { value($0!) } == [1])
            _ = csr_bag_read_end(bag, &read)
            #expect(walk(bag) == [1, 2])
            _ = csr_bag_remove_all(bag)
            #expect(reclaimAll(bag) == [1, 2])
        }

        @Test func closedBagsRefuseInserts() {
            let bag = csr_bag_create()!
            defer { csr_bag_destroy(bag) }
            _ = csr_bag_insert(bag, item(1))
            #expect(csr_bag_close(bag))
            #expect(!csr_bag_close(bag))
            #expect(csr_bag_is_closed(bag))
            #expect(csr_bag_insert(bag, item(2)) == 0)
            #expect(walk(bag) == [1])
            _ = csr_bag_remove_all(bag)
            #expect(reclaimAll(bag) == [1])
        }

        /// A seeded random model check: the bag behaves like an ordered
        /// dictionary under thousands of inserts and removes (through growth and
        /// compaction, of the entry array and of the key index), a removed key
        /// is not found again, and every removed item comes back exactly once.
        @Test(arguments: [1, 2, 3, 4])
        func matchesAnOrderedModel(seed: UInt64) {
            var random = SplitMix64(seed: seed)
            let bag = csr_bag_create()!
            defer { csr_bag_destroy(bag) }
            var model: [(key: UInt64, value: Int)] = []
            var removed: [Int] = []
            var nextValue = 1
            for _ in 0..<5_000 {
                if model.isEmpty || random.next() % 3 != 0 {
                    let key = csr_bag_insert(bag, item(nextValue))
                    #expect(key > (model.last?.key ?? 0))
                    model.append((key, nextValue))
                    nextValue += 1
                } else {
                    let index = Int(random.next() % UInt64(model.count))
                    let result = remove(bag, model[index].key)
                    #expect(result.found)
                    #expect(result.item == model[index].value, "no reader inside: handed back at once (seed \(seed))")
                    #expect(!remove(bag, model[index].key).found, "a removed key is gone (seed \(seed))")
                    model.remove(at: index)
                }
                if random.next() % 97 == 0 {
                    #expect(walk(bag) == model.map(\.value), "seed \(seed)")
                    let reclaimed = Set(reclaimAll(bag))
                    #expect(reclaimed.isSubset(of: Set(removed)), "only removed items come back (seed \(seed))")
                    removed.removeAll { reclaimed.contains($0) }
                }
            }
            #expect(walk(bag) == model.map(\.value), "seed \(seed)")
            #expect(csr_bag_count(bag) == model.count)
            #expect(reclaimAll(bag) == [], "nothing was retired (seed \(seed))")
            #expect(removed.isEmpty)
            _ = csr_bag_remove_all(bag)
            #expect(reclaimAll(bag) == model.map(\.value).sorted())
        }
    }
}

/// A seeded generator (SplitMix64), so failures reproduce.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
