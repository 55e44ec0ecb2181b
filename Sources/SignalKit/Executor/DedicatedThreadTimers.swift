// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// The timers of a dedicated thread: `schedule(after:)` entries in a
// `_DeadlineHeap` that only the thread touches, ordered by deadline and, among
// equal deadlines, by the order they were scheduled in.

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
