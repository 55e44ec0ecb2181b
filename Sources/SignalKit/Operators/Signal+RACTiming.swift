// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Dispatch
import Synchronization

// RACTiming: ReactiveCocoa's time-based signals and operators that
// SwiftSignalKit lacks: `interval` and `timer` signals, `throttle` (RAC's
// debounce, which flushes the pending value before completing),
// `bufferWithTime`, `failAfterTimeout` (RAC's `timeout:onScheduler:`) and
// `delayEvents` (RAC's `delay:`).
//
// Names kept apart from SwiftSignalKit's: its `throttled` runs inner signals
// one at a time (no clock); its `timeout(_:queue:alternate:)` switches to
// another signal when nothing arrives in time; its `delay(_:queue:)` delays
// the subscription. All keep their meaning.
//
// Everything goes through `Queue` (`cancellableAfter`, `Timer`), so on a
// queue made with `Queue(scheduler:)` — `VirtualTimeScheduler.makeQueue()`
// in tests — the operators follow the scheduler's clock. Operators whose
// events come both from their input and from a timer feed the downstream
// through a `_SerialDelivery` (never two callbacks at once, in the order the
// operator decided them).

// MARK: - interval, timer

/// A signal that sends 0, 1, 2, … on `queue`, one value every `interval`
/// seconds, starting `interval` seconds after it is subscribed; it never
/// completes (RAC's `+interval:onScheduler:withLeeway:`).
///
/// Marble (interval 1): `"-0-1-2-3-…"`
///
/// ReactiveCocoa sends the current date; SignalKit, which does not use
/// Foundation, sends the number of the tick (zero-based).
///
/// - Parameters:
///   - interval: seconds between ticks; must be positive.
///   - queue: where the timer runs and the values are sent.
///   - leeway: how late, in seconds, the system may fire a tick to coalesce
///     timers (Dispatch-backed queues only; ignored by `Queue(scheduler:)`
///     queues). Defaults to 0.
/// - Returns: a cold signal: each subscription has its own timer.
///
/// - Threading: values are sent on `queue`, one at a time.
/// - Termination: never completes, never fails.
/// - Disposal: stops the timer.
public func interval(_ interval: Double, queue: Queue, leeway: Double = 0) -> Signal<Int, NoError> {
    precondition(interval > 0, "interval(_:queue:leeway:): the interval must be positive, got \(interval)")
    return Signal { subscriber in
        let ticks = Synchronization.Atomic<Int>(0)
        let tick: () -> Void = {
            subscriber.putNext(ticks.wrappingAdd(1, ordering: .relaxed).oldValue)
        }
        if leeway > 0, queue.scheduler == nil {
            return _DispatchRepeatingTimer(interval: interval, leeway: leeway, queue: queue.queue, tick: tick)
        }
        let timer = Timer(timeout: interval, repeat: true, completion: tick, queue: queue)
        timer.start()
        return ActionDisposable { timer.invalidate() }
    }._combined("interval", inputs: [], arguments: "\(interval)")
}

/// A repeating Dispatch timer with a leeway. The handler does not retain
/// the timer: disposing (or releasing) it cancels the source.
///
/// `@unchecked Sendable`: `source` is immutable and a Dispatch source is
/// thread-safe (its `cancel` may be called from any thread); the handler runs
/// on the source's queue.
final class _DispatchRepeatingTimer: Disposable, @unchecked Sendable {
    private let source: any DispatchSourceTimer

    init(interval: Double, leeway: Double, queue: DispatchQueue, tick: @escaping () -> Void) {
        source = DispatchSource.makeTimerSource(queue: queue)
        source.schedule(
            deadline: .now() + interval,
            repeating: interval,
            leeway: .nanoseconds(Int(leeway * 1_000_000_000))
        )
        let handler = _UncheckedSendable(tick)
        source.setEventHandler { handler.value() }
        source.resume()
    }

    deinit {
        source.cancel()
    }

    func dispose() {
        source.cancel()
    }
}

/// A signal that sends `()` on `queue` after `delay` seconds, then
/// completes.
///
/// Marble (delay 2): `"--(()|)"`
///
/// - Parameters:
///   - delay: seconds from the subscription to the value.
///   - queue: where the timer runs and the events are sent.
/// - Returns: a cold signal: each subscription has its own timer.
///
/// - Threading: the value and the completion are sent on `queue`.
/// - Termination: completes right after its one value.
/// - Disposal: cancels the timer if it has not fired.
public func timer(_ delay: Double, queue: Queue) -> Signal<Void, NoError> {
    Signal { subscriber in
        queue.cancellableAfter(delay) {
            subscriber.putNext(())
            subscriber.putCompletion()
        }
    }._combined("timer", inputs: [], arguments: "\(delay)")
}

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
public func throttle<T, E>(_ interval: Double, queue: Queue) -> (Signal<T, E>) -> Signal<T, E> {
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
public func throttle<T, E>(
    _ interval: Double,
    queue: Queue,
    valuesPassingTest: @escaping (T) -> Bool
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
    predicate: @escaping (T) -> Bool
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

/// The pending value and its timer.
///
/// `@unchecked Sendable`: `pending`, `timer`, `generation` and `stopped` are
/// guarded by `mutex`; the rest is immutable.
final class _ThrottleState<T, E>: @unchecked Sendable {
    let delivery: _SerialDelivery<T, E>
    let interval: Double
    let queue: Queue
    private let mutex = _Mutex()
    private var pending: T?
    private var timer: (any Disposable)?
    /// Numbers the pending values: a timer only flushes its own value.
    private var generation = 0
    private var stopped = false

    init(downstream: Subscriber<T, E>, interval: Double, queue: Queue) {
        self.delivery = _SerialDelivery(downstream: downstream)
        self.interval = interval
        self.queue = queue
    }

    deinit {
        mutex.destroy()
    }

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

    private func arm(_ number: Int) {
        // Strong: a pending timer keeps the state (and the downstream) alive
        // until it fires or is cancelled, also once the upstream let go.
        let handle = queue.cancellableAfter(interval) { [self] in
            fire(number)
        }
        let keep = mutex.withLock { () -> Bool in
            guard !stopped, generation == number else { return false }
            timer = handle
            return true
        }
        if !keep { handle.dispose() }
    }

    private func fire(_ number: Int) {
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

    func putCompletion() {
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

    func putError(_ error: E) {
        stop()
        delivery.putError(error)
    }

    /// Drops the pending value and cancels its timer; nothing more is sent.
    func stop() {
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

final class _ThrottleSink<T, E>: _Sink<T, E>, @unchecked Sendable {
    // `@unchecked Sendable`: immutable.
    let state: _ThrottleState<T, E>
    let predicate: (T) -> Bool

    init(state: _ThrottleState<T, E>, predicate: @escaping (T) -> Bool) {
        self.state = state
        self.predicate = predicate
    }

    override func putNext(_ value: T) { state.putNext(value, throttled: predicate(value)) }
    override func putError(_ error: E) { state.putError(error) }
    override func putCompletion() { state.putCompletion() }
}

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
public func bufferWithTime<T, E>(_ interval: Double, queue: Queue) -> (Signal<T, E>) -> Signal<[T], E> {
    precondition(interval >= 0, "bufferWithTime(_:queue:): the interval must not be negative, got \(interval)")
    return { signal in
        Signal { subscriber in
            let state = _BufferState<T, E>(downstream: subscriber, interval: interval, queue: queue)
            let upstream = signal._start(_BufferSink(state: state))
            return ActionDisposable { [weak state] in  // weak: see `_WeakDisposable`
                upstream.dispose()
                state?.stop()
            }
        }._derived("bufferWithTime", from: signal, arguments: "\(interval)")
    }
}

/// The current batch and its timer.
///
/// `@unchecked Sendable`: `batch`, `timer`, `armedNumber` and `stopped` are
/// guarded by `mutex`; the rest is immutable.
final class _BufferState<T, E>: @unchecked Sendable {
    let delivery: _SerialDelivery<[T], E>
    let interval: Double
    let queue: Queue
    private let mutex = _Mutex()
    private var batch: [T] = []
    private var timer: (any Disposable)?
    /// The number of the batch whose timer is armed, if one is.
    private var armedNumber: Int?
    private var batches = 0
    private var stopped = false

    init(downstream: Subscriber<[T], E>, interval: Double, queue: Queue) {
        self.delivery = _SerialDelivery(downstream: downstream)
        self.interval = interval
        self.queue = queue
    }

    deinit {
        mutex.destroy()
    }

    func putNext(_ value: T) {
        let arming = mutex.withLock { () -> Int? in
            guard !stopped else { return nil }
            batch.append(value)
            guard armedNumber == nil else { return nil }
            batches += 1
            armedNumber = batches
            return batches
        }
        guard let number = arming else { return }
        // Strong: a pending timer keeps the state (and the downstream) alive
        // until it fires or is cancelled, also once the upstream let go.
        let handle = queue.cancellableAfter(interval) { [self] in
            fire(number)
        }
        let keep = mutex.withLock { () -> Bool in
            guard !stopped, armedNumber == number else { return false }
            timer = handle
            return true
        }
        if !keep { handle.dispose() }
    }

    private func fire(_ number: Int) {
        var sent: [T] = []
        var firedTimer: (any Disposable)?
        mutex.lock()
        var mustDrain = false
        if armedNumber == number {
            armedNumber = nil
            swap(&firedTimer, &timer)
            swap(&sent, &batch)
            if !sent.isEmpty { mustDrain = delivery.push(.next(sent)) }
        }
        mutex.unlock()
        firedTimer = nil  // released outside the lock
        if mustDrain { delivery.drain() }
    }

    func putCompletion() {
        var sent: [T] = []
        mutex.lock()
        swap(&sent, &batch)
        let oldTimer = timer
        timer = nil
        armedNumber = nil
        stopped = true
        var mustDrain = false
        if !sent.isEmpty { mustDrain = delivery.push(.next(sent)) }
        mustDrain = delivery.push(.completed) || mustDrain
        mutex.unlock()
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
        mutex.lock()
        swap(&dropped, &batch)
        let oldTimer = timer
        timer = nil
        armedNumber = nil
        stopped = true
        mutex.unlock()
        oldTimer?.dispose()
        dropped = []
    }
}

final class _BufferSink<T, E>: _Sink<T, E>, @unchecked Sendable {
    // `@unchecked Sendable`: immutable.
    let state: _BufferState<T, E>

    init(state: _BufferState<T, E>) {
        self.state = state
    }

    override func putNext(_ value: T) { state.putNext(value) }
    override func putError(_ error: E) { state.putError(error) }
    override func putCompletion() { state.putCompletion() }
}

// MARK: - failAfterTimeout

/// Fails with `error` unless the signal terminates within `timeout` seconds
/// of being subscribed (RAC's `timeout:onScheduler:`).
///
/// Marble (timeout 3): `"a-b-|"` → `"a-b-|"`; `"a-b-c-d-|"` → `"a-b-#error"`
/// (values do not restart the clock)
///
/// Not SwiftSignalKit's `timeout(_:queue:alternate:)`, which waits only for
/// the first event and then switches to another signal: this one bounds the
/// whole signal and fails.
///
/// - Parameters:
///   - timeout: seconds the signal has to complete or fail.
///   - queue: where the timer runs and the timeout error is sent.
///   - error: the error sent when the time is up.
/// - Returns: a function from a signal to the time-bounded signal.
///
/// - Threading: the signal's events stay on its thread; the timeout error is
///   sent on `queue`. Never two at once.
/// - Termination: the signal's own error or completion, or `error` when the
///   time is up (the signal is then disposed).
/// - Disposal: termination or disposal cancels the timer, then disposes the
///   signal.
public func failAfterTimeout<T, E>(_ timeout: Double, queue: Queue, error: E) -> (Signal<T, E>) -> Signal<T, E> {
    { signal in
        Signal { subscriber in
            let delivery = _SerialDelivery(downstream: subscriber)
            let timer = queue.cancellableAfter(timeout) {
                delivery.putError(error)
            }
            let source = signal._start(_DeliveryForwardSink(delivery: delivery))
            return ActionDisposable {
                timer.dispose()
                source.dispose()
            }
        }._derived("failAfterTimeout", from: signal, arguments: "\(timeout)")
    }
}

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
public func delayEvents<T, E>(_ interval: Double, queue: Queue) -> (Signal<T, E>) -> Signal<T, E> {
    { signal in
        Signal { subscriber in
            let state = _DelayEventsState<T, E>(downstream: subscriber, interval: interval, queue: queue)
            let upstream = signal._start(_DelayEventsSink(state: state))
            return ActionDisposable { [weak state] in  // weak: see `_WeakDisposable`
                upstream.dispose()
                state?.cancelAll()
            }
        }._derived("delayEvents", from: signal, arguments: "\(interval)")
    }
}

/// The scheduled events of one `delayEvents` subscription.
///
/// `@unchecked Sendable`: `scheduled`, `nextNumber` and `stopped` are guarded
/// by `mutex`; the rest is immutable.
final class _DelayEventsState<T, E>: @unchecked Sendable {
    let delivery: _SerialDelivery<T, E>
    let interval: Double
    let queue: Queue
    private let mutex = _Mutex()
    /// Pending events' timers (nil until armed), by arrival number.
    private var scheduled: [Int: (any Disposable)?] = [:]
    private var nextNumber = 0
    private var stopped = false

    init(downstream: Subscriber<T, E>, interval: Double, queue: Queue) {
        self.delivery = _SerialDelivery(downstream: downstream)
        self.interval = interval
        self.queue = queue
    }

    deinit {
        mutex.destroy()
    }

    /// Schedules `event` (a value or the completion).
    func schedule(_ event: _QueuedEvent<T, E>) {
        // The entry exists (with no handle yet) before the timer is armed,
        // so that a timer firing before its handle is stored still finds it.
        let number = mutex.withLock { () -> Int? in
            guard !stopped else { return nil }
            nextNumber += 1
            scheduled[nextNumber] = .some(nil)
            return nextNumber
        }
        guard let number else { return }
        // Strong: a pending event keeps the state (and the downstream) alive
        // until it is sent or cancelled, also once the upstream let go.
        let handle = queue.cancellableAfter(interval) { [self] in
            // The entry's handle is released outside the lock.
            let entry = self.mutex.withLock { self.scheduled.removeValue(forKey: number) }
            if entry != nil { self.delivery.send(event) }
        }
        let disposeNow = mutex.withLock { () -> Bool in
            if scheduled.index(forKey: number) != nil {
                scheduled[number] = .some(handle)
                return false
            }
            return stopped
        }
        if disposeNow { handle.dispose() }
    }

    func putError(_ error: E) {
        cancelAll()
        delivery.putError(error)
    }

    func cancelAll() {
        let pending = mutex.withLock { () -> [Int: (any Disposable)?] in
            stopped = true
            defer { scheduled = [:] }
            return scheduled
        }
        for case let handle? in pending.values {
            handle.dispose()
        }
    }
}

final class _DelayEventsSink<T, E>: _Sink<T, E>, @unchecked Sendable {
    // `@unchecked Sendable`: immutable.
    let state: _DelayEventsState<T, E>

    init(state: _DelayEventsState<T, E>) {
        self.state = state
    }

    override func putNext(_ value: T) { state.schedule(.next(value)) }
    override func putError(_ error: E) { state.putError(error) }
    override func putCompletion() { state.schedule(.completed) }
}
