// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Dispatch
import Synchronization

// Timing: operators and signals driven by a clock. Everything goes through
// `Queue` (`cancellableAfter`, `Timer`), so on a queue made with
// `Queue(scheduler:)` — `VirtualTimeScheduler.makeQueue()` in tests — the
// operators follow the scheduler's clock. Operators whose events come both
// from their input and from a timer feed the downstream through a
// `_SerialDelivery` (never two callbacks at once, in the order the operator
// decided them).
//
// This file: ReactiveCocoa's `throttle` (RAC's debounce, which flushes the
// pending value before completing; SwiftSignalKit's `throttled`, in Flattening,
// runs inner signals one at a time with no clock).

// MARK: - throttle

/// Sends a value only once `interval` seconds have passed without a newer
/// one; when the signal completes, sends the pending value first (RAC's
/// `throttle:`, a debounce).
///
/// Marble (interval 2): `"a-b-----c-|"` → `"---b-----c|"` — `a` is replaced
/// by `b` before its time is up; `b` goes out 2 s after it arrived; `c` is
/// flushed by the completion.
///
/// Not SwiftSignalKit's `throttled`, which runs inner signals one at a time.
///
/// - Parameters:
///   - interval: the quiet time, in seconds, a value must wait.
///   - queue: where the timers run and the waited values are sent.
/// - Returns: a function from a signal to the debounced signal.
///
/// - Threading: a value that waited is sent on `queue`; the pending value
///   flushed at completion, the completion and the error on the thread that
///   delivers them. Never two at once.
/// - Termination: completion sends the pending value (if any), then
///   completes; an error is forwarded at once and the pending value is
///   dropped.
/// - Disposal: disposes the upstream and cancels the pending timer.
public func throttle<T: Sendable, E>(_ interval: Double, queue: Queue) -> (Signal<T, E>) -> Signal<T, E> {
    { signal in
        _throttle(signal, interval: interval, queue: queue, predicate: { _ in true })
            ._derived("throttle", from: signal, arguments: "\(interval)")
    }
}

/// `throttle` for the values that pass `predicate`; the others are sent at
/// once and drop the pending value (RAC's `throttle:valuesPassingTest:`).
///
/// Marble (interval 2, throttling letters only): `"a-1-b---|"` → `"--1---b-|"`
/// — `1` is sent at once and drops `a`; `b` waits 2 s.
///
/// - Parameters:
///   - interval: the quiet time, in seconds, a throttled value must wait.
///   - queue: where the timers run and the waited values are sent.
///   - valuesPassingTest: whether a value is throttled (`true`) or sent at
///     once (`false`); called outside any lock.
/// - Returns: a function from a signal to the throttled signal.
///
/// - Threading: as `throttle(_:queue:)`; an unthrottled value is sent on the
///   thread that delivers it.
/// - Termination: as `throttle(_:queue:)`.
/// - Disposal: as `throttle(_:queue:)`.
public func throttle<T: Sendable, E>(
    _ interval: Double,
    queue: Queue,
    valuesPassingTest: @escaping @Sendable (T) -> Bool
) -> (Signal<T, E>) -> Signal<T, E> {
    { signal in
        _throttle(signal, interval: interval, queue: queue, predicate: valuesPassingTest)
            ._derived("throttle", from: signal, arguments: "\(interval)")
    }
}

private func _throttle<T, E>(
    _ signal: Signal<T, E>,
    interval: Double,
    queue: Queue,
    predicate: @escaping @Sendable (T) -> Bool
) -> Signal<T, E> {
    Signal { subscriber in
        let state = _ThrottleState<T, E>(downstream: subscriber, interval: interval, queue: queue)
        let upstream = signal._start(_ThrottleSink(state: state, predicate: predicate))
        return ActionDisposable { [weak state] in  // weak: see `_WeakDisposable`
            upstream.dispose()
            state?.stop()
        }
    }
}

/// A value waiting for a timer, shared by `throttle` (the debounce) and
/// `throttle(for:queue:latest:)` (the rate limit): the waiting value, the
/// armed timer and the termination, all guarded by `mutex`; a subclass says
/// what a timer does when it fires (`timerFired`).
///
/// `@unchecked Sendable`: `pending`, `timer`, `generation` and `stopped` are
/// guarded by `mutex` (subclasses' fields too); the rest is immutable.
class _PendingTimerState<T, E>: @unchecked Sendable {
    let delivery: _SerialDelivery<T, E>
    let interval: Double
    let queue: Queue
    let mutex = _Mutex()
    /// The value waiting for the timer.
    var pending: T?
    var timer: (any Disposable)?
    /// Numbers the timers: a timer only acts if it is still the current one.
    var generation = 0
    var stopped = false

    init(downstream: Subscriber<T, E>, interval: Double, queue: Queue) {
        self.delivery = _SerialDelivery(downstream: downstream)
        self.interval = interval
        self.queue = queue
    }

    deinit {
        mutex.destroy()
    }

    /// Arms timer `number` (a `generation` taken under the lock).
    final func arm(_ number: Int) {
        // Strong: an armed timer keeps the state (and the downstream) alive
        // until it fires or is cancelled, also once the upstream let go.
        let handle = queue.cancellableAfter(interval) { [self] in
            timerFired(number)
        }
        let keep = mutex.withLock { () -> Bool in
            guard !stopped, generation == number else { return false }
            timer = handle
            return true
        }
        if !keep { handle.dispose() }
    }

    /// What timer `number` does when it fires (called without the lock).
    func timerFired(_ number: Int) {
        fatalError("_PendingTimerState.timerFired is abstract")
    }

    /// Sends the waiting value (if any), then completes.
    final func putCompletion() {
        var flushed: T?
        mutex.lock()
        swap(&flushed, &pending)
        let oldTimer = timer
        timer = nil
        stopped = true
        var mustDrain = false
        if let flushed { mustDrain = delivery.push(.next(flushed)) }
        mustDrain = delivery.push(.completed) || mustDrain
        mutex.unlock()
        oldTimer?.dispose()
        if mustDrain { delivery.drain() }
    }

    /// Drops the waiting value and forwards the error at once.
    final func putError(_ error: E) {
        stop()
        delivery.putError(error)
    }

    /// Drops the waiting value and cancels the timer; nothing more is sent.
    final func stop() {
        var dropped: T?
        mutex.lock()
        swap(&dropped, &pending)
        let oldTimer = timer
        timer = nil
        stopped = true
        mutex.unlock()
        oldTimer?.dispose()
        dropped = nil
    }
}

/// The debounce: a new value replaces the waiting one and restarts the timer.
final class _ThrottleState<T, E>: _PendingTimerState<T, E>, @unchecked Sendable {
    // `@unchecked Sendable`: no fields of its own.

    func putNext(_ value: T, throttled: Bool) {
        var replaced: T?
        var oldTimer: (any Disposable)?
        var armed: Int?
        mutex.lock()
        guard !stopped else {
            mutex.unlock()
            return
        }
        swap(&replaced, &pending)
        swap(&oldTimer, &timer)
        generation += 1
        var mustDrain = false
        if throttled {
            pending = value
            armed = generation
        } else {
            mustDrain = delivery.push(.next(value))
        }
        mutex.unlock()
        oldTimer?.dispose()
        replaced = nil
        if let armed { arm(armed) }
        if mustDrain { delivery.drain() }
    }

    override func timerFired(_ number: Int) {
        var flushed: T?
        var firedTimer: (any Disposable)?
        mutex.lock()
        var mustDrain = false
        if generation == number {
            swap(&flushed, &pending)
            swap(&firedTimer, &timer)
            if let flushed { mustDrain = delivery.push(.next(flushed)) }
        }
        mutex.unlock()
        firedTimer = nil  // released outside the lock
        if mustDrain { delivery.drain() }
    }
}

final class _ThrottleSink<T, E>: _Sink<T, E>, @unchecked Sendable {
    // `@unchecked Sendable`: immutable.
    let state: _ThrottleState<T, E>
    let predicate: (T) -> Bool

    init(state: _ThrottleState<T, E>, predicate: @escaping @Sendable (T) -> Bool) {
        self.state = state
        self.predicate = predicate
    }

    override func putNext(_ value: T) { state.putNext(value, throttled: predicate(value)) }
    override func putError(_ error: E) { state.putError(error) }
    override func putCompletion() { state.putCompletion() }
}
