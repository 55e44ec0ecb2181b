// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import AsyncAlgorithms
import SignalKit
import Synchronization

// W5 combineLatest: two hot subjects combined; the sink sums a &+ b.
// Timed: `sends` sends alternating A (even i) / B (odd i). OpenCombine
// 0.14.0 has no combineLatest: n/a.
// * AsyncStream peer: two unbounded `AsyncStream`s combined by
//   swift-async-algorithms' `combineLatest`, iterated with `for await` in a
//   task. Two streams lose the order of sends across them (combineLatest
//   pulls each from its own child task, so a2 may be combined before b1), and
//   the checksum depends on that order; to keep the workload's semantics
//   (every send is combined with the other side's latest value, in send
//   order, before the next send), this thread waits, spinning on an atomic
//   counter, until the consumer has received the pair of each send. So each
//   send is a round trip through the task boundary: a latency, not a
//   throughput. Extra (`runW5AsyncFreeRunning`): the same pipeline with the
//   sends back to back (no wait), timed until the consumer has drained it.
//   Both make at most `w5AsyncSends` sends (each costs microseconds; the
//   unit is per send, so the size does not change it).

@inline(never)
func runW5(_ peer: Peer, _ sends: Int) -> RunResult {
    let box = Box()
    let nanoseconds: Double
    switch peer {
    case .signalkit:
        let a = ValuePipe<Int>()
        let b = ValuePipe<Int>()
        let handle = combineLatest(a.signal(), b.signal()).start(next: { box.v &+= $0.0 &+ $0.1 })
        nanoseconds = timed(operations: sends) {
            for i in 0..<sends {
                if i & 1 == 0 { a.putNext(i) } else { b.putNext(i) }
            }
        }
        handle.dispose()
    case .opencombine:
        return RunResult(nanosecondsPerOp: .nan, checksumMatches: true)
    case .asyncStream:
        let (a, aContinuation) = AsyncStream.makeStream(of: Int.self, bufferingPolicy: .unbounded)
        let (b, bContinuation) = AsyncStream.makeStream(of: Int.self, bufferingPolicy: .unbounded)
        let sends = min(sends, w5AsyncSends)
        let received = DeliveryCounter()
        let consumer = Task {
            for await (x, y) in combineLatest(a, b) {
                box.v &+= x &+ y
                received.increment()
            }
        }
        nanoseconds = timed(operations: sends) {
            for i in 0..<sends {
                if i & 1 == 0 { aContinuation.yield(i) } else { bContinuation.yield(i) }
                // Send i (i ≥ 1) is the i-th pair; send 0 makes none.
                received.wait(until: i)
            }
        }
        aContinuation.finish()
        bContinuation.finish()
        blockingAwait { await consumer.value }
        return RunResult(nanosecondsPerOp: nanoseconds, checksumMatches: box.v == expectedW5(sends))
    case .spscRing:
        preconditionFailure("W5 has no SPSC ring peer")
    case .floor:
        let combiner = FloorCombiner(sink: opaqueSink(box))
        nanoseconds = timed(operations: sends) {
            for i in 0..<sends {
                if i & 1 == 0 { combiner.putA(i) } else { combiner.putB(i) }
            }
        }
    }
    return RunResult(nanosecondsPerOp: nanoseconds, checksumMatches: box.v == expectedW5(sends))
}

/// The floor: last values plus has-flags, calling the sink.
final class FloorCombiner {
    var a = 0
    var b = 0
    var hasA = false
    var hasB = false
    let sink: (Int) -> Void

    init(sink: @escaping (Int) -> Void) { self.sink = sink }

    @inline(never) func putA(_ value: Int) {
        a = value
        hasA = true
        if hasB { sink(a &+ b) }
    }

    @inline(never) func putB(_ value: Int) {
        b = value
        hasB = true
        if hasA { sink(a &+ b) }
    }
}

/// Sends 0, 1, 2, ...: the first emission is at i = 1 (0 + 1), then every
/// send emits i + (i - 1).
func expectedW5(_ sends: Int) -> Int {
    var sum = 0
    for i in 1..<max(sends, 1) { sum &+= i &+ (i - 1) }
    return sum
}

/// The AsyncStream peer's W5 size cap (W6's full size).
let w5AsyncSends = 100_000

/// W5 extra: the AsyncStream peer with the sends back to back. Timed from the
/// first send to the consumer task's completion (the streams are finished
/// after the last send). The sum of pairs depends on how the two child tasks
/// race (and a value sent before the other side has one replaces the
/// previous, making no pair), so the check is weaker: the last pair is
/// (last A, last B) and there are between 1 and `sends − 1` pairs.
@inline(never)
func runW5AsyncFreeRunning(_ sends: Int) -> RunResult {
    let sends = min(sends, w5AsyncSends)
    let (a, aContinuation) = AsyncStream.makeStream(of: Int.self, bufferingPolicy: .unbounded)
    let (b, bContinuation) = AsyncStream.makeStream(of: Int.self, bufferingPolicy: .unbounded)
    let consumer = Task {
        var pairs = 0
        var last = -1
        for await (x, y) in combineLatest(a, b) {
            pairs += 1
            last = x &+ y
        }
        return (pairs: pairs, last: last)
    }
    var outcome = (pairs: 0, last: -1)
    let nanoseconds = timed(operations: sends) {
        for i in 0..<sends {
            if i & 1 == 0 { aContinuation.yield(i) } else { bContinuation.yield(i) }
        }
        aContinuation.finish()
        bContinuation.finish()
        outcome = blockingAwait { await consumer.value }
    }
    let ok = sends >= 2 && outcome.last == (sends - 1) &+ (sends - 2) && (1...(sends - 1)).contains(outcome.pairs)
    return RunResult(nanosecondsPerOp: nanoseconds, checksumMatches: ok)
}
