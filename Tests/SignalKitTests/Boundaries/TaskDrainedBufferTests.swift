// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Synchronization
import Testing

// _TaskDrainedBuffer: the bounded boundary a task empties batch by batch
// (SignalKitGRPC's served streams use it; its end-to-end tests are in
// SignalKitGRPCTests). Each test names its buffer uniquely: statistics are a
// process-wide table keyed by name.

private func render<T>(_ event: _TaskDrainedEvent<T, String>) -> String {
    switch event {
    case .values(let values): "values \(values)"
    case .completed: "completed"
    case .failed(let error): "failed \(error)"
    case .cancelled: "cancelled"
    }
}

private func statistics(_ name: String) -> SignalBufferStatistics? {
    SignalKitDebug.bufferStatistics().first { $0.name == name }
}

/// Waits (asynchronously, bounded) until `condition` holds.
private func eventually(_ condition: () -> Bool) async {
    let deadline = ContinuousClock.now.advanced(by: .seconds(10))
    while !condition() && ContinuousClock.now < deadline { await Task.yield() }
}

@Suite struct TaskDrainedBufferTests {
    init() { _ = statisticsKeptForTheTestRun }

    @Test func everythingThatWaitsIsOneBatchThenTheEnd() async {
        let buffer = _TaskDrainedBuffer<Int, String>(policy: .droppingOldest(beyond: 8), name: "TaskDrained.batch")
        for value in 1...3 { buffer.send(value) }
        buffer.finish(nil)
        buffer.send(4)  // after the end: refused
        #expect(render(await buffer.next()) == "values [1, 2, 3]")
        #expect(render(await buffer.next()) == "completed")
    }

    @Test func anErrorComesAfterTheValuesSentBeforeIt() async {
        let buffer = _TaskDrainedBuffer<Int, String>(policy: .unbounded, name: "TaskDrained.error")
        buffer.send(1)
        buffer.finish("boom")
        buffer.finish(nil)  // a second end is ignored
        #expect(render(await buffer.next()) == "values [1]")
        #expect(render(await buffer.next()) == "failed boom")
    }

    @Test func aParkedTaskWakesForAValueSentFromAnotherThread() async {
        let buffer = _TaskDrainedBuffer<Int, String>(policy: .droppingOldest(beyond: 8), name: "TaskDrained.wake")
        let task = Task { render(await buffer.next()) }
        let producer = Queue(name: "TaskDrained.wake.producer")
        // Sent whether the task parked already or not: neither may lose it.
        producer.after(0.002) { buffer.send(7) }
        #expect(await task.value == "values [7]")
    }

    @Test func droppingOldestCountsTheDropsUnderTheName() async {
        let name = "TaskDrained.dropOldest"
        let buffer = _TaskDrainedBuffer<Int, String>(policy: .droppingOldest(beyond: 2), name: name)
        for value in 1...5 { buffer.send(value) }
        #expect(render(await buffer.next()) == "values [4, 5]")
        #expect(statistics(name)?.drops == 3)
        #expect(statistics(name)?.maximumDepth == 2)
        buffer.cancel()
        #expect(statistics(name)?.liveSubscriptions == 0)
    }

    @Test func aFailingOverflowEndsWithItsErrorAndDisposesTheSubscription() async {
        let name = "TaskDrained.fail"
        let log = EventLog()
        let buffer = _TaskDrainedBuffer<Int, String>(policy: .failing(beyond: 2, with: "full"), name: name)
        buffer.subscribe { ActionDisposable { log.append("upstream.dispose") } }
        for value in 1...3 { buffer.send(value) }
        #expect(log.events == ["upstream.dispose"])
        #expect(render(await buffer.next()) == "failed full")
        #expect(statistics(name)?.overflows == 1)
        #expect(statistics(name)?.drops == 3)
    }

    @Test func cancelEndsTheTaskReleasesABlockedProducerAndDisposes() async {
        let name = "TaskDrained.cancel"
        let log = EventLog()
        let buffer = _TaskDrainedBuffer<Int, String>(policy: .blocking(beyond: 1), name: name)
        buffer.subscribe { ActionDisposable { log.append("upstream.dispose") } }
        let done = Atomic<Bool>(false)
        Queue(name: "TaskDrained.cancel.producer").async {
            buffer.send(1)
            buffer.send(2)  // waits for room
            done.store(true, ordering: .releasing)
        }
        await eventually { statistics(name)?.blockedSends == 1 }
        let doneBeforeCancel = done.load(ordering: .acquiring)
        #expect(!doneBeforeCancel)
        buffer.cancel()
        await eventually { done.load(ordering: .acquiring) }
        let doneAfterCancel = done.load(ordering: .acquiring)
        #expect(doneAfterCancel)
        #expect(render(await buffer.next()) == "cancelled")
        #expect(log.events == ["upstream.dispose"])
        #expect(statistics(name)?.drops == 1)
    }

    @Test func blockingLosesNothingWhileTheTaskKeepsTaking() async {
        let buffer = _TaskDrainedBuffer<Int, String>(policy: .blocking(beyond: 3), name: "TaskDrained.blocking")
        Queue(name: "TaskDrained.blocking.producer").async {
            for value in 1...1_000 { buffer.send(value) }
            buffer.finish(nil)
        }
        var received: [Int] = []
        loop: while true {
            switch await buffer.next() {
            case .values(let values):
                #expect(values.count <= 3)
                received += values
            case .completed:
                break loop
            case let other:
                Issue.record("unexpected \(render(other))")
                break loop
            }
        }
        #expect(received == Array(1...1_000))
    }

    @Test func blockingWhileTheTaskSubscribesStopsWithAMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let buffer = _TaskDrainedBuffer<Int, String>(policy: .blocking(beyond: 1), name: "TaskDrained.deadlock")
            buffer.subscribe {
                buffer.send(1)
                buffer.send(2)  // its consumer is the task running this
                return EmptyDisposable
            }
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("from the task that awaits it (while that task subscribed the signal)"))
        #expect(message.contains("would deadlock"))
    }
}
