// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// RACTransform: ReactiveCocoa's value transformations that SwiftSignalKit
// lacks: `startWith`, `scan` (running accumulation), `aggregate` (fold),
// `combinePrevious`, `collect`, `mapReplace` and `ignore`.
//
// SwiftSignalKit's `reduceLeft` (Signal+Reduce.swift) folds with a
// same-type accumulator; `aggregate` allows another type, an index and a
// per-subscription start value.

// MARK: - startWith

/// Sends `value` first, then the signal's events (RAC's `startWith:`).
///
/// Marble: `"a-b-|"` with `startWith(x)` → `"x-a-b-|"`
///
/// - Parameters:
///   - value: sent synchronously at each subscription, before the signal is
///     subscribed.
/// - Returns: a function from a signal to the prefixed signal.
///
/// - Threading: `value` is sent on the subscribing thread; the signal's
///   events stay on its own thread.
/// - Termination: forwarded unchanged. (The signal is subscribed even if the
///   downstream terminated on `value`, e.g. after `take(1)`; it is then
///   disposed as soon as its subscription returns.)
/// - Disposal: returns the signal's handle.
public func startWith<T, E>(_ value: T) -> (Signal<T, E>) -> Signal<T, E> {
    { signal in
        Signal { subscriber in
            subscriber.putNext(value)
            return signal._start(_ForwardSink(downstream: subscriber))
        }._derived("startWith", from: signal, arguments: _debugArgument(value))
    }
}

// MARK: - scan

/// Sends the running accumulation: `reduce(start, v1)`, then
/// `reduce(that, v2)`, … (RAC's `scanWithStart:reduce:`).
///
/// Marble: `"1-2-3-|"` with `scan(0, +)` → `"1-3-6-|"`
///
/// - Parameters:
///   - start: the accumulator before the first value (not sent itself).
///   - reduce: `(accumulator, value) -> accumulator`, called once per value,
///     outside any lock.
/// - Returns: a function from a signal to the signal of accumulators.
///
/// - Threading: no thread hop; the source must deliver serially.
/// - Termination: forwarded unchanged.
/// - Disposal: returns the upstream handle.
public func scan<T, A, E>(_ start: A, _ reduce: @escaping (A, T) -> A) -> (Signal<T, E>) -> Signal<A, E> {
    { signal in
        Signal { subscriber in
            signal._start(
                _ScanSink(downstream: subscriber, start: start, emitsEachStep: true) { accumulator, value, _ in
                    reduce(accumulator, value)
                }
            )
        }._derived("scan", from: signal, arguments: _debugArgument(start))
    }
}

/// `scan` whose `reduce` also receives the zero-based index of the value
/// (RAC's `scanWithStart:reduceWithIndex:`).
///
/// Marble: `"a-b-|"` with `scan("", reduceWithIndex: { $0 + "\($2)\($1)" })`
/// → `"0a-0a1b-|"`
///
/// - Parameters:
///   - start: the accumulator before the first value.
///   - reduceWithIndex: `(accumulator, value, index) -> accumulator`.
/// - Returns: a function from a signal to the signal of accumulators.
///
/// - Threading: as `scan(_:_:)`.
/// - Termination: as `scan(_:_:)`.
/// - Disposal: as `scan(_:_:)`.
public func scan<T, A, E>(
    _ start: A,
    reduceWithIndex: @escaping (A, T, Int) -> A
) -> (Signal<T, E>) -> Signal<A, E> {
    { signal in
        Signal { subscriber in
            signal._start(_ScanSink(downstream: subscriber, start: start, emitsEachStep: true, reduce: reduceWithIndex))
        }._derived("scan", from: signal, arguments: _debugArgument(start))
    }
}

// MARK: - aggregate

/// Folds the values and sends the result when the upstream completes (RAC's
/// `aggregateWithStart:reduce:`).
///
/// Marble: `"1-2-3-|"` with `aggregate(0, +)` → `"------(6|)"`; `"--|"` →
/// `"--(0|)"`
///
/// - Parameters:
///   - start: the accumulator before the first value; sent as is when the
///     upstream completes without a value.
///   - reduce: `(accumulator, value) -> accumulator`, called once per value,
///     outside any lock.
/// - Returns: a function from a signal to a signal of one value.
///
/// - Threading: no thread hop; the result is sent on the completing thread.
/// - Termination: completion sends the accumulator then completes; an error
///   is forwarded without sending.
/// - Disposal: returns the upstream handle.
public func aggregate<T, A, E>(_ start: A, _ reduce: @escaping (A, T) -> A) -> (Signal<T, E>) -> Signal<A, E> {
    { signal in
        Signal { subscriber in
            signal._start(
                _ScanSink(downstream: subscriber, start: start, emitsEachStep: false) { accumulator, value, _ in
                    reduce(accumulator, value)
                }
            )
        }._derived("aggregate", from: signal, arguments: _debugArgument(start))
    }
}

/// `aggregate` whose `reduce` also receives the zero-based index of the
/// value (RAC's `aggregateWithStart:reduceWithIndex:`).
///
/// Marble: `"a-b-|"` with `aggregate("", reduceWithIndex: { $0 + "\($2)\($1)" })`
/// → `"----(0a1b|)"`
///
/// - Parameters:
///   - start: the accumulator before the first value.
///   - reduceWithIndex: `(accumulator, value, index) -> accumulator`.
/// - Returns: a function from a signal to a signal of one value.
///
/// - Threading: as `aggregate(_:_:)`.
/// - Termination: as `aggregate(_:_:)`.
/// - Disposal: as `aggregate(_:_:)`.
public func aggregate<T, A, E>(
    _ start: A,
    reduceWithIndex: @escaping (A, T, Int) -> A
) -> (Signal<T, E>) -> Signal<A, E> {
    { signal in
        Signal { subscriber in
            signal._start(_ScanSink(downstream: subscriber, start: start, emitsEachStep: false, reduce: reduceWithIndex))
        }._derived("aggregate", from: signal, arguments: _debugArgument(start))
    }
}

/// `aggregate` whose start value is created at each subscription (RAC's
/// `aggregateWithStartFactory:reduce:`), for a mutable accumulator object
/// that must not be shared between subscriptions.
///
/// Marble: `"1-2-|"` with `aggregate(startFactory: { [] }, { $0 + [$1] })` →
/// `"----([1,2]|)"`
///
/// - Parameters:
///   - startFactory: called once per subscription, on the subscribing
///     thread, before the upstream is subscribed.
///   - reduce: `(accumulator, value) -> accumulator`.
/// - Returns: a function from a signal to a signal of one value.
///
/// - Threading: as `aggregate(_:_:)`.
/// - Termination: as `aggregate(_:_:)`.
/// - Disposal: as `aggregate(_:_:)`.
public func aggregate<T, A, E>(
    startFactory: @escaping () -> A,
    _ reduce: @escaping (A, T) -> A
) -> (Signal<T, E>) -> Signal<A, E> {
    { signal in
        Signal { subscriber in
            signal._start(
                _ScanSink(downstream: subscriber, start: startFactory(), emitsEachStep: false) { accumulator, value, _ in
                    reduce(accumulator, value)
                }
            )
        }._derived("aggregate", from: signal)
    }
}

/// The sink of `scan` and `aggregate`.
final class _ScanSink<T, A, E>: _Sink<T, E>, @unchecked Sendable {
    // `@unchecked Sendable`: the accumulator and index are guarded by
    // `_GuardedValue`; the rest is immutable.
    let downstream: Subscriber<A, E>
    override var downstreamSubscription: _SubscriptionBase? { downstream._subscriptionBase }
    let emitsEachStep: Bool
    let reduce: (A, T, Int) -> A
    let state: _GuardedValue<(accumulator: A?, index: Int)>

    init(downstream: Subscriber<A, E>, start: A, emitsEachStep: Bool, reduce: @escaping (A, T, Int) -> A) {
        self.downstream = downstream
        self.emitsEachStep = emitsEachStep
        self.reduce = reduce
        self.state = _GuardedValue((start, 0))
    }

    override func putNext(_ value: T) {
        // Read, reduce outside the lock (user code), write back: the source
        // delivers serially, so no step is lost.
        let (accumulator, index) = state.load()
        guard let accumulator else { return }
        let next = reduce(accumulator, value, index)
        // The previous accumulator is released outside the lock.
        _ = state.exchange((next, index + 1))
        if emitsEachStep { downstream.putNext(next) }
    }

    override func putError(_ error: E) { downstream.putError(error) }

    override func putCompletion() {
        if !emitsEachStep, let accumulator = state.exchange((nil, 0)).accumulator {
            downstream.putNext(accumulator)
        }
        downstream.putCompletion()
    }
}

// MARK: - combinePrevious

/// Combines each value with the one before it (`start` for the first) (RAC's
/// `combinePreviousWithStart:reduce:`).
///
/// Marble: `"1-2-4-|"` with `combinePrevious(0, { $1 - $0 })` → `"1-1-2-|"`
///
/// - Parameters:
///   - start: the "previous" of the first value.
///   - reduce: `(previous, current) -> result`, called once per value,
///     outside any lock.
/// - Returns: a function from a signal to the signal of results.
///
/// - Threading: no thread hop; the source must deliver serially.
/// - Termination: forwarded unchanged.
/// - Disposal: returns the upstream handle.
public func combinePrevious<T, R, E>(
    _ start: T,
    _ reduce: @escaping (T, T) -> R
) -> (Signal<T, E>) -> Signal<R, E> {
    { signal in
        Signal { subscriber in
            signal._start(_CombinePreviousSink(downstream: subscriber, start: start, reduce: reduce))
        }._derived("combinePrevious", from: signal, arguments: _debugArgument(start))
    }
}

final class _CombinePreviousSink<T, R, E>: _Sink<T, E>, @unchecked Sendable {
    // `@unchecked Sendable`: `previous` is guarded by `_GuardedValue`.
    let downstream: Subscriber<R, E>
    override var downstreamSubscription: _SubscriptionBase? { downstream._subscriptionBase }
    let reduce: (T, T) -> R
    let previous: _GuardedValue<T>

    init(downstream: Subscriber<R, E>, start: T, reduce: @escaping (T, T) -> R) {
        self.downstream = downstream
        self.reduce = reduce
        self.previous = _GuardedValue(start)
    }

    override func putNext(_ value: T) {
        let before = previous.exchange(value)
        downstream.putNext(reduce(before, value))
    }

    override func putError(_ error: E) { downstream.putError(error) }
    override func putCompletion() { downstream.putCompletion() }
}

// MARK: - collect

/// Sends all the values as one array when the upstream completes (RAC's
/// `collect`).
///
/// Marble: `"a-b-c-|"` → `"------([a,b,c]|)"`; `"--|"` → `"--([]|)"`
///
/// - Parameters:
///   - signal: the upstream signal.
/// - Returns: a signal of one array. Use it as `signal |> collect`.
///
/// - Threading: no thread hop; the array is sent on the completing thread.
/// - Termination: completion sends the array then completes; an error is
///   forwarded and the values are dropped.
/// - Disposal: returns the upstream handle.
public func collect<T, E>(_ signal: Signal<T, E>) -> Signal<[T], E> {
    Signal { subscriber in
        signal._start(_CollectSink(downstream: subscriber))
    }._derived("collect", from: signal)
}

final class _CollectSink<T, E>: _Sink<T, E>, @unchecked Sendable {
    // `@unchecked Sendable`: `values` is guarded by `_GuardedValue`.
    let downstream: Subscriber<[T], E>
    override var downstreamSubscription: _SubscriptionBase? { downstream._subscriptionBase }
    let values = _GuardedValue<[T]>([])

    init(downstream: Subscriber<[T], E>) {
        self.downstream = downstream
    }

    override func putNext(_ value: T) {
        values.withLock { $0.append(value) }
    }

    override func putError(_ error: E) {
        // The values are released here, outside the lock.
        _ = values.exchange([])
        downstream.putError(error)
    }

    override func putCompletion() {
        downstream.putNext(values.exchange([]))
        downstream.putCompletion()
    }
}

// MARK: - mapReplace, ignore

/// Replaces every value with `value` (RAC's `mapReplace:`).
///
/// Marble: `"a-b-|"` with `mapReplace(x)` → `"x-x-|"`
///
/// - Parameters:
///   - value: sent for every upstream value.
/// - Returns: a function from a signal to the signal of `value`s.
///
/// - Threading: no thread hop.
/// - Termination: forwarded unchanged.
/// - Disposal: returns the upstream handle.
public func mapReplace<T, R, E>(_ value: R) -> (Signal<T, E>) -> Signal<R, E> {
    { signal in
        (signal |> map { _ in value })._derived("mapReplace", from: signal, arguments: _debugArgument(value))
    }
}

/// Drops every value equal to `value` (RAC's `ignore:`).
///
/// Marble: `"a-b-a-c-|"` with `ignore(a)` → `"--b---c-|"`
///
/// - Parameters:
///   - value: the value to drop (compared with `==`; `nil` works for
///     Optional values).
/// - Returns: a function from a signal to the filtered signal.
///
/// - Threading: no thread hop.
/// - Termination: forwarded unchanged.
/// - Disposal: returns the upstream handle.
public func ignore<T: Equatable, E>(_ value: T) -> (Signal<T, E>) -> Signal<T, E> {
    { signal in
        (signal |> filter { $0 != value })._derived("ignore", from: signal, arguments: _debugArgument(value))
    }
}
