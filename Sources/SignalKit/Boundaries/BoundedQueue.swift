// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// The bounded form of `queue` / `mapToQueue`: inner signals run one after
// another, and those waiting for the running one to complete are a bounded
// buffer (`_BoundaryBuffer`) under a `SignalBuffer` policy. The unbounded
// forms keep the signal-of-signals engine (Engine/SignalQueueState.swift);
// this runner is its queueing mode with a bound, and keeps its rules: an
// inner is subscribed on the thread that delivers it when none runs, else on
// the thread that completes the previous one; inners that complete while
// being subscribed are run by a loop, in constant stack; any error fails the
// output and nothing waiting is subscribed after it.

/// One subscription of a bounded `queue`.
///
/// `@unchecked Sendable`: `gate` and `outerCompleted` are guarded by `mutex`
/// (the base class's); the rest is immutable or thread-safe. The consumer is
/// the running inner: `state.consumerActive` while one runs, and
/// `consumer`'s thread the one inside its `_start`, while it is there.
final class _BoundedQueue<R, E: Sendable>: _BoundaryBuffer<Signal<R, E>, E>, Disposable, @unchecked Sendable {
    private let downstream: Subscriber<R, E>
    let outer = MetaDisposable()
    private let current = MetaDisposable()
    /// The loop in `run` (the run-again gate every subscribing loop shares):
    /// running while an inner's `_start` runs, due when it completed there.
    private nonisolated(unsafe) var gate = _RunAgainGate()
    private nonisolated(unsafe) var outerCompleted = false

    init(downstream: Subscriber<R, E>, policy: SignalBuffer<E>, counters: _BufferCounts) {
        self.downstream = downstream
        super.init(policy: policy, counters: counters)
    }

    // MARK: Outer events

    func outerNext(_ inner: Signal<R, E>) {
        switch admit(inner, consumerName: "inner signal's subscription") {
        case .accepted(let startNow):
            // Nothing was running: the inner just queued is the one to start.
            if startNow { perform(mutex.withLock { takeNextLocked() }) }
        case .handled:
            break
        case .overflowed:
            downstream.putError(overflowError)
        }
    }

    func outerFailed(_ error: E) {
        // The error goes ahead of the inners waiting: they are drops.
        disposeBuffer(droppingWaiting: true)
        downstream.putError(error)
    }

    func outerCompletedEvent() {
        let complete = mutex.withLock { () -> Bool in
            outerCompleted = true
            return !state.consumerActive && state.waiting.isEmpty
        }
        if complete { downstream.putCompletion() }
    }

    // MARK: Inner signals

    /// What follows a completed inner.
    private enum Next {
        case start(Signal<R, E>)
        case complete
        case idle
    }

    /// The next waiting inner, or the end of the run (mutex held).
    private func takeNextLocked() -> Next {
        if state.isOpen, let next = state.waiting.popFirst() {
            wakeBlockedProducersLocked()
            return .start(next)
        }
        state.consumerActive = false
        return outerCompleted && state.waiting.isEmpty && state.isOpen ? .complete : .idle
    }

    /// Subscribes `first`, then, as long as each inner completes while it is
    /// being subscribed, the next waiting one (in constant stack).
    private func run(_ first: Signal<R, E>) {
        var signal = first
        while true {
            mutex.withLock {
                consumer.markThread()
                gate.restart()
            }
            current.set(signal._start(_BoundedQueueInnerSink(queue: self)))
            mutex.lock()
            consumer.clearThread()
            guard gate.endTurn() else {
                // Still running: its completion takes the next one.
                mutex.unlock()
                return
            }
            let next = takeNextLocked()
            mutex.unlock()
            switch next {
            case .start(let nextSignal): signal = nextSignal
            case .complete: return downstream.putCompletion()
            case .idle: return
            }
        }
    }

    private func perform(_ next: Next) {
        switch next {
        case .start(let signal): run(signal)
        case .complete: downstream.putCompletion()
        case .idle: break
        }
    }

    fileprivate func innerCompleted() {
        mutex.lock()
        if gate.isRunning {
            // The loop in `run` takes the next one.
            gate.markDue()
            mutex.unlock()
            return
        }
        let next = takeNextLocked()
        mutex.unlock()
        perform(next)
    }

    fileprivate func innerFailed(_ error: E) {
        disposeBuffer(droppingWaiting: true)
        downstream.putError(error)
    }

    fileprivate func innerNext(_ value: R) {
        downstream.putNext(value)
    }

    // MARK: Disposal

    /// Disposes the running inner, then the outer; releases the waiting
    /// inners (nothing is subscribed after disposal).
    func dispose() {
        disposeBuffer()
        current.dispose()
        outer.dispose()
    }
}

/// The running inner's events.
struct _BoundedQueueInnerSink<R, E: Sendable>: _InlineSink {
    typealias Input = R
    typealias Failure = E

    let queue: _BoundedQueue<R, E>

    func putNext(_ value: R, from _: _SubscriptionBase) { queue.innerNext(value) }
    func putError(_ error: E) { queue.innerFailed(error) }
    func putCompletion() { queue.innerCompleted() }
}

/// The outer's events: `transform` makes each inner when its value arrives.
struct _BoundedQueueOuterSink<T, R, E: Sendable>: _InlineSink {
    typealias Input = T
    typealias Failure = E

    let queue: _BoundedQueue<R, E>
    let transform: @Sendable (T) -> Signal<R, E>

    func putNext(_ value: T, from _: _SubscriptionBase) { queue.outerNext(_inSenderContext(transform(value))) }
    func putError(_ error: E) { queue.outerFailed(error) }
    func putCompletion() { queue.outerCompletedEvent() }
}

/// The shell of a bounded `queue` / `mapToQueue`, counted under the outer's
/// name.
func _boundedQueue<T, R, E: Sendable>(
    _ outer: Signal<T, E>,
    buffer: SignalBuffer<E>,
    transform: @escaping @Sendable (T) -> Signal<R, E>
) -> Signal<R, E> {
    let account = _BufferAccount(name: outer.description, buffer: buffer)
    return Signal { subscriber in
        let queue = _BoundedQueue(downstream: subscriber, policy: buffer, counters: account.open())
        queue.outer.set(outer._start(_BoundedQueueOuterSink(queue: queue, transform: transform)))
        return queue
    }
}
