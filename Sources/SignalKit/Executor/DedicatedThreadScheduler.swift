// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// The dedicated-thread executor: a `QueueScheduler` with a thread of its own
// that takes work from CSignalRuntime's multi-producer ring (`_WorkRing`) and
// waits for it by a chosen strategy, for hops where Dispatch's latency is too
// much. `Queue(dedicatedThread:)` makes a queue on one.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Synchronization

/// A serial executor with a thread of its own: the scheduler behind
/// `Queue(dedicatedThread:waitStrategy:capacity:)`.
///
/// Work goes into a bounded lock-free ring (one allocation and one
/// compare-and-swap per `async`; no lock, no system call unless the thread
/// sleeps) and runs on the thread in the order it was scheduled; the thread
/// waits for work by its `WaitStrategy`. Everything `Queue` promises holds:
/// the inline rule (`isCurrent()` is true on the thread), `sync` from other
/// threads, `after` and `Timer` in deadline order, `QueueLocalObject`.
///
/// **When the ring is full** `async` neither blocks nor fails: the work goes
/// to a spill list beyond the ring (a lock and an allocation each) and runs
/// after what is in the ring, in order. Blocking would deadlock when the
/// thread schedules onto itself; dropping would lose work no caller expects
/// to lose. The spill is counted (`statistics.spilledTotal`,
/// `statistics.spillDepth`): a spill is the signal that the consumer does
/// not keep up, and where that must not grow, bound the boundary itself
/// (`deliverOn(_:buffer:)` with a `SignalBuffer`).
///
/// **Lifetime.** The thread runs until `shutdown()` or until the last
/// reference to the scheduler (its queue holds one; so do work items that
/// capture the queue) goes away. Either way the thread first runs the work
/// already scheduled, then exits; timers that have not fired are cancelled.
/// `shutdown()` also waits for the thread to exit. Work scheduled after
/// shutdown is released without running and counted in
/// `statistics.refused`; `sync` after shutdown is a programming error.
public final class DedicatedThreadScheduler: QueueScheduler {
    /// How the thread waits when there is no work: latency against CPU.
    public enum WaitStrategy: Sendable, Hashable, CustomStringConvertible {
        /// Sleep on a futex at once. Idle costs nothing; each wake-up costs
        /// a system call on both sides and the kernel's scheduling latency
        /// (microseconds, more under load).
        case park
        /// Spin for `duration` after the last work, then park: wake-ups
        /// within the window are as fast as a cache-line transfer; the
        /// thread burns a core for `duration` after each burst.
        case spinThenPark(Duration)
        /// Never sleep: the lowest latency, and a core at 100 % for as long
        /// as the scheduler lives. Give the thread a core of its own (more
        /// busy threads than cores starve each other and everything else).
        case busySpin

        public var description: String {
            switch self {
            case .park: "park"
            case .spinThenPark(let duration): "spinThenPark(\(duration))"
            case .busySpin: "busySpin"
            }
        }
    }

    /// The scheduler's counters. Each is exact; the set is not a snapshot.
    public struct Statistics: Sendable, Hashable {
        /// Cells of the ring.
        public var capacity: Int
        /// Work waiting in the ring now.
        public var ringDepth: Int
        /// Work waiting in the spill list (beyond the ring) now.
        public var spillDepth: Int
        /// Work that ever went to the spill list because the ring was full.
        public var spilledTotal: Int
        /// Work items the thread has run (timers included).
        public var executed: Int
        /// Work released without running because the scheduler was shut
        /// down (or was shutting down when it came).
        public var refused: Int
        /// Times the thread went to sleep.
        public var parks: Int
        /// Times a scheduling thread woke it (a system call).
        public var wakes: Int
    }

    /// The thread's name (as the system shows it, cut to 15 bytes).
    public let name: String
    public let waitStrategy: WaitStrategy
    let core: _DedicatedThreadCore

    /// Starts a thread named `name` that waits by `waitStrategy`, with a ring
    /// of `capacity` cells (rounded up to a power of two).
    public init(name: String, waitStrategy: WaitStrategy = .spinThenPark(.microseconds(50)), capacity: Int = 4096) {
        _signalKitRequire(capacity > 0, "DedicatedThreadScheduler: capacity must be positive (got \(capacity))")
        let wait: _RingWait
        switch waitStrategy {
        case .park:
            wait = .park
        case .spinThenPark(let duration):
            _signalKitRequire(duration >= .zero, "DedicatedThreadScheduler: a negative spin duration (\(duration))")
            let (seconds, attoseconds) = duration.components
            wait = .spinThenPark(nanoseconds: UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000))
        case .busySpin:
            wait = .busySpin
        }
        self.name = name
        self.waitStrategy = waitStrategy
        core = _DedicatedThreadCore(name: name, capacity: capacity, wait: wait)
        core.start()
    }

    deinit {
        // Not `shutdown()`: a deinit must not wait (it may even run on the
        // thread itself, inside the work that dropped the last reference).
        core.requestStop()
        core.detach()
    }

    public func isCurrent() -> Bool { core.ring.isCurrent }

    public func schedule(_ work: @escaping @Sendable () -> Void) {
        core.push(_ClosureWorkItem(work))
    }

    public func schedule(after delay: Double, _ work: @escaping @Sendable () -> Void) -> any Disposable {
        core.schedule(after: delay, work)
    }

    public func performSync(_ work: () -> Void) {
        withoutActuallyEscaping(work) { work in
            core.performSync(_UncheckedSendable(work))
        }
    }

    public var currentTime: Double { Double(_monotonicNanoseconds()) / 1_000_000_000 }

    public var statistics: Statistics { core.statistics }

    /// Stops the thread and waits for it to exit: the work already
    /// scheduled runs first; timers not yet due are cancelled; later work is
    /// refused (counted). Idempotent. Calling it from the scheduler's own
    /// thread is a programming error (it would wait for itself).
    public func shutdown() {
        _signalKitRequire(
            !core.ring.isCurrent,
            "DedicatedThreadScheduler.shutdown() on its own thread (\(name)) would wait for itself; "
                + "call it from another thread"
        )
        core.requestStop()
        core.join()
    }
}

extension Queue {
    /// Creates a serial queue with a thread of its own (a
    /// `DedicatedThreadScheduler`), for hops where latency matters more
    /// than a core: see the scheduler for the wait strategies, what happens
    /// when its ring is full, and its lifetime. Reach the scheduler through
    /// ``Queue/dedicatedThread`` (statistics, `shutdown()`).
    public convenience init(
        dedicatedThread name: String,
        waitStrategy: DedicatedThreadScheduler.WaitStrategy = .spinThenPark(.microseconds(50)),
        capacity: Int = 4096
    ) {
        self.init(scheduler: DedicatedThreadScheduler(name: name, waitStrategy: waitStrategy, capacity: capacity))
    }

    /// The thread of a queue made with `Queue(dedicatedThread:)` (or with
    /// `Queue(scheduler:)` and a ``DedicatedThreadScheduler``), else nil: its
    /// ``DedicatedThreadScheduler/statistics`` and
    /// ``DedicatedThreadScheduler/shutdown()`` without a cast.
    ///
    /// ```swift
    /// let hop = Queue(dedicatedThread: "orders", waitStrategy: .park)
    /// print(hop.dedicatedThread?.statistics.spilledTotal ?? 0)
    /// hop.dedicatedThread?.shutdown()
    /// ```
    public var dedicatedThread: DedicatedThreadScheduler? {
        _dedicatedThreadScheduler
    }
}

/// What the thread holds: the ring, the timers and the stop protocol. The
/// public scheduler owns it too; when the scheduler goes, the thread finishes
/// and lets go of it.
///
/// `@unchecked Sendable`: `timers`, `timerCount` and `thread` are touched only
/// on the dedicated thread (`timers`) or under `joinLock` (`thread`); the
/// rest is atomics, the thread-safe ring and immutable values.
final class _DedicatedThreadCore: @unchecked Sendable {
    let ring: _WorkRing
    private let wait: _RingWait
    /// The thread's pending timers. The dedicated thread only.
    private nonisolated(unsafe) var timers = _DeadlineHeap<UInt64, _DedicatedTimer>()
    private let cancellations = _CancelledTimerCount()
    /// Serialises the drains after the thread has exited (the ring has one
    /// consumer at a time).
    private let lateDrain = _LockedState(())
    /// The counters monitoring reads (the registry holds the probe, never
    /// the core: see `_DedicatedThreadRegistry`).
    let probe: _DedicatedThreadProbe
    // The thread's lifecycle is `probe.lifecycle` (running, stopping,
    // exited): `stopping` refuses later work; a push that sees `exited`
    // drains what it pushed itself (see `push`).
    /// The item that tells the thread to stop (compared by identity).
    private let stopItem = _WorkItem()
    /// The thread, until it is joined or detached.
    private let thread = _LockedState<pthread_t?>(nil)

    let name: String

    init(name: String, capacity: Int, wait: _RingWait) {
        ring = _WorkRing(capacity: capacity)
        self.wait = wait
        self.name = name
        probe = _DedicatedThreadProbe(name: name, ring: ring)
        _DedicatedThreadRegistry.register(probe)
    }

    deinit {
        _DedicatedThreadRegistry.retire(probe)
    }

    /// Whether the thread was asked to stop (new work is refused).
    var isStopping: Bool { probe.lifecycle.load(ordering: .relaxed) != .running }

    func start() {
        let context = Unmanaged.passRetained(self).toOpaque()
        var handle = pthread_t()
        let status = pthread_create(
            &handle, nil,
            { raw in
                let core = Unmanaged<_DedicatedThreadCore>.fromOpaque(raw!).takeRetainedValue()
                core.ring.nameCurrentThread(core.name)
                core.run()
                return nil
            }, context)
        guard status == 0 else {
            Unmanaged<_DedicatedThreadCore>.fromOpaque(context).release()
            _signalKitMisuse("DedicatedThreadScheduler: pthread_create failed (\(status))")
        }
        thread.withLock { $0 = handle }
    }

    // MARK: Scheduling threads

    @inline(__always)
    func push(_ item: _WorkItem) {
        guard probe.lifecycle.load(ordering: .relaxed) == .running else {
            probe.refusedCount.add(1, ordering: .relaxed)
            return
        }
        ring.push(item)
        // The push was a full read-modify-write; this load pairs with the
        // thread's store of `exited` before its last drain: one of the two
        // sees the item (the same Dekker pairing as the ring's park).
        if probe.lifecycle.load(ordering: .sequentiallyConsistent) == .exited { drainAfterExit() }
    }

    func schedule(after delay: Double, _ work: @escaping @Sendable () -> Void) -> any Disposable {
        let nanoseconds = delay > 0 ? UInt64(min(delay, 1e9) * 1_000_000_000) : 0
        let timer = _DedicatedTimer(
            deadline: _monotonicNanoseconds() &+ nanoseconds,
            work: work,
            cancellations: cancellations
        )
        if isStopping {
            timer.cancel()
            probe.refusedCount.add(1, ordering: .relaxed)
        } else if nanoseconds == 0 {
            // Due now: behind the work already scheduled, as Dispatch does.
            push(timer)
        } else if ring.isCurrent {
            timers.insert(timer, deadline: timer.deadline)
        } else {
            push(_ClosureWorkItem { [self] in timers.insert(timer, deadline: timer.deadline) })
        }
        return timer
    }

    func performSync(_ work: _UncheckedSendable<() -> Void>) {
        _signalKitRequire(
            !isStopping,
            "Queue.sync on a dedicated thread that was shut down: nothing would run the work"
        )
        let waiter = _SyncWaiter()
        // The item holds the work only until it ran (or was released without
        // running): `withoutActuallyEscaping` in the caller checks that
        // nothing holds it when `performSync` returns.
        push(_SyncWork(work.value, waiter: waiter))
        // Returns when the work ran, or when its item was released without
        // running (it raced a shutdown): never a wait for ever.
        waiter.wait()
        _signalKitRequire(
            waiter.ran,
            "Queue.sync raced the shutdown of its dedicated thread: the work did not run"
        )
    }

    var statistics: DedicatedThreadScheduler.Statistics { probe.statistics }

    // MARK: Stopping

    /// Tells the thread to stop after the work already scheduled. The first
    /// call pushes the stop item; later ones do nothing.
    func requestStop() {
        guard
            probe.lifecycle.compareExchange(
                expected: .running, desired: .stopping, ordering: .sequentiallyConsistent
            ).exchanged
        else { return }
        ring.push(stopItem)
    }

    /// Waits for the thread to exit (once; later calls return at once).
    func join() {
        thread.withLock { handle in
            guard let joined = handle.take() else { return }
            pthread_join(joined, nil)
        }
    }

    /// Lets the thread exit by itself (if it was not joined).
    func detach() {
        if let handle = thread.withLock({ $0.take() }) { pthread_detach(handle) }
    }

    /// Work that reached the ring after the thread's last drain: released
    /// without running, and counted.
    private func drainAfterExit() {
        let late = lateDrain.withLock { _ in ring.drain() }
        probe.refusedCount.add(late.count, ordering: .relaxed)
    }

    // MARK: The thread

    private func run() {
        ring.makeCurrent(true)
        while true {
            var deadline: UInt64 = 0
            if !timers.isEmpty {
                fireDueTimers()
                deadline = timers.earliestDeadline ?? 0
            }
            guard let item = ring.pop(waiting: wait, until: deadline) else { continue }
            if item === stopItem { break }
            countExecuted()
            item.run()
        }
        // Stopping: timers not yet due never fire (their work is released
        // now, even where a caller still holds the timer); work already in
        // the ring (scheduled before the stop, or racing it) runs.
        for timer in timers.removeAll() { timer.cancel() }
        lateDrain.withLock { _ in
            for item in ring.drain() where item !== stopItem {
                countExecuted()
                item.run()
            }
        }
        probe.lifecycle.store(.exited, ordering: .sequentiallyConsistent)
        drainAfterExit()
        ring.makeCurrent(false)
    }

    /// Counts one work item as run (before it runs, so that a `sync`
    /// returning sees it counted). Only the thread writes the counter.
    @inline(__always)
    private func countExecuted() {
        probe.executedCount.store(probe.executedCount.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
    }

    /// Schedules every timer due now behind the work already in the ring
    /// (as a Dispatch timer is enqueued when it fires, so a timer never
    /// overtakes work scheduled before its deadline), and prunes cancelled
    /// timers when they are more than half of the heap.
    private func fireDueTimers() {
        let now = _monotonicNanoseconds()
        while let timer = timers.popFirst(notAfter: now)?.element {
            if timer.isCancelled {
                // It leaves the heap now: no pruning needed for it.
                cancellations.subtract(1)
            } else {
                ring.push(timer)
            }
        }
        let cancelled = cancellations.value
        if cancelled >= 64, cancelled * 2 >= timers.count {
            cancellations.subtract(timers.removeAll { $0.isCancelled })
        }
    }
}

/// The hand-back of one `performSync`: signalled when the work has run, or
/// when it was released without running.
private final class _SyncWaiter: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let done = Synchronization.Atomic<Bool>(false)

    func finish(ran: Bool) {
        done.store(ran, ordering: .releasing)
        semaphore.signal()
    }

    func wait() { semaphore.wait() }

    var ran: Bool { done.load(ordering: .acquiring) }
}

/// The work of one `performSync`, on its way to the thread.
///
/// `@unchecked Sendable`: `work` is touched by one thread at a time: the
/// dedicated thread in `run()`, or whoever releases the last reference (the
/// item released without running) in `deinit`; the waiter is `Sendable`.
private final class _SyncWork: _WorkItem, @unchecked Sendable {
    private var work: (() -> Void)?
    private let waiter: _SyncWaiter

    init(_ work: @escaping () -> Void, waiter: _SyncWaiter) {
        self.work = work
        self.waiter = waiter
    }

    override func run() {
        if let work = work.take() { work() }
        waiter.finish(ran: true)
    }

    deinit {
        if work != nil {
            work = nil
            waiter.finish(ran: false)
        }
    }
}

// MARK: - An executor for actors

extension DedicatedThreadScheduler: SerialExecutor {
    /// Runs an actor's job on the dedicated thread, in the order the jobs
    /// were enqueued: an actor whose `unownedExecutor` is this scheduler's
    /// runs every isolated method on the thread, with the thread's wait
    /// strategy (and `start(isolation:)` delivers to it without Dispatch).
    ///
    /// ```swift
    /// actor OrderBook {
    ///     private let thread = DedicatedThreadScheduler(name: "book", waitStrategy: .spinThenPark(.microseconds(50)))
    ///     nonisolated var unownedExecutor: UnownedSerialExecutor { thread.asUnownedSerialExecutor() }
    ///     func apply(_ price: Double) { /* on the "book" thread */ }
    /// }
    /// ```
    ///
    /// A job enqueued after the thread was asked to stop (`shutdown()`, or
    /// the last reference gone) stops the process with a message: nothing
    /// would ever run it, and the actor's callers would wait for ever. Shut
    /// the thread down only after the actor's work is done.
    public func enqueue(_ job: consuming ExecutorJob) {
        _signalKitRequire(
            !core.isStopping,
            "DedicatedThreadScheduler.enqueue: an actor's job came after the thread \(name) was shut down; "
                + "nothing would run it (shut the thread down after the actor's work is done)"
        )
        let job = UnownedJob(job)
        core.push(_ActorJobItem(job: job, executor: asUnownedSerialExecutor()))
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// Stops the process unless the caller runs on the dedicated thread
    /// (what `assumeIsolated` on an actor of this executor asks).
    public func checkIsolated() {
        _signalKitRequire(
            core.ring.isCurrent,
            "DedicatedThreadScheduler.checkIsolated(): not on the dedicated thread \(name)"
        )
    }
}

/// An actor's job on its way to the dedicated thread.
///
/// `@unchecked Sendable`: restated from `_WorkItem`; `UnownedJob` and
/// `UnownedSerialExecutor` are handles the runtime hands executors to pass
/// between threads.
final class _ActorJobItem: _WorkItem, @unchecked Sendable {
    let job: UnownedJob
    let executor: UnownedSerialExecutor

    init(job: UnownedJob, executor: UnownedSerialExecutor) {
        self.job = job
        self.executor = executor
    }

    override func run() { job.runSynchronously(on: executor) }
}
