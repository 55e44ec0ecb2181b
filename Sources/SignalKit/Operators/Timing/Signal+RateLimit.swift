// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// Timing, under the names other libraries use: a rate-limiting
// `throttle(for:queue:latest:)` (Combine's and RxSwift's throttle), and
// `debounce` for what ReactiveCocoa calls `throttle` (a quiet-time filter).

// MARK: - throttle(for:queue:latest:)

/// Sends at most one value per `interval`: the first value at once, then, at
/// the end of each window in which values arrived, the latest (or the first)
/// of them (Combine's and RxSwift's `throttle`).
///
/// Marble (interval 3, latest): `"ab-c--d----e|"` → `"a--c--d----e|"` —
/// `a` opens a window; `b` and `c` arrive in it and `c`, the latest, is sent
/// when it ends (and opens the next window, in which `d` arrives); `e`
/// arrives after a quiet window and goes out at once. With `latest: false`,
/// `b` is sent instead of `c`.
///
/// Not ReactiveCocoa's `throttle(_:queue:)`, which is a debounce (see
/// ``debounce(for:queue:)``): a value that keeps being replaced is never
/// sent there, here one value per window always is.
///
/// - Parameters:
///   - interval: the window length.
///   - queue: where the window timers run and the values that waited are sent.
///   - latest: whether a window sends its latest value (true) or its first.
/// - Returns: a function from a signal to the rate-limited signal.
///
/// - Threading: a value that opens a window is sent on the thread that
///   delivers it; one that waited, on `queue`. Never two at once.
/// - Termination: completion sends the value still waiting (if any), then
///   completes; an error is forwarded at once and the waiting value dropped.
/// - Disposal: disposes the upstream and cancels the window's timer.
public func throttle<T: Sendable, E>(
    for interval: Duration,
    queue: Queue,
    latest: Bool = true
) -> (Signal<T, E>) -> Signal<T, E> {
    let seconds = interval.seconds
    _signalKitRequire(seconds > 0, "throttle(for:queue:latest:): the interval must be positive, got \(interval)")
    return { signal in
        Signal { subscriber in
            let state = _RateLimitState<T, E>(downstream: subscriber, interval: seconds, queue: queue, latest: latest)
            let upstream = signal._start(_RateLimitSink(state: state))
            return ActionDisposable { [weak state] in  // weak: see `_WeakDisposable`
                upstream.dispose()
                state?.stop()
            }
        }._derived("throttle", from: signal, arguments: "for: \(interval), latest: \(latest)")
    }
}

// MARK: - debounce

/// Sends a value only once `interval` has passed without a newer one; when
/// the signal completes, sends the pending value first.
///
/// The same operator as ReactiveCocoa's `throttle(_:queue:)` (its
/// `throttle:`), under the name Combine and RxSwift give it. For one value
/// per window instead, see ``throttle(for:queue:latest:)``.
///
/// Marble (interval 2): `"a-b-----c-|"` → `"---b-----c|"`.
///
/// - Threading, termination, disposal: as `throttle(_:queue:)`.
public func debounce<T: Sendable, E>(for interval: Duration, queue: Queue) -> (Signal<T, E>) -> Signal<T, E> {
    debounce(interval.seconds, queue: queue)
}

/// ``debounce(for:queue:)`` with the interval in seconds.
public func debounce<T: Sendable, E>(_ interval: Double, queue: Queue) -> (Signal<T, E>) -> Signal<T, E> {
    { signal in
        let debounced = signal |> throttle(interval, queue: queue)
        return Signal(debounced.generator)._derived("debounce", from: signal, arguments: "\(interval)")
    }
}

// MARK: - Engine

/// The rate limit's window: open or not (the shared state's `extra`), and
/// the value waiting in it (the shared `_PendingTimerState` holds the value,
/// the timer and the termination; `generation` numbers the windows).
final class _RateLimitState<T: Sendable, E>: _PendingTimerState<T, E, Bool>, @unchecked Sendable {
    // `@unchecked Sendable`: the window (`extra`) is guarded by the base
    // class's `_LockedState`; `latest` is immutable.
    let latest: Bool

    init(downstream: Subscriber<T, E>, interval: Double, queue: Queue, latest: Bool) {
        self.latest = latest
        super.init(downstream: downstream, interval: interval, queue: queue, extra: false)
    }

    func putNext(_ value: T) {
        var replaced: T?
        var opened: Int?
        let latest = self.latest
        let context = _ContextHook.capture()
        let mustDrain = state.withLock { state -> Bool in
            guard !state.stopped else { return false }
            if !state.extra {
                state.extra = true
                state.generation += 1
                opened = state.generation
                return delivery.pushNext(value, .pusher(context))
            }
            if latest || state.pending == nil {
                swap(&replaced, &state.pending)
                state.pending = value
                state.pendingContext = context
            }
            return false
        }
        replaced = nil  // released outside the lock
        if let opened { arm(opened) }
        if mustDrain { delivery.drain() }
    }

    /// The end of window `number`: its waiting value goes out and opens the
    /// next window; a quiet window closes.
    override func timerFired(_ number: Int) {
        var firedTimer: (any Disposable)?
        var opened: Int?
        var context: _CapturedContext?
        let mustDrain = state.withLock { state -> Bool in
            guard !state.stopped, state.generation == number else { return false }
            swap(&firedTimer, &state.timer)
            swap(&context, &state.pendingContext)
            guard let value = state.pending.take() else {
                state.extra = false
                return false
            }
            state.generation += 1
            opened = state.generation
            return delivery.pushNext(value, .sender(context))
        }
        firedTimer = nil  // released outside the lock
        if let opened { arm(opened) }
        if mustDrain { delivery.drain() }
    }
}

/// Feeds the upstream's events into the state.
struct _RateLimitSink<T: Sendable, E>: _InlineSink {
    typealias Input = T
    typealias Failure = E

    let state: _RateLimitState<T, E>

    func putNext(_ value: T, from _: _SubscriptionBase) { state.putNext(value) }
    func putError(_ error: E) { state.putError(error) }
    func putCompletion() { state.putCompletion() }
}

extension Duration {
    /// The duration in seconds, as SignalKit's `Double`-seconds APIs take it.
    @usableFromInline
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) * 1e-18
    }
}
