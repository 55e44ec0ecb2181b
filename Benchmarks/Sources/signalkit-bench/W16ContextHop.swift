// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit

// W16 the queue hop with a context propagation installed: W9's measurement
// (latency paced at 2 µs; throughput back to back) of W9's SignalKit
// pipeline, `ValuePipe |> deliverOn(Queue(name:))`, where every value is
// sent inside a task-local's `withValue` (the way a traced request's code
// runs under `ServiceContext.current`):
// * SignalKit: a `SignalContextPropagation` of that task-local installed,
//   so the hop captures the sender's context per value and delivers it
//   inside `withValue` on the queue;
// * floor: the same pipeline and the same sends with nothing installed
//   (the hop then pays one load and a branch).
// The propagation is installed and removed around each SignalKit run, so the
// two peers interleave in one process.

/// The context W16 propagates (a request id, as a trace's would be).
enum W16Trace {
    @TaskLocal static var current: UInt64?
}

/// Propagates `W16Trace.current`.
struct W16TracePropagation: SignalContextPropagation {
    func currentContext() -> UInt64? { W16Trace.current }

    func withContext(_ context: UInt64?, _ body: () -> Void) {
        W16Trace.$current.withValue(context, operation: body)
    }
}

@inline(never)
func runW16(_ peer: Peer, _ events: Int) -> RunResult {
    switch peer {
    case .signalkit:
        SignalContext.install(W16TracePropagation())
        defer { SignalContext.uninstall() }
        return runContextHop(events: events)
    case .floor:
        precondition(!SignalContext.isInstalled, "W16's floor runs with no propagation installed")
        return runContextHop(events: events)
    default:
        preconditionFailure("W16 compares SignalKit's hop with and without a context propagation installed")
    }
}

/// W9's SignalKit pipeline, each value sent under a trace of its own.
@inline(never)
private func runContextHop(events: Int) -> RunResult {
    runHop(events: events) { recorder, recordLatency in
        let pipe = ValuePipe<UInt64>()
        let queue = Queue(name: "w16.signalkit")
        let handle = (pipe.signal() |> deliverOn(queue)).start(next: { recorder.receive($0, recordLatency: recordLatency) })
        return HopPipeline(
            send: { timestamp in W16Trace.$current.withValue(timestamp) { pipe.putNext(timestamp) } },
            drain: { queue.sync {} },
            teardown: { handle.dispose() }
        )
    }
}
