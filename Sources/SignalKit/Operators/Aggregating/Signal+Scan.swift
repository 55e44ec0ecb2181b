// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// Aggregating: operators that fold values into accumulated results.
//
// This file: ReactiveCocoa's `scan` (running accumulation) and `aggregate`
// (fold). SwiftSignalKit's `reduceLeft` folds with a same-type accumulator;
// `aggregate` allows another type, an index and a per-subscription start value.

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
public func scan<T, A: Sendable, E>(_ start: A, _ reduce: @escaping @Sendable (A, T) -> A) -> (Signal<T, E>) -> Signal<A, E> {
    _scanOperator("scan", start, emitsEachStep: true) { accumulator, value, _ in reduce(accumulator, value) }
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
public func scan<T, A: Sendable, E>(
    _ start: A,
    reduceWithIndex: @escaping @Sendable (A, T, Int) -> A
) -> (Signal<T, E>) -> Signal<A, E> {
    _scanOperator("scan", start, emitsEachStep: true, reduceWithIndex)
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
public func aggregate<T, A: Sendable, E>(_ start: A, _ reduce: @escaping @Sendable (A, T) -> A) -> (Signal<T, E>) -> Signal<A, E>
{
    _scanOperator("aggregate", start, emitsEachStep: false) { accumulator, value, _ in reduce(accumulator, value) }
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
public func aggregate<T, A: Sendable, E>(
    _ start: A,
    reduceWithIndex: @escaping @Sendable (A, T, Int) -> A
) -> (Signal<T, E>) -> Signal<A, E> {
    _scanOperator("aggregate", start, emitsEachStep: false, reduceWithIndex)
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
public func aggregate<T, A: Sendable, E>(
    startFactory: @escaping @Sendable () -> A,
    _ reduce: @escaping @Sendable (A, T) -> A
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

/// `scan` and `aggregate` (named `name`): folds with `reduce`, sending each
/// step (`emitsEachStep`) or only the result at completion.
func _scanOperator<T, A: Sendable, E>(
    _ name: StaticString,
    _ start: A,
    emitsEachStep: Bool,
    _ reduce: @escaping @Sendable (A, T, Int) -> A
) -> (Signal<T, E>) -> Signal<A, E> {
    { signal in
        Signal { subscriber in
            signal._start(_ScanSink(downstream: subscriber, start: start, emitsEachStep: emitsEachStep, reduce: reduce))
        }._derived(name, from: signal, arguments: _debugArgument(start))
    }
}

/// The sink of `scan` and `aggregate`.
struct _ScanSink<T, A, E>: _PassThroughSink {
    typealias Input = T
    typealias Output = A
    typealias Failure = E
    let downstream: Subscriber<A, E>
    let emitsEachStep: Bool
    let reduce: (A, T, Int) -> A
    let state: _GuardedValue<(accumulator: A?, index: Int)>

    init(downstream: Subscriber<A, E>, start: A, emitsEachStep: Bool, reduce: @escaping @Sendable (A, T, Int) -> A) {
        self.emitsEachStep = emitsEachStep
        self.reduce = reduce
        self.state = _GuardedValue((start, 0))
        self.downstream = downstream
    }

    func putNext(_ value: T, from _: _SubscriptionBase) {
        // Read, reduce outside the lock (user code), write back: the source
        // delivers serially, so no step is lost.
        let (accumulator, index) = state.load()
        guard let accumulator else { return }
        let next = reduce(accumulator, value, index)
        // The previous accumulator is released outside the lock.
        _ = state.exchange((next, index + 1))
        if emitsEachStep { downstream.putNext(next) }
    }

    func putCompletion() {
        if !emitsEachStep, let accumulator = state.exchange((nil, 0)).accumulator {
            downstream.putNext(accumulator)
        }
        downstream.putCompletion()
    }
}
