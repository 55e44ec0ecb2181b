// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// The buffer behind one iteration of `Signal.values`: the values the
// consuming task has not taken yet, kept by a `SignalBuffer` policy in the
// bounded buffer every boundary shares (BoundaryBuffer.swift), the
// consumer's continuation while it waits in `next()`, and the subscription.
//
// The consumer takes one value per `next()` (not a batch): every value not
// yet returned counts towards the limit. A value that arrives while the
// consumer waits in `next()` is always taken. Once the task is cancelled,
// `next()` returns nil, whatever waits.

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

/// The subscription behind one `SignalValues` iteration: a bounded buffer
/// (`_BoundaryBuffer`, the producer side every boundary shares) whose
/// consumer is the iterating task.
///
/// `@unchecked Sendable`: `waiter`, `started` and `ended` are guarded by the
/// base class's mutex; the rest as `_BoundaryBuffer`.
final class _AsyncValueBuffer<T: Sendable, E: Sendable>: _BoundaryBuffer<T, E>, @unchecked Sendable {
    /// What `next()` does after unlocking.
    private enum Step {
        case start
        case value(T)
        case terminal(_BoundaryTerminal<E>)
        case ended
        case wait
    }

    private let signal: Signal<T, E>
    private let handle = MetaDisposable()
    /// The consumer's continuation while it waits in `next()`.
    private nonisolated(unsafe) var waiter: CheckedContinuation<Void, Never>?
    /// Whether the subscription was started.
    private nonisolated(unsafe) var started = false
    /// Whether `next()` returns nil from now on (terminal event returned,
    /// task cancelled, iterator dropped).
    private nonisolated(unsafe) var ended = false

    /// `name` is the signal's description, the statistics' name of a bounded
    /// buffer (an unbounded one counts nothing).
    init(signal: Signal<T, E>, policy: SignalBuffer<E>, name: String) {
        self.signal = signal
        super.init(policy: policy, counters: policy.isUnbounded ? nil : _BufferAccount(name: name, buffer: policy).open())
    }

    deinit {
        // First: the statistics read attached buffers (see `_BufferCounters.live`).
        counters?.detach(ObjectIdentifier(self))
        handle.dispose()
    }

    override func takeWaitingConsumerLocked() -> CheckedContinuation<Void, Never>? {
        waiter.take()
    }

    // MARK: Consumer side (the iterating task)

    func next() async throws(SignalAwaitError<E>) -> T? {
        // Only a `blocking` producer asks who the consumer is.
        let marksTask = policy.overflow == .block
        while true {
            // Checked before a waiting value is returned: a cancelled
            // iteration ends even while values keep arriving.
            if Task.isCancelled {
                end()
                return nil
            }
            mutex.lock()
            if marksTask { consumer.markTask() }
            let step: Step
            if ended {
                step = .ended
            } else if !started {
                started = true
                step = .start
            } else if let value = state.waiting.popFirst() {
                // Moved out: the buffer keeps no reference to a value it
                // returned.
                wakeBlockedProducersLocked()
                step = .value(value)
            } else if let terminal = state.takeTerminal() {
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
                if ended || !state.waiting.isEmpty || state.pendingTerminal != nil {
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
        let waiter = mutex.withLock { () -> CheckedContinuation<Void, Never>? in
            ended = true
            return self.waiter.take()
        }
        disposeBuffer()
        waiter?.resume()
        handle.dispose()
    }

    // MARK: Producer side (the signal's thread, serial)

    fileprivate func receive(_ value: T) {
        let consumerName =
            "task that iterates it (a `values` iteration: while its first next() subscribed, or from the loop's body)"
        if case .overflowed = admit(value, consumerName: consumerName, boundary: "iteration") {
            // The error waits as the terminal event, for the next `next()`.
            handle.dispose()
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
