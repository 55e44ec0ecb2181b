// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Glibc
import OpenCombine
import SignalKit
import Synchronization

// W8 contended: one subscriber whose sink is a relaxed atomic add; two
// threads spin on a start flag, then each sends 0..<perThread into the same
// subject. Timed from the flag's release to both threads finishing.
// ns per value = wall / (2 × perThread). Report only: the figure is
// unstable on 2-core machines.

@inline(never)
func runW8(_ peer: Peer, _ perThread: Int) -> RunResult {
    let sum = Synchronization.Atomic<Int>(0)
    let send: @Sendable (Int) -> Void
    var cleanup: () -> Void = {}
    switch peer {
    case .signalkit:
        let pipe = ValuePipe<Int>()
        let handle = pipe.signal().start(next: { sum.add($0, ordering: .relaxed) })
        send = { pipe.putNext($0) }
        cleanup = { handle.dispose() }
    case .opencombine:
        let subject = PassthroughSubject<Int, Never>()
        let cancellable = subject.sink(receiveValue: { sum.add($0, ordering: .relaxed) })
        let box = UncheckedBox(subject)
        send = { box.value.send($0) }
        cleanup = { cancellable.cancel() }
    case .asyncStream:
        preconditionFailure("W8 has no AsyncStream peer")
    case .spscRing:
        preconditionFailure("W8 has no SPSC ring peer")
    case .floor:
        // A pthread mutex around the sink call: the serialised floor.
        let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        let pointer = UncheckedBox(mutex)
        send = { value in
            pthread_mutex_lock(pointer.value)
            sum.add(value, ordering: .relaxed)
            pthread_mutex_unlock(pointer.value)
        }
        cleanup = {
            pthread_mutex_destroy(mutex)
            mutex.deallocate()
        }
    }
    let nanoseconds = timed(operations: 2 * perThread) {
        runTwoSenders(perThread: perThread, send: send)
    }
    cleanup()
    let expected = 2 &* (perThread &* (perThread - 1) / 2)
    return RunResult(nanosecondsPerOp: nanoseconds, checksumMatches: sum.load(ordering: .relaxed) == expected)
}

/// The unserialised floor: both threads call the atomic sink directly.
@inline(never)
func runW8NoLockFloor(_ perThread: Int) -> Double {
    let sum = Synchronization.Atomic<Int>(0)
    return timed(operations: 2 * perThread) {
        runTwoSenders(perThread: perThread) { sum.add($0, ordering: .relaxed) }
    }
}

/// Starts two threads that spin on a flag, releases them, waits for both.
@inline(never)
func runTwoSenders(perThread: Int, send: @escaping @Sendable (Int) -> Void) {
    let go = Synchronization.Atomic<Bool>(false)
    let ready = Synchronization.Atomic<Int>(0)
    var threads: [pthread_t] = []
    for _ in 0..<2 {
        threads.append(
            startThread {
                ready.add(1, ordering: .releasing)
                while !go.load(ordering: .acquiring) {}
                for value in 0..<perThread { send(value) }
            })
    }
    while ready.load(ordering: .acquiring) < 2 { sched_yield() }
    go.store(true, ordering: .releasing)
    for thread in threads { pthread_join(thread, nil) }
}

/// Starts a thread that runs `body`; join it with `pthread_join`.
func startThread(_ body: @escaping @Sendable () -> Void) -> pthread_t {
    let context = Unmanaged.passRetained(SenderContext(body)).toOpaque()
    var thread = pthread_t()
    pthread_create(
        &thread, nil,
        { raw in
            Unmanaged<SenderContext>.fromOpaque(raw!).takeRetainedValue().body()
            return nil
        }, context)
    return thread
}

final class SenderContext: Sendable {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
}

struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
