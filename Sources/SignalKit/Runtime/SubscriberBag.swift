// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

internal import CSignalRuntime

/// A Swift face for CSignalRuntime's lock-free bag: an insertion-ordered
/// collection of objects (subscribers, observers) that can be walked for
/// delivery while other threads insert and remove.
///
/// Items are retained while in the bag. A removed item is released once no
/// walk that might still see it is running: at once when no walk is in
/// progress, otherwise when the last such walk ends.
///
/// The untyped part: everything but insertion and walks. Non-generic so that
/// a subscription can remove its entry without knowing the item type.
///
/// `@unchecked Sendable`: the C bag is thread-safe; `bag` is immutable.
@usableFromInline
class _SubscriberBagBase: @unchecked Sendable {
    fileprivate let bag: OpaquePointer

    init() {
        guard let bag = csr_bag_create() else {
            fatalError("SignalKit: out of memory allocating a subscriber bag")
        }
        self.bag = bag
    }

    deinit {
        // No walk can be running: the owner is being destroyed.
        _ = csr_bag_remove_all(bag)
        reclaim()
        csr_bag_destroy(bag)
    }

    /// Removes the item with `key` (no-op if absent). Returns whether it was
    /// there. The item is released now if no walk can see it, else when the
    /// last such walk ends.
    @discardableResult
    final func remove(_ key: UInt64) -> Bool {
        var found = false
        var mustReclaim = false
        if let item = csr_bag_remove(bag, key, &found, &mustReclaim) {
            Unmanaged<AnyObject>.fromOpaque(item).release()
        }
        // Every walk that could see the item left while it was being retired:
        // nobody else will hand it back (see `csr_bag_remove`).
        if mustReclaim { reclaim() }
        return found
    }

    /// Removes every item.
    final func removeAll() {
        if csr_bag_remove_all(bag) != 0 { reclaim() }
    }

    /// Rejects later inserts. Returns whether this call closed the bag.
    @discardableResult
    final func close() -> Bool { csr_bag_close(bag) }

    final var isClosed: Bool { csr_bag_is_closed(bag) }

    final var count: Int { csr_bag_count(bag) }

    final var isEmpty: Bool { csr_bag_count(bag) == 0 }

    /// Releases the retired items that no walk can see any more.
    final func reclaim() {
        withUnsafeTemporaryAllocation(of: UnsafeMutableRawPointer?.self, capacity: 16) { buffer in
            while true {
                let count = csr_bag_reclaim(bag, buffer.baseAddress, 16)
                for index in 0..<count {
                    Unmanaged<AnyObject>.fromOpaque(buffer[index]!).release()
                }
                if count < 16 { break }
            }
        }
    }
}

/// The typed face: insertion and snapshot walks over `Item`s.
final class _SubscriberBag<Item: AnyObject>: _SubscriberBagBase, @unchecked Sendable {
    /// Appends `item`; returns its key, or nil if the bag was closed.
    func insert(_ item: Item) -> UInt64? {
        let raw = Unmanaged.passRetained(item).toOpaque()
        let key = csr_bag_insert(bag, raw)
        guard key != 0 else {
            Unmanaged<Item>.fromOpaque(raw).release()
            return nil
        }
        return key
    }

    /// Pins the current items (a snapshot: later inserts are not seen).
    /// Pair with exactly one `finishRead`, on the same thread.
    @inline(__always)
    func beginRead() -> _BagRead {
        _BagRead(read: csr_bag_read_begin(bag))
    }

    /// Calls `body` for every item of the pinned snapshot still in the bag,
    /// in insertion order, then ends the read. Items are passed unretained:
    /// the read keeps them alive.
    @inline(__always)
    func finishRead(_ read: inout _BagRead, _ body: (Item) -> Void) {
        var position = 0
        withUnsafeTemporaryAllocation(of: UnsafeMutableRawPointer?.self, capacity: 16) { buffer in
            while true {
                let count = csr_bag_read_next(&read.read, &position, buffer.baseAddress, 16)
                for index in 0..<count {
                    Unmanaged<Item>.fromOpaque(buffer[index]!)._withUnsafeGuaranteedRef(body)
                }
                if count < 16 { break }
            }
        }
        if csr_bag_read_end(bag, &read.read) { reclaim() }
    }

    /// A snapshot walk: `beginRead` + `finishRead`.
    @inline(__always)
    func forEach(_ body: (Item) -> Void) {
        var read = beginRead()
        finishRead(&read, body)
    }
}

/// A pinned snapshot of a `_SubscriberBag` (see `beginRead`).
struct _BagRead {
    fileprivate var read: csr_bag_read
}
