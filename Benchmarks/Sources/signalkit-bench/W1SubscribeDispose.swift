// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import OpenCombine
import SignalKit

// W1 subscribe-dispose: create a cold signal that emits i and completes,
// subscribe with a next handler, dispose the handle. ns per cycle.

@inline(never)
func runW1(_ peer: Peer, _ cycles: Int) -> RunResult {
    let box = Box()
    let sink: @Sendable (Int) -> Void = { box.v &+= $0 }
    let nanoseconds: Double
    switch peer {
    case .signalkit:
        nanoseconds = timed(operations: cycles) {
            for i in 0..<cycles {
                let handle = Signal<Int, NoError> { subscriber in
                    subscriber.putNext(i)
                    subscriber.putCompletion()
                    return EmptyDisposable
                }.start(next: sink)
                handle.dispose()
            }
        }
    case .opencombine:
        nanoseconds = timed(operations: cycles) {
            for i in 0..<cycles {
                let cancellable = Just(i).sink(receiveValue: sink)
                cancellable.cancel()
            }
        }
    case .asyncStream:
        preconditionFailure("W1 has no AsyncStream peer")
    case .spscRing:
        preconditionFailure("W1 has no SPSC ring peer")
    case .floor:
        nanoseconds = timed(operations: cycles) {
            for i in 0..<cycles {
                callOnce({ sink in sink(i) }, sink)
            }
        }
    }
    return RunResult(nanosecondsPerOp: nanoseconds, checksumMatches: box.v == cycles &* (cycles - 1) / 2)
}

/// The floor's "signal": a fresh escaping closure (one heap context)
/// called once with the sink.
@inline(never)
func callOnce(_ signal: @escaping ((Int) -> Void) -> Void, _ sink: (Int) -> Void) {
    signal(sink)
}
