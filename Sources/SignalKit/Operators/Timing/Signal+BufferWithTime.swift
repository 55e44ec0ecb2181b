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
    precondition(interval >= 0, "bufferWithTime(_:queue:): the interval must not be negative, got \(interval)")
    return { signal in
        Signal { subscriber in
            let state = _BufferState<T, E>(downstream: subscriber, interval: interval, queue: queue)
            let upstream = signal._start(_ForwardSink(downstream: state))
            return ActionDisposable { [weak state] in  // weak: see `_WeakDisposable`
                upstream.dispose()
                state?.stop()
            }
        }._derived("bufferWithTime", from: signal, arguments: "\(interval)")
    }
}

/// The current batch and its timer.
///
/// `@unchecked Sendable`: `batch`, `timer`, `armedNumber`, `batches` and
/// `stopped` are guarded by `_LockedState`; the rest is immutable or
/// thread-safe.
final class _BufferState<T, E>: @unchecked Sendable {
    private struct State {
        var batch: [T] = []
        var timer: (any Disposable)?
        /// The number of the batch whose timer is armed, if one is.
        var armedNumber: Int?
        var batches = 0
        var stopped = false
    }

    let delivery: _SerialDelivery<[T], E>
    let interval: Double
    let queue: Queue
    private let state = _LockedState(State())

    init(downstream: Subscriber<[T], E>, interval: Double, queue: Queue) {
        self.delivery = _SerialDelivery(downstream: downstream)
        self.interval = interval
        self.queue = queue
    }

    func putNext(_ value: T) {
        let arming = state.withLock { state -> Int? in
            guard !state.stopped else { return nil }
            state.batch.append(value)
            guard state.armedNumber == nil else { return nil }
            state.batches += 1
            state.armedNumber = state.batches
            return state.batches
        }
        guard let number = arming else { return }
        // Strong: a pending timer keeps the state (and the downstream) alive
        // until it fires or is cancelled, also once the upstream let go.
        let handle = queue.cancellableAfter(interval) { [self] in
            fire(number)
        }
        let keep = state.withLock { state -> Bool in
            guard !state.stopped, state.armedNumber == number else { return false }
            state.timer = handle
            return true
        }
        if !keep { handle.dispose() }
    }

    private func fire(_ number: Int) {
        var sent: [T] = []
        var firedTimer: (any Disposable)?
        let mustDrain = state.withLock { state -> Bool in
            guard state.armedNumber == number else { return false }
            state.armedNumber = nil
            swap(&firedTimer, &state.timer)
            swap(&sent, &state.batch)
            return !sent.isEmpty && delivery.push(.next(sent))
        }
        firedTimer = nil  // released outside the lock
        if mustDrain { delivery.drain() }
    }

    func putCompletion() {
        var sent: [T] = []
        let (oldTimer, mustDrain) = state.withLock { state -> ((any Disposable)?, Bool) in
            swap(&sent, &state.batch)
            let oldTimer = state.timer.take()
            state.armedNumber = nil
            state.stopped = true
            var mustDrain = false
            if !sent.isEmpty { mustDrain = delivery.push(.next(sent)) }
            mustDrain = delivery.push(.completed) || mustDrain
            return (oldTimer, mustDrain)
        }
        oldTimer?.dispose()
        if mustDrain { delivery.drain() }
    }

    func putError(_ error: E) {
        stop()
        delivery.putError(error)
    }

    /// Drops the batch and cancels its timer; nothing more is sent.
    func stop() {
        var dropped: [T] = []
        let oldTimer = state.withLock { state -> (any Disposable)? in
            swap(&dropped, &state.batch)
            state.armedNumber = nil
            state.stopped = true
            return state.timer.take()
        }
        oldTimer?.dispose()
        dropped = []
    }
}

/// A `_ForwardSink` feeds the upstream's events into the state. Its
/// `downstreamSubscription` stays nil, as the buffer's own sink always had it.
extension _BufferState: _EventReceiver {
    typealias Value = T
    typealias Failure = E
    var _forwardedSubscription: _SubscriptionBase? { nil }
}
