// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import OpenCombine
import SignalKit
import Synchronization

// W3 hot fan-out: a subject with 100 subscribers, then `sends` sends.
// ns per delivery = wall / (100 × sends).
// * AsyncStream peer: the broadcast a Swift 6 server engineer writes (not
//   `AsyncChannel`, which hands each element to one consumer and suspends the
//   sender per element): a locked dictionary of `AsyncStream` continuations,
//   one unbounded stream per subscriber, each drained by its own task; a send
//   snapshots the dictionary under the lock and yields to each continuation
//   outside it. The values cross a task boundary: timed from the first send
//   to the completion of all 100 consumer tasks (the streams are finished
//   after the last send). Each consumer adds into a local sum (100 tasks run
//   in parallel on the pool, so they cannot share `box.v`); the sums are added
//   into `box.v` at the end.

let fanOutSubscribers = 100

@inline(never)
func runW3(_ peer: Peer, _ sends: Int) -> RunResult {
    let box = Box()
    let deliveries = fanOutSubscribers * sends
    let nanoseconds: Double
    switch peer {
    case .signalkit:
        let pipe = ValuePipe<Int>()
        let handles = (0..<fanOutSubscribers).map { _ in pipe.signal().start(next: { box.v &+= $0 }) }
        nanoseconds = timed(operations: deliveries) {
            for i in 0..<sends { pipe.putNext(i) }
        }
        handles.forEach { $0.dispose() }
    case .opencombine:
        let subject = PassthroughSubject<Int, Never>()
        let cancellables = (0..<fanOutSubscribers).map { _ in subject.sink(receiveValue: { box.v &+= $0 }) }
        nanoseconds = timed(operations: deliveries) {
            for i in 0..<sends { subject.send(i) }
        }
        cancellables.forEach { $0.cancel() }
    case .asyncStream:
        let broadcaster = AsyncBroadcaster<Int>()
        let consumers = (0..<fanOutSubscribers).map { _ in
            let stream = broadcaster.subscribe()
            return Task {
                var sum = 0
                for await value in stream { sum &+= value }
                return sum
            }
        }
        nanoseconds = timed(operations: deliveries) {
            for i in 0..<sends { broadcaster.send(i) }
            broadcaster.finish()
            box.v &+= blockingAwait {
                var total = 0
                for consumer in consumers { total &+= await consumer.value }
                return total
            }
        }
    case .spscRing:
        preconditionFailure("W3 has no SPSC ring peer")
    case .floor:
        let sinks: [(Int) -> Void] = (0..<fanOutSubscribers).map { _ in { box.v &+= $0 } }
        nanoseconds = timed(operations: deliveries) {
            for i in 0..<sends {
                for sink in sinks { sink(i) }
            }
        }
    }
    let expected = fanOutSubscribers &* (sends &* (sends - 1) / 2)
    return RunResult(nanosecondsPerOp: nanoseconds, checksumMatches: box.v == expected)
}

/// The usual AsyncStream broadcast: one unbounded stream per subscriber,
/// continuations in a locked dictionary (removed on termination), yields
/// outside the lock (a continuation's `onTermination` takes it).
final class AsyncBroadcaster<Element: Sendable>: Sendable {
    private struct State {
        var nextID = 0
        var continuations: [Int: AsyncStream<Element>.Continuation] = [:]
    }

    private let state = Mutex(State())

    func subscribe() -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self, bufferingPolicy: .unbounded)
        let id = state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            state.continuations[id] = continuation
            return id
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.continuations.removeValue(forKey: id) }
        }
        return stream
    }

    func send(_ value: Element) {
        let targets = state.withLock { $0.continuations }
        for continuation in targets.values { continuation.yield(value) }
    }

    func finish() {
        let targets = state.withLock { $0.continuations }
        for continuation in targets.values { continuation.finish() }
    }
}
