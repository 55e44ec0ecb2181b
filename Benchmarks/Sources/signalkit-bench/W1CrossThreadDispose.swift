// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Glibc
import SignalKit

// W1 extra: what disposing a live subscription costs on the thread that
// started it and from another thread. `size` subscriptions are started on
// this thread; each receives one value on it (so its deliveries take the
// starting thread's own path) and stays live: no completion, and its
// subscriber is kept (as a pipe's bag keeps its subscribers), so `dispose()`
// takes the guarded release of the callbacks. Then all of them are disposed,
// timed, either on this thread or on a second one. ns per dispose; creating
// and freeing the subscriptions is not timed.

@inline(never)
func runW1Dispose(_ size: Int, fromAnotherThread: Bool) -> RunResult {
    let box = Box()
    let sink: @Sendable (Int) -> Void = { box.v &+= $0 }
    let kept = KeptSubscribers()
    kept.all.reserveCapacity(size)
    var handles: [any Disposable] = []
    handles.reserveCapacity(size)
    for i in 0..<size {
        let handle = Signal<Int, NoError> { subscriber in
            subscriber.putNext(i)
            kept.all.append(subscriber)
            return EmptyDisposable
        }.start(next: sink)
        handles.append(handle)
    }
    let list = UncheckedBox(handles)
    let disposeAll: @Sendable () -> Double = {
        timed(operations: size) {
            for handle in list.value { handle.dispose() }
        }
    }
    let nanoseconds = fromAnotherThread ? onAnotherThread(disposeAll) : disposeAll()
    withExtendedLifetime(kept) {}
    return RunResult(nanosecondsPerOp: nanoseconds, checksumMatches: box.v == size &* (size - 1) / 2)
}

/// The subscribers of `runW1Dispose`, kept alive until it returns (only the
/// starting thread touches the array).
final class KeptSubscribers: @unchecked Sendable {
    var all: [Subscriber<Int, NoError>] = []
}

/// Runs `body` on a new thread and waits for its result.
@inline(never)
func onAnotherThread(_ body: @escaping @Sendable () -> Double) -> Double {
    let result = UnsafeMutablePointer<Double>.allocate(capacity: 1)
    defer { result.deallocate() }
    let output = UncheckedBox(result)
    pthread_join(startThread { output.value.pointee = body() }, nil)
    return result.pointee
}
