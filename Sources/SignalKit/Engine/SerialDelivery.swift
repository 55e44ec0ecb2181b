// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// Serial delivery to one downstream subscriber from several sources.
//
// A `Subscriber` does not serialise its callers: whoever feeds it must call it
// one event at a time. Operators with several inputs (merge, flatten, zip,
// takeUntil, sample) or with a timer (throttle, bufferWithTime, the timeout
// that fails) have several feeders, possibly on different threads. They feed
// the downstream through a `_SerialDelivery`, which hands it one event at a
// time without holding any lock while the downstream runs:
//
// * an event is appended to a FIFO under the mutex; if nobody is delivering,
//   the caller becomes the deliverer and drains the FIFO, outside the lock,
//   until it is empty;
// * an event pushed while another thread (or, re-entrantly, the same thread
//   from inside a downstream callback) is delivering is left in the FIFO and
//   delivered by that deliverer, right after the callback in progress
//   returns. A feeder never waits for another feeder's downstream work.
//
// The first terminal event pushed closes the delivery: later events are
// dropped (released by the caller, outside the lock). Events are delivered in
// the order they were pushed; an operator that must order its own decisions
// with its deliveries pushes while holding its own lock (`push`) and drains
// after unlocking (`drain`).

/// One event waiting to be delivered.
enum _QueuedEvent<T, E> {
    case next(T)
    case error(E)
    case completed
}

extension _QueuedEvent: Sendable where T: Sendable, E: Sendable {}

/// Hands events to `downstream` one at a time (see the top of this file).
///
/// `@unchecked Sendable`: `queue`, `delivering` and `closed` are guarded by
/// `mutex`; `downstream` is immutable, and only the current deliverer calls
/// it.
final class _SerialDelivery<T, E>: @unchecked Sendable {
    let downstream: Subscriber<T, E>
    private let mutex = _Mutex()
    private var queue = _FIFO<_QueuedEvent<T, E>>()
    private var delivering = false
    private var closed = false

    init(downstream: Subscriber<T, E>) {
        self.downstream = downstream
    }

    deinit {
        mutex.destroy()
    }

    /// Whether a terminal event was pushed.
    var isClosed: Bool {
        mutex.withLock { closed }
    }

    /// Records `event` (borrowed: a dropped event is released by the caller,
    /// after the lock). Returns true if the caller must call `drain()` (it
    /// became the deliverer); false if the event was dropped (the delivery is
    /// closed) or another deliverer will deliver it. Safe to call while
    /// holding the caller's own lock: it never calls out.
    func push(_ event: _QueuedEvent<T, E>) -> Bool {
        mutex.lock()
        guard !closed else {
            mutex.unlock()
            return false
        }
        switch event {
        case .next: break
        case .error, .completed: closed = true
        }
        queue.append(event)
        guard !delivering else {
            mutex.unlock()
            return false
        }
        delivering = true
        mutex.unlock()
        return true
    }

    /// Delivers queued events until the queue is empty. Call only after a
    /// `push` returned true, without holding any lock.
    func drain() {
        while true {
            mutex.lock()
            guard let event = queue.popFirst() else {
                delivering = false
                mutex.unlock()
                return
            }
            mutex.unlock()
            switch event {
            case .next(let value): downstream.putNext(value)
            case .error(let error): downstream.putError(error)
            case .completed: downstream.putCompletion()
            }
        }
    }

    /// `push` then, if needed, `drain`.
    func send(_ event: _QueuedEvent<T, E>) {
        if push(event) { drain() }
    }

    func putNext(_ value: T) { send(.next(value)) }
    func putError(_ error: E) { send(.error(error)) }
    func putCompletion() { send(.completed) }
}

/// A `_ForwardSink` feeds one input's events into a `_SerialDelivery`
/// unchanged; its `downstreamSubscription` is the delivery's downstream.
extension _SerialDelivery: _EventReceiver {
    typealias Value = T
    typealias Failure = E
    var _forwardedSubscription: _SubscriptionBase? { downstream._subscriptionBase }
}
