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
// This file: ReactiveCocoa's `delay:`, here `delayEvents` (SwiftSignalKit's
// `delay(_:queue:)` delays the subscription).

// MARK: - delayEvents

/// Delays every value and the completion by `interval` seconds; an error is
/// forwarded at once (RAC's `delay:`).
///
/// Marble (interval 2): `"a-b-|"` → `"--a-b-|"`; `"a-#e"` → `"-#e"` (the
/// pending `a` is dropped)
///
/// Not SwiftSignalKit's `delay(_:queue:)`, which delays the subscription
/// (and so every event, errors included, by the same amount).
///
/// - Parameters:
///   - interval: seconds each value and the completion wait.
///   - queue: where the timers run and the delayed events are sent.
/// - Returns: a function from a signal to the delayed signal.
///
/// - Threading: values and the completion are sent on `queue`, in the order
///   they arrived; an error on the thread that delivers it.
/// - Termination: the completion arrives `interval` seconds after the
///   upstream's; an error arrives at once and cancels every pending event.
/// - Disposal: disposes the upstream and cancels every pending event.
public func delayEvents<T: Sendable, E: Sendable>(_ interval: Double, queue: Queue) -> (Signal<T, E>) -> Signal<T, E> {
    { signal in
        Signal { subscriber in
            let state = _DelayEventsState<T, E>(downstream: subscriber, interval: interval, queue: queue)
            return _startStopping(state, signal, _DelayEventsSink(state: state))
        }._derived("delayEvents", from: signal, arguments: "\(interval)")
    }
}

/// Delays every value and the completion by `interval` seconds, keeping at
/// most `buffer`'s limit of values waiting for their time.
///
/// SignalKit's bounded form of `delayEvents(_:queue:)` (`.unbounded` is that
/// operator itself). The values waiting for their time are the buffer: a
/// value dropped by the policy is never sent (see ``SignalBuffer``).
///
/// Marble (interval 2, `.droppingOldest(beyond: 2)`): `"abc-|"` →
/// `"---bc-|"` (`a` was dropped when `c` arrived)
///
/// - Parameters:
///   - interval: seconds each value and the completion wait.
///   - queue: where the timer runs and the delayed events are sent.
///   - buffer: how many values may wait, and what happens to one more.
/// - Returns: a function from a signal to the delayed signal.
///
/// - Threading: values and the completion are sent on `queue`, in the order
///   they arrived, each once its interval has passed: one timer, armed for
///   the oldest waiting value, sends every value that is due when it fires
///   (the unbounded form arms a timer per value). An error is sent on the
///   thread that delivers it. `.blocking` holds the producing thread until a
///   value is sent; a producer on `queue` itself would wait for the timer
///   that cannot fire, so it stops the process with a message.
/// - Termination: the completion arrives `interval` seconds after the
///   upstream's, after the values; an error (and `.failing`'s overflow)
///   arrives at once and drops everything waiting (counted as drops:
///   delivered + dropped == sent, see ``SignalBufferStatistics/drops``).
/// - Disposal: disposes the upstream, cancels the timer and releases the
///   waiting values at once.
public func delayEvents<T: Sendable, E: Sendable>(
    _ interval: Double,
    queue: Queue,
    buffer: SignalBuffer<E>
) -> (Signal<T, E>) -> Signal<T, E> {
    { signal in
        if buffer.isUnbounded { return signal |> delayEvents(interval, queue: queue) }
        return _boundedDelayEvents(signal, interval: interval, queue: queue, buffer: buffer)
    }
}

/// `delayEvents(_:queue:buffer:)` with a `Duration`.
public func delayEvents<T: Sendable, E: Sendable>(
    for interval: Duration,
    queue: Queue,
    buffer: SignalBuffer<E>
) -> (Signal<T, E>) -> Signal<T, E> {
    delayEvents(interval.seconds, queue: queue, buffer: buffer)
}

/// The scheduled events of one `delayEvents` subscription.
///
/// `@unchecked Sendable`: `scheduled`, `nextNumber` and `stopped` are guarded
/// by `_LockedState`; the rest is immutable.
final class _DelayEventsState<T: Sendable, E: Sendable>: _StoppableTimingState, @unchecked Sendable {
    let delivery: _SerialDelivery<T, E>
    let interval: Double
    let queue: Queue
    private struct State {
        /// Pending events' timers (nil until armed), by arrival number.
        var scheduled: [Int: (any Disposable)?] = [:]
        var nextNumber = 0
        var stopped = false
    }

    private let state = _LockedState(State())

    init(downstream: Subscriber<T, E>, interval: Double, queue: Queue) {
        self.delivery = _SerialDelivery(downstream: downstream)
        self.interval = interval
        self.queue = queue
    }

    /// Schedules `event` (a value or the completion).
    func schedule(_ event: _QueuedEvent<T, E>) {
        // The entry exists (with no handle yet) before the timer is armed,
        // so that a timer firing before its handle is stored still finds it.
        let number = state.withLock { (state: inout State) -> Int? in
            guard !state.stopped else { return nil }
            state.nextNumber += 1
            state.scheduled[state.nextNumber] = .some(nil)
            return state.nextNumber
        }
        guard let number else { return }
        // Strong: a pending event keeps the state (and the downstream) alive
        // until it is sent or cancelled, also once the upstream let go.
        let handle = queue.cancellableAfter(interval) { [self] in
            // The entry's handle is released outside the lock.
            let entry = self.state.withLock { $0.scheduled.removeValue(forKey: number) }
            if entry != nil { self.delivery.send(event) }
        }
        let disposeNow = state.withLock { (state: inout State) -> Bool in
            if state.scheduled.index(forKey: number) != nil {
                state.scheduled[number] = .some(handle)
                return false
            }
            return state.stopped
        }
        if disposeNow { handle.dispose() }
    }

    func putError(_ error: E) {
        stop()
        delivery.putError(error)
    }

    /// Cancels every pending event; nothing more is scheduled.
    func stop() {
        let pending = state.withLock { (state: inout State) -> [Int: (any Disposable)?] in
            state.stopped = true
            defer { state.scheduled = [:] }
            return state.scheduled
        }
        for case let handle? in pending.values {
            handle.dispose()
        }
    }
}

struct _DelayEventsSink<T: Sendable, E: Sendable>: _InlineSink {
    typealias Input = T
    typealias Failure = E

    let state: _DelayEventsState<T, E>

    func putNext(_ value: T, from _: _SubscriptionBase) { state.schedule(.next(value)) }
    func putError(_ error: E) { state.putError(error) }
    func putCompletion() { state.schedule(.completed) }
}
