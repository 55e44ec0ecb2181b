// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// Mapping: transforming values (`map`, `filter`, `flatMap`), errors
// (`mapError`, `castError`) and dropping repeats (`distinctUntilChanged`).
// Every operator here subscribes upstream synchronously and returns the
// upstream handle unchanged: error and completion pass straight through.

/// Transforms every value with `f`.
///
/// Marble: `"a-b-c-|"` → `"f(a)-f(b)-f(c)-|"`
///
/// ```swift
/// let doubled = numbers |> map { $0 * 2 }
/// ```
///
/// - Parameters:
///   - f: called once per value per subscription, on the thread that
///     delivers the value.
/// - Returns: a function from a signal to the mapped signal (use with `|>`).
///
/// - Threading: no thread hop: `f` and the downstream callbacks run on the
///   thread the upstream delivers on.
/// - Termination: error and completion are forwarded unchanged.
/// - Disposal: disposing the subscription disposes the upstream subscription
///   (the generator returns the upstream handle).
@inlinable
public func map<T, E, R>(_ f: @escaping (T) -> R) -> (Signal<T, E>) -> Signal<R, E> {
    { signal in
        _fusing(signal) { next, terminal in
            { value in
                let result = f(value)
                if !terminal.isTerminated { next(result) }
            }
        }._derived("map", from: signal)
    }
}

/// Passes only the values for which `f` returns `true`.
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
public func filter<T, E>(_ f: @escaping (T) -> Bool) -> (Signal<T, E>) -> Signal<T, E> {
    { signal in
        _fusing(signal) { next, terminal in
            { value in
                if f(value) && !terminal.isTerminated { next(value) }
            }
        }._derived("filter", from: signal)
    }
}

/// Transforms the non-nil values of a signal of optionals; `nil` passes as
/// `nil` (an optional map, not a flattening).
///
/// Marble: `"a-nil-c-|"` → `"f(a)-nil-f(c)-|"`
///
/// - Parameters:
///   - f: called for each non-nil value.
/// - Returns: a function from a `Signal<T?, E>` to a `Signal<R?, E>`.
///
/// - Threading: no thread hop.
/// - Termination: error and completion are forwarded unchanged.
/// - Disposal: returns the upstream handle.
public func flatMap<T, E, R>(_ f: @escaping (T) -> R) -> (Signal<T?, E>) -> Signal<R?, E> {
    { signal in
        Signal { subscriber in
            signal._start(_OptionalMapSink(downstream: subscriber, transform: f))
        }._derived("flatMap", from: signal)
    }
}

/// Transforms the error with `f`.
///
/// Marble: `"a-b-#e"` → `"a-b-#f(e)"`
///
/// - Parameters:
///   - f: called with the upstream error, at most once per subscription.
/// - Returns: a function from a `Signal<T, E>` to a `Signal<T, R>`.
///
/// - Threading: no thread hop.
/// - Termination: the mapped error terminates; completion is forwarded.
/// - Disposal: returns the upstream handle.
public func mapError<T, E, R>(_ f: @escaping (E) -> R) -> (Signal<T, E>) -> Signal<T, R> {
    { signal in
        Signal { subscriber in
            signal._start(_MapErrorSink(downstream: subscriber, transform: f))
        }._derived("mapError", from: signal)
    }
}

/// Retypes a signal that cannot fail as one that fails with `E`.
///
/// Marble: `"a-b-|"` → `"a-b-|"`
///
/// - Parameters:
///   - type: the new error type.
/// - Returns: a function from a `Signal<T, NoError>` to a `Signal<T, E>`.
///
/// - Threading: no thread hop.
/// - Termination: completion is forwarded; the result never fails.
/// - Disposal: returns the upstream handle.
public func castError<T, E>(_ type: E.Type) -> (Signal<T, NoError>) -> Signal<T, E> {
    { signal in
        Signal { subscriber in
            signal._start(_CastErrorSink(downstream: subscriber))
        }._derived("castError", from: signal, arguments: "\(E.self)")
    }
}

/// Drops every value equal to the last value it emitted.
///
/// Marble: `"1-1-2-2-1-|"` → `"1---2---1-|"`
///
/// The first value always passes. Comparison is against the last *emitted*
/// value (which, with `==`, is also the last received one). For optionals,
/// `nil` equals `nil`.
///
/// ```swift
/// let changes = readings |> distinctUntilChanged
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
public func distinctUntilChanged<T: Equatable, E>(_ signal: Signal<T, E>) -> Signal<T, E> {
    Signal { subscriber in
        signal._start(_DistinctUntilChangedSink(downstream: subscriber, isEqual: ==))
    }._derived("distinctUntilChanged", from: signal)
}

/// Drops every value that `isEqual` declares equal to the last value it
/// emitted.
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
public func distinctUntilChanged<T, E>(isEqual: @escaping (T, T) -> Bool) -> (Signal<T, E>) -> Signal<T, E> {
    { signal in
        Signal { subscriber in
            signal._start(_DistinctUntilChangedSink(downstream: subscriber, isEqual: isEqual))
        }._derived("distinctUntilChanged", from: signal)
    }
}

// MARK: - Sinks

final class _OptionalMapSink<T, E, R>: _Sink<T?, E>, @unchecked Sendable {
    // `@unchecked Sendable`: immutable; called serially by the source.
    let downstream: Subscriber<R?, E>
    override var downstreamSubscription: _SubscriptionBase? { downstream._subscriptionBase }
    let transform: (T) -> R

    init(downstream: Subscriber<R?, E>, transform: @escaping (T) -> R) {
        self.downstream = downstream
        self.transform = transform
    }

    override func putNext(_ value: T?) { downstream.putNext(value.map(transform)) }
    override func putError(_ error: E) { downstream.putError(error) }
    override func putCompletion() { downstream.putCompletion() }
}

final class _MapErrorSink<T, E, R>: _Sink<T, E>, @unchecked Sendable {
    // `@unchecked Sendable`: immutable; called serially by the source.
    let downstream: Subscriber<T, R>
    override var downstreamSubscription: _SubscriptionBase? { downstream._subscriptionBase }
    let transform: (E) -> R

    init(downstream: Subscriber<T, R>, transform: @escaping (E) -> R) {
        self.downstream = downstream
        self.transform = transform
    }

    override func putNext(_ value: T) { downstream.putNext(value) }
    override func putError(_ error: E) { downstream.putError(transform(error)) }
    override func putCompletion() { downstream.putCompletion() }
}

final class _CastErrorSink<T, E>: _Sink<T, NoError>, @unchecked Sendable {
    // `@unchecked Sendable`: immutable; called serially by the source.
    let downstream: Subscriber<T, E>
    override var downstreamSubscription: _SubscriptionBase? { downstream._subscriptionBase }

    init(downstream: Subscriber<T, E>) {
        self.downstream = downstream
    }

    override func putNext(_ value: T) { downstream.putNext(value) }
    override func putError(_ error: NoError) {}
    override func putCompletion() { downstream.putCompletion() }
}

final class _DistinctUntilChangedSink<T, E>: _Sink<T, E>, @unchecked Sendable {
    // `@unchecked Sendable`: immutable; the mutable state is guarded inside
    // `state`.
    let downstream: Subscriber<T, E>
    override var downstreamSubscription: _SubscriptionBase? { downstream._subscriptionBase }
    let isEqual: (T, T) -> Bool
    let state = _DistinctUntilChangedState<T>()

    init(downstream: Subscriber<T, E>, isEqual: @escaping (T, T) -> Bool) {
        self.downstream = downstream
        self.isEqual = isEqual
    }

    override func putNext(_ value: T) {
        // `isEqual` is user code: called outside the lock.
        if let previous = state.lastEmitted(), isEqual(previous, value) { return }
        // The replaced value is released here, outside the lock.
        _ = state.remember(value)
        downstream.putNext(value)
    }

    override func putError(_ error: E) { downstream.putError(error) }
    override func putCompletion() { downstream.putCompletion() }
}

/// The last value `distinctUntilChanged` emitted, per subscription.
final class _DistinctUntilChangedState<T>: @unchecked Sendable {
    // `@unchecked Sendable`: `last` is only accessed with `mutex` held.
    private let mutex = _Mutex()
    private var last: T?

    deinit {
        mutex.destroy()
    }

    func lastEmitted() -> T? {
        mutex.withLock { last }
    }

    /// Stores `value`; returns the value it replaces (to be released by the
    /// caller, outside the lock).
    func remember(_ value: T) -> T? {
        mutex.withLock {
            let replaced = last
            last = value
            return replaced
        }
    }
}
