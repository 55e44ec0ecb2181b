// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

/// A first-in first-out queue with O(1) amortised `append` and `popFirst`.
@usableFromInline
struct _FIFO<Element> {
    @usableFromInline var items: [Element?] = []
    @usableFromInline var head = 0

    @inlinable init() {}

    @inlinable var isEmpty: Bool { head == items.count }

    /// The number of elements.
    @inlinable var count: Int { items.count - head }

    /// The first element, left in place.
    @inlinable var first: Element? { head < items.count ? items[head] : nil }

    @inlinable
    mutating func append(_ element: Element) {
        items.append(element)
    }

    /// Removes and returns the first element (ownership moves to the caller:
    /// nothing is released here).
    @inlinable
    mutating func popFirst() -> Element? {
        guard head < items.count else { return nil }
        let element = items[head]
        items[head] = nil
        head += 1
        if head == items.count {
            items.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64 && head * 2 >= items.count {
            items.removeFirst(head)
            head = 0
        }
        return element
    }
}
