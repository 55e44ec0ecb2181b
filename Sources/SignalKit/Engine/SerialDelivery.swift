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
//
// Context: an event is delivered in the context of the code that pushed it
// (`.pusher`), or in its sender's when the operator stored it (`.sender`: a
// value a timer or a terminal event flushes keeps the context it was sent
// in), even when another feeder's thread delivers it. An event its own pusher delivers
// at once needs nothing restored; one left in the FIFO for another
// deliverer carries its context there (see `SignalContextPropagation`).

/// One event waiting to be delivered.
enum _QueuedEvent<T, E> {
    case next(T)
    case error(E)
    case completed
}

extension _QueuedEvent: Sendable where T: Sendable, E: Sendable {}

/// The context a pushed event is delivered in.
enum _PushContext {
    /// The pushing code's own, captured by it (before it took a lock of its
    /// own).
    case pusher(_CapturedContext?)
    /// Another sender's: a stored value that a timer or a terminal event
    /// sends keeps the context it was sent in.
    case sender(_CapturedContext?)

    /// What the FIFO keeps: nothing for the pusher's own event when the
    /// pusher delivers it at once (nobody was delivering, so the queue was
    /// empty and this event is the first it delivers, on its own thread,
    /// where its context is current).
    @inline(__always)
    func carried(deliveredByPusher: Bool) -> _CapturedContext? {
        switch self {
        case .pusher(let context): deliveredByPusher ? nil : context
        case .sender(let context): context
        }
    }
}

/// Hands events to `downstream` one at a time (see the top of this file).
///
/// The per-value path touches no type whose layout depends on `T` or `E`
/// beyond `T` itself (see BoundaryState.swift's header: unspecialised, such
/// a type costs a runtime metadata lookup per use): the values wait in a
/// `_FIFO<T>` with their contexts in a FIFO beside it, and the one terminal
/// event (the first closes the delivery, so it is always last) waits boxed.
///
/// `@unchecked Sendable`: the FIFOs, the terminal event, `delivering` and
/// `closed` are guarded by `mutex`; `downstream` is immutable, and only the
/// current deliverer calls it.
final class _SerialDelivery<T, E>: @unchecked Sendable {
    let downstream: Subscriber<T, E>
    private let mutex = _Mutex()
    // Guarded by `mutex` (so the dynamic exclusivity check, a call per
    // access, is left out).
    /// The values waiting, oldest first, and the context each is delivered in.
    @exclusivity(unchecked) private var values = _FIFO<T>()
    @exclusivity(unchecked) private var valueContexts = _FIFO<_CapturedContext?>()
    /// The terminal event, once pushed and not yet delivered (behind every
    /// value), and its context.
    @exclusivity(unchecked) private var terminal: _BoundaryTerminalBox<E>?
    @exclusivity(unchecked) private var terminalContext: _CapturedContext?
    @exclusivity(unchecked) private var delivering = false
    @exclusivity(unchecked) private var closed = false

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

    /// Records `event`, to be delivered in the calling code's context.
    /// Returns true if the caller must call `drain()` (it became the
    /// deliverer); false if the event was dropped (the delivery is closed) or
    /// another deliverer will deliver it. Reads the propagation's current
    /// context: a caller holding a lock of its own captures it before taking
    /// that lock and calls `push(_:_:)`.
    @inline(__always)
    func push(_ event: _QueuedEvent<T, E>) -> Bool {
        push(event, .pusher(_ContextHook.capture()))
    }

    /// Records `event` (borrowed: a dropped event is released by the caller,
    /// after the lock), to be delivered in `context`; returns as
    /// `push(_:)`. Safe to call while holding the caller's own lock: it never
    /// calls out.
    func push(_ event: _QueuedEvent<T, E>, _ context: _PushContext) -> Bool {
        switch event {
        case .next(let value): pushNext(value, context)
        case .error(let error): pushTerminal(_BoundaryTerminalBox(.failed(error)), context)
        case .completed: pushTerminal(_BoundaryTerminalBox(.completed), context)
        }
    }

    /// `push(.next(value), context)`, without making the event.
    func pushNext(_ value: T, _ context: _PushContext) -> Bool {
        enqueueNext(value, context) == .mustDrain
    }

    /// Queues `value`, to be delivered in `context`, for a caller that
    /// holds a lock of its own (this never calls out): whether it was taken
    /// (false: the delivery is closed; a caller that counts its drops counts
    /// it), and whether the caller must `drain()` once it has unlocked.
    func enqueue(_ value: T, _ context: _PushContext) -> (taken: Bool, mustDrain: Bool) {
        switch enqueueNext(value, context) {
        case .dropped: (false, false)
        case .queued: (true, false)
        case .mustDrain: (true, true)
        }
    }

    private enum _Enqueued {
        /// The delivery is closed: the event was not taken.
        case dropped
        /// Another deliverer delivers it.
        case queued
        /// The caller became the deliverer: it must `drain()`.
        case mustDrain
    }

    private func enqueueNext(_ value: T, _ context: _PushContext) -> _Enqueued {
        mutex.lock()
        guard !closed else {
            mutex.unlock()
            return .dropped
        }
        values.append(value)
        valueContexts.append(context.carried(deliveredByPusher: !delivering))
        return becomeDelivererLocked()
    }

    private func pushTerminal(_ box: _BoundaryTerminalBox<E>, _ context: _PushContext) -> Bool {
        mutex.lock()
        guard !closed else {
            mutex.unlock()
            return false
        }
        closed = true
        terminal = box
        terminalContext = context.carried(deliveredByPusher: !delivering)
        return becomeDelivererLocked() == .mustDrain
    }

    /// After an event was queued (mutex held; released here).
    @inline(__always)
    private func becomeDelivererLocked() -> _Enqueued {
        guard !delivering else {
            mutex.unlock()
            return .queued
        }
        delivering = true
        mutex.unlock()
        return .mustDrain
    }

    /// Delivers queued events until the queue is empty. Call only after a
    /// `push` returned true, without holding any lock.
    func drain() {
        while true {
            mutex.lock()
            if !values.isEmpty {
                let value = values.removeFirst()
                let context = valueContexts.removeFirst()
                mutex.unlock()
                _run(in: context) { downstream.putNext(value) }
                continue
            }
            guard let box = terminal else {
                delivering = false
                mutex.unlock()
                return
            }
            terminal = nil
            let context = terminalContext
            terminalContext = nil
            mutex.unlock()
            _run(in: context) {
                switch box.event {
                case .failed(let error): downstream.putError(error)
                case .completed: downstream.putCompletion()
                }
            }
        }
    }

    /// `push` then, if needed, `drain`.
    func send(_ event: _QueuedEvent<T, E>) {
        if push(event) { drain() }
    }

    func putNext(_ value: T) {
        if pushNext(value, .pusher(_ContextHook.capture())) { drain() }
    }

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
