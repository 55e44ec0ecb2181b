// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Dispatch
#if canImport(Glibc)
import Glibc
#endif
import SignalKit
import SignalKitTesting
import Synchronization
import Testing

/// A real queue of each kind: what `Queue` promises must hold for all of them.
enum QueueKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case dispatch
    case dedicatedPark
    case dedicatedSpinThenPark
    case dedicatedBusySpin

    var testDescription: String { rawValue }

    func makeQueue(name: String) -> Queue {
        switch self {
        case .dispatch: Queue(name: name)
        case .dedicatedPark: Queue(dedicatedThread: name, waitStrategy: .park)
        case .dedicatedSpinThenPark: Queue(dedicatedThread: name, waitStrategy: .spinThenPark(.microseconds(20)))
        case .dedicatedBusySpin: Queue(dedicatedThread: name, waitStrategy: .busySpin)
        }
    }

    /// Runs `body` with a new queue of this kind, then shuts a dedicated
    /// thread down (a busy-spinning one must not outlive its test).
    func withQueue<R>(name: String = "q", _ body: (Queue) throws -> R) rethrows -> R {
        let queue = makeQueue(name: name)
        defer { (queue.scheduler as? DedicatedThreadScheduler)?.shutdown() }
        return try body(queue)
    }
}

/// The `Queue` contract, for every kind of queue.
@Suite struct QueueKindsTests {
    @Test(arguments: QueueKind.allCases)
    func aQueueIsCurrentInsideItsWorkOnly(kind: QueueKind) {
        kind.withQueue { queue in
            #expect(!queue.isCurrent())
            #expect(queue.syncResult { queue.isCurrent() })
            let other = Queue(name: "other")
            #expect(!other.syncResult { queue.isCurrent() })
        }
    }

    @Test(arguments: QueueKind.allCases)
    func asyncAndSyncRunInlineWhenAlreadyOnTheQueue(kind: QueueKind) {
        kind.withQueue { queue in
            let log = EventLog()
            queue.sync {
                queue.async { log.append("inner async") }
                queue.sync { log.append("inner sync") }
                log.append("end of block")
            }
            #expect(log.events == ["inner async", "inner sync", "end of block"])
        }
    }

    @Test(arguments: QueueKind.allCases)
    func justDispatchAndAfterNeverRunInline(kind: QueueKind) {
        kind.withQueue { queue in
            let log = EventLog()
            queue.sync {
                queue.justDispatch { log.append("justDispatch") }
                queue.justDispatchWithQoS(qos: .userInitiated) { log.append("withQoS") }
                queue.after(0) { log.append("after 0") }
                log.append("end of block")
            }
            waitUntil { log.events.count == 4 }
            #expect(log.events.prefix(3) == ["end of block", "justDispatch", "withQoS"])
            #expect(log.events.last == "after 0")
        }
    }

    @Test(arguments: QueueKind.allCases)
    func asyncFromOutsideIsFIFO(kind: QueueKind) {
        kind.withQueue { queue in
            let log = EventLog()
            for index in 0..<1_000 { queue.async { log.append("\(index)") } }
            queue.sync {}
            #expect(log.events == (0..<1_000).map { "\($0)" })
        }
    }

    /// `sync` from another thread waits for the work and sees its effects;
    /// the work runs on the queue.
    @Test(arguments: QueueKind.allCases)
    func syncFromAnotherThreadWaitsForTheWork(kind: QueueKind) {
        kind.withQueue { queue in
            var value = 0
            queue.sync {
                value = queue.isCurrent() ? 42 : -1
            }
            #expect(value == 42)
            let results = Shared<[Int]>([])
            race(threads: 2) { index in
                for round in 0..<200 {
                    let seen: Int = queue.syncResult { index * 1_000 + round }
                    results.withLock { $0.append(seen) }
                }
            }
            #expect(results.withLock { $0.sorted() } == ((0..<200).map { $0 } + (0..<200).map { 1_000 + $0 }))
        }
    }

    /// `after` runs in deadline order, and work scheduled after an
    /// `after(0)` runs after it.
    @Test(arguments: QueueKind.allCases)
    func afterRunsInDeadlineOrderAndBeforeLaterWork(kind: QueueKind) {
        kind.withQueue { queue in
            let log = EventLog()
            let done = DispatchSemaphore(value: 0)
            // 50 ms apart: the second `after`'s deadline is the earlier one
            // unless scheduling it took 50 ms (a 2 ms gap was not enough
            // under AddressSanitizer).
            queue.after(0.060) {
                log.append("after 60 ms")
                done.signal()
            }
            queue.after(0.010) { log.append("after 10 ms") }
            queue.sync {
                queue.after(0) { log.append("after 0") }
                queue.justDispatch { log.append("justDispatch") }
            }
            done.wait()
            // Two orders hold whatever the machine's load: deadlines, and
            // FIFO between a zero delay and the work scheduled after it.
            let events = log.events
            #expect(events.count == 4)
            #expect(events.filter { $0.hasSuffix("ms") } == ["after 10 ms", "after 60 ms"])
            #expect(events.filter { !$0.hasSuffix("ms") } == ["after 0", "justDispatch"])
        }
    }

    @Test(arguments: QueueKind.allCases)
    func aTimerCancelledBeforeItFiresNeverFires(kind: QueueKind) {
        kind.withQueue { queue in
            let log = EventLog()
            let fired = DispatchSemaphore(value: 0)
            // Generous timeouts: the invalidation must come before the first
            // timer is due, however slow the machine (sanitizers).
            let timer = SignalKit.Timer(
                timeout: 0.030, repeat: false, completion: { log.append("cancelled timer fired") }, queue: queue)
            timer.start()
            timer.invalidate()
            let control = SignalKit.Timer(
                timeout: 0.060, repeat: false,
                completion: {
                    log.append("control fired on queue: \(queue.isCurrent())")
                    fired.signal()
                }, queue: queue)
            control.start()
            fired.wait()
            queue.sync {}
            #expect(log.events == ["control fired on queue: true"])
        }
    }

    @Test(arguments: QueueKind.allCases)
    func aRepeatingTimerTicksOnItsQueueUntilInvalidated(kind: QueueKind) {
        kind.withQueue { queue in
            let ticks = Shared(0)
            let offQueue = Shared(0)
            let timer = SignalKit.Timer(
                timeout: 0.001, repeat: true,
                completion: {
                    if !queue.isCurrent() { offQueue.withLock { $0 += 1 } }
                    ticks.withLock { $0 += 1 }
                }, queue: queue)
            timer.start()
            waitUntil { ticks.withLock { $0 } >= 3 }
            timer.invalidate()
            queue.sync {}
            let stopped = ticks.withLock { $0 }
            usleep(5_000)
            queue.sync {}
            #expect(stopped >= 3)
            #expect(ticks.withLock { $0 } == stopped)
            #expect(offQueue.withLock { $0 } == 0)
        }
    }

    @Test(arguments: QueueKind.allCases)
    func aQueueLocalObjectLivesAndDiesOnItsQueue(kind: QueueKind) {
        kind.withQueue { queue in
            let log = EventLog()
            do {
                let object = QueueLocalObject(queue: queue) {
                    log.append("generate on queue: \(queue.isCurrent())")
                    return QueueConfined { log.append("deinit on queue: \(queue.isCurrent())") }
                }
                object.with { $0.value = 5 }
                #expect(object.syncWith { $0.value } == 5)
            }
            queue.sync {}
            #expect(log.events == ["generate on queue: true", "deinit on queue: true"])
        }
    }

    @Test(arguments: QueueKind.allCases)
    func deliverOnHopsEveryEventInOrder(kind: QueueKind) {
        kind.withQueue { queue in
            let pipe = ValuePipe<Int>()
            let received = Shared<[Int]>([])
            let offQueue = Shared(0)
            let disposable = (pipe.signal() |> deliverOn(queue)).start(next: { value in
                if !queue.isCurrent() { offQueue.withLock { $0 += 1 } }
                received.withLock { $0.append(value) }
            })
            for value in 0..<500 { pipe.putNext(value) }
            queue.sync {}
            disposable.dispose()
            #expect(received.withLock { $0 } == Array(0..<500))
            #expect(offQueue.withLock { $0 } == 0)
        }
    }
}
