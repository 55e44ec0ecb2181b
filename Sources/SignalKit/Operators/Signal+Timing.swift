// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// Timing: `delay`, `suspendAwareDelay`, `timeout`.
//
// Everything goes through `Queue` and `Timer`, so on a queue made with
// `Queue(scheduler:)` (for example `VirtualTimeScheduler.makeQueue()`) the
// operators follow the scheduler's clock.

/// Subscribes to the signal on `queue`, `timeout` seconds after being
/// subscribed to.
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
    precondition(
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

/// Switches to `alternate` if the signal sends nothing within `timeout`
/// seconds.
///
/// Marble (timeout 3): `"a-b-|"` → `"a-b-|"`; `"-----a-|"` with alternate
/// `"x-|"` → `"---x-|"`.
///
/// - Parameters:
///   - timeout: seconds to wait for the signal's first event.
///   - queue: where the timer runs and where `alternate` is subscribed.
///   - alternate: the signal that replaces this one when the timer fires.
/// - Returns: a signal that forwards the source's events, or, if the source
///   sends no event (value, error or completion) before the timer fires, the
///   events of `alternate`.
///
/// The source is subscribed first, then a one-shot `Timer` on `queue` is
/// started. Any source event invalidates the timer and is forwarded. When the
/// timer fires, `alternate` is subscribed on `queue` into the same
/// `MetaDisposable` as the source, which then disposes the source (so the
/// alternate is subscribed before the source is disposed). As in
/// SwiftSignalKit, a value the source sends synchronously while being
/// subscribed invalidates the timer before it is started, so the timer still
/// fires later (unless another event comes first); a synchronous error or
/// completion ends the whole subscription before the timer matters.
///
/// **Threading:** the source is subscribed on the subscribing thread; the
/// alternate on `queue`. Events are not re-dispatched.
///
/// **Termination:** the source's (or the alternate's) error and completion
/// are forwarded.
///
/// **Disposal:** the returned disposable is a `DisposableSet` of the timer's
/// invalidation and the `MetaDisposable` holding the current subscription,
/// disposed in that order.
public func timeout<T, E>(
    _ timeout: Double,
    queue: Queue,
    alternate: Signal<T, E>
) -> (Signal<T, E>) -> Signal<T, E> {
    { signal in
        Signal { subscriber in
            let current = MetaDisposable()
            let target = _TimeoutTarget(subscriber)
            let timer = Timer(
                timeout: timeout,
                repeat: false,
                completion: {
                    guard let subscriber = target.takeForFiring() else { return }
                    current.set(alternate._start(_ForwardSink(downstream: subscriber)))
                },
                queue: queue
            )
            current.set(signal._start(_TimeoutSink(downstream: subscriber, timer: timer, target: target)))
            target.markArmed()
            timer.start()
            let disposables = DisposableSet()
            disposables.add(ActionDisposable { timer.invalidate() })
            disposables.add(current)
            return disposables
        }._derived("timeout", from: signal, arguments: "\(timeout)")
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
/// `mutex`; `upstream` is a MetaDisposable. Timers, upstream and the
/// downstream subscriber are touched after unlocking.
final class _DelayedSubscription<T, E>: Disposable, @unchecked Sendable {
    private let queue: Queue
    private let upstream = MetaDisposable()
    private let mutex = _Mutex()
    /// What to subscribe; taken when the subscription is made.
    private var pending: (signal: Signal<T, E>, subscriber: Subscriber<T, E>)?
    /// The running timer. It references this state through its completion;
    /// the reference cycle is broken when the timer is replaced, fires for
    /// the last time or is disposed.
    private var timer: Timer?
    private var disposed = false

    init(signal: Signal<T, E>, subscriber: Subscriber<T, E>, queue: Queue) {
        self.queue = queue
        self.pending = (signal, subscriber)
    }

    deinit {
        mutex.destroy()
    }

    /// Starts the final one-shot timer (replacing a running one): when it
    /// fires, upstream is subscribed. Runs on `queue`.
    func arm(after timeout: Double) {
        install(Timer(timeout: timeout, repeat: false, completion: { self.subscribe() }, queue: queue))
    }

    /// Starts a repeating timer calling `tick` on `queue` until it is
    /// replaced (by `arm(after:)`) or the subscription is disposed.
    func armRepeating(every interval: Double, tick: @escaping () -> Void) {
        install(Timer(timeout: interval, repeat: true, completion: tick, queue: queue))
    }

    private func install(_ timer: Timer) {
        mutex.lock()
        let refused = disposed || pending == nil
        let previous = self.timer
        if !refused { self.timer = timer }
        mutex.unlock()
        // An invalidated timer cannot fire again; releasing it (outside the
        // lock) breaks its reference to this state.
        previous?.invalidate()
        if !refused { timer.start() }
        withExtendedLifetime(previous) {}
    }

    private func subscribe() {
        mutex.lock()
        let taken = disposed ? nil : pending
        pending = nil
        let finished = timer
        timer = nil
        mutex.unlock()
        finished?.invalidate()
        withExtendedLifetime(finished) {}
        guard let (signal, subscriber) = taken else { return }
        upstream.set(signal._start(_ForwardSink(downstream: subscriber)))
    }

    func dispose() {
        mutex.lock()
        disposed = true
        let taken = pending
        pending = nil
        let stopped = timer
        timer = nil
        mutex.unlock()
        stopped?.invalidate()
        upstream.dispose()
        withExtendedLifetime((taken, stopped)) {}
    }
}

/// The source's sink in `timeout`: every event stops the timer, then is
/// forwarded.
final class _TimeoutSink<T, E>: _Sink<T, E>, @unchecked Sendable {
    let downstream: Subscriber<T, E>
    override var downstreamSubscription: _SubscriptionBase? { downstream._subscriptionBase }
    let timer: Timer
    let target: _TimeoutTarget<T, E>

    init(downstream: Subscriber<T, E>, timer: Timer, target: _TimeoutTarget<T, E>) {
        self.downstream = downstream
        self.timer = timer
        self.target = target
    }

    @inline(__always)
    private func stopTimer() {
        timer.invalidate()
        target.sourceSentEvent()
    }

    override func putNext(_ value: T) {
        stopTimer()
        downstream.putNext(value)
    }

    override func putError(_ error: E) {
        stopTimer()
        downstream.putError(error)
    }

    override func putCompletion() {
        stopTimer()
        downstream.putCompletion()
    }
}

/// The downstream subscriber as the `timeout` timer's completion sees it.
///
/// The timer is held by the generator's disposable, so a completion that
/// captured the subscriber itself would keep the downstream subscription
/// alive through a reference cycle (subscription → its disposable → timer →
/// completion → subscriber) after the timer fired or was invalidated, even
/// once the source let go of its subscriber. Instead the subscriber is taken
/// out when the timer fires, and dropped when the source sends an event
/// after the timer was armed (the timer is then invalidated for good). An
/// event the source sends while being subscribed, before the timer is armed,
/// keeps it: the timer still fires then (SwiftSignalKit's behaviour).
///
/// `@unchecked Sendable`: `subscriber` and `armed` are guarded by `mutex`.
final class _TimeoutTarget<T, E>: @unchecked Sendable {
    private let mutex = _Mutex()
    private var subscriber: Subscriber<T, E>?
    private var armed = false

    init(_ subscriber: Subscriber<T, E>) {
        self.subscriber = subscriber
    }

    deinit {
        mutex.destroy()
    }

    /// Called right before the timer is started.
    func markArmed() {
        mutex.withLock { armed = true }
    }

    /// The subscriber, for the firing timer (nil if an event dropped it).
    func takeForFiring() -> Subscriber<T, E>? {
        mutex.withLock { subscriber.take() }
    }

    func sourceSentEvent() {
        var dropped: Subscriber<T, E>?
        mutex.withLock {
            if armed { swap(&dropped, &subscriber) }
        }
        // Released here, outside the lock.
        dropped = nil
    }
}
