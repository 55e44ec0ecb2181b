// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Dispatch
import Glibc
import SignalKit

// W13 hop latency on a dedicated thread: W9's measurement (latency paced at
// 2 µs, p50/p90/p99 from an HdrHistogram; throughput back to back), where
// SignalKit delivers on `Queue(dedicatedThread:waitStrategy:
// .spinThenPark(50 µs))` instead of a Dispatch queue:
// * SignalKit: `ValuePipe` |> `deliverOn(Queue(dedicatedThread:))`;
// * floor: W9's floor, one `DispatchQueue.async` per event on a fresh
//   serial queue (the Dispatch hop a dedicated thread must beat).
//
// W15 wait strategies: the same measurement once per strategy (park, spin
// then park, busy spin) beside SignalKit on a Dispatch queue (W9's
// pipeline), and the CPU the receiving side burns per second, idle and at
// 10,000 events per second, so that a user can pick a strategy.

/// W13's strategy: spin 50 µs after the last work, then park.
let w13Strategy = DedicatedThreadScheduler.WaitStrategy.spinThenPark(.microseconds(50))

/// W9's SignalKit pipeline on a dedicated-thread queue.
@inline(never)
func makeDedicatedHopPipeline(
    _ strategy: DedicatedThreadScheduler.WaitStrategy,
    recorder: HopRecorder,
    recordLatency: Bool
) -> HopPipeline {
    let pipe = ValuePipe<UInt64>()
    let queue = Queue(dedicatedThread: "w13.signalkit", waitStrategy: strategy)
    let handle = (pipe.signal() |> deliverOn(queue)).start(next: { recorder.receive($0, recordLatency: recordLatency) })
    return HopPipeline(
        send: { pipe.putNext($0) },
        drain: { queue.sync {} },
        teardown: {
            handle.dispose()
            (queue.scheduler as? DedicatedThreadScheduler)?.shutdown()
        }
    )
}

@inline(never)
func runW13(_ peer: Peer, _ events: Int) -> RunResult {
    switch peer {
    case .signalkit:
        return runHop(events: events) { recorder, recordLatency in
            makeDedicatedHopPipeline(w13Strategy, recorder: recorder, recordLatency: recordLatency)
        }
    case .floor:
        return runW9(.floor, events)
    default:
        preconditionFailure("W13 compares SignalKit on a dedicated thread with the Dispatch floor only")
    }
}

// MARK: W15

/// CPU seconds of the whole process and of the calling thread.
private func cpuSeconds() -> (process: Double, thread: Double) {
    func read(_ clock: clockid_t) -> Double {
        var now = timespec()
        clock_gettime(clock, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
    return (read(CLOCK_PROCESS_CPUTIME_ID), read(CLOCK_THREAD_CPUTIME_ID))
}

/// The CPU milliseconds per second that everything but this thread burns
/// while this thread sends `rate` events per second (0: none) for
/// `milliseconds` into `send`, sleeping between sends.
private func receiverCPU(milliseconds: Int, rate: Int, send: (UInt64) -> Void) -> Double {
    let start = cpuSeconds()
    let began = monotonicNanoseconds()
    let end = began + UInt64(milliseconds) * 1_000_000
    if rate == 0 {
        var pause = timespec(tv_sec: milliseconds / 1_000, tv_nsec: (milliseconds % 1_000) * 1_000_000)
        nanosleep(&pause, nil)
    } else {
        let interval = UInt64(1_000_000_000 / rate)
        var next = began
        while next < end {
            send(next)
            next += interval
            let now = monotonicNanoseconds()
            if next > now {
                var pause = timespec(tv_sec: 0, tv_nsec: Int(next - now))
                nanosleep(&pause, nil)
            }
        }
    }
    let elapsed = Double(monotonicNanoseconds() - began) / 1e9
    let stop = cpuSeconds()
    let others = (stop.process - start.process) - (stop.thread - start.thread)
    return others / elapsed * 1_000
}

@inline(never)
func runW15(_ peer: Peer, _ events: Int) -> RunResult {
    precondition(peer == .signalkit, "W15 measures SignalKit's wait strategies only")
    let kinds: [(name: String, strategy: DedicatedThreadScheduler.WaitStrategy?)] = [
        ("Dispatch queue (W9)", nil),
        ("park", .park),
        ("spinThenPark(50 µs)", w13Strategy),
        ("busySpin", .busySpin),
    ]
    var table: [[String]] = [
        [
            "queue", "ns/event", "p50 (µs)", "p90 (µs)", "p99 (µs)", "CPU idle (ms/s)", "CPU at 10k events/s (ms/s)",
        ]
    ]
    var details: [(label: String, value: Double)] = []
    var ok = true
    var spinThenPark = Double.nan
    for kind in kinds {
        progress("W15: \(kind.name)")
        let make: (HopRecorder, Bool) -> HopPipeline = { recorder, recordLatency in
            if let strategy = kind.strategy {
                return makeDedicatedHopPipeline(strategy, recorder: recorder, recordLatency: recordLatency)
            }
            return makeHopPipeline(.signalkit, recorder: recorder, recordLatency: recordLatency)
        }
        // An untimed warm-up, then the measurement.
        _ = runHop(events: events / 10, makePipeline: make)
        let hop = runHop(events: events, makePipeline: make)
        ok = ok && hop.checksumMatches
        // CPU: a pipeline that only counts, idle for 500 ms, then at 10,000
        // events per second for 500 ms.
        let recorder = HopRecorder(expected: Int.max)
        let pipeline = make(recorder, false)
        pipeline.send(monotonicNanoseconds())
        pipeline.drain()
        let idle = receiverCPU(milliseconds: 500, rate: 0, send: pipeline.send)
        let busy = receiverCPU(milliseconds: 500, rate: 10_000, send: pipeline.send)
        pipeline.drain()
        pipeline.teardown()
        let latency = hop.latency!
        table.append([
            kind.name, format(hop.nanosecondsPerOp), format(latency.p50), format(latency.p90), format(latency.p99),
            format(idle), format(busy),
        ])
        details += [
            ("\(kind.name): ns/event", hop.nanosecondsPerOp),
            ("\(kind.name): p50 (µs)", latency.p50),
            ("\(kind.name): p99 (µs)", latency.p99),
            ("\(kind.name): CPU idle (ms/s)", idle),
            ("\(kind.name): CPU at 10k events/s (ms/s)", busy),
        ]
        if kind.strategy == w13Strategy { spinThenPark = hop.nanosecondsPerOp }
    }
    var result = RunResult(nanosecondsPerOp: spinThenPark, checksumMatches: ok)
    result.details = details
    result.detailTable = table
    return result
}
