// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// Timing: operators and signals driven by a clock. Everything goes through
// `Queue` and `Timer`, so on a queue made with `Queue(scheduler:)` (for example
// `VirtualTimeScheduler.makeQueue()`) the operators follow the scheduler's clock.
//
// This file: SwiftSignalKit's `delay` and `suspendAwareDelay` (both delay the
// subscription; ReactiveCocoa's `delay:`, which delays events, is `delayEvents`).

/// Subscribes to the signal on `queue`, `timeout` seconds after being
/// subscribed to.
///
/// SwiftSignalKit's `delay`.
///
/// Marble (timeout 2): `"a-b-|"` → `"--a-b-|"` (the whole subscription is
/// shifted, errors included).
///
/// - Parameters:
///   - timeout: the delay, in seconds.
///   - queue: where the timer runs and where upstream is subscribed.
/// - Returns: a signal that subscribes upstream from a one-shot `Timer` on
///   `queue`, armed (on `queue`) when it is subscribed to.
///
/// **Threading:** subscribing hops to `queue` (inline when already on it)
/// to arm the timer; upstream is subscribed on `queue` when the timer fires,
/// so a synchronous upstream's events arrive there. Later events arrive on
/// whatever thread upstream uses.
///
/// **Termination:** upstream's events are forwarded unchanged.
///
/// **Disposal:** before the timer fired, it is invalidated and upstream is
/// never subscribed; afterwards, disposes the upstream subscription.
public func delay<T, E>(_ timeout: Double, queue: Queue) -> (Signal<T, E>) -> Signal<T, E> {
    { signal in
        Signal { subscriber in
            let state = _DelayedSubscription(signal: signal, subscriber: subscriber, queue: queue)
            queue.async {
                state.arm(after: timeout)
            }
            return state
        }._derived("delay", from: signal, arguments: "\(timeout)")
    }
}

/// Like `delay`, but measures the delay on the wall clock, so that time the
/// machine spends suspended counts towards it.
///
/// SwiftSignalKit's `suspendAwareDelay`.
///
/// Marble (timeout 10, granularity 4): `"a-|"` → `"----------a-|"`; the clock
/// is checked at 4 and 8, then a final timer waits the remaining 2.
///
/// - Parameters:
///   - timeout: the delay, in seconds of wall-clock time.
///   - granularity: how often (seconds) a long delay checks the wall clock;
///     must be positive.
///   - queue: where the timers run and where upstream is subscribed.
/// - Returns: a signal that subscribes upstream on `queue` once `timeout`
///   seconds have passed on the wall clock since it was subscribed to.
///
/// When subscribed to, it records the start time on `queue` (the wall clock
/// `CLOCK_REALTIME` for Dispatch queues, the scheduler's clock for
/// `Queue(scheduler:)`). If `timeout <= 1.1 × granularity` it arms a one-shot
/// timer for `timeout`. Otherwise a repeating timer of period `granularity`
/// checks the clock; once `start + timeout − 1.1 × granularity <= now` it
/// stops and a one-shot timer waits the remaining `max(0, start + timeout −
/// now)` (no artificial minimum wait). Upstream is subscribed when that
/// timer fires.
///
/// **Threading:** as `delay`: timers run on `queue` and upstream is
/// subscribed there.
///
/// **Termination:** upstream's events are forwarded unchanged.
///
/// **Disposal:** before the final timer fired, stops the timers and upstream
/// is never subscribed; afterwards, disposes the upstream subscription.
public func suspendAwareDelay<T, E>(
    _ timeout: Double,
    granularity: Double = 4.0,
    queue: Queue
) -> (Signal<T, E>) -> Signal<T, E> {
    _signalKitRequire(
        granularity > 0,
        "suspendAwareDelay(_:granularity:queue:): granularity must be positive (got \(granularity)); "
            + "it is the period of the timer that checks the wall clock"
    )
    return { signal in
        Signal { subscriber in
            let state = _DelayedSubscription(signal: signal, subscriber: subscriber, queue: queue)
            queue.async {
                let start = queue._wallClockTime
                if timeout <= granularity * 1.1 {
                    state.arm(after: timeout)
                } else {
                    state.armRepeating(every: granularity) {
                        let now = queue._wallClockTime
                        guard start + timeout - granularity * 1.1 <= now else { return }
                        state.arm(after: max(0, start + timeout - now))
                    }
                }
            }
            return state
        }._derived("suspendAwareDelay", from: signal, arguments: "\(timeout)")
    }
}

// MARK: - Implementation

extension Queue {
    /// The clock `suspendAwareDelay` measures with: the scheduler's clock for
    /// a queue made with `Queue(scheduler:)`, else the wall clock
    /// (`CLOCK_REALTIME`, which keeps counting while the machine sleeps).
    var _wallClockTime: Double {
        scheduler == nil ? _wallClockSeconds() : currentTime
    }
}

/// The state of one `delay` / `suspendAwareDelay` subscription: waits on
/// timers, then subscribes upstream.
///
/// `@unchecked Sendable`: `pending`, `timer` and `disposed` are guarded by
/// `_LockedState`; `upstream` is a MetaDisposable. Timers, upstream and the
/// downstream subscriber are touched after unlocking.
final class _DelayedSubscription<T, E>: Disposable, @unchecked Sendable {
    private struct State {
        /// What to subscribe; taken when the subscription is made.
        var pending: (signal: Signal<T, E>, subscriber: Subscriber<T, E>)?
        /// The running timer. It references this state through its
        /// completion; the reference cycle is broken when the timer is
        /// replaced, fires for the last time or is disposed.
        var timer: Timer?
        var disposed = false
    }

    private let queue: Queue
    private let upstream = MetaDisposable()
    private let state: _LockedState<State>

    init(signal: Signal<T, E>, subscriber: Subscriber<T, E>, queue: Queue) {
        self.queue = queue
        self.state = _LockedState(State(pending: (signal, subscriber)))
    }

    /// Starts the final one-shot timer (replacing a running one): when it
    /// fires, upstream is subscribed. Runs on `queue`.
    func arm(after timeout: Double) {
        install(Timer(timeout: timeout, repeat: false, completion: { self.subscribe() }, queue: queue))
    }

    /// Starts a repeating timer calling `tick` on `queue` until it is
    /// replaced (by `arm(after:)`) or the subscription is disposed.
    func armRepeating(every interval: Double, tick: @escaping @Sendable () -> Void) {
        install(Timer(timeout: interval, repeat: true, completion: tick, queue: queue))
    }

    private func install(_ timer: Timer) {
        let (refused, previous) = state.withLock { state -> (Bool, Timer?) in
            let refused = state.disposed || state.pending == nil
            let previous = state.timer
            if !refused { state.timer = timer }
            return (refused, previous)
        }
        // An invalidated timer cannot fire again; releasing it (outside the
        // lock) breaks its reference to this state.
        previous?.invalidate()
        if !refused { timer.start() }
        withExtendedLifetime(previous) {}
    }

    private func subscribe() {
        let (disposed, taken, finished) = state.withLock { state in
            (state.disposed, state.pending.take(), state.timer.take())
        }
        finished?.invalidate()
        withExtendedLifetime(finished) {}
        guard !disposed, let (signal, subscriber) = taken else { return }
        upstream.set(signal._start(_ForwardSink(downstream: subscriber)))
    }

    func dispose() {
        let (taken, stopped) = state.withLock { state in
            state.disposed = true
            return (state.pending.take(), state.timer.take())
        }
        stopped?.invalidate()
        upstream.dispose()
        withExtendedLifetime((taken, stopped)) {}
    }
}
