// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Dispatch
import Glibc
import Histogram
import OpenCombine
import OpenCombineDispatch
import SignalKit
import Synchronization

// W9 queue hop: the source is this thread; the payload is the send
// timestamp; the pipeline delivers on a fresh serial queue, where the
// receiver records now − payload.
// * latency: `events` sends, each followed by a busy-wait until 2 µs have
//   passed since its timestamp; p50/p90/p99 from an HdrHistogram (3
//   significant digits);
// * throughput: `2 × events` sends back to back; ns per event =
//   (last receipt − first send) / count; and the producer's share, (last
//   send − first send) / count.
// * AsyncStream peer: `continuation.yield(timestamp)` into an unbounded
//   `AsyncStream` on this thread; a task (on the cooperative pool, not a
//   dispatch queue) iterates it with `for await` and records. Teardown
//   finishes the stream and awaits the task.

/// What the receiver side records.
final class HopRecorder: @unchecked Sendable {
    // `@unchecked Sendable`: written only on the receiving queue (or task),
    // read after a `sync` on it (or after the task's completion).
    var histogram = Histogram<UInt64>(highestTrackableValue: 60_000_000_000, numberOfSignificantValueDigits: .three)
    var received = 0
    var lastReceipt: UInt64 = 0
    let expected: Int
    let done = Synchronization.Atomic<Bool>(false)

    init(expected: Int) { self.expected = expected }

    @inline(__always)
    func receive(_ timestamp: UInt64, recordLatency: Bool) {
        let now = monotonicNanoseconds()
        if recordLatency { _ = histogram.record(now &- timestamp) }
        received += 1
        lastReceipt = now
        if received == expected { done.store(true, ordering: .releasing) }
    }
}

/// One peer's pipeline: a send function, a drain (waits until the
/// receiving side has finished what it was given: a `sync` on the receiving
/// queue; nothing for the AsyncStream peer) and a teardown.
struct HopPipeline {
    let send: (UInt64) -> Void
    var drain: () -> Void = {}
    let teardown: () -> Void
}

@inline(never)
func makeHopPipeline(_ peer: Peer, recorder: HopRecorder, recordLatency: Bool) -> HopPipeline {
    switch peer {
    case .signalkit:
        let pipe = ValuePipe<UInt64>()
        let queue = Queue(name: "w9.signalkit")
        let handle = (pipe.signal() |> deliverOn(queue)).start(next: { recorder.receive($0, recordLatency: recordLatency) })
        return HopPipeline(send: { pipe.putNext($0) }, drain: { queue.sync {} }, teardown: { handle.dispose() })
    case .opencombine:
        let subject = PassthroughSubject<UInt64, Never>()
        let queue = DispatchQueue(label: "w9.opencombine")
        let cancellable = subject.receive(on: queue.ocombine).sink { recorder.receive($0, recordLatency: recordLatency) }
        return HopPipeline(send: { subject.send($0) }, drain: { queue.sync {} }, teardown: { cancellable.cancel() })
    case .asyncStream:
        let (stream, continuation) = AsyncStream.makeStream(of: UInt64.self, bufferingPolicy: .unbounded)
        let consumer = Task {
            for await timestamp in stream { recorder.receive(timestamp, recordLatency: recordLatency) }
        }
        return HopPipeline(
            send: { continuation.yield($0) },
            teardown: {
                continuation.finish()
                blockingAwait { await consumer.value }
            }
        )
    case .spscRing:
        preconditionFailure("W9 has no SPSC ring peer")
    case .floor:
        let queue = DispatchQueue(label: "w9.floor")
        return HopPipeline(
            send: { timestamp in queue.async { recorder.receive(timestamp, recordLatency: recordLatency) } },
            drain: { queue.sync {} },
            teardown: {}
        )
    }
}

@inline(never)
func runW9(_ peer: Peer, _ events: Int) -> RunResult {
    runHop(events: events) { recorder, recordLatency in
        makeHopPipeline(peer, recorder: recorder, recordLatency: recordLatency)
    }
}

/// W9's measurement, on pipelines `makePipeline` builds (W13 and W15 run it
/// on dedicated-thread queues): latency paced at 2 µs, then throughput back
/// to back.
@inline(never)
func runHop(events: Int, makePipeline: (HopRecorder, Bool) -> HopPipeline) -> RunResult {
    // Latency, paced at 2 µs.
    let latencyRecorder = HopRecorder(expected: events)
    let latencyPipeline = makePipeline(latencyRecorder, true)
    for _ in 0..<events {
        let timestamp = monotonicNanoseconds()
        latencyPipeline.send(timestamp)
        while monotonicNanoseconds() &- timestamp < 2_000 {}
    }
    while !latencyRecorder.done.load(ordering: .acquiring) { sched_yield() }
    latencyPipeline.drain()
    latencyPipeline.teardown()
    let latency = Latency(
        p50: Double(latencyRecorder.histogram.valueAtPercentile(50)) / 1000,
        p90: Double(latencyRecorder.histogram.valueAtPercentile(90)) / 1000,
        p99: Double(latencyRecorder.histogram.valueAtPercentile(99)) / 1000
    )

    // Throughput, back to back.
    let count = 2 * events
    let throughputRecorder = HopRecorder(expected: count)
    let pipeline = makePipeline(throughputRecorder, false)
    var firstSend: UInt64 = 0
    var lastSend: UInt64 = 0
    _ = timed(operations: count) {
        firstSend = monotonicNanoseconds()
        for _ in 0..<count { pipeline.send(firstSend) }
        lastSend = monotonicNanoseconds()
        while !throughputRecorder.done.load(ordering: .acquiring) { sched_yield() }
    }
    pipeline.drain()
    pipeline.teardown()
    let nanosecondsPerEvent = Double(throughputRecorder.lastReceipt &- firstSend) / Double(count)
    let ok = latencyRecorder.received == events && throughputRecorder.received == count
    var result = RunResult(nanosecondsPerOp: nanosecondsPerEvent, checksumMatches: ok, latency: latency)
    // The breakdown: what the sending thread spends per event (its loop of
    // sends), the rest is the receiving side's and the wake-ups'.
    result.details = [("producer's send loop (ns/event)", Double(lastSend &- firstSend) / Double(count))]
    return result
}
