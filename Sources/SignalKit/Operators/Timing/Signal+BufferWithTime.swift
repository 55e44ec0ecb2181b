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
// This file: ReactiveCocoa's `bufferWithTime`.

// MARK: - bufferWithTime

/// Collects values and sends them as an array `interval` seconds after the
/// first value of each batch; flushes the batch when the signal completes
/// (RAC's `bufferWithTime:onScheduler:`).
///
/// Marble (interval 3): `"a-b---c-d-|"` → `"---[a,b]---[c,d]|"` (nothing is
/// sent for quiet periods)
///
/// - Parameters:
///   - interval: seconds from a batch's first value to its sending; must
///     not be negative.
///   - queue: where the timers run and the batches are sent.
/// - Returns: a function from a signal to the signal of non-empty batches.
///
/// - Threading: a batch is sent on `queue`; the batch flushed at completion,
///   the completion and the error on the thread that delivers them. Never
///   two at once.
/// - Termination: completion sends the current batch (if not empty), then
///   completes; an error is forwarded at once and the batch is dropped.
/// - Disposal: disposes the upstream and cancels the batch's timer.
public func bufferWithTime<T: Sendable, E>(_ interval: Double, queue: Queue) -> (Signal<T, E>) -> Signal<[T], E> {
    _signalKitRequire(interval >= 0, "bufferWithTime(_:queue:): the interval must not be negative, got \(interval)")
    return { signal in
        Signal { subscriber in
            let state = _BufferState<T, E>(downstream: subscriber, interval: interval, queue: queue)
            return _startStopping(state, signal, _ForwardSink(downstream: state))
        }._derived("bufferWithTime", from: signal, arguments: "\(interval)")
    }
}

/// The current batch and its timer: the batch is `_PendingTimerState`'s
/// waiting value (nil while no batch is open, never empty), and its timer,
/// armed by the batch's first value, sends it when it fires (the shared
/// `timerFired`). Completion flushes the batch, `stop()` drops it.
final class _BufferState<T, E>: _PendingTimerState<[T], E, Void>, @unchecked Sendable {
    // `@unchecked Sendable`: no fields of its own.

    init(downstream: Subscriber<[T], E>, interval: Double, queue: Queue) {
        super.init(downstream: downstream, interval: interval, queue: queue, extra: ())
    }

    func putNext(_ value: T) {
        let context = _ContextHook.capture()
        let opened = state.withLock { state -> Int? in
            guard !state.stopped else { return nil }
            state.pendingContext = context
            if state.pending != nil {
                state.pending!.append(value)
                return nil
            }
            state.pending = [value]
            state.generation += 1
            return state.generation
        }
        if let opened { arm(opened) }
    }
}

/// A `_ForwardSink` feeds the upstream's events into the state. Its
/// `downstreamSubscription` stays nil, as the buffer's own sink always had it.
extension _BufferState: _EventReceiver {
    typealias Value = T
    typealias Failure = E
    var _forwardedSubscription: _SubscriptionBase? { nil }
}
