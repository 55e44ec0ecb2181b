// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// The buffer behind one iteration of `Signal.values`: the values the
// consuming task has not taken yet, kept by a `SignalBuffer` policy in a
// `_BoundaryState` under a mutex (with a condition variable for a blocked
// producer), the consumer's continuation while it waits in `next()`, and the
// subscription.
//
// The consumer takes one value per `next()` (not a batch): every value not
// yet returned counts towards the limit. A value that arrives while the
// consumer waits in `next()` is always taken. Once the task is cancelled,
// `next()` returns nil, whatever waits.

/// The identity of the task running the caller, if any (its hash: an
/// `UnsafeCurrentTask` must not be kept).
func _currentTaskIdentity() -> Int? {
    withUnsafeCurrentTask { $0?.hashValue }
}

/// The iterator's hold on its buffer. Its `deinit` (the iterator dropped)
/// ends the iteration even while a producer holds the buffer (a producer
/// blocked in a full `blocking` buffer does, until it is released).
final class _ValuesIteration<T: Sendable, E: Sendable>: Sendable {
    let buffer: _AsyncValueBuffer<T, E>

    init(signal: Signal<T, E>, policy: SignalBuffer<E>, name: String) {
        buffer = _AsyncValueBuffer(signal: signal, policy: policy, name: name)
    }

    deinit {
        buffer.end()
    }
}

/// The subscription behind one `SignalValues` iteration.
final class _AsyncValueBuffer<T: Sendable, E: Sendable>: _BufferDepthSource, Sendable {
    /// What `next()` does after unlocking.
    private enum Step {
        case start
        case value(T)
        case terminal(_BoundaryTerminal<E>)
        case ended
        case wait
    }

    private let signal: Signal<T, E>
    private let policy: SignalBuffer<E>
    private let counters: _BufferCounts?
    private let handle = MetaDisposable()

    private let mutex = _Mutex()
    /// Where a `blocking` producer waits for room (nil for other policies).
    private let condition: _Condition?
    // Guarded by `mutex`: the buffer; the consumer's continuation while it
    // waits in `next()`; whether the subscription was started; whether
    // `next()` returns nil from now on (terminal event returned, task
    // cancelled, iterator dropped); the consuming task (`blocking` only), to
    // tell a producer that is the consumer itself.
    @exclusivity(unchecked) private nonisolated(unsafe) var state = _BoundaryState<T, E>()
    private nonisolated(unsafe) var waiter: CheckedContinuation<Void, Never>?
    private nonisolated(unsafe) var started = false
    private nonisolated(unsafe) var ended = false
    private nonisolated(unsafe) var consumerTask: Int?

    /// `name` is the signal's description, the statistics' name of a bounded
    /// buffer (an unbounded one counts nothing).
    init(signal: Signal<T, E>, policy: SignalBuffer<E>, name: String) {
        self.signal = signal
        self.policy = policy
        counters = policy.isUnbounded ? nil : _BufferAccount(name: name, buffer: policy).open()
        if case .block = policy.kind {
            condition = _Condition()
        } else {
            condition = nil
        }
        counters?.attach(self)
    }

    deinit {
        // First: the statistics read attached buffers (see `_BufferCounters.live`).
        counters?.detach(ObjectIdentifier(self))
        handle.dispose()
        condition?.destroy()
        mutex.destroy()
    }

    var waitingCount: Int {
        mutex.withLock { state.waiting.count }
    }

    // MARK: Consumer side (the iterating task)

    func next() async throws(SignalAwaitError<E>) -> T? {
        // Only a `blocking` producer asks who the consumer is.
        let task = condition == nil ? nil : _currentTaskIdentity()
        while true {
            // Checked before a waiting value is returned: a cancelled
            // iteration ends even while values keep arriving.
            if Task.isCancelled {
                end()
                return nil
            }
            mutex.lock()
            if task != nil { consumerTask = task }
            let step: Step
            if ended {
                step = .ended
            } else if !started {
                started = true
                step = .start
            } else if let value = state.waiting.popFirst() {
                // Moved out: the buffer keeps no reference to a value it
                // returned.
                if state.blockedProducers > 0 { condition?.broadcast() }
                step = .value(value)
            } else if let terminal = state.terminal {
                state.terminal = nil
                ended = true
                step = .terminal(terminal)
            } else {
                step = .wait
            }
            mutex.unlock()
            switch step {
            case .start:
                // A pinned sink: the buffer lives as long as the iterator.
                handle.set(signal._start(_ValuesSink(self)))
            case .value(let value):
                return value
            case .terminal(let event):
                counters?.detach(ObjectIdentifier(self))
                if case .failed(let error) = event { throw .error(error) }
                return nil
            case .ended:
                return nil
            case .wait:
                await waitForEvent()
            }
        }
    }

    /// Suspends until a value or the terminal event waits, or the iteration
    /// ends (the task cancelled).
    private func waitForEvent() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                mutex.lock()
                if ended || !state.waiting.isEmpty || state.terminal != nil {
                    mutex.unlock()
                    continuation.resume()
                    return
                }
                waiter = continuation
                mutex.unlock()
            }
        } onCancel: {
            self.end()
        }
    }

    /// Ends the iteration (the task was cancelled or the iterator dropped):
    /// `next()` returns nil from now on, the waiting values are released, a
    /// blocked producer is released (its value dropped), and the
    /// subscription is disposed.
    func end() {
        mutex.lock()
        ended = true
        guard !state.disposed else {
            mutex.unlock()
            return
        }
        // Blocked producers' values are dropped: counted here, before the
        // subscription leaves its counters.
        let blocked = state.blockedProducers
        let dropped = state.dispose()
        if state.blockedProducers > 0 { condition?.broadcast() }
        let waiter = self.waiter.take()
        mutex.unlock()
        // Released here, outside the lock: a deinit may send to the signal.
        withExtendedLifetime(dropped) {}
        waiter?.resume()
        counters?.recordDrops(blocked)
        counters?.detach(ObjectIdentifier(self))
        handle.dispose()
    }

    // MARK: Producer side (the signal's thread, serial)

    fileprivate func receive(_ value: T) {
        // The slot a value to release (or to offer again) is moved into (see
        // `_BoundaryBuffer.admit`).
        withUnsafeTemporaryAllocation(of: T.self, capacity: 1) { slot in
            let displaced = slot.baseAddress!
            displaced.initialize(to: value)
            while true {
                var overflow = _FIFO<T>()
                mutex.lock()
                let consumerWaiting = waiter != nil
                if policy.keepsOnlyForAWaitingConsumer && !consumerWaiting && state.waiting.isEmpty && !state.stopped {
                    mutex.unlock()
                    counters?.recordDrops(1)
                    displaced.deinitialize(count: 1)
                    return
                }
                let offer = state.offer(
                    displaced.move(), policy: policy, consumerWaiting: consumerWaiting, displaced: displaced,
                    overflow: &overflow)
                switch offer {
                case .accepted(_, let newMaximumDepth):
                    let waiter = self.waiter.take()
                    mutex.unlock()
                    if let newMaximumDepth { counters?.recordDepth(newMaximumDepth) }
                    waiter?.resume()
                    return
                case .dropped:
                    mutex.unlock()
                    counters?.recordDrops(1)
                    displaced.deinitialize(count: 1)
                    return
                case .overflowed:
                    // The error waits as the terminal event, for the next `next()`.
                    let waiter = self.waiter.take()
                    mutex.unlock()
                    counters?.recordOverflow()
                    counters?.recordDrops(overflow.count + 1)
                    displaced.deinitialize(count: 1)
                    withExtendedLifetime(overflow) {}
                    waiter?.resume()
                    handle.dispose()
                    return
                case .full:
                    if let consumerTask, _currentTaskIdentity() == consumerTask {
                        mutex.unlock()
                        _blockingSendFromConsumer(
                            "the task that iterates it (a `values` iteration: while its first next() subscribed, or "
                                + "from the loop's body)",
                            boundary: "iteration"
                        )
                    }
                    state.blockedProducers += 1
                    counters?.recordBlockedSend()
                    condition!.wait(mutex)
                    state.blockedProducers -= 1
                    let disposed = state.disposed
                    mutex.unlock()
                    if disposed {
                        // Dropped: the disposal counted it (`end`).
                        displaced.deinitialize(count: 1)
                        return
                    }
                // The value waits in `displaced`: offered again.
                case .refused:
                    mutex.unlock()
                    displaced.deinitialize(count: 1)
                    return
                }
            }
        }
    }

    fileprivate func receiveTerminal(_ event: _BoundaryTerminal<E>) {
        mutex.lock()
        let queued = state.offerTerminal(event) != nil
        let waiter = queued ? self.waiter.take() : nil
        mutex.unlock()
        waiter?.resume()
        if queued { handle.dispose() }
    }
}

/// Forwards to the buffer without keeping it alive.
private struct _ValuesSink<T: Sendable, E: Sendable>: _InlineSink {
    /// Read only (atomically, as every weak reference).
    weak var buffer: _AsyncValueBuffer<T, E>?

    init(_ buffer: _AsyncValueBuffer<T, E>) {
        self.buffer = buffer
    }

    func putNext(_ value: T, from _: _SubscriptionBase) { buffer?.receive(value) }
    func putError(_ error: E) { buffer?.receiveTerminal(.failed(error)) }
    func putCompletion() { buffer?.receiveTerminal(.completed) }
}
