// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import CSignalRuntime

/// A heap-allocated item with a canary. Readers read the canary during walks;
/// items are freed as soon as the bag hands them back. If reclamation were
/// wrong (the naive design frees while a walk still reads), AddressSanitizer
/// reports a heap-use-after-free here, and the canary check fails otherwise.
let canary: UInt64 = 0x5EED_CAFE_F00D_BEEF

func makeItem() -> UnsafeMutableRawPointer {
    let item = UnsafeMutablePointer<UInt64>.allocate(capacity: 2)
    item.initialize(to: canary)
    (item + 1).initialize(to: 0)
    return UnsafeMutableRawPointer(item)
}

func freeItem(_ raw: UnsafeMutableRawPointer) {
    let item = raw.assumingMemoryBound(to: UInt64.self)
    item.pointee = 0
    item.deallocate()
}

/// Hands back everything `csr_bag_reclaim` has ready, frees it, and returns
/// how many items that was.
@discardableResult
func reclaimAndFree(_ bag: OpaquePointer) -> Int {
    withUnsafeTemporaryAllocation(of: UnsafeMutableRawPointer?.self, capacity: 16) { buffer in
        var total = 0
        while true {
            let count = csr_bag_reclaim(bag, buffer.baseAddress, 16)
            for slot in 0..<count { freeItem(buffer[slot]!) }
            total += count
            if count < 16 { return total }
        }
    }
}

/// Removes `key`, frees the item if it came back at once, reclaims if the bag
/// says so (and only then). Returns how many items were freed.
@discardableResult
func removeAndFree(_ bag: OpaquePointer, _ key: UInt64) -> Int {
    var found = false
    var mustReclaim = false
    var freed = 0
    if let item = csr_bag_remove(bag, key, &found, &mustReclaim) {
        freeItem(item)
        freed += 1
    }
    precondition(found, "removeAndFree: key \(key) was not in the bag")
    if mustReclaim { freed += reclaimAndFree(bag) }
    return freed
}

/// Walks a pinned read, counting items whose canary is wrong.
func walk(_ read: inout csr_bag_read) -> Int {
    withUnsafeTemporaryAllocation(of: UnsafeMutableRawPointer?.self, capacity: 16) { buffer in
        var bad = 0
        var position = 0
        while true {
            let count = csr_bag_read_next(&read, &position, buffer.baseAddress, 16)
            for slot in 0..<count where buffer[slot]!.load(as: UInt64.self) != canary { bad += 1 }
            if count < 16 { return bad }
        }
    }
}

/// Ends a read; reclaims and frees if the bag says so (and only then).
/// Returns how many items were freed.
@discardableResult
func endReadAndFree(_ bag: OpaquePointer, _ read: inout csr_bag_read) -> Int {
    csr_bag_read_end(bag, &read) ? reclaimAndFree(bag) : 0
}
