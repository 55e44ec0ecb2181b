// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Synchronization

// Boolean: ReactiveCocoa's predicates over a whole signal (`any`,
// `any(where:)`, `all(where:)`), which turn errors into `false`, and its
// operators on Bool signals (`not`, `and`, `or`; RAC's work on tuples of
// boxed BOOLs, these on `[Bool]` and `(Bool, Bool)`).

// MARK: - any, all

/// Sends `true` and completes at the first value; sends `false` and completes
/// if the signal completes or fails without one (RAC's `any`).
///
/// Marble: `"--a-b-|"` → `"--(t|)"`; `"---|"` → `"---(f|)"`; `"--#e"` →
/// `"--(f|)"`
///
/// - Parameters:
///   - signal: the upstream signal.
/// - Returns: a signal of exactly one Bool, which never fails. Use it as
///   `signal |> any`.
///
/// - Threading: no thread hop.
/// - Termination: as described above: errors are swallowed (they become
///   `false`), as in ReactiveCocoa.
/// - Disposal: returns the upstream handle; the result's completion at the
///   first value disposes the upstream.
public func any<T, E>(_ signal: Signal<T, E>) -> Signal<Bool, NoError> {
    Signal { subscriber in
        signal._start(_QuantifierSink(downstream: subscriber, decisive: true, predicate: { _ in true }))
    }._derived("any", from: signal)
}

/// Sends `true` and completes at the first value that passes `predicate`;
/// sends `false` and completes if the signal completes or fails first (RAC's
/// `any:`).
///
/// Marble: `"1-2-3-|"` with `{ $0 > 1 }` → `"--(t|)"`; `"1-#e"` → `"--(f|)"`
///
/// - Parameters:
///   - predicate: called with each value until one passes.
/// - Returns: a function from a signal to a signal of one Bool that never
///   fails.
///
/// - Threading: no thread hop.
/// - Termination: errors become `false`.
/// - Disposal: returns the upstream handle.
public func any<T, E>(where predicate: @escaping @Sendable (T) -> Bool) -> (Signal<T, E>) -> Signal<Bool, NoError> {
    _lift("any") { subscriber in
        _QuantifierSink(downstream: subscriber, decisive: true, predicate: predicate)
    }
}

/// Sends `false` and completes at the first value that fails `predicate` or
/// at an error; sends `true` and completes when the signal completes (RAC's
/// `all:`).
///
/// Marble: `"1-2-3-|"` with `{ $0 > 0 }` → `"------(t|)"`; with `{ $0 < 2 }`
/// → `"--(f|)"`; `"1-#e"` → `"--(f|)"`
///
/// - Parameters:
///   - predicate: called with each value until one fails.
/// - Returns: a function from a signal to a signal of one Bool that never
///   fails.
///
/// - Threading: no thread hop.
/// - Termination: errors become `false`; an empty signal gives `true`.
/// - Disposal: returns the upstream handle.
public func all<T, E>(where predicate: @escaping @Sendable (T) -> Bool) -> (Signal<T, E>) -> Signal<Bool, NoError> {
    _lift("all") { subscriber in
        _QuantifierSink(downstream: subscriber, decisive: false, predicate: predicate)
    }
}

/// The sink of `any` and `all`: answers `decisive` at the first value whose
/// predicate result is `decisive` (`true` for `any`, `false` for `all`),
/// `!decisive` at completion and `false` at an error.
struct _QuantifierSink<T, E>: _InlineSink, ~Copyable {
    typealias Input = T
    typealias Failure = E

    let downstream: Subscriber<Bool, NoError>
    var downstreamSubscription: _SubscriptionBase? { downstream._subscriptionBase }
    let decisive: Bool
    let predicate: @Sendable (T) -> Bool
    let done = Synchronization.Atomic<Bool>(false)

    private func finish(_ result: Bool) {
        guard !done.exchange(true, ordering: .acquiringAndReleasing) else { return }
        downstream.putNext(result)
        downstream.putCompletion()
    }

    func putNext(_ value: T, from _: _SubscriptionBase) {
        guard !done.load(ordering: .acquiring), predicate(value) == decisive else { return }
        finish(decisive)
    }

    func putError(_ error: E) { finish(false) }
    func putCompletion() { finish(!decisive) }
}

// MARK: - not, and, or

/// Inverts every Bool (RAC's `not`).
///
/// Marble: `"t-f-|"` → `"f-t-|"`
///
/// - Parameters:
///   - signal: a signal of Bools.
/// - Returns: the inverted signal. Use it as `signal |> not`.
///
/// - Threading: no thread hop.
/// - Termination: forwarded unchanged.
/// - Disposal: returns the upstream handle.
public func not<E>(_ signal: Signal<Bool, E>) -> Signal<Bool, E> {
    (signal |> map({ !$0 }))._derived("not", from: signal)
}

/// `true` when every Bool of an array is `true` (RAC's `and`; an empty
/// array gives `true`).
///
/// Marble: `"[t,t]-[t,f]-|"` → `"t-f-|"`
///
/// ```swift
/// let canSubmit = combineLatest([nameValid, passwordValid]) |> and
/// ```
///
/// - Parameters:
///   - signal: a signal of Bool arrays (for example from
///     `combineLatest(_:)` on an array).
/// - Returns: the conjunctions. Use it as `signal |> and`.
///
/// - Threading: no thread hop.
/// - Termination: forwarded unchanged.
/// - Disposal: returns the upstream handle.
public func and<E>(_ signal: Signal<[Bool], E>) -> Signal<Bool, E> {
    (signal |> map({ !$0.contains(false) }))._derived("and", from: signal)
}

/// `a && b` for each pair (RAC's `and` on a two-element tuple).
///
/// Marble: `"(t,t)-(t,f)-|"` → `"t-f-|"`
///
/// - Parameters:
///   - signal: a signal of Bool pairs (for example from `combineLatest(_:_:)`).
/// - Returns: the conjunctions.
///
/// - Threading: no thread hop.
/// - Termination: forwarded unchanged.
/// - Disposal: returns the upstream handle.
public func and<E>(_ signal: Signal<(Bool, Bool), E>) -> Signal<Bool, E> {
    (signal |> map({ $0.0 && $0.1 }))._derived("and", from: signal)
}

/// `true` when any Bool of an array is `true` (RAC's `or`; an empty array
/// gives `false`).
///
/// Marble: `"[f,f]-[f,t]-|"` → `"f-t-|"`
///
/// - Parameters:
///   - signal: a signal of Bool arrays.
/// - Returns: the disjunctions. Use it as `signal |> or`.
///
/// - Threading: no thread hop.
/// - Termination: forwarded unchanged.
/// - Disposal: returns the upstream handle.
public func or<E>(_ signal: Signal<[Bool], E>) -> Signal<Bool, E> {
    (signal |> map({ $0.contains(true) }))._derived("or", from: signal)
}

/// `a || b` for each pair (RAC's `or` on a two-element tuple).
///
/// Marble: `"(f,f)-(f,t)-|"` → `"f-t-|"`
///
/// - Parameters:
///   - signal: a signal of Bool pairs.
/// - Returns: the disjunctions.
///
/// - Threading: no thread hop.
/// - Termination: forwarded unchanged.
/// - Disposal: returns the upstream handle.
public func or<E>(_ signal: Signal<(Bool, Bool), E>) -> Signal<Bool, E> {
    (signal |> map({ $0.0 || $0.1 }))._derived("or", from: signal)
}
