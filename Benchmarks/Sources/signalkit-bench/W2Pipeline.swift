// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import OpenCombine
import SignalKit

// W2 pipeline: the source synchronously emits 0..<events → map{$0 &* 2} →
// filter{$0 % 4 == 0} (keeps exactly half) → map{$0 &+ 1} → summing sink.
// Timed: subscribe, the full run and dispose; the chain is built
// beforehand. ns per source event.

@inline(never)
func runW2(_ peer: Peer, _ events: Int) -> RunResult {
    let box = Box()
    let nanoseconds: Double
    switch peer {
    case .signalkit:
        let source = Signal<Int, NoError> { subscriber in
            for value in 0..<events { subscriber.putNext(value) }
            subscriber.putCompletion()
            return EmptyDisposable
        }
        let chain = source |> map { $0 &* 2 } |> filter { $0 % 4 == 0 } |> map { $0 &+ 1 }
        nanoseconds = timed(operations: events) {
            let handle = chain.start(next: { box.v &+= $0 })
            handle.dispose()
        }
    case .opencombine:
        // Erased so that OpenCombine cannot fuse map/filter into the sequence.
        let chain = (0..<events).publisher.eraseToAnyPublisher()
            .map { $0 &* 2 }.filter { $0 % 4 == 0 }.map { $0 &+ 1 }
        nanoseconds = timed(operations: events) {
            let cancellable = chain.sink(receiveValue: { box.v &+= $0 })
            cancellable.cancel()
        }
    case .asyncStream:
        preconditionFailure("W2 has no AsyncStream peer")
    case .floor:
        let sink = opaqueSink(box)
        nanoseconds = timed(operations: events) {
            for value in 0..<events {
                let doubled = value &* 2
                if doubled % 4 == 0 { sink(doubled &+ 1) }
            }
        }
    }
    // Even values i contribute 2i + 1.
    let evens = (events + 1) / 2
    let expected = 2 &* (2 &* (evens &* (evens - 1) / 2)) &+ evens
    return RunResult(nanosecondsPerOp: nanoseconds, checksumMatches: box.v == expected)
}

/// An opaque sink closure: the floor cannot inline it away.
@inline(never)
func opaqueSink(_ box: Box) -> (Int) -> Void {
    { box.v &+= $0 }
}
