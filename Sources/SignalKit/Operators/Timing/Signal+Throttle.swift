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
        return _startStopping(state, signal, _ThrottleSink(state: state, predicate: predicate))
    }
}

/// The state of a timing operator's subscription, which `stop()` ends:
/// nothing more is sent, every pending timer is cancelled.
protocol _StoppableTimingState: AnyObject, Sendable {
    func stop()
}

/// Subscribes `signal` with `sink` (which feeds `state`); the disposable
/// disposes the upstream, then stops `state`. It holds `state` weakly (see
/// `_WeakDisposable`): a pending timer keeps the state alive, the
/// disposable does not.
func _startStopping<State: _StoppableTimingState, S: _InlineSink & ~Copyable>(
    _ state: State,
    _ signal: Signal<S.Input, S.Failure>,
    _ sink: consuming S
) -> any Disposable {
    let upstream = signal._start(sink)
    return ActionDisposable { [weak state] in
        upstream.dispose()
        state?.stop()
    }
}

/// The state of a `_PendingTimerState`; `Extra` is the subclass's own.
struct _PendingTimer<T, Extra> {
    /// The value waiting for the timer.
    var pending: T?
    /// The context of the code that sent `pending` (its newest value, for a
    /// batch): the timer delivers it there, not in the context of the code
    /// that armed the timer (see `SignalContextPropagation`).
    var pendingContext: _CapturedContext?
    var timer: (any Disposable)?
    /// Numbers the timers: a timer only acts if it is still the current one.
    var generation = 0
    var stopped = false
    var extra: Extra
}

/// A value waiting for a timer, shared by `throttle` (the debounce),
/// `throttle(for:queue:latest:)` (the rate limit) and `bufferWithTime` (the
/// waiting value is the batch): the waiting value, the armed timer and the
/// termination, with the subclass's `Extra`, all in one `_LockedState`; a
/// subclass may say what a timer does when it fires (`timerFired`; by
/// default the current timer sends the waiting value).
///
/// `@unchecked Sendable`: `pending`, `timer`, `generation`, `stopped` and the
/// subclass's `extra` are guarded by `_LockedState`; the rest is immutable or
/// thread-safe.
class _PendingTimerState<T, E, Extra>: _StoppableTimingState, @unchecked Sendable {
    let delivery: _SerialDelivery<T, E>
    let interval: Double
    let queue: Queue
    let state: _LockedState<_PendingTimer<T, Extra>>

    init(downstream: Subscriber<T, E>, interval: Double, queue: Queue, extra: Extra) {
        self.delivery = _SerialDelivery(downstream: downstream)
        self.interval = interval
        self.queue = queue
        self.state = _LockedState(_PendingTimer(extra: extra))
    }

    /// Arms timer `number` (a `generation` taken under the lock).
    final func arm(_ number: Int) {
        // Strong: an armed timer keeps the state (and the downstream) alive
        // until it fires or is cancelled, also once the upstream let go.
        // Without the arming code's context: the value it sends carries its
        // own (`pendingContext`).
        let handle = queue._cancellableAfter(interval) { [self] in
            timerFired(number)
        }
        let keep = state.withLock { state -> Bool in
            guard !state.stopped, state.generation == number else { return false }
            state.timer = handle
            return true
        }
        if !keep { handle.dispose() }
    }

    /// What timer `number` does when it fires (called without the lock): if
    /// it is still the current one, sends the waiting value (if any).
    func timerFired(_ number: Int) {
        var flushed: T?
        var firedTimer: (any Disposable)?
        var context: _CapturedContext?
        let mustDrain = state.withLock { state -> Bool in
            guard state.generation == number else { return false }
            swap(&flushed, &state.pending)
            swap(&firedTimer, &state.timer)
            swap(&context, &state.pendingContext)
            if let flushed { return delivery.pushNext(flushed, .sender(context)) }
            return false
        }
        firedTimer = nil  // released outside the lock
        if mustDrain { delivery.drain() }
    }

    /// Sends the waiting value (if any) in the context it was sent in, then
    /// completes in the completer's.
    final func putCompletion() {
        var flushed: T?
        let completer = _ContextHook.capture()
        let (oldTimer, mustDrain) = state.withLock { state -> ((any Disposable)?, Bool) in
            swap(&flushed, &state.pending)
            let sender = state.pendingContext.take()
            let oldTimer = state.timer.take()
            state.stopped = true
            var mustDrain = false
            if let flushed { mustDrain = delivery.pushNext(flushed, .sender(sender)) }
            mustDrain = delivery.push(.completed, .pusher(completer)) || mustDrain
            return (oldTimer, mustDrain)
        }
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
        let oldTimer = state.withLock { state -> (any Disposable)? in
            swap(&dropped, &state.pending)
            state.pendingContext = nil
            state.stopped = true
            return state.timer.take()
        }
        oldTimer?.dispose()
        dropped = nil
    }
}

/// The debounce: a new value replaces the waiting one and restarts the timer.
final class _ThrottleState<T, E>: _PendingTimerState<T, E, Void>, @unchecked Sendable {
    // `@unchecked Sendable`: no fields of its own.

    init(downstream: Subscriber<T, E>, interval: Double, queue: Queue) {
        super.init(downstream: downstream, interval: interval, queue: queue, extra: ())
    }

    func putNext(_ value: T, throttled: Bool) {
        var replaced: T?
        var oldTimer: (any Disposable)?
        var armed: Int?
        let context = _ContextHook.capture()
        let outcome = state.withLock { state -> Bool? in
            guard !state.stopped else { return nil }
            swap(&replaced, &state.pending)
            swap(&oldTimer, &state.timer)
            state.generation += 1
            state.pendingContext = nil
            if throttled {
                state.pending = value
                state.pendingContext = context
                armed = state.generation
                return false
            }
            return delivery.pushNext(value, .pusher(context))
        }
        guard let mustDrain = outcome else { return }
        oldTimer?.dispose()
        replaced = nil
        if let armed { arm(armed) }
        if mustDrain { delivery.drain() }
    }
}

struct _ThrottleSink<T, E>: _InlineSink {
    typealias Input = T
    typealias Failure = E

    let state: _ThrottleState<T, E>
    let predicate: @Sendable (T) -> Bool

    func putNext(_ value: T, from _: _SubscriptionBase) { state.putNext(value, throttled: predicate(value)) }
    func putError(_ error: E) { state.putError(error) }
    func putCompletion() { state.putCompletion() }
}
