// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit

// W17 and W18: the cost of inspection (issue #28). The same SignalKit
// graph, built with named stages, measured with inspection on (the
// "SignalKit" column) and off (the "floor" column); the graph is rebuilt for
// each run, inside `SignalKitDebug.withInspection` for the first, so the two
// interleave in one process.
// * W17, per event: W2's chain with a named stage after each operator,
//   `source |> named |> map |> named |> filter |> named |> map |> named`:
//   on, every event is counted by four stages (two relaxed atomic adds and a
//   coarse clock read each) and the thread's current stage is swapped
//   around each delivery.
// * W18, per subscription: W1's cycle through one named stage: on, the
//   stage's counting subscription (an allocation, its counters, the
//   thread's current stage) and its disposal.
// With inspection off, a named stage is the input's own generator: the
// floor column is W2's and W1's SignalKit figure (compare in the same run).

@inline(never)
func runW17(_ peer: Peer, _ events: Int) -> RunResult {
    let box = Box()
    let build = {
        let source = Signal<Int, NoError> { subscriber in
            for value in 0..<events { subscriber.putNext(value) }
            subscriber.putCompletion()
            return EmptyDisposable
        }
        return source |> named("w17.source") |> map { $0 &* 2 } |> named("w17.doubled") |> filter { $0 % 4 == 0 }
            |> named("w17.kept") |> map { $0 &+ 1 } |> named("w17.result")
    }
    let chain: Signal<Int, NoError>
    switch peer {
    case .signalkit: chain = SignalKitDebug.withInspection(build)
    case .floor: chain = build()
    default: preconditionFailure("W17 compares inspection on (SignalKit) with inspection off (floor)")
    }
    let nanoseconds = timed(operations: events) {
        let handle = chain.start(next: { box.v &+= $0 })
        handle.dispose()
    }
    return RunResult(nanosecondsPerOp: nanoseconds, checksumMatches: box.v == expectedW2(events))
}

@inline(never)
func runW18(_ peer: Peer, _ cycles: Int) -> RunResult {
    let box = Box()
    let sink: @Sendable (Int) -> Void = { box.v &+= $0 }
    let value = Box()
    let build = {
        Signal<Int, NoError> { subscriber in
            subscriber.putNext(value.v)
            subscriber.putCompletion()
            return EmptyDisposable
        } |> named("w18.stage")
    }
    let signal: Signal<Int, NoError>
    switch peer {
    case .signalkit: signal = SignalKitDebug.withInspection(build)
    case .floor: signal = build()
    default: preconditionFailure("W18 compares inspection on (SignalKit) with inspection off (floor)")
    }
    let nanoseconds = timed(operations: cycles) {
        for i in 0..<cycles {
            value.v = i
            let handle = signal.start(next: sink)
            handle.dispose()
        }
    }
    return RunResult(nanosecondsPerOp: nanoseconds, checksumMatches: box.v == cycles &* (cycles - 1) / 2)
}
