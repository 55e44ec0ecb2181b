// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

/// Elements ordered by deadline and, among equal deadlines, by the order
/// they were inserted in (first in, first out): a binary min-heap, so the
/// first element costs O(1) to read and O(log n) to insert or remove.
///
/// The timers of a dedicated thread (`_DedicatedThreadCore`) and the
/// timeline of SignalKitTesting's `VirtualTimeScheduler`. Not thread-safe:
/// its owner serialises access.
package struct _DeadlineHeap<Deadline: Comparable, Element> {
    private var entries: [(deadline: Deadline, order: UInt64, element: Element)] = []
    private var nextOrder: UInt64 = 0

    package init() {}

    package var isEmpty: Bool { entries.isEmpty }
    package var count: Int { entries.count }

    /// The earliest deadline, or nil when the heap is empty.
    package var earliestDeadline: Deadline? { entries.first?.deadline }

    package mutating func insert(_ element: Element, deadline: Deadline) {
        entries.append((deadline, nextOrder, element))
        nextOrder &+= 1
        var child = entries.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.precedes(entries[child], entries[parent]) else { break }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the first element if its deadline is `limit` or
    /// earlier.
    package mutating func popFirst(notAfter limit: Deadline) -> (deadline: Deadline, element: Element)? {
        guard let first = entries.first, first.deadline <= limit else { return nil }
        let last = entries.removeLast()
        if !entries.isEmpty {
            entries[0] = last
            siftDown(from: 0)
        }
        return (first.deadline, first.element)
    }

    /// Removes the elements `shouldRemove` selects; returns how many. The
    /// order of the others is kept.
    package mutating func removeAll(where shouldRemove: (Element) -> Bool) -> Int {
        let before = entries.count
        entries.removeAll { shouldRemove($0.element) }
        // Floyd's heap construction, bottom up.
        var index = entries.count / 2
        while index > 0 {
            index -= 1
            siftDown(from: index)
        }
        return before - entries.count
    }

    /// Empties the heap; returns its elements (in no particular order).
    package mutating func removeAll() -> [Element] {
        defer { entries.removeAll() }
        return entries.map(\.element)
    }

    private mutating func siftDown(from start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < entries.count else { return }
            var smallest = left
            if left + 1 < entries.count, Self.precedes(entries[left + 1], entries[left]) { smallest = left + 1 }
            guard Self.precedes(entries[smallest], entries[parent]) else { return }
            entries.swapAt(smallest, parent)
            parent = smallest
        }
    }

    private static func precedes(
        _ a: (deadline: Deadline, order: UInt64, element: Element),
        _ b: (deadline: Deadline, order: UInt64, element: Element)
    ) -> Bool {
        a.deadline != b.deadline ? a.deadline < b.deadline : a.order < b.order
    }
}
