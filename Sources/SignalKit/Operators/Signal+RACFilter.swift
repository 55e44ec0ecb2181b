// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Synchronization

// RACFilter: ReactiveCocoa's operators that pass or drop values by position
// or condition: `takeUntil` (a trigger signal, or a predicate),
// `takeUntilReplacement`, `takeWhile`, `skip`, `skipWhile`, `skipUntil`,
// `takeLast(n)`, and first / last with a default value.
//
// SwiftSignalKit already has `take(_:)`, `take(until:)` (an action per
// value), `takeLast` (the last value) and `last` (the last value as an
// Optional); they keep their meaning. RAC's `takeLast:` is the overload
// `takeLast(_ count: Int)`, and RAC's `firstOrDefault:` /  a last value with a
// default are `firstOrDefault(_:)` / `lastOrDefault(_:)`.

// MARK: - takeUntil(trigger)

/// Forwards the signal until `trigger` sends a value or completes, then
/// completes (RAC's `takeUntil:`).
///
/// Marble: `"a-b-c-d-|"` until `"----x"` → `"a-b-|"`; a trigger that fails
/// (`"--#"`) is ignored: `"a-b-c-d-|"`.
///
/// ```swift
/// let untilLogout = events |> takeUntil(logout)
/// ```
///
/// - Parameters:
///   - trigger: subscribed first; its first value or its completion
///     completes the result. Its error is ignored (the result goes on until
///     the signal itself terminates), as in ReactiveCocoa. Its value and
///     error types are free.
/// - Returns: a function from a signal to the truncated signal.
///
/// - Threading: events are delivered on the thread of the input that sent
///   them, one at a time (the trigger's completion never overlaps a value).
/// - Termination: completes on the trigger's first value or completion;
///   otherwise forwards the signal's error or completion. If the trigger
///   fires while being subscribed, the signal is never subscribed.
/// - Disposal: termination or disposal disposes the trigger's subscription,
///   then the signal's.
public func takeUntil<T, E, U, F>(_ trigger: Signal<U, F>) -> (Signal<T, E>) -> Signal<T, E> {
    { signal in
        Signal { subscriber in
            let delivery = _SerialDelivery(downstream: subscriber)
            let triggerHandle = trigger._start(_TakeUntilTriggerSink<U, F, T, E>(delivery: delivery))
            if delivery.isClosed {
                return triggerHandle
            }
            let source = signal._start(_DeliveryForwardSink(delivery: delivery))
            return ActionDisposable {
                triggerHandle.dispose()
                source.dispose()
            }
        }._derived("takeUntil", from: signal, arguments: trigger.description)
    }
}

final class _TakeUntilTriggerSink<U, F, T, E>: _Sink<U, F>, @unchecked Sendable {
    // `@unchecked Sendable`: immutable.
    let delivery: _SerialDelivery<T, E>

    init(delivery: _SerialDelivery<T, E>) {
        self.delivery = delivery
    }

    override func putNext(_ value: U) { delivery.putCompletion() }
    override func putError(_ error: F) {}
    override func putCompletion() { delivery.putCompletion() }
}

// MARK: - takeUntilReplacement

/// Forwards the signal until `replacement` sends any event, then forwards
/// `replacement` instead (RAC's `takeUntilReplacement:`).
///
/// Marble: `"a-b-c-d-|"` with replacement `"---x-y-|"` → `"a-b-x-y-|"`
///
/// As in ReactiveCocoa, the signal's own completion does not complete the
/// result (the replacement may still come); its error does fail it.
///
/// - Parameters:
///   - replacement: subscribed first; from its first event (value, error or
///     completion) on, the signal is disposed and only its events are
///     forwarded.
/// - Returns: a function from a signal to the replaced signal.
///
/// - Threading: events are delivered on the thread of the input that sent
///   them, one at a time.
/// - Termination: the replacement's error or completion; or the signal's
///   error before the replacement's first event.
/// - Disposal: the signal is disposed at the replacement's first event;
///   termination or disposal disposes the replacement, then the signal.
public func takeUntilReplacement<T, E>(_ replacement: Signal<T, E>) -> (Signal<T, E>) -> Signal<T, E> {
    { signal in
        Signal { subscriber in
            let state = _ReplacementState<T, E>(downstream: subscriber)
            let replacementHandle = replacement._start(_ReplacementSink(state: state, isReplacement: true))
            state.setSource(signal._start(_ReplacementSink(state: state, isReplacement: false)))
            return ActionDisposable { [weak state] in  // weak: see `_WeakDisposable`
                replacementHandle.dispose()
                state?.disposeSource()
            }
        }._derived("takeUntilReplacement", from: signal, arguments: replacement.description)
    }
}

/// `@unchecked Sendable`: `replaced` and `source` are guarded by `mutex`.
final class _ReplacementState<T, E>: @unchecked Sendable {
    let delivery: _SerialDelivery<T, E>
    private let mutex = _Mutex()
    private var replaced = false
    private var sourceDisposed = false
    private var source: (any Disposable)?

    init(downstream: Subscriber<T, E>) {
        delivery = _SerialDelivery(downstream: downstream)
    }

    deinit {
        mutex.destroy()
    }

    func setSource(_ handle: any Disposable) {
        let disposeNow = mutex.withLock { () -> Bool in
            if sourceDisposed { return true }
            source = handle
            return false
        }
        if disposeNow { handle.dispose() }
    }

    func disposeSource() {
        let handle = mutex.withLock { () -> (any Disposable)? in
            sourceDisposed = true
            defer { source = nil }
            return source
        }
        handle?.dispose()
    }

    /// An event of the signal (`isReplacement == false`) or of the
    /// replacement.
    func send(_ event: _QueuedEvent<T, E>, isReplacement: Bool) {
        mutex.lock()
        if !isReplacement {
            var dropped = replaced
            // The signal's own completion never ends the result.
            if case .completed = event { dropped = true }
            if dropped {
                mutex.unlock()
                return
            }
        }
        let first = isReplacement && !replaced
        if first { replaced = true }
        let mustDrain = delivery.push(event)
        mutex.unlock()
        if first { disposeSource() }
        if mustDrain { delivery.drain() }
    }
}

final class _ReplacementSink<T, E>: _Sink<T, E>, @unchecked Sendable {
    // `@unchecked Sendable`: immutable.
    let state: _ReplacementState<T, E>
    let isReplacement: Bool

    init(state: _ReplacementState<T, E>, isReplacement: Bool) {
        self.state = state
        self.isReplacement = isReplacement
    }

    override func putNext(_ value: T) { state.send(.next(value), isReplacement: isReplacement) }
    override func putError(_ error: E) { state.send(.error(error), isReplacement: isReplacement) }
    override func putCompletion() { state.send(.completed, isReplacement: isReplacement) }
}

// MARK: - takeUntil / takeWhile (predicates)

/// Forwards values until `predicate` returns `true` for one, then completes
/// without forwarding that value (RAC's `takeUntilBlock:`).
///
/// Marble: `"1-2-3-4-|"` with `predicate = { $0 == 3 }` → `"1-2-|"`
///
/// - Parameters:
///   - predicate: called with each value until it returns `true`.
/// - Returns: a function from a signal to the truncated signal.
///
/// - Threading: no thread hop.
/// - Termination: completes when `predicate` returns `true`; otherwise
///   forwards the upstream's error or completion.
/// - Disposal: returns the upstream handle (the downstream's completion
///   disposes it).
public func takeUntil<T, E>(_ predicate: @escaping (T) -> Bool) -> (Signal<T, E>) -> Signal<T, E> {
    { signal in
        Signal { subscriber in
            signal._start(_TakeWhileSink(downstream: subscriber, passes: { !predicate($0) }))
        }._derived("takeUntilBlock", from: signal)
    }
}

/// Forwards values while `predicate` returns `true`; completes at the first
/// value for which it returns `false` (that value is dropped) (RAC's
/// `takeWhileBlock:`).
///
/// Marble: `"1-2-3-1-|"` with `predicate = { $0 < 3 }` → `"1-2-|"`
///
/// - Parameters:
///   - predicate: called with each value until it returns `false`.
/// - Returns: a function from a signal to the truncated signal.
///
/// - Threading: no thread hop.
/// - Termination: completes when `predicate` returns `false`; otherwise
///   forwards the upstream's error or completion.
/// - Disposal: returns the upstream handle.
public func takeWhile<T, E>(_ predicate: @escaping (T) -> Bool) -> (Signal<T, E>) -> Signal<T, E> {
    { signal in
        Signal { subscriber in
            signal._start(_TakeWhileSink(downstream: subscriber, passes: predicate))
        }._derived("takeWhileBlock", from: signal)
    }
}

final class _TakeWhileSink<T, E>: _Sink<T, E>, @unchecked Sendable {
    // `@unchecked Sendable`: `done` is atomic; the rest is immutable.
    let downstream: Subscriber<T, E>
    override var downstreamSubscription: _SubscriptionBase? { downstream._subscriptionBase }
    let passes: (T) -> Bool
    let done = Synchronization.Atomic<Bool>(false)

    init(downstream: Subscriber<T, E>, passes: @escaping (T) -> Bool) {
        self.downstream = downstream
        self.passes = passes
    }

    override func putNext(_ value: T) {
        // After completing, a source still emitting inside its generator
        // does not get `passes` called again.
        guard !done.load(ordering: .acquiring) else { return }
        if passes(value) {
            downstream.putNext(value)
        } else if !done.exchange(true, ordering: .acquiringAndReleasing) {
            downstream.putCompletion()
        }
    }

    override func putError(_ error: E) { downstream.putError(error) }
    override func putCompletion() { downstream.putCompletion() }
}

// MARK: - skip, skipWhile, skipUntil

/// Drops the first `count` values (RAC's `skip:`).
///
/// Marble: `"a-b-c-d-|"` with `count = 2` → `"----c-d-|"`
///
/// - Parameters:
///   - count: how many values to drop; `0` (or less) drops none.
/// - Returns: a function from a signal to the signal without its first
///   values.
///
/// - Threading: no thread hop.
/// - Termination: forwarded unchanged.
/// - Disposal: returns the upstream handle.
public func skip<T, E>(_ count: Int) -> (Signal<T, E>) -> Signal<T, E> {
    { signal in
        guard count > 0 else {
            return Signal { subscriber in
                signal._start(_ForwardSink(downstream: subscriber))
            }._derived("skip", from: signal, arguments: "\(count)")
        }
        return Signal { subscriber in
            signal._start(_SkipSink(downstream: subscriber, count: count))
        }._derived("skip", from: signal, arguments: "\(count)")
    }
}

final class _SkipSink<T, E>: _Sink<T, E>, @unchecked Sendable {
    // `@unchecked Sendable`: `seen` is atomic; the rest is immutable.
    let downstream: Subscriber<T, E>
    override var downstreamSubscription: _SubscriptionBase? { downstream._subscriptionBase }
    let count: Int
    let seen = Synchronization.Atomic<Int>(0)

    init(downstream: Subscriber<T, E>, count: Int) {
        self.downstream = downstream
        self.count = count
    }

    override func putNext(_ value: T) {
        // Stop counting once past `count`: the counter never wraps.
        if seen.load(ordering: .relaxed) < count, seen.wrappingAdd(1, ordering: .relaxed).newValue <= count {
            return
        }
        downstream.putNext(value)
    }

    override func putError(_ error: E) { downstream.putError(error) }
    override func putCompletion() { downstream.putCompletion() }
}

/// Drops values while `predicate` returns `true`; from the first value for
/// which it returns `false` on, forwards everything (RAC's
/// `skipWhileBlock:`).
///
/// Marble: `"1-2-3-1-|"` with `predicate = { $0 < 3 }` → `"----3-1-|"`
///
/// - Parameters:
///   - predicate: called with each value until it returns `false`, never
///     afterwards.
/// - Returns: a function from a signal to the signal without its first
///   values.
///
/// - Threading: no thread hop.
/// - Termination: forwarded unchanged.
/// - Disposal: returns the upstream handle.
public func skipWhile<T, E>(_ predicate: @escaping (T) -> Bool) -> (Signal<T, E>) -> Signal<T, E> {
    { signal in
        Signal { subscriber in
            signal._start(_SkipWhileSink(downstream: subscriber, skips: predicate))
        }._derived("skipWhileBlock", from: signal)
    }
}

/// Drops values until `predicate` returns `true` for one; that value and all
/// later ones are forwarded (RAC's `skipUntilBlock:`).
///
/// Marble: `"1-2-3-1-|"` with `predicate = { $0 == 3 }` → `"----3-1-|"`
///
/// - Parameters:
///   - predicate: called with each value until it returns `true`, never
///     afterwards.
/// - Returns: a function from a signal to the signal without its first
///   values.
///
/// - Threading: no thread hop.
/// - Termination: forwarded unchanged.
/// - Disposal: returns the upstream handle.
public func skipUntil<T, E>(_ predicate: @escaping (T) -> Bool) -> (Signal<T, E>) -> Signal<T, E> {
    { signal in
        Signal { subscriber in
            signal._start(_SkipWhileSink(downstream: subscriber, skips: { !predicate($0) }))
        }._derived("skipUntilBlock", from: signal)
    }
}

final class _SkipWhileSink<T, E>: _Sink<T, E>, @unchecked Sendable {
    // `@unchecked Sendable`: `passing` is atomic; the rest is immutable.
    let downstream: Subscriber<T, E>
    override var downstreamSubscription: _SubscriptionBase? { downstream._subscriptionBase }
    let skips: (T) -> Bool
    let passing = Synchronization.Atomic<Bool>(false)

    init(downstream: Subscriber<T, E>, skips: @escaping (T) -> Bool) {
        self.downstream = downstream
        self.skips = skips
    }

    override func putNext(_ value: T) {
        if !passing.load(ordering: .acquiring) {
            if skips(value) { return }
            passing.store(true, ordering: .releasing)
        }
        downstream.putNext(value)
    }

    override func putError(_ error: E) { downstream.putError(error) }
    override func putCompletion() { downstream.putCompletion() }
}

// MARK: - takeLast(n)

/// When the upstream completes, sends its last `count` values, then
/// completes (RAC's `takeLast:`).
///
/// Marble: `"a-b-c-|"` with `count = 2` → `"------(bc|)"`
///
/// SwiftSignalKit's `takeLast` (no count: `signal |> takeLast`) keeps the
/// last value only; this overload takes the count.
///
/// - Parameters:
///   - count: how many values to keep; `0` (or less) keeps none (the result
///     then only completes).
/// - Returns: a function from a signal to the signal of its last values.
///
/// - Threading: no thread hop; the values are sent on the completing thread.
/// - Termination: on completion sends the kept values, oldest first, then
///   completes; an error is forwarded without sending them.
/// - Disposal: returns the upstream handle; the kept values are released
///   when sent (or with the subscription).
public func takeLast<T, E>(_ count: Int) -> (Signal<T, E>) -> Signal<T, E> {
    { signal in
        Signal { subscriber in
            signal._start(_TakeLastCountSink(downstream: subscriber, count: max(0, count)))
        }._derived("takeLast", from: signal, arguments: "\(count)")
    }
}

/// The last `count` values, in a ring.
struct _RingBuffer<Element> {
    private var storage: [Element] = []
    private var start = 0
    let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// Appends `element`; returns the element it pushes out, if any.
    mutating func append(_ element: Element) -> Element? {
        guard capacity > 0 else { return element }
        if storage.count < capacity {
            storage.append(element)
            return nil
        }
        var evicted = element
        swap(&storage[start], &evicted)
        start = (start + 1) % capacity
        return evicted
    }

    /// Takes the elements out, oldest first.
    mutating func removeAll() -> [Element] {
        defer {
            storage = []
            start = 0
        }
        return Array(storage[start...] + storage[..<start])
    }
}

final class _TakeLastCountSink<T, E>: _Sink<T, E>, @unchecked Sendable {
    // `@unchecked Sendable`: the ring is guarded by `_GuardedValue`.
    let downstream: Subscriber<T, E>
    override var downstreamSubscription: _SubscriptionBase? { downstream._subscriptionBase }
    let ring: _GuardedValue<_RingBuffer<T>>

    init(downstream: Subscriber<T, E>, count: Int) {
        self.downstream = downstream
        self.ring = _GuardedValue(_RingBuffer(capacity: count))
    }

    override func putNext(_ value: T) {
        // The evicted value is released here, outside the lock.
        _ = ring.withLock { $0.append(value) }
    }

    override func putError(_ error: E) { downstream.putError(error) }

    override func putCompletion() {
        for value in ring.withLock({ $0.removeAll() }) {
            downstream.putNext(value)
        }
        downstream.putCompletion()
    }
}

// MARK: - firstOrDefault, lastOrDefault

/// Sends the first value and completes; if the upstream completes without a
/// value, sends `defaultValue` and completes (RAC's `firstOrDefault:`, as a
/// signal instead of a blocking call).
///
/// Marble: `"--a-b-|"` → `"--(a|)"`; `"---|"` → `"---(d|)"`
///
/// For the blocking-free accessor returning the value itself, see
/// `Signal.first()` (async).
///
/// - Parameters:
///   - defaultValue: sent when the upstream completes without a value.
/// - Returns: a function from a signal to a signal of exactly one value.
///
/// - Threading: no thread hop.
/// - Termination: completes after the first value (the downstream's
///   completion then disposes the upstream) or after the default; an error
///   before the first value is forwarded.
/// - Disposal: returns the upstream handle.
public func firstOrDefault<T, E>(_ defaultValue: T) -> (Signal<T, E>) -> Signal<T, E> {
    { signal in
        Signal { subscriber in
            signal._start(_FirstOrDefaultSink(downstream: subscriber, defaultValue: defaultValue))
        }._derived("firstOrDefault", from: signal, arguments: _debugArgument(defaultValue))
    }
}

final class _FirstOrDefaultSink<T, E>: _Sink<T, E>, @unchecked Sendable {
    // `@unchecked Sendable`: `done` is atomic; the rest is immutable.
    let downstream: Subscriber<T, E>
    override var downstreamSubscription: _SubscriptionBase? { downstream._subscriptionBase }
    let defaultValue: T
    let done = Synchronization.Atomic<Bool>(false)

    init(downstream: Subscriber<T, E>, defaultValue: T) {
        self.downstream = downstream
        self.defaultValue = defaultValue
    }

    override func putNext(_ value: T) {
        guard !done.exchange(true, ordering: .acquiringAndReleasing) else { return }
        downstream.putNext(value)
        downstream.putCompletion()
    }

    override func putError(_ error: E) { downstream.putError(error) }

    override func putCompletion() {
        if !done.exchange(true, ordering: .acquiringAndReleasing) {
            downstream.putNext(defaultValue)
        }
        downstream.putCompletion()
    }
}

/// When the upstream completes, sends its last value, or `defaultValue` if
/// it sent none, then completes.
///
/// Marble: `"a-b-|"` → `"----(b|)"`; `"---|"` → `"---(d|)"`
///
/// SwiftSignalKit's `last(signal:)` sends an Optional (`nil` when there was
/// no value); this one sends a `T`.
///
/// - Parameters:
///   - defaultValue: sent when the upstream completes without a value.
/// - Returns: a function from a signal to a signal of exactly one value.
///
/// - Threading: no thread hop; the value is sent on the completing thread.
/// - Termination: completion sends the value then completes; an error is
///   forwarded without sending.
/// - Disposal: returns the upstream handle.
public func lastOrDefault<T, E>(_ defaultValue: T) -> (Signal<T, E>) -> Signal<T, E> {
    { signal in
        Signal { subscriber in
            signal._start(_LastOrDefaultSink(downstream: subscriber, defaultValue: defaultValue))
        }._derived("lastOrDefault", from: signal, arguments: _debugArgument(defaultValue))
    }
}

final class _LastOrDefaultSink<T, E>: _Sink<T, E>, @unchecked Sendable {
    // `@unchecked Sendable`: the last value is guarded by `_GuardedValue`.
    let downstream: Subscriber<T, E>
    override var downstreamSubscription: _SubscriptionBase? { downstream._subscriptionBase }
    let defaultValue: T
    let last = _GuardedValue<T?>(nil)

    init(downstream: Subscriber<T, E>, defaultValue: T) {
        self.downstream = downstream
        self.defaultValue = defaultValue
    }

    override func putNext(_ value: T) {
        // The replaced value is released here, outside the lock.
        _ = last.exchange(value)
    }

    override func putError(_ error: E) { downstream.putError(error) }

    override func putCompletion() {
        downstream.putNext(last.exchange(nil) ?? defaultValue)
        downstream.putCompletion()
    }
}
