// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// The bag types are plain containers without locking: callers synchronise.
// A removed item is released once the bag is consistent again, so its
// `deinit` may use the same bag (on the caller's thread).

/// A weak reference.
public final class Weak<T: AnyObject> {
    private weak var _value: T?

    public init(_ value: T) {
        _value = value
    }

    public var value: T? { _value }
}

/// Items in insertion order, removable by the index `add` returned.
/// Indices start at 0, increase by one and are never reused (not even after
/// `removeAll`).
public final class Bag<T> {
    public typealias Index = Int

    private var nextIndex: Index = 0
    private var items: [T] = []
    private var itemKeys: [Index] = []

    public init() {}

    public func add(_ item: T) -> Index {
        let key = nextIndex
        nextIndex += 1
        items.append(item)
        itemKeys.append(key)
        return key
    }

    public func get(_ index: Index) -> T? {
        position(of: index).map { items[$0] }
    }

    /// The removed item is released after the bag is consistent again: its
    /// `deinit` may use the bag.
    public func remove(_ index: Index) {
        guard let position = position(of: index) else { return }
        let removed = items.remove(at: position)
        itemKeys.remove(at: position)
        withExtendedLifetime(removed) {}
    }

    /// The items are released after the bag is empty: their `deinit` may use
    /// the bag.
    public func removeAll() {
        var removed: [T] = []
        swap(&removed, &items)
        itemKeys.removeAll()
        removed = []
    }

    public func copyItems() -> [T] {
        items
    }

    public func copyItemsWithIndices() -> [(Index, T)] {
        Array(zip(itemKeys, items))
    }

    public var isEmpty: Bool { items.isEmpty }

    public var first: (Index, T)? {
        items.first.map { (itemKeys[0], $0) }
    }

    /// Keys are increasing, so a binary search finds a key's position.
    private func position(of key: Index) -> Int? {
        var low = 0
        var high = itemKeys.count
        while low < high {
            let middle = (low + high) / 2
            if itemKeys[middle] < key {
                low = middle + 1
            } else {
                high = middle
            }
        }
        return low < itemKeys.count && itemKeys[low] == key ? low : nil
    }
}

/// Items in a dictionary keyed by the index `add` returned; iteration order
/// is unspecified. Indices start at 0 and are never reused.
public final class SparseBag<T>: Sequence {
    public typealias Index = Int

    private var nextIndex: Index = 0
    private var items: [Index: T] = [:]

    public init() {}

    public func add(_ item: T) -> Index {
        let key = nextIndex
        nextIndex += 1
        items[key] = item
        return key
    }

    public func get(_ index: Index) -> T? {
        items[index]
    }

    public func remove(_ index: Index) {
        items.removeValue(forKey: index)
    }

    /// The items are released after the bag is empty: their `deinit` may use
    /// the bag.
    public func removeAll() {
        var removed: [Index: T] = [:]
        swap(&removed, &items)
        removed = [:]
    }

    public var isEmpty: Bool { items.isEmpty }

    public func makeIterator() -> AnyIterator<T> {
        var iterator = items.values.makeIterator()
        return AnyIterator { iterator.next() }
    }
}

/// Counts registrations: `add()` returns a new key (starting at 1),
/// `remove` forgets it, `isEmpty` says whether any key is left.
public final class CounterBag {
    private var nextIndex = 1
    private var items = Set<Int>()

    public init() {}

    public func add() -> Int {
        let key = nextIndex
        nextIndex += 1
        items.insert(key)
        return key
    }

    public func remove(_ index: Int) {
        items.remove(index)
    }

    public var isEmpty: Bool { items.isEmpty }
}
