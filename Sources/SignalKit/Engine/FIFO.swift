// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

/// A first-in first-out queue with O(1) amortised `append` and O(1)
/// `popFirst`, with value semantics (copy on write).
///
/// Most of SignalKit's code is generic over the user's value type and runs
/// without being specialised for it. Such code pays a runtime metadata
/// lookup (a hash-table search) each time it touches a type built from a
/// type parameter, such as `[Element?]` or `_Storage<Element>`. So the ring
/// lives in a storage class that is not generic (`_FIFOStorage`); its element
/// operations are generic methods, which need only `Element`'s own metadata,
/// which the caller already has. `removeFirst` returns the element without
/// an `Optional<Element>`. (An `[Element?]` would pay such a lookup per
/// value, in unspecialised code such as a boundary's per-value path.)
@usableFromInline
package struct _FIFO<Element> {
    /// nil until the first `append` (an empty queue allocates nothing); a
    /// `_TypedFIFOStorage<Element>` after it.
    @usableFromInline var storage: _FIFOStorage?

    @inlinable package init() { storage = nil }

    @inlinable @inline(__always) package var isEmpty: Bool { count == 0 }

    /// The number of elements.
    @inlinable @inline(__always) package var count: Int { storage?.count ?? 0 }

    /// The first element, left in place.
    @inlinable package var first: Element? {
        guard let storage, storage.count > 0 else { return nil }
        return storage.first(as: Element.self)
    }

    @inlinable @inline(__always)
    package mutating func append(_ element: Element) {
        if storage == nil {
            storage = _TypedFIFOStorage<Element>(minimumCapacity: 1)
        } else if !isKnownUniquelyReferenced(&storage) {
            storage = storage!.copy()
        }
        storage!.append(element)
    }

    /// Removes and returns the first element, which must exist (ownership
    /// moves to the caller).
    @inlinable @inline(__always)
    package mutating func removeFirst() -> Element {
        if !isKnownUniquelyReferenced(&storage) { storage = storage!.copy() }
        return storage!.removeFirst(as: Element.self)
    }

    /// Exchanges the contents of two queues (no copy, no element touched).
    /// Not `swap(_:_:)`: a call to that generic function needs `_FIFO<Element>`'s
    /// metadata where the caller is not specialised.
    @inlinable @inline(__always)
    package mutating func exchange(with other: inout _FIFO<Element>) {
        let mine = storage
        storage = other.storage
        other.storage = mine
    }

    /// Removes and returns the first element (ownership moves to the caller:
    /// nothing is released here).
    @inlinable @inline(__always)
    package mutating func popFirst() -> Element? {
        guard count > 0 else { return nil }
        return removeFirst()
    }
}

/// `_FIFO`'s ring, without its element type: `capacity` (a power of two)
/// slots from `elements`, the live ones `count` slots from `head`, wrapping
/// around. Always a `_TypedFIFOStorage`, which knows the element type (to
/// copy the elements and to release them in `deinit`).
///
/// `@exclusivity(unchecked)`: a `_FIFO` is mutated only by its owner (under
/// the owner's lock where threads share it); the dynamic exclusivity checks
/// of class properties cost a call per access on the per-value path.
@usableFromInline
class _FIFOStorage {
    @usableFromInline @exclusivity(unchecked) final var elements: UnsafeMutableRawPointer
    @usableFromInline @exclusivity(unchecked) final var capacity: Int
    @usableFromInline @exclusivity(unchecked) final var head = 0
    @usableFromInline @exclusivity(unchecked) final var count = 0

    @usableFromInline
    init(elements: UnsafeMutableRawPointer, capacity: Int) {
        self.elements = elements
        self.capacity = capacity
    }

    /// A copy with the same elements (for copy on write). Overridden.
    @usableFromInline
    func copy() -> _FIFOStorage {
        preconditionFailure("_FIFOStorage.copy() is overridden")  // invariant
    }

    @inlinable
    final func slot<Element>(_ offset: Int, as _: Element.Type) -> UnsafeMutablePointer<Element> {
        elements.assumingMemoryBound(to: Element.self) + ((head &+ offset) & (capacity &- 1))
    }

    @inlinable
    final func first<Element>(as type: Element.Type) -> Element { slot(0, as: type).pointee }

    @inlinable
    final func append<Element>(_ element: Element) {
        if count == capacity { grow(Element.self) }
        slot(count, as: Element.self).initialize(to: element)
        count &+= 1
    }

    /// Moves the first element out. Call only when `count > 0`.
    @inlinable
    final func removeFirst<Element>(as type: Element.Type) -> Element {
        let element = slot(0, as: type).move()
        head = (head &+ 1) & (capacity &- 1)
        count &-= 1
        return element
    }

    /// Doubles the capacity, the elements moved to the front in order.
    @inlinable
    final func grow<Element>(_: Element.Type) {
        let larger = _allocateFIFOSlots(of: Element.self, capacity: capacity &* 2)
        let old = elements.assumingMemoryBound(to: Element.self)
        // The ring is full: the live slots are [head, capacity) then [0, head).
        let tail = capacity &- head
        larger.moveInitialize(from: old + head, count: tail)
        (larger + tail).moveInitialize(from: old, count: head)
        elements.deallocate()
        elements = UnsafeMutableRawPointer(larger)
        head = 0
        capacity &*= 2
    }
}

/// Raw storage for `capacity` elements.
@inlinable
func _allocateFIFOSlots<Element>(of _: Element.Type, capacity: Int) -> UnsafeMutablePointer<Element> {
    UnsafeMutableRawPointer.allocate(
        byteCount: MemoryLayout<Element>.stride &* capacity,
        alignment: MemoryLayout<Element>.alignment
    ).bindMemory(to: Element.self, capacity: capacity)
}

/// The storage of a `_FIFO<Element>`: copies and releases its elements.
@usableFromInline
final class _TypedFIFOStorage<Element>: _FIFOStorage {
    @inlinable
    init(minimumCapacity: Int) {
        var capacity = 8
        while capacity < minimumCapacity { capacity &<<= 1 }
        super.init(
            elements: UnsafeMutableRawPointer(_allocateFIFOSlots(of: Element.self, capacity: capacity)), capacity: capacity)
    }

    deinit {
        while count > 0 { _ = removeFirst(as: Element.self) }
        elements.deallocate()
    }

    @usableFromInline
    override func copy() -> _FIFOStorage {
        let copy = _TypedFIFOStorage(minimumCapacity: count)
        for offset in 0..<count {
            copy.slot(offset, as: Element.self).initialize(to: slot(offset, as: Element.self).pointee)
        }
        copy.count = count
        return copy
    }
}
