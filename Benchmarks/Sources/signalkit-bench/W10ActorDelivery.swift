// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Dispatch
import Glibc
import SignalKit
import Synchronization

// W10 actor delivery: this thread sends `values` integers back to back; an
// actor receives each one in code isolated to it and adds it to its total.
// ns per value = (the actor has received the last value − first send) / values.
// * SignalKit: `ValuePipe` → `start(isolation: actor, next:)`;
// * AsyncStream: `continuation.yield` → `for await` in a method of the actor
//   (unbounded buffering, as SignalKit's delivery queue).

/// The receiving actor.
actor Tally {
    private var total = 0
    private var received = 0
    private var expected = 0
    private var handle: (any Disposable)?
    private let done = Synchronization.Atomic<Bool>(false)

    /// Whether `expected` values have arrived (read by the sending thread).
    nonisolated var isDone: Bool { done.load(ordering: .acquiring) }

    func reset(expecting count: Int) {
        total = 0
        received = 0
        expected = count
        done.store(false, ordering: .relaxed)
    }

    private func add(_ value: Int) {
        total &+= value
        received += 1
        if received == expected { done.store(true, ordering: .releasing) }
    }

    func attach(_ signal: Signal<Int, NoError>) {
        handle = signal.start(isolation: self, next: { value in self.add(value) })
    }

    func detach() {
        handle?.dispose()
        handle = nil
    }

    func consume(_ stream: AsyncStream<Int>) async {
        for await value in stream { add(value) }
    }

    func result() -> (total: Int, received: Int) { (total, received) }
}

/// Runs `body` in a task and waits for it on this (non-pool) thread.
func blockingAwait<R: Sendable>(_ body: @escaping @Sendable () async -> R) -> R {
    let result = Mutex<R?>(nil)
    let semaphore = DispatchSemaphore(value: 0)
    Task {
        let value = await body()
        result.withLock { $0 = value }
        semaphore.signal()
    }
    semaphore.wait()
    return result.withLock { $0! }
}

@inline(never)
func runW10(_ peer: Peer, _ values: Int) -> RunResult {
    let tally = Tally()
    blockingAwait { await tally.reset(expecting: values) }
    let nanoseconds: Double
    switch peer {
    case .signalkit:
        let pipe = ValuePipe<Int>()
        blockingAwait { await tally.attach(pipe.signal()) }
        nanoseconds = timed(operations: values) {
            for i in 0..<values { pipe.putNext(i) }
            while !tally.isDone { sched_yield() }
        }
        blockingAwait { await tally.detach() }
    case .asyncStream:
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self, bufferingPolicy: .unbounded)
        let consumer = Task { await tally.consume(stream) }
        nanoseconds = timed(operations: values) {
            for i in 0..<values { continuation.yield(i) }
            while !tally.isDone { sched_yield() }
        }
        continuation.finish()
        blockingAwait { await consumer.value }
    case .opencombine, .floor, .spscRing:
        preconditionFailure("W10 compares SignalKit with AsyncStream only")
    }
    let (total, received) = blockingAwait { await tally.result() }
    let expected = values &* (values - 1) / 2
    return RunResult(nanosecondsPerOp: nanoseconds, checksumMatches: total == expected && received == values)
}
