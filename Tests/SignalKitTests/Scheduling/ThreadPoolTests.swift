// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SignalKit
import SignalKitTesting
import Synchronization
import Testing

@Suite struct ThreadPoolTests {
    @Test func tasksOfOneQueueRunSeriallyInOrderOnPoolThreads() {
        let pool = ThreadPool(threadCount: 3, threadPriority: 0.5)
        let queue = pool.nextQueue()
        let log = EventLog()
        let overlapping = Atomic<Int>(0)
        let maxOverlap = Atomic<Int>(0)
        let done = Atomic<Int>(0)
        for index in 0..<200 {
            queue.addTask(
                ThreadPoolTask { _ in
                    let now = overlapping.add(1, ordering: .acquiringAndReleasing).newValue
                    if now > maxOverlap.load(ordering: .relaxed) { maxOverlap.store(now, ordering: .relaxed) }
                    log.append("\(index) inPool=\(pool.isCurrentThreadInPool())")
                    overlapping.subtract(1, ordering: .acquiringAndReleasing)
                    done.add(1, ordering: .releasing)
                })
        }
        waitUntil { done.load(ordering: .acquiring) == 200 }
        #expect(log.events == (0..<200).map { "\($0) inPool=true" })
        #expect(maxOverlap.load(ordering: .relaxed) == 1)
        #expect(!pool.isCurrentThreadInPool())
        #expect(queue == queue)
        #expect(queue != pool.nextQueue())
    }

    @Test func aCancelledTaskIsSkippedAndARunningOneCanObserveIt() {
        let pool = ThreadPool(threadCount: 1, threadPriority: 0.5)
        let queue = pool.nextQueue()
        let log = EventLog()
        let gate = Atomic<Bool>(false)
        let observed = Atomic<Bool>(false)
        let running = ThreadPoolTask { state in
            log.append("running")
            while !gate.load(ordering: .acquiring) {}
            observed.store(state.cancelled.with { $0 }, ordering: .releasing)
        }
        let skipped = ThreadPoolTask { _ in log.append("skipped ran") }
        queue.addTask(running)
        queue.addTask(skipped)
        waitUntil { log.events == ["running"] }
        skipped.cancel()
        running.cancel()
        gate.store(true, ordering: .releasing)
        let finished = Atomic<Bool>(false)
        queue.addTask(ThreadPoolTask { _ in finished.store(true, ordering: .releasing) })
        waitUntil { finished.load(ordering: .acquiring) }
        #expect(log.events == ["running"])
        let sawCancellation = observed.load(ordering: .acquiring)
        #expect(sawCancellation)
    }

    @Test func addTaskRunsConcurrently() {
        let pool = ThreadPool(threadCount: 2, threadPriority: 0.5)
        let started = Atomic<Int>(0)
        let release = Atomic<Bool>(false)
        for _ in 0..<2 {
            pool.addTask(
                ThreadPoolTask { _ in
                    started.add(1, ordering: .acquiringAndReleasing)
                    while !release.load(ordering: .acquiring) { usleep(100) }
                })
        }
        waitUntil { started.load(ordering: .acquiring) == 2 }
        #expect(started.load(ordering: .acquiring) == 2, "two tasks ran at the same time")
        release.store(true, ordering: .releasing)
    }
}
