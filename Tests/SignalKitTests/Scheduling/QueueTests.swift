// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SignalKit
import SignalKitTesting
import Testing

@Suite struct QueueTests {
    @Test func aNamedQueueIsCurrentInsideItsBlocksOnly() {
        let queue = Queue(name: "q")
        #expect(!queue.isCurrent())
        let inside = queue.syncResult { queue.isCurrent() }
        #expect(inside)
        #expect(queue.queue.label == "q")
    }

    @Test func asyncRunsInlineWhenAlreadyOnTheQueue() {
        let log = EventLog()
        let queue = Queue(name: "q")
        queue.sync {
            queue.async { log.append("inner") }
            log.append("after async")
        }
        #expect(log.events == ["inner", "after async"])
    }

    @Test func justDispatchAndAfterNeverRunInline() {
        let log = EventLog()
        let queue = Queue(name: "q")
        queue.sync {
            queue.justDispatch { log.append("justDispatch") }
            queue.justDispatchWithQoS(qos: .userInitiated) { log.append("withQoS") }
            queue.after(0) { log.append("after 0") }
            log.append("end of block")
        }
        queue.sync {}
        waitUntil { log.events.count == 4 }
        #expect(log.events.prefix(3) == ["end of block", "justDispatch", "withQoS"])
        #expect(log.events.last == "after 0")
    }

    @Test func asyncFromOutsideIsFIFO() {
        let log = EventLog()
        let queue = Queue(name: "q")
        for index in 0..<100 { queue.async { log.append("\(index)") } }
        queue.sync {}
        #expect(log.events == (0..<100).map { "\($0)" })
    }

    @Test func syncRunsInlineWhenCurrent() {
        let queue = Queue(name: "q")
        let nested: Bool = queue.syncResult {
            var ran = false
            queue.sync { ran = true }
            return ran
        }
        #expect(nested, "no deadlock: nested sync on the same queue runs inline")
    }

    @Test func aQueueIsCurrentInsideQueuesThatTargetIt() {
        let queue = Queue(name: "target")
        let child = DispatchQueue(label: "child", target: queue.queue)
        let current = child.sync { queue.isCurrent() }
        #expect(current)
    }

    @Test func wrappersAndGlobalQueuesAreNeverCurrent() {
        let queue = Queue(name: "q")
        let wrapper = Queue(queue: queue.queue)
        let wrapperCurrent = queue.syncResult { wrapper.isCurrent() }
        #expect(!wrapperCurrent)
        let global = Queue.concurrentDefaultQueue()
        let globalCurrent = global.queue.sync { global.isCurrent() }
        #expect(!globalCurrent)
        #expect(Queue.concurrentDefaultQueue() === Queue.concurrentDefaultQueue())
        #expect(Queue.concurrentBackgroundQueue() === Queue.concurrentBackgroundQueue())
        #expect(Queue.mainQueue() === Queue.mainQueue())
    }

    @Test func aNestedSyncOntoAnotherNamedQueueIsNotCurrentForTheFirst() {
        let first = Queue(name: "first")
        let second = Queue(name: "second")
        let result: Bool = first.syncResult { second.syncResult { first.isCurrent() } }
        #expect(!result)
    }

    @Test func mainQueueIsCurrentOnlyOnTheMainThread() {
        let queue = Queue(name: "q")
        let onQueue = queue.syncResult { Queue.mainQueue().isCurrent() }
        #expect(!onQueue)
    }

    @Test func aSchedulerBackedQueueHasNoDispatchQueueButFollowsItsClock() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue(name: "v")
        #expect(queue.scheduler != nil)
        let log = EventLog()
        queue.after(1.5) { log.append("after at \(scheduler.now)") }
        queue.async { log.append("async current=\(queue.isCurrent())") }
        #expect(log.events == [])
        scheduler.advance(by: 1)
        #expect(log.take() == ["async current=true"])
        scheduler.advance(by: 1)
        #expect(log.take() == ["after at 1.5"])
    }
}

extension Queue {
    /// `sync` returning a value (test convenience).
    func syncResult<R>(_ body: () -> R) -> R {
        var result: R?
        sync { result = body() }
        return result!
    }
}

/// Waits (up to two seconds, polling every millisecond) for `condition`.
func waitUntil(_ condition: () -> Bool) {
    for _ in 0..<2000 where !condition() {
        usleep(1000)
    }
}
