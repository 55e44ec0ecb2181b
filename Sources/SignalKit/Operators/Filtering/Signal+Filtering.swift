// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Synchronization

// Filtering: operators that pass or drop values by a condition or by position, without
// ending the signal early: SwiftSignalKit's `filter`, `distinctUntilChanged` and
// `ignoreValues`; ReactiveCocoa's `skip`, `skipWhile`, `skipUntil` and `ignore`.
// Operators that end a signal early are in Taking.

/// Passes only the values for which `f` returns `true`.
///
/// SwiftSignalKit's `filter` (also ReactiveCocoa's `filter:`).
///
/// Marble: `"1-2-3-4-|"` → (`isEven`) `"--2---4-|"`
///
/// - Parameters:
///   - f: the predicate, called once per value per subscription.
/// - Returns: a function from a signal to the filtered signal.
///
/// - Threading: no thread hop.
/// - Termination: error and completion are forwarded unchanged.
/// - Disposal: returns the upstream handle.
@inlinable
public func filter<T, E>(_ f: @escaping @Sendable (T) -> Bool) -> (Signal<T, E>) -> Signal<T, E> {
    { signal in
        _fusing(
            signal,
            _SignalStage(
                feeding: { next in
                    { value, context in
                        if f(value) && !context.terminal.isTerminated { next(value, context) }
                    }
                },
                delivering: {
                    { value, context in
                        if f(value) && !context.terminal.isTerminated { context.deliver(value, as: E.self) }
                    }
                }
            )
        )._derived("filter", from: signal)
    }
}

/// Drops every value equal to the last value it emitted.
///
/// SwiftSignalKit's `distinctUntilChanged`.
///
/// Marble: `"1-1-2-2-1-|"` → `"1---2---1-|"`
///
/// The first value always passes. Comparison is against the last *emitted*
/// value (which, with `==`, is also the last received one). For optionals,
/// `nil` equals `nil`.
///
/// ```swift
/// let changes = readings |> map { $0.celsius } |> distinctUntilChanged
/// ```
///
/// - Parameters:
///   - signal: the upstream signal.
/// - Returns: the signal without consecutive repeats.
///
/// - Threading: no thread hop; the source must deliver serially (as every
///   source must).
/// - Termination: error and completion are forwarded unchanged.
/// - Disposal: returns the upstream handle.
public func distinctUntilChanged<T: Equatable & SendableMetatype, E>(_ signal: Signal<T, E>) -> Signal<T, E> {
    Signal { subscriber in
        signal._start(_DistinctUntilChangedSink(downstream: subscriber, isEqual: ==))
    }._derived("distinctUntilChanged", from: signal)
}

/// Drops every value that `isEqual` declares equal to the last value it
/// emitted.
///
/// SwiftSignalKit's `distinctUntilChanged(isEqual:)`.
///
/// Marble: `"a-A-b-B-|"` → (case-insensitive) `"a---b---|"`
///
/// For each value after the first, calls `isEqual(lastEmitted, value)`: if it
/// returns `true` the value is dropped (and not remembered), otherwise it is
/// emitted and becomes the new reference. A non-transitive `isEqual` therefore
/// compares against the last emitted value, never the last received one.
///
/// - Parameters:
///   - isEqual: `(lastEmitted, new) -> Bool`, called outside any lock.
/// - Returns: a function from a signal to the de-duplicated signal.
///
/// - Threading: no thread hop; the source must deliver serially.
/// - Termination: error and completion are forwarded unchanged.
/// - Disposal: returns the upstream handle.
public func distinctUntilChanged<T, E>(isEqual: @escaping @Sendable (T, T) -> Bool) -> (Signal<T, E>) -> Signal<T, E> {
    _lift("distinctUntilChanged") { subscriber in
        _DistinctUntilChangedSink(downstream: subscriber, isEqual: isEqual)
    }
}

struct _DistinctUntilChangedSink<T, E>: _PassThroughSink {
    typealias Input = T
    typealias Output = T
    typealias Failure = E
    let downstream: Subscriber<T, E>
    let isEqual: @Sendable (T, T) -> Bool
    let state = _DistinctUntilChangedState<T>()

    func putNext(_ value: T, from _: _SubscriptionBase) {
        // `isEqual` is user code: called outside the lock.
        if let previous = state.lastEmitted(), isEqual(previous, value) { return }
        // The replaced value is released here, outside the lock.
        _ = state.remember(value)
        downstream.putNext(value)
    }
}

/// The last value `distinctUntilChanged` emitted, per subscription.
final class _DistinctUntilChangedState<T>: @unchecked Sendable {
    // `@unchecked Sendable`: `last` is guarded by `_LockedState`.
    private let last = _LockedState<T?>(nil)

    func lastEmitted() -> T? {
        last.withLock { $0 }
    }

    /// Stores `value`; returns the value it replaces (to be released by the
    /// caller, outside the lock).
    func remember(_ value: T) -> T? {
        last.withLock { last in
            let replaced = last
            last = value
            return replaced
        }
    }
}

// MARK: - ignoreValues

/// Drops every value; forwards the error or the completion.
///
/// SwiftSignalKit's `ignoreValues`.
///
/// Marble: `"a-b-|"` → `"----|"`
///
/// - Parameters:
///   - signal: the source.
/// - Returns: a signal without values. Use it as `signal |> ignoreValues`.
/// - Threading: events stay on the source's thread.
/// - Termination: forwarded unchanged.
/// - Disposal: disposes the source.
public func ignoreValues<T, E>(_ signal: Signal<T, E>) -> Signal<Never, E> {
    _lift(signal, "ignoreValues") { _IgnoreValuesSink(downstream: $0) }
}

struct _IgnoreValuesSink<T, E>: _PassThroughSink {
    typealias Input = T
    typealias Output = Never
    typealias Failure = E
    let downstream: Subscriber<Never, E>

    func putNext(_ value: T, from _: _SubscriptionBase) {}
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

struct _SkipSink<T, E>: _PassThroughSink, ~Copyable {
    typealias Input = T
    typealias Output = T
    typealias Failure = E
    let downstream: Subscriber<T, E>
    let count: Int
    let seen = Synchronization.Atomic<Int>(0)

    func putNext(_ value: T, from _: _SubscriptionBase) {
        // Stop counting once past `count`: the counter never wraps.
        if seen.load(ordering: .relaxed) < count, seen.wrappingAdd(1, ordering: .relaxed).newValue <= count {
            return
        }
        downstream.putNext(value)
    }
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
public func skipWhile<T, E>(_ predicate: @escaping @Sendable (T) -> Bool) -> (Signal<T, E>) -> Signal<T, E> {
    _lift("skipWhileBlock") { subscriber in
        _SkipWhileSink(downstream: subscriber, skips: predicate)
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
public func skipUntil<T, E>(_ predicate: @escaping @Sendable (T) -> Bool) -> (Signal<T, E>) -> Signal<T, E> {
    _lift("skipUntilBlock") { subscriber in
        _SkipWhileSink(downstream: subscriber, skips: { !predicate($0) })
    }
}

struct _SkipWhileSink<T, E>: _PassThroughSink, ~Copyable {
    typealias Input = T
    typealias Output = T
    typealias Failure = E
    let downstream: Subscriber<T, E>
    let skips: @Sendable (T) -> Bool
    let passing = Synchronization.Atomic<Bool>(false)

    func putNext(_ value: T, from _: _SubscriptionBase) {
        if !passing.load(ordering: .acquiring) {
            if skips(value) { return }
            passing.store(true, ordering: .releasing)
        }
        downstream.putNext(value)
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
public func ignore<T: Equatable & Sendable, E>(_ value: T) -> (Signal<T, E>) -> Signal<T, E> {
    { signal in
        (signal |> filter { $0 != value })._derived("ignore", from: signal, arguments: _debugArgument(value))
    }
}
