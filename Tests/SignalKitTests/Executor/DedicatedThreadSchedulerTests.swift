// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Dispatch
#if canImport(Glibc)
import Glibc
#endif
import SignalKit
import SignalKitTesting
import Synchronization
import Testing

/// An object that counts itself in a counter of its test's own (the
/// process-wide counters are shared with tests running in parallel).
final class CountedCapture: Sendable {
    let live: Counter

    init(_ live: Counter) {
        self.live = live
        live.add(1)
    }

    deinit { live.add(-1) }
}

final class Counter: Sendable {
    private let storage = Synchronization.Atomic<Int>(0)
    func add(_ delta: Int) { storage.add(delta, ordering: .relaxed) }
    var value: Int { storage.load(ordering: .relaxed) }
}

/// What only the dedicated-thread kind has: its ring, its spill, its
/// statistics, its life cycle. The `Queue` contract itself is
/// `QueueKindsTests`.
@Suite struct DedicatedThreadSchedulerTests {
    /// `queue.dedicatedThread`: the scheduler of a dedicated-thread queue,
    /// nil for every other kind, without a cast.
    @Test func aQueueGivesItsDedicatedThreadWithoutACast() {
        let scheduler = DedicatedThreadScheduler(name: "typed-thread", waitStrategy: .park)
        defer { scheduler.shutdown() }
        #expect(Queue(scheduler: scheduler).dedicatedThread === scheduler)
        let made = Queue(dedicatedThread: "typed-thread-made", waitStrategy: .park)
        #expect(made.dedicatedThread?.name == "typed-thread-made")
        made.sync {}
        #expect(made.dedicatedThread?.statistics.executed == 1)
        made.dedicatedThread?.shutdown()
        #expect(Queue(name: "typed-dispatch").dedicatedThread == nil)
        #expect(VirtualTimeScheduler().makeQueue().dedicatedThread == nil)
    }

    @Test func theThreadCarriesTheQueuesName() throws {
        let scheduler = DedicatedThreadScheduler(name: "md-feed-hop-with-a-long-name", waitStrategy: .park)
        defer { scheduler.shutdown() }
        let queue = Queue(scheduler: scheduler)
        let name: String = queue.syncResult {
            guard let file = fopen("/proc/thread-self/comm", "r") else { return "" }
            defer { fclose(file) }
            var buffer = [CChar](repeating: 0, count: 64)
            guard fgets(&buffer, 64, file) != nil else { return "" }
            return String(decoding: buffer.prefix { $0 != 0 && $0 != 10 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        #expect(name == "md-feed-hop-wit")
        #expect(scheduler.waitStrategy == .park)
        #expect(scheduler.statistics.capacity == 4096)
    }

    /// Beyond its capacity the ring spills: nothing blocks, nothing is
    /// lost, the order holds, and the spill is counted.
    @Test func aFullRingSpillsCountedAndInOrder() {
        let scheduler = DedicatedThreadScheduler(name: "spill", waitStrategy: .park, capacity: 4)
        defer { scheduler.shutdown() }
        let queue = Queue(scheduler: scheduler)
        let gate = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        let log = EventLog()
        queue.async {
            started.signal()
            gate.wait()
        }
        started.wait()
        let last = DispatchSemaphore(value: 0)
        for index in 0..<10 {
            queue.async {
                log.append("\(index)")
                if index == 9 { last.signal() }
            }
        }
        let full = scheduler.statistics
        #expect(full.ringDepth == 4)
        #expect(full.spillDepth == 6)
        #expect(full.spilledTotal == 6)
        gate.signal()
        last.wait()
        #expect(log.events == (0..<10).map { "\($0)" })
        let drained = scheduler.statistics
        #expect(drained.ringDepth == 0)
        #expect(drained.spillDepth == 0)
        #expect(drained.spilledTotal == 6)
        #expect(drained.executed == 11)  // the gate and the ten
    }

    /// The thread scheduling onto itself past its capacity spills too: no
    /// deadlock.
    @Test func theThreadSchedulingOntoItselfPastItsCapacityDoesNotDeadlock() {
        let scheduler = DedicatedThreadScheduler(name: "self", waitStrategy: .park, capacity: 2)
        defer { scheduler.shutdown() }
        let queue = Queue(scheduler: scheduler)
        let count = Shared(0)
        let last = DispatchSemaphore(value: 0)
        queue.sync {
            for index in 0..<100 {
                queue.justDispatch {
                    count.withLock { $0 += 1 }
                    if index == 99 { last.signal() }
                }
            }
        }
        last.wait()
        #expect(count.withLock { $0 } == 100)
        #expect(scheduler.statistics.spilledTotal == 98)
    }

    /// `shutdown()` runs what was scheduled, joins the thread, and refuses
    /// (and counts) what comes later, releasing it at once.
    @Test func shutdownRunsWhatWasScheduledThenRefusesTheRest() {
        let scheduler = DedicatedThreadScheduler(name: "stop", waitStrategy: .spinThenPark(.microseconds(10)))
        let queue = Queue(scheduler: scheduler)
        let ran = Counter()
        let live = Counter()
        for _ in 0..<1_000 {
            let capture = CountedCapture(live)
            queue.async {
                withExtendedLifetime(capture) { ran.add(1) }
            }
        }
        scheduler.shutdown()
        #expect(ran.value == 1_000, "shutdown returned before the scheduled work ran")
        var timers: [any Disposable] = []
        do {
            let capture = CountedCapture(live)
            queue.async { withExtendedLifetime(capture) { ran.add(1) } }
            timers.append(queue.cancellableAfterForTesting(0) { withExtendedLifetime(capture) { ran.add(1) } })
            timers.append(queue.cancellableAfterForTesting(1) { withExtendedLifetime(capture) { ran.add(1) } })
        }
        scheduler.shutdown()  // idempotent
        let statistics = scheduler.statistics
        #expect(statistics.refused == 3)
        #expect(statistics.executed == 1_000)
        #expect(ran.value == 1_000)
        #expect(live.value == 0, "refused work must be released at once, even while its timer is held")
        withExtendedLifetime(timers) {}
    }

    /// Timers not yet due when the thread stops never fire, and what they
    /// captured is released.
    @Test func shutdownCancelsTimersNotYetDue() {
        let scheduler = DedicatedThreadScheduler(name: "timers", waitStrategy: .park)
        let queue = Queue(scheduler: scheduler)
        let live = Counter()
        let fired = Counter()
        var held: (any Disposable)?
        do {
            let capture = CountedCapture(live)
            queue.after(60) { withExtendedLifetime(capture) { fired.add(1) } }
            held = queue.cancellableAfterForTesting(60) { withExtendedLifetime(capture) { fired.add(1) } }
        }
        queue.sync {}
        #expect(live.value == 1)
        scheduler.shutdown()
        #expect(live.value == 0, "a timer the thread cancelled keeps nothing alive, even while a caller holds it")
        #expect(fired.value == 0)
        withExtendedLifetime(held) {}
    }

    /// Disposing a timer releases its work at once, on the disposing thread,
    /// long before its deadline; many cancelled timers do not pile up.
    @Test func disposingATimerReleasesItsWorkAtOnce() {
        let scheduler = DedicatedThreadScheduler(name: "cancel", waitStrategy: .park)
        defer { scheduler.shutdown() }
        let queue = Queue(scheduler: scheduler)
        let live = Counter()
        let fired = Counter()
        for _ in 0..<1_000 {
            let capture = CountedCapture(live)
            let timer = queue.cancellableAfterForTesting(60) { withExtendedLifetime(capture) { fired.add(1) } }
            timer.dispose()
        }
        #expect(live.value == 0)
        let due = DispatchSemaphore(value: 0)
        queue.after(0.001) { due.signal() }
        due.wait()
        #expect(fired.value == 0)
    }

    /// The last reference going away stops the thread after the work it
    /// already has: nothing leaks, nothing runs after it is freed.
    @Test func releasingTheQueueWithWorkPendingRunsItAndLetsGo() {
        let live = Counter()
        let ran = Counter()
        let allRan = DispatchSemaphore(value: 0)
        do {
            let queue = Queue(dedicatedThread: "released", waitStrategy: .park, capacity: 16)
            for index in 0..<200 {
                let capture = CountedCapture(live)
                queue.async {
                    withExtendedLifetime(capture) {
                        ran.add(1)
                        if index == 199 { allRan.signal() }
                    }
                }
            }
        }
        allRan.wait()
        waitUntil { live.value == 0 }
        #expect(ran.value == 200)
        #expect(live.value == 0)
    }

    /// Dropping the last reference from the thread itself (inside its own
    /// work) must not wait for itself.
    @Test func theLastReferenceCanGoOnTheThreadItself() {
        let done = DispatchSemaphore(value: 0)
        do {
            let held = Shared<Queue?>(Queue(dedicatedThread: "self-release", waitStrategy: .park))
            held.withLock { $0! }.justDispatch {
                // The only reference left: released here, on the thread.
                let last = held.withLock { $0.take() }
                #expect(last?.isCurrent() == true)
                done.signal()
            }
        }
        done.wait()
    }

    /// Counters by thread name: the running threads of a name summed, and
    /// the totals of the exited ones kept.
    @Test func statisticsByNameSumRunningThreadsAndKeepExitedOnes() {
        let name = "by-name-\(UInt32.random(in: 0...UInt32.max))"
        func entry() -> DedicatedThreadScheduler.NamedStatistics? {
            DedicatedThreadScheduler.statisticsByName().first { $0.name == name }
        }
        let first = DedicatedThreadScheduler(name: name, waitStrategy: .park, capacity: 8)
        let second = DedicatedThreadScheduler(name: name, waitStrategy: .park, capacity: 8)
        for _ in 0..<3 { Queue(scheduler: first).async {} }
        Queue(scheduler: second).sync {}
        Queue(scheduler: first).sync {}
        let running = entry()
        #expect(running?.threads == 2)
        #expect(running?.statistics.capacity == 16)
        #expect(running?.statistics.executed == 5)
        first.shutdown()
        let oneLeft = entry()
        #expect(oneLeft?.threads == 1)
        #expect(oneLeft?.statistics.capacity == 8)
        #expect(oneLeft?.statistics.executed == 5)
        second.shutdown()
        #expect(entry()?.threads == 0)
        #expect(entry()?.statistics.executed == 5)
        let names = DedicatedThreadScheduler.statisticsByName().map(\.name)
        #expect(names == names.sorted())
    }

    @Test func theStrategiesDescribeThemselves() {
        #expect("\(DedicatedThreadScheduler.WaitStrategy.park)" == "park")
        #expect("\(DedicatedThreadScheduler.WaitStrategy.busySpin)" == "busySpin")
        #expect(
            "\(DedicatedThreadScheduler.WaitStrategy.spinThenPark(.microseconds(50)))"
                == "spinThenPark(\(Duration.microseconds(50)))")
    }

    @Test func shutdownOnTheThreadItselfStopsWithAMessage() async {
        await #expect(processExitsWith: .failure) {
            let scheduler = DedicatedThreadScheduler(name: "own", waitStrategy: .park)
            Queue(scheduler: scheduler).sync { scheduler.shutdown() }
        }
    }

    @Test func syncAfterShutdownStopsWithAMessage() async {
        await #expect(processExitsWith: .failure) {
            let scheduler = DedicatedThreadScheduler(name: "gone", waitStrategy: .park)
            scheduler.shutdown()
            Queue(scheduler: scheduler).sync {}
        }
    }
}

extension Queue {
    /// `schedule(after:)` of the queue's scheduler: the cancellable `after`
    /// the timing operators use (internal to SignalKit).
    func cancellableAfterForTesting(_ delay: Double, _ work: @escaping @Sendable () -> Void) -> any Disposable {
        scheduler!.schedule(after: delay, work)
    }
}

/// An actor whose jobs run on a dedicated thread.
actor PinnedCounter {
    let thread: DedicatedThreadScheduler
    private(set) var values: [Int] = []
    private(set) var offThread = 0

    init(thread: DedicatedThreadScheduler) { self.thread = thread }

    nonisolated var unownedExecutor: UnownedSerialExecutor { thread.asUnownedSerialExecutor() }

    func append(_ value: Int) {
        if !thread.isCurrent() { offThread += 1 }
        values.append(value)
    }
}

@Suite struct DedicatedThreadActorExecutorTests {
    /// Every isolated method of an actor pinned to the thread runs there,
    /// in the order one caller awaited them.
    @Test func anActorPinnedToTheThreadRunsThere() async {
        let thread = DedicatedThreadScheduler(name: "actor", waitStrategy: .park)
        let counter = PinnedCounter(thread: thread)
        for value in 0..<100 { await counter.append(value) }
        #expect(await counter.values == Array(0..<100))
        #expect(await counter.offThread == 0)
        // At least the first hop went through the ring. Not one job per
        // call: optimised, the runtime may keep running this task's
        // continuation on the actor's thread, and the next calls then need
        // no hop (a release run counted 2 jobs for the 100 calls).
        #expect(thread.statistics.executed >= 1)
        await onDedicatedThread { thread.shutdown() }
    }

    /// `start(isolation:)` delivers into a pinned actor on the thread.
    @Test func startIsolatedDeliversOnTheThread() async {
        let thread = DedicatedThreadScheduler(name: "actor-start", waitStrategy: .spinThenPark(.microseconds(20)))
        let counter = PinnedCounter(thread: thread)
        let pipe = ValuePipe<Int>()
        let handle = await counter.attach(pipe.signal())
        for value in 0..<50 { pipe.putNext(value) }
        for _ in 0..<2_000 where await counter.values.count < 50 { await Task.yield() }
        #expect(await counter.values == Array(0..<50))
        #expect(await counter.offThread == 0)
        handle.dispose()
        await onDedicatedThread { thread.shutdown() }
    }

    /// `assumeIsolated` on the thread passes the executor's isolation check.
    @Test func assumeIsolatedHoldsOnTheThread() {
        let thread = DedicatedThreadScheduler(name: "actor-assume", waitStrategy: .park)
        defer { thread.shutdown() }
        let counter = PinnedCounter(thread: thread)
        let count: Int = Queue(scheduler: thread).syncResult {
            counter.assumeIsolated { counter in
                counter.append(7)
                return counter.values.count
            }
        }
        #expect(count == 1)
    }

    @Test func aJobAfterShutdownStopsWithAMessage() async {
        await #expect(processExitsWith: .failure) {
            let thread = DedicatedThreadScheduler(name: "actor-gone", waitStrategy: .park)
            thread.shutdown()
            await PinnedCounter(thread: thread).append(1)
        }
    }
}

extension PinnedCounter {
    func attach(_ signal: Signal<Int, NoError>) -> any Disposable {
        signal.start(isolation: self, next: { value in self.append(value) })
    }
}
