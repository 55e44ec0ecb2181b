// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

// Creating: Signal.sequence
// (Sources/SignalKit/Operators/Creating/Signal+Creating.swift).

@Suite struct RACCreationTests {
    @Test func aSequenceWithoutAQueueIsSentInsideStart() {
        let log = EventLog()
        _ = log.start(Signal<Int, NoError>.sequence(1...3))
        log.append("returned")
        #expect(log.events == ["next 1", "next 2", "next 3", "completed", "returned"])
    }

    @Test func aSequenceOnAQueueSendsOneElementPerBlock() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        _ = log.start(Signal<Int, NoError>.sequence([1, 2], queue: queue) |> map { "\($0) onQueue=\(queue.isCurrent())" })
        #expect(log.take() == [])
        #expect(scheduler.pendingCount == 1)
        scheduler.advance(by: 0)
        #expect(log.take() == ["next 1 onQueue=true", "next 2 onQueue=true", "completed"])
    }

    @Test func anInfiniteSequenceOnAQueueStopsWhenDisposed() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        _ = log.start(Signal<Int, NoError>.sequence(1..., queue: queue) |> take(3))
        scheduler.run()
        #expect(log.events == ["next 1", "next 2", "next 3", "completed"])
        #expect(scheduler.pendingCount == 0)
    }

    @Test func catchingSendsTheValueOrTheThrownError() {
        struct Failure: Error, Equatable { let code: Int }
        let log = EventLog()
        let calls = Shared(0)
        let attempt = Signal<Int, Failure>(catching: { () throws(Failure) -> Int in
            let call = calls.withLock {
                $0 += 1; return $0
            }
            if call == 2 { throw Failure(code: 7) }
            return call
        })
        _ = log.start(attempt)
        _ = log.start(attempt)
        #expect(log.events == ["next 1", "completed", "error Failure(code: 7)"])
    }
}
