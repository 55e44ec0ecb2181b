// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// The bounded form of `delayEvents`: the values waiting for their time are a
// bounded buffer (`_BoundaryBuffer`) under a `SignalBuffer` policy. Every
// value waits the same interval, so the waiting values are in deadline order
// and one timer, armed for the oldest, is enough: when it fires it sends
// every value that is due and re-arms for the next (the unbounded form arms
// one timer per value). The completion waits its interval behind them; an
// error is sent at once and cancels everything waiting, as in the unbounded
// form. With a context propagation installed, each value and the completion
// are delivered in their senders' contexts (Boundaries/ContextCarrier.swift).

/// A value and the time (`Queue.currentTime`) it is due.
struct _DelayedValue<T> {
    let value: T
    let due: Double
}

/// One subscription of a bounded `delayEvents`.
///
/// `@unchecked Sendable`: `completionDue` and `timer` are guarded by `mutex`
/// (the base class's). The consumer is the timer: `state.consumerActive`
/// while one is armed or firing.
final class _BoundedDelay<T: Sendable, E: Sendable>: _BoundaryBuffer<_DelayedValue<T>, E>, Disposable,
    @unchecked Sendable
{
    private let delivery: _SerialDelivery<T, E>
    private let interval: Double
    private let queue: Queue
    let upstream = MetaDisposable()
    private nonisolated(unsafe) var completionDue: Double?
    private nonisolated(unsafe) var timer: (any Disposable)?

    init(downstream: Subscriber<T, E>, interval: Double, queue: Queue, policy: SignalBuffer<E>, counters: _BufferCounts) {
        self.delivery = _SerialDelivery(downstream: downstream)
        self.interval = interval
        self.queue = queue
        super.init(policy: policy, counters: counters, consumerQueue: queue)
    }

    // MARK: Upstream events

    func putNext(_ value: T) {
        let delayed = _DelayedValue(value: value, due: queue.currentTime + interval)
        switch admit(delayed, consumerName: "queue") {
        case .accepted(let armTimer):
            if armTimer { arm(after: interval) }
        case .handled:
            break
        case .overflowed:
            // As an upstream error: at once, and nothing waiting is sent.
            stopTimer()
            delivery.putError(overflowError)
            upstream.dispose()
        }
    }

    func putCompletion() {
        let armTimer = mutex.withLock { () -> Bool in
            // The completion waits in the phase; it is due at `completionDue`.
            guard let armTimer = state.offerTerminal(.completed) else { return false }
            completionDue = queue.currentTime + interval
            return armTimer
        }
        if armTimer { arm(after: interval) }
    }

    func putError(_ error: E) {
        // The error goes ahead of the values waiting: they are drops.
        disposeBuffer(droppingWaiting: true)
        stopTimer()
        delivery.putError(error)
    }

    // MARK: The timer

    private func arm(after delay: Double) {
        // Not in the arming code's context: the firing sends several
        // senders' values (each carries its own when a propagation is
        // installed, see Boundaries/ContextCarrier.swift).
        let handle = queue._cancellableAfter(max(delay, 0)) { [self] in fire() }
        let cancel = mutex.withLock { () -> (any Disposable)? in
            // Disposed meanwhile: nothing may fire any more.
            if state.isDisposed { return handle }
            timer = handle
            return nil
        }
        cancel?.dispose()
    }

    private func stopTimer() {
        let handle = mutex.withLock { () -> (any Disposable)? in
            defer { timer = nil }
            return timer
        }
        handle?.dispose()
    }

    /// On `queue`: sends what is due, then re-arms for the next deadline.
    ///
    /// The due values go into the delivery under the mutex: an error
    /// (`putError` disposes the buffer under it first) then either follows
    /// them in the delivery or finds them still waiting and counts them as
    /// drops, so delivered + dropped == sent holds when the error arrives.
    /// Handed over after unlocking, a batch's values could be refused by a
    /// delivery the error had closed meanwhile, and counted only after the
    /// error was delivered.
    private func fire() {
        let context = _PushContext.pusher(_ContextHook.capture())
        var mustDrain = false
        var complete = false
        var next: Double?
        mutex.lock()
        guard !state.isDisposed else {
            mutex.unlock()
            return
        }
        timer = nil
        let now = queue.currentTime
        var taken = false
        var refused = 0
        while let head = state.waiting.first, head.due <= now {
            let queued = delivery.enqueue(state.waiting.popFirst()!.value, context)
            if queued.mustDrain { mustDrain = true }
            if !queued.taken { refused += 1 }
            taken = true
        }
        if taken { wakeBlockedProducersLocked() }
        // Refused only by a delivery a terminal event closed (none can be
        // pushed while values wait here, see above); counted all the same.
        if refused > 0 { counters?.recordDrops(refused) }
        if let head = state.waiting.first {
            next = head.due - now
        } else if let completionDue {
            if completionDue <= now {
                complete = true
                self.completionDue = nil
                _ = state.takeTerminal()
            } else {
                next = completionDue - now
            }
        } else {
            state.consumerActive = false
        }
        mutex.unlock()
        if mustDrain { delivery.drain() }
        if complete { delivery.putCompletion() }
        if let next { arm(after: next) }
    }

    // MARK: Disposal

    /// Disposes the upstream and cancels everything waiting.
    func dispose() {
        upstream.dispose()
        disposeBuffer()
        stopTimer()
    }
}

/// The upstream events of a bounded `delayEvents`.
struct _BoundedDelaySink<T: Sendable, E: Sendable>: _InlineSink {
    typealias Input = T
    typealias Failure = E

    let delay: _BoundedDelay<T, E>

    func putNext(_ value: T, from _: _SubscriptionBase) { delay.putNext(value) }
    func putError(_ error: E) { delay.putError(error) }
    func putCompletion() { delay.putCompletion() }
}

/// The shell of a bounded `delayEvents`, counted under the upstream's name.
func _boundedDelayEvents<T: Sendable, E: Sendable>(
    _ signal: Signal<T, E>,
    interval: Double,
    queue: Queue,
    buffer: SignalBuffer<E>
) -> Signal<T, E> {
    let account = _BufferAccount(name: signal.description, buffer: buffer)
    return Signal { subscriber in
        if _carriesContext {
            return _startCarryingContext(signal, to: subscriber) { upstream, downstream in
                _startBoundedDelay(upstream, downstream, interval: interval, queue: queue, buffer: buffer, account: account)
            }
        }
        return _startBoundedDelay(signal, subscriber, interval: interval, queue: queue, buffer: buffer, account: account)
    }._derived("delayEvents", from: signal, arguments: "\(interval), buffer: \(buffer)")
}

/// Subscribes `subscriber` to `signal` through a new bounded delay.
private func _startBoundedDelay<T: Sendable, E: Sendable>(
    _ signal: Signal<T, E>,
    _ subscriber: Subscriber<T, E>,
    interval: Double,
    queue: Queue,
    buffer: SignalBuffer<E>,
    account: _BufferAccount
) -> any Disposable {
    let delay = _BoundedDelay(
        downstream: subscriber, interval: interval, queue: queue, policy: buffer, counters: account.open())
    delay.upstream.set(signal._start(_BoundedDelaySink(delay: delay)))
    return delay
}
