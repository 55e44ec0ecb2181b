// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import AsyncAlgorithms
import OpenCombine
import SignalKit

// W2 pipeline: the source synchronously emits 0..<events → map{$0 &* 2} →
// filter{$0 % 4 == 0} (keeps exactly half) → map{$0 &+ 1} → summing sink.
// Timed: subscribe, the full run and dispose; the chain is built
// beforehand. ns per source event.
// * AsyncStream peer: `(0..<events).async` (swift-async-algorithms' adapter
//   of a synchronous sequence: the cold synchronous source's equivalent, no
//   buffering) → `.map` → `.filter` → `.map`, iterated with `for await` in a
//   task; timed from the task's creation to its completion, awaited from this
//   thread (the task start and the wake-up are a few µs per run, spread over
//   the events). The chain is built beforehand, as for the other peers.
// * Extra (`runW2AsyncStreamSource`): the same chain over an `AsyncStream`
//   (unbounded buffer) that this thread fills from the range while a task
//   consumes it: the values cross a task boundary, one buffered value each.

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
        let chain = (0..<events).async.map { $0 &* 2 }.filter { $0 % 4 == 0 }.map { $0 &+ 1 }
        nanoseconds = timed(operations: events) {
            blockingAwait {
                for await value in chain { box.v &+= value }
            }
        }
    case .spscRing:
        preconditionFailure("W2 has no SPSC ring peer")
    case .floor:
        let sink = opaqueSink(box)
        nanoseconds = timed(operations: events) {
            for value in 0..<events {
                let doubled = value &* 2
                if doubled % 4 == 0 { sink(doubled &+ 1) }
            }
        }
    }
    return RunResult(nanosecondsPerOp: nanoseconds, checksumMatches: box.v == expectedW2(events))
}

/// Even values i contribute 2i + 1.
func expectedW2(_ events: Int) -> Int {
    let evens = (events + 1) / 2
    return 2 &* (2 &* (evens &* (evens - 1) / 2)) &+ evens
}

/// W2 extra: the chain over an unbounded `AsyncStream` that this thread fills
/// from the range while a task drains it. Timed from the stream's creation to
/// the consumer task's completion.
@inline(never)
func runW2AsyncStreamSource(_ events: Int) -> RunResult {
    let box = Box()
    let nanoseconds = timed(operations: events) {
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self, bufferingPolicy: .unbounded)
        let chain = stream.map { $0 &* 2 }.filter { $0 % 4 == 0 }.map { $0 &+ 1 }
        let consumer = Task {
            for await value in chain { box.v &+= value }
        }
        for value in 0..<events { continuation.yield(value) }
        continuation.finish()
        blockingAwait { await consumer.value }
    }
    return RunResult(nanosecondsPerOp: nanoseconds, checksumMatches: box.v == expectedW2(events))
}

/// An opaque sink closure: the floor cannot inline it away.
@inline(never)
func opaqueSink(_ box: Box) -> (Int) -> Void {
    { box.v &+= $0 }
}
