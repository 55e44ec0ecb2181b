// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

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
/// header): a `_DrainedBoundary` whose "drain" is the task parked in
/// ``next()``, woken by the first value of a burst.
///
/// The task calls ``next()`` in a loop; producers (the signal's callbacks,
/// serial as a subscriber's always are) call ``send(_:)`` and ``finish(_:)``.
/// A `blocking` producer waits on its own thread; it stops the process with
/// a message when it is the thread subscribing the signal on behalf of the
/// task (``subscribe(_:)``), which waiting would deadlock.
///
/// `@unchecked Sendable`: `waiter` is guarded by the mutex; `batch` is the one consuming task's; the rest as
/// `_DrainedBoundary`.
package final class _TaskDrainedBuffer<T: Sendable, E: Sendable>: _DrainedBoundary<T, E>, @unchecked Sendable {
    /// The task, suspended in `next()` while nothing waits.
    private nonisolated(unsafe) var waiter: CheckedContinuation<Void, Never>?

    /// A buffer under `policy`, counted under `name` in
    /// `SignalKitDebug.bufferStatistics()`.
    package init(policy: SignalBuffer<E>, name: String) {
        super.init(policy: policy, counters: _BufferAccount(name: name, buffer: policy).open())
    }

    /// Runs `start` (which subscribes the signal and returns its handle,
    /// kept as the upstream subscription) with the calling thread marked as
    /// the consumer's: a `blocking` value sent into the full buffer while it
    /// runs stops the process with a message instead of deadlocking.
    package func subscribe(_ start: () -> any Disposable) {
        mutex.withLock { consumer.markThread() }
        let handle = start()
        mutex.withLock { consumer.clearThread() }
        upstream.set(handle)
    }

    /// A value from the signal: the policy decides (a drop is counted); a
    /// `failing` overflow ends the stream with the policy's error and
    /// disposes the subscription.
    package func send(_ value: T) {
        offerValue(value, consumerName: "task that awaits it (while that task subscribed the signal)")
    }

    /// The signal's end: it waits behind the values. A second end, or one
    /// after an overflow or ``cancel()``, is ignored.
    package func finish(_ error: E?) {
        offerTerminal(error.map { .failed($0) } ?? .completed)
    }

    /// Ends the stream at once: the waiting values are released, blocked
    /// producers are let go (their values dropped), the task's `next()`
    /// returns ``_TaskDrainedEvent/cancelled``, and the subscription is
    /// disposed.
    package func cancel() {
        disposeBuffer()
        wake()
        upstream.dispose()
    }

    /// The first value of a burst, or the end: the parked task wakes.
    override func scheduleDrain() {
        wake()
    }

    /// The next batch of values, or the end; suspends while nothing waits.
    /// One task calls it, until it returns something else than `.values`.
    package func next() async -> _TaskDrainedEvent<T, E> {
        if let event = mutex.withLock({ takeLocked() }) { return finished(event) }
        var event: _TaskDrainedEvent<T, E>?
        while event == nil {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                // Checked and parked under the lock a producer's wake-up takes.
                mutex.lock()
                event = takeLocked()
                if event == nil { waiter = continuation }
                mutex.unlock()
                if event != nil { continuation.resume() }
            }
        }
        return finished(event!)
    }

    /// With the mutex held: the end, `.values([])` when values were moved
    /// into `batch` (see `finished`), nil when nothing waits (the task may
    /// park: the next value wakes it).
    private func takeLocked() -> _TaskDrainedEvent<T, E>? {
        if state.isDisposed { return .cancelled }
        switch state.take(into: &batch) {
        case .values:
            wakeBlockedProducersLocked()
            return .values([])
        case .terminal(let box):
            switch box.event {
            case .completed: return .completed
            case .failed(let error): return .failed(error)
            }
        case .idle:
            return nil
        }
    }

    /// `event`, its values taken out of `batch` outside the lock (the emptied
    /// batch's storage goes back to the producer side at the next take).
    private func finished(_ event: _TaskDrainedEvent<T, E>) -> _TaskDrainedEvent<T, E> {
        guard case .values = event else { return event }
        return .values(Array(drained: &batch))
    }

    /// Resumes the parked task, if it is parked.
    private func wake() {
        let parked = mutex.withLock { () -> CheckedContinuation<Void, Never>? in
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
        while !fifo.isEmpty { append(fifo.removeFirst()) }
    }
}
