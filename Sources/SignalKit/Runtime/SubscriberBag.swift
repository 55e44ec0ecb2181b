internal import CSignalRuntime

/// A Swift face for CSignalRuntime's lock-free bag: an insertion-ordered
/// collection of objects (subscribers, observers) that can be walked for
/// delivery while other threads insert and remove.
///
/// Items are retained while in the bag. A removed item is released once no
/// walk that might still see it is running: at once when no walk is in
/// progress, otherwise when the last such walk ends.
///
/// `@unchecked Sendable`: the C bag is thread-safe; `bag` is immutable.
final class _SubscriberBag<Item: AnyObject>: @unchecked Sendable {
    private let bag: OpaquePointer

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

    /// Removes the item with `key` (no-op if absent). Returns whether it was there.
    @discardableResult
    func remove(_ key: UInt64) -> Bool {
        guard csr_bag_remove(bag, key) else { return false }
        reclaim()
        return true
    }

    /// Removes every item.
    func removeAll() {
        if csr_bag_remove_all(bag) != 0 { reclaim() }
    }

    /// Rejects later inserts. Returns whether this call closed the bag.
    @discardableResult
    func close() -> Bool { csr_bag_close(bag) }

    var isClosed: Bool { csr_bag_is_closed(bag) }

    var count: Int { csr_bag_count(bag) }

    var isEmpty: Bool { csr_bag_count(bag) == 0 }

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

    /// Releases the retired items that no walk can see any more.
    func reclaim() {
        withUnsafeTemporaryAllocation(of: UnsafeMutableRawPointer?.self, capacity: 16) { buffer in
            while true {
                let count = csr_bag_reclaim(bag, buffer.baseAddress, 16)
                for index in 0..<count {
                    Unmanaged<Item>.fromOpaque(buffer[index]!).release()
                }
                if count < 16 { break }
            }
        }
    }
}

/// A pinned snapshot of a `_SubscriberBag` (see `beginRead`).
struct _BagRead {
    fileprivate var read: csr_bag_read
}

/// Removes one entry from a bag when disposed. Holds the bag weakly: the
/// bag's owner (a pipe, a promise) decides how long subscriptions live.
final class _BagEntryDisposable<Item: AnyObject>: Disposable, @unchecked Sendable {
    // `@unchecked Sendable`: both fields are immutable after init (the weak
    // reference is read atomically by the runtime).
    private weak var bag: _SubscriberBag<Item>?
    private let key: UInt64

    init(bag: _SubscriberBag<Item>, key: UInt64) {
        self.bag = bag
        self.key = key
    }

    func dispose() {
        bag?.remove(key)
    }
}
