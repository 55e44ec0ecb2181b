// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit

// W5 combineLatest: two hot subjects combined; the sink sums a &+ b.
// Timed: `sends` sends alternating A (even i) / B (odd i). OpenCombine
// 0.14.0 has no combineLatest: n/a.

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
        preconditionFailure("W5 has no AsyncStream peer")
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
