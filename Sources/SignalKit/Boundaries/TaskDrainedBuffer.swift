// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// A bounded boundary emptied by one task that awaits batches: a signal's
// callbacks push into it, the task takes everything that waits at once. The
// gRPC server's streamed responses (SignalKitGRPC) use it; `package` so that
// an integration in this package shares the policy, the drop counting and
// the `blocking` deadlock check of every other boundary instead of keeping a
// buffer of its own.

/// What ``_TaskDrainedBuffer/next()`` hands the consuming task.
package enum _TaskDrainedEvent<T, E> {
    /// Every value that waited, oldest first (never empty).
    case values([T])
    /// The signal completed; every value was handed over before.
    case completed
    /// The signal failed, or a `failing` policy overflowed with its error;
    /// every value sent before (and not dropped) was handed over before.
    case failed(E)
    /// ``_TaskDrainedBuffer/cancel()`` was called: nothing more comes.
    case cancelled
}

/// One subscription's bounded buffer, emptied by one task (see the file
/// header).
///
/// The task calls ``next()`` in a loop; producers (the signal's callbacks,
/// serial as a subscriber's always are) call ``send(_:)`` and ``finish(_:)``.
/// A `blocking` producer waits on its own thread; it stops the process with
/// a message when it is the thread subscribing the signal on behalf of the
/// task (``subscribe(_:)``), which waiting would deadlock.
///
/// `@unchecked Sendable`: `waiter` and `subscribingThread` are guarded by the
/// buffer's mutex; the rest is immutable or thread-safe.
package final class _TaskDrainedBuffer<T: Sendable, E: Sendable>: @unchecked Sendable {
    private let buffer: _BoundaryBuffer<T, E>
    /// The subscription to the signal; disposed by ``cancel()`` and by a
    /// `failing` overflow.
    package let upstream = MetaDisposable()
    /// The task, suspended in `next()` while nothing waits.
    private nonisolated(unsafe) var waiter: CheckedContinuation<Void, Never>?
    /// The thread in ``subscribe(_:)``, while it runs.
    private nonisolated(unsafe) var subscribingThread: pthread_t?

    /// A buffer under `policy`, counted under `name` in
    /// `SignalKitDebug.bufferStatistics()`.
    package init(policy: SignalBuffer<E>, name: String) {
        buffer = _BoundaryBuffer(
            policy: policy,
            counters: _BufferRegistry.shared.counters(name: name, policy: policy.description)
        )
    }

    /// Runs `start` (which subscribes the signal and returns its handle,
    /// kept in ``upstream``) with the calling thread marked as the
    /// consumer's: a `blocking` value sent into the full buffer while it runs
    /// stops the process with a message instead of deadlocking.
    package func subscribe(_ start: () -> any Disposable) {
        buffer.mutex.withLock { subscribingThread = pthread_self() }
        let handle = start()
        buffer.mutex.withLock { subscribingThread = nil }
        upstream.set(handle)
    }

    /// A value from the signal: the policy decides (a drop is counted); a
    /// `failing` overflow ends the stream with the policy's error and
    /// disposes the subscription.
    package func send(_ value: T) {
        let admission = buffer.admit(
            value,
            consumerName: "task that awaits it (while that task subscribed the signal)",
            isConsumer: { subscribingThread.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
        )
        switch admission {
        case .accepted(let startConsumer):
            if startConsumer { wake() }
        case .handled:
            break
        case .overflowed(_, let startConsumer):
            if startConsumer { wake() }
            upstream.dispose()
        }
    }

    /// The signal's end: it waits behind the values. A second end, or one
    /// after an overflow or ``cancel()``, is ignored.
    package func finish(_ error: E?) {
        let event: _BoundaryTerminal<E> = error.map { .failed($0) } ?? .completed
        let startConsumer = buffer.mutex.withLock { buffer.state.offerTerminal(event) }
        if startConsumer == true { wake() }
    }

    /// Ends the stream at once: the waiting values are released, blocked
    /// producers are let go (their values dropped), the task's `next()`
    /// returns ``_TaskDrainedEvent/cancelled``, and the subscription is
    /// disposed.
    package func cancel() {
        buffer.disposeBuffer()
        wake()
        upstream.dispose()
    }

    /// The next batch of values, or the end; suspends while nothing waits.
    /// One task calls it, until it returns something else than `.values`.
    package func next() async -> _TaskDrainedEvent<T, E> {
        if let event = poll() { return event }
        var event: _TaskDrainedEvent<T, E>?
        while event == nil {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                // Checked and parked under the lock a producer's wake-up takes.
                buffer.mutex.lock()
                var batch = _FIFO<T>()
                switch takeLocked(into: &batch) {
                case .some(let taken):
                    buffer.mutex.unlock()
                    event = taken ?? .values(Array(drained: &batch))
                    continuation.resume()
                case .none:
                    waiter = continuation
                    buffer.mutex.unlock()
                }
            }
        }
        return event!
    }

    /// Takes what waits without suspending; nil when nothing does.
    private func poll() -> _TaskDrainedEvent<T, E>? {
        var batch = _FIFO<T>()
        let taken = buffer.mutex.withLock { takeLocked(into: &batch) }
        guard let taken else { return nil }
        return taken ?? .values(Array(drained: &batch))
    }

    /// With the mutex held: `.some(nil)` when values were moved into
    /// `batch`, `.some(event)` for an end, `nil` when nothing waits.
    private func takeLocked(into batch: inout _FIFO<T>) -> _TaskDrainedEvent<T, E>?? {
        if buffer.state.disposed { return .some(.cancelled) }
        switch buffer.state.take(into: &batch) {
        case .values:
            buffer.wakeBlockedProducersLocked()
            return .some(nil)
        case .terminal(.completed):
            return .some(.completed)
        case .terminal(.failed(let error)):
            return .some(.failed(error))
        case .idle:
            return nil
        }
    }

    /// Resumes the parked task, if it is parked.
    private func wake() {
        let parked = buffer.mutex.withLock { () -> CheckedContinuation<Void, Never>? in
            defer { waiter = nil }
            return waiter
        }
        parked?.resume()
    }
}

extension Array {
    /// The elements of `fifo`, oldest first, leaving it empty.
    fileprivate init(drained fifo: inout _FIFO<Element>) {
        self.init()
        reserveCapacity(fifo.count)
        while let element = fifo.popFirst() { append(element) }
    }
}
