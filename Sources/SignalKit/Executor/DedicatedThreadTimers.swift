// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// The timers of a dedicated thread: `schedule(after:)` entries in a binary
// min-heap that only the thread touches, ordered by deadline and, among equal
// deadlines, by the order they were scheduled in.

import Synchronization

/// One `schedule(after:)`: its deadline and its work until it fires or is
/// cancelled. `dispose()` may come from any thread; it releases the work at
/// once (what the closure captured goes with it) and tells the thread, which
/// drops cancelled entries from its heap when they pile up. A due timer is
/// itself the work item the thread runs (`run()` fires it): firing allocates
/// nothing.
///
/// `@unchecked Sendable`: restated from `_WorkItem`; the work is behind a
/// lock, the rest immutable.
final class _DedicatedTimer: _WorkItem, Disposable, @unchecked Sendable {
    let deadline: UInt64
    private let work: _LockedState<(@Sendable () -> Void)?>
    private let cancellations: _CancelledTimerCount

    init(deadline: UInt64, work: @escaping @Sendable () -> Void, cancellations: _CancelledTimerCount) {
        self.deadline = deadline
        self.work = _LockedState(work)
        self.cancellations = cancellations
    }

    /// Runs the work unless it was cancelled. The thread only.
    override func run() {
        work.withLock { $0.take() }?()
    }

    /// Releases the work without counting a cancellation (the thread, when
    /// it stops; or a refused timer).
    func cancel() {
        _ = work.withLock { $0.take() }
    }

    /// Whether `dispose()` took the work away.
    var isCancelled: Bool { work.withLock { $0 == nil } }

    func dispose() {
        let taken = work.withLock { $0.take() }
        if taken != nil { cancellations.increment() }
    }
}

/// How many timers were cancelled since the thread last pruned its heap: a
/// hint for when to prune, written by disposers, read and lowered by the
/// thread.
final class _CancelledTimerCount: Sendable {
    private let count = Synchronization.Atomic<Int>(0)

    func increment() { count.add(1, ordering: .relaxed) }

    var value: Int { count.load(ordering: .relaxed) }

    /// Lowers the count (it may dip below zero for a moment: a disposer
    /// counts after it took the work, the thread may see the entry first).
    func subtract(_ removed: Int) { count.subtract(removed, ordering: .relaxed) }
}

/// The heap of pending timers. Only the dedicated thread touches it.
struct _TimerHeap {
    private var entries: [(deadline: UInt64, order: UInt64, timer: _DedicatedTimer)] = []
    private var nextOrder: UInt64 = 0

    var isEmpty: Bool { entries.isEmpty }
    var count: Int { entries.count }

    /// The earliest deadline, or nil when there is no timer.
    var earliestDeadline: UInt64? { entries.first?.deadline }

    mutating func insert(_ timer: _DedicatedTimer) {
        entries.append((timer.deadline, nextOrder, timer))
        nextOrder &+= 1
        var child = entries.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.precedes(entries[child], entries[parent]) else { break }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the earliest timer if its deadline is `now` or
    /// earlier.
    mutating func popDue(now: UInt64) -> _DedicatedTimer? {
        guard let first = entries.first, first.deadline <= now else { return nil }
        let last = entries.removeLast()
        if !entries.isEmpty {
            entries[0] = last
            siftDown(from: 0)
        }
        return first.timer
    }

    /// Drops cancelled entries and returns how many there were.
    mutating func removeCancelled() -> Int {
        let before = entries.count
        entries.removeAll { $0.timer.isCancelled }
        // Floyd's heap construction, bottom up.
        var index = entries.count / 2
        while index > 0 {
            index -= 1
            siftDown(from: index)
        }
        return before - entries.count
    }

    /// Cancels every pending timer and empties the heap.
    mutating func cancelAll() {
        for entry in entries { entry.timer.cancel() }
        entries.removeAll()
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
        _ a: (deadline: UInt64, order: UInt64, timer: _DedicatedTimer),
        _ b: (deadline: UInt64, order: UInt64, timer: _DedicatedTimer)
    ) -> Bool {
        a.deadline != b.deadline ? a.deadline < b.deadline : a.order < b.order
    }
}
