// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

public import SignalKit

/// A virtual clock and the queues that run on it, for testing timing
/// behaviour without sleeping.
///
/// ```swift
/// let scheduler = VirtualTimeScheduler()
/// let queue = scheduler.makeQueue(name: "timer")
/// let log = EventLog()
/// let handle = log.start(Signal<Int, NoError>.single(1) |> delay(2.0, queue: queue))
/// scheduler.advance(by: 1.9)   // nothing yet
/// scheduler.advance(by: 0.1)   // "next 1", "completed"
/// handle.dispose()
/// ```
///
/// Work scheduled on the scheduler's queues runs only inside `advance(by:)`,
/// `advance(to:)` and `run()`, on the calling thread, in deadline order
/// (FIFO among equal deadlines). While it runs, the queue it belongs to is
/// current (`Queue.isCurrent()`), so SignalKit's inline rule works as on a
/// real serial queue. `Queue.sync` from outside runs the work at once, with
/// the queue marked current.
///
/// Thread safety: scheduling from any thread is safe; drive the clock from
/// one thread at a time.
public final class VirtualTimeScheduler: Sendable {
    private struct Item {
        let queue: ObjectIdentifier
        let work: _Work
    }

    private struct State {
        var now: Double = 0
        /// By deadline, then scheduling order: the next item in O(log n).
        var items = _DeadlineHeap<Double, Item>()
        var current: [ObjectIdentifier] = []
    }

    private let state = Locked(State())

    public init() {}

    /// The current virtual time, in seconds (starts at 0).
    public var now: Double { state.withLock { $0.now } }

    /// Scheduled work not yet run.
    public var pendingCount: Int { state.withLock { $0.items.count } }

    /// A new serial queue on this scheduler's clock.
    public func makeQueue(name: String = "virtual") -> Queue {
        Queue(scheduler: VirtualQueue(scheduler: self, name: name))
    }

    /// Runs everything due now or earlier, then moves the clock `interval`
    /// seconds forward, running work in deadline order as its time comes.
    public func advance(by interval: Double) {
        _signalKitRequire(interval >= 0, "VirtualTimeScheduler.advance(by:) needs a non-negative interval, got \(interval)")
        advance(to: now + interval)
    }

    /// Moves the clock to `time`, running work as its time comes.
    public func advance(to time: Double) {
        while let item = takeNext(notAfter: time) {
            execute(item)
        }
        state.withLock { state in
            if state.now < time { state.now = time }
        }
    }

    /// Runs until nothing is scheduled, moving the clock to each deadline.
    /// Stops (with a precondition failure naming the cause) after
    /// `maxSteps` items, which catches repeating timers that never stop.
    public func run(maxSteps: Int = 1_000_000) {
        var steps = 0
        while let item = takeNext(notAfter: .infinity) {
            steps += 1
            _signalKitRequire(
                steps <= maxSteps,
                "VirtualTimeScheduler.run(): more than \(maxSteps) items ran; a repeating timer never stops? Use advance(by:)"
            )
            execute(item)
        }
    }

    private func takeNext(notAfter limit: Double) -> Item? {
        state.withLock { state -> Item? in
            guard let (deadline, item) = state.items.popFirst(notAfter: limit) else { return nil }
            if deadline > state.now { state.now = deadline }
            return item
        }
    }

    private func execute(_ item: Item) {
        guard !item.work.isCancelled else { return }
        performAsCurrent(item.queue) { item.work.run() }
    }

    fileprivate func performAsCurrent(_ queue: ObjectIdentifier, _ body: () -> Void) {
        state.withLock { $0.current.append(queue) }
        body()
        state.withLock { _ = $0.current.removeLast() }
    }

    fileprivate func isCurrent(_ queue: ObjectIdentifier) -> Bool {
        state.withLock { $0.current.contains(queue) }
    }

    fileprivate func schedule(_ work: _Work, on queue: ObjectIdentifier, after delay: Double) {
        state.withLock { state in
            state.items.insert(Item(queue: queue, work: work), deadline: state.now + max(0, delay))
        }
    }
}

/// One scheduled closure; cancellable. Runs at most once, and releases the
/// closure when it runs or is cancelled (a cancelled item may stay in the
/// timeline until its time comes; it must not keep what its closure
/// captured alive meanwhile).
private final class _Work: Disposable, Sendable {
    // `Locked`, not `Synchronization.Mutex`: a run on the clock's thread and a
    // disposal on another contend here, and a contended `Mutex` hands over
    // through futex calls ThreadSanitizer does not see (a false race report).
    private let work: Locked<(@Sendable () -> Void)?>

    init(_ work: @escaping @Sendable () -> Void) {
        self.work = Locked(work)
    }

    var isCancelled: Bool { work.withLock { $0 == nil } }

    func run() {
        // Taken under the lock, run outside it.
        let body = work.withLock { $0.take() }
        body?()
    }

    func dispose() {
        let body = work.withLock { $0.take() }
        // Released here, outside the lock.
        _ = body
    }
}

/// A serial queue on a `VirtualTimeScheduler`.
///
/// It holds its scheduler weakly: the scheduler's timeline holds the work
/// scheduled on the queue, and that work (a hop's drain, a timer's state)
/// often holds the queue, so a strong reference would be a cycle that keeps
/// everything a test scheduled and never ran alive after the test. Once the
/// scheduler is gone nothing can run any more: the queue drops what it is
/// given, and `performSync` runs its work inline.
final class VirtualQueue: QueueScheduler, CustomStringConvertible {
    private weak let scheduler: VirtualTimeScheduler?
    let name: String

    init(scheduler: VirtualTimeScheduler, name: String) {
        self.scheduler = scheduler
        self.name = name
    }

    var description: String { "VirtualQueue(\(name))" }

    func isCurrent() -> Bool {
        scheduler?.isCurrent(ObjectIdentifier(self)) ?? false
    }

    func schedule(_ work: @escaping @Sendable () -> Void) {
        scheduler?.schedule(_Work(work), on: ObjectIdentifier(self), after: 0)
    }

    func schedule(after delay: Double, _ work: @escaping @Sendable () -> Void) -> any Disposable {
        let item = _Work(work)
        guard let scheduler else {
            item.dispose()
            return item
        }
        scheduler.schedule(item, on: ObjectIdentifier(self), after: delay)
        return item
    }

    func performSync(_ work: () -> Void) {
        guard let scheduler else { return work() }
        scheduler.performAsCurrent(ObjectIdentifier(self), work)
    }

    var currentTime: Double { scheduler?.now ?? 0 }
}
