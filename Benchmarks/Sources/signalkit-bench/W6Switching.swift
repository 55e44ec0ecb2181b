// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import AsyncAlgorithms
import OpenCombine
import SignalKit
import Synchronization

// W6 switch-latest: a hot subject mapped to a fresh cold one-value inner
// signal (the W1 signal) per outer value, switching to the latest.
// Timed: `sends` outer sends. ns per outer value.
// * AsyncStream peer: the outer values come through an unbounded
//   `AsyncStream` iterated by a task; for each one it cancels the previous
//   child task and starts a new one that iterates the cold one-value inner
//   `CollectionOfOne(value).async` (whose `next()` returns nil once its task
//   is cancelled) into the sink. SignalKit's inner completes inside the send,
//   so no inner is ever cut off and the checksum is the sum of all outer
//   values; an async inner runs later, on the pool, and the next outer value
//   may cancel it first. To keep the semantics (and the checksum) this
//   thread waits, spinning on an atomic counter, until each inner has
//   delivered before the next send: each outer value is a round trip through
//   two task boundaries. Extra (`runW6AsyncFreeRunning`): sends back to back;
//   inners get cancelled, so only the last value is certain to arrive.
// swift-async-algorithms 1.1.4 (the version resolved here) also has a public
// `flatMapLatest` (marked `AsyncAlgorithms 1.3`). Measured in the same
// lockstep it crashed a full run (a precondition in its state machine,
// FlatMapLatestStateMachine.next(for:): "Buffer should be empty if
// suspending") and once hung after its outer stream finished, so it is not
// measured; the cancelled child task needs no library.

@inline(never)
func runW6(_ peer: Peer, _ sends: Int) -> RunResult {
    let box = Box()
    let nanoseconds: Double
    switch peer {
    case .signalkit:
        let pipe = ValuePipe<Int>()
        let handle =
            (pipe.signal()
            |> mapToSignal { value in
                Signal<Int, NoError> { subscriber in
                    subscriber.putNext(value)
                    subscriber.putCompletion()
                    return EmptyDisposable
                }
            }).start(next: { box.v &+= $0 })
        nanoseconds = timed(operations: sends) {
            for i in 0..<sends { pipe.putNext(i) }
        }
        handle.dispose()
    case .opencombine:
        let subject = PassthroughSubject<Int, Never>()
        let cancellable = subject.map { Just($0) }.switchToLatest().sink(receiveValue: { box.v &+= $0 })
        nanoseconds = timed(operations: sends) {
            for i in 0..<sends { subject.send(i) }
        }
        cancellable.cancel()
    case .asyncStream:
        let (outer, continuation) = AsyncStream.makeStream(of: Int.self, bufferingPolicy: .unbounded)
        let delivered = DeliveryCounter()
        let consumer = Task {
            var current: Task<Void, Never>?
            for await value in outer {
                current?.cancel()
                current = Task {
                    for await inner in CollectionOfOne(value).async {
                        box.v &+= inner
                        delivered.increment()
                    }
                }
            }
            await current?.value
        }
        nanoseconds = timed(operations: sends) {
            for i in 0..<sends {
                continuation.yield(i)
                delivered.wait(until: i + 1)
            }
        }
        continuation.finish()
        blockingAwait { await consumer.value }
    case .spscRing:
        preconditionFailure("W6 has no SPSC ring peer")
    case .floor:
        let sink: @Sendable (Int) -> Void = { box.v &+= $0 }
        nanoseconds = timed(operations: sends) {
            for i in 0..<sends { callOnce({ sink in sink(i) }, sink) }
        }
    }
    return RunResult(nanosecondsPerOp: nanoseconds, checksumMatches: box.v == sends &* (sends - 1) / 2)
}

/// W6 extra: the AsyncStream peer with the outer sends back to back. Timed
/// from the first send to the consumer task's completion (which awaits the
/// last inner). Cancelled inners deliver nothing (or, when cancelled after
/// their check, their value), so the check is: the last value arrived, and
/// the sum is at most the sum of all values.
@inline(never)
func runW6AsyncFreeRunning(_ sends: Int) -> RunResult {
    let (outer, continuation) = AsyncStream.makeStream(of: Int.self, bufferingPolicy: .unbounded)
    let sink = W6FreeRunningSink()
    let consumer = Task {
        var current: Task<Void, Never>?
        for await value in outer {
            current?.cancel()
            current = Task {
                for await inner in CollectionOfOne(value).async {
                    sink.state.withLock {
                        $0.sum &+= inner; $0.last = max($0.last, inner)
                    }
                }
            }
        }
        await current?.value
    }
    let nanoseconds = timed(operations: sends) {
        for i in 0..<sends { continuation.yield(i) }
        continuation.finish()
        blockingAwait { await consumer.value }
    }
    let (sum, last) = sink.state.withLock { ($0.sum, $0.last) }
    let ok = last == sends - 1 && sum <= sends &* (sends - 1) / 2
    return RunResult(nanosecondsPerOp: nanoseconds, checksumMatches: ok)
}

/// Inners of the free-running W6 extra may run in parallel (a cancelled one
/// can still be delivering): they add under a lock.
final class W6FreeRunningSink: Sendable {
    let state = Mutex((sum: 0, last: -1))
}
