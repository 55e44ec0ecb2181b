// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Synchronization

// Switching: operators that follow one inner signal at a time and drop the previous
// one when another is chosen: SwiftSignalKit's `switchToLatest` and its
// `mapToSignal` forms (the signal-of-signals engine is in
// Engine/SignalQueueState.swift), and ReactiveCocoa's `switchCases` and
// `ifThenElse` (RAC's `switch:cases:default:` and `if:then:else:`).

// MARK: - switchToLatest, mapToSignal

/// Forwards the events of the latest inner signal, disposing the previous one.
///
/// SwiftSignalKit's `switchToLatest`.
///
/// Marble: outer `"A---B---|"` with `A = "a-a-a…"`, `B = "b-b-|"` →
/// `"a-a-b-b-|"`
///
/// - Parameters:
///   - signal: a signal of signals (the outer).
/// - Returns: a signal of the inners' values. Use it as
///   `outer |> switchToLatest`.
/// - Threading: each inner is subscribed on the thread that delivers it.
/// - Termination: completes when the outer has completed and the current
///   inner has completed, in either order (at once if the outer completes with
///   no inner running). An error of the outer or of the current inner fails
///   the output.
/// - Disposal: a new inner is subscribed before the previous one is
///   disposed (`b.subscribe#1, a.dispose#1`); the previous one is silenced from
///   the moment its successor starts. Disposing disposes the current inner,
///   then the outer.
@inlinable
public func switchToLatest<T, E>(_ signal: Signal<Signal<T, E>, E>) -> Signal<T, E> {
    _signalQueue(signal, mode: .switching, transform: { $0 })._derived("switchToLatest", from: signal)
}

/// Maps each value to a signal and forwards the latest one's events
/// (`map(f) |> switchToLatest`).
///
/// SwiftSignalKit's `mapToSignal`.
///
/// Marble: `"1---2---|"` with `f(1) = "a-a…"`, `f(2) = "b-|"` → `"a-a-b-|"`
///
/// - Parameters:
///   - f: called with each value, synchronously, when it arrives.
/// - Returns: a function from the outer signal to the switched signal.
/// - Threading: as `switchToLatest`.
/// - Termination: as `switchToLatest`.
/// - Disposal: as `switchToLatest`.
@inlinable
public func mapToSignal<T, R, E>(_ f: @escaping @Sendable (T) -> Signal<R, E>) -> (Signal<T, E>) -> Signal<R, E> {
    { signal in
        _signalQueue(signal, mode: .switching, transform: f)._derived("mapToSignal", from: signal)
    }
}

/// `mapToSignal` for an outer signal that cannot fail: the inners' error
/// type becomes the output's.
///
/// SwiftSignalKit's `mapToSignalPromotingError`.
///
/// Marble: `"1---2---|"` with `f(2) = "#e"` → `"…#e"`
///
/// - Parameters:
///   - f: called with each value, synchronously, when it arrives.
/// - Returns: a function from the `NoError` outer signal to the switched
///   signal.
/// - Threading: as `switchToLatest`.
/// - Termination: as `switchToLatest`.
/// - Disposal: as `switchToLatest`.
@inlinable
public func mapToSignalPromotingError<T, R, E>(
    _ f: @escaping @Sendable (T) -> Signal<R, E>
) -> (Signal<T, NoError>) -> Signal<R, E> {
    { signal in
        _signalQueuePromotingError(signal, mode: .switching, transform: f)._derived(
            "mapToSignalPromotingError", from: signal)
    }
}

// MARK: - switchCases, ifThenElse

/// Forwards the signal of `cases` matching the latest key, switching when the
/// key changes (RAC's `+switch:cases:default:`, named apart because `switch`
/// is a Swift keyword).
///
/// Marble: key `"a---b--|"`, cases `a = "1-1…"`, `b = "2-|"` → `"1-1-2-|"`
///
/// ReactiveCocoa fails with `RACSignalErrorNoMatchingCase` when no case
/// matches and there is no default; here the default is required: pass
/// `.fail(yourError)` for that behaviour.
///
/// - Parameters:
///   - key: the signal of keys.
///   - cases: the signal to forward for each key.
///   - defaultSignal: forwarded for a key without a case.
/// - Returns: `key |> mapToSignal { cases[$0] ?? defaultSignal }`.
///
/// - Threading: as `switchToLatest`.
/// - Termination: as `switchToLatest`: completes when the key signal and the
///   current case have completed; any error fails.
/// - Disposal: as `switchToLatest`.
public func switchCases<K: Hashable & Sendable, T, E>(
    _ key: Signal<K, E>,
    cases: [K: Signal<T, E>],
    default defaultSignal: Signal<T, E>
) -> Signal<T, E> {
    (key |> mapToSignal { cases[$0] ?? defaultSignal })._combined("switch", inputs: [key])
}

/// Forwards `trueSignal` while the latest condition is `true` and
/// `falseSignal` while it is `false` (RAC's `+if:then:else:`, named apart
/// because `if` is a Swift keyword).
///
/// Marble: condition `"t---f--|"` → `trueSignal`'s events, then
/// `falseSignal`'s from the second value on
///
/// - Parameters:
///   - condition: the signal of Bools.
///   - trueSignal: forwarded while the latest condition is `true`.
///   - falseSignal: forwarded while it is `false`.
/// - Returns: `condition |> mapToSignal { $0 ? trueSignal : falseSignal }`.
///
/// - Threading: as `switchToLatest`.
/// - Termination: as `switchToLatest`.
/// - Disposal: as `switchToLatest`.
public func ifThenElse<T, E>(
    _ condition: Signal<Bool, E>,
    then trueSignal: Signal<T, E>,
    else falseSignal: Signal<T, E>
) -> Signal<T, E> {
    (condition |> mapToSignal { $0 ? trueSignal : falseSignal })._combined("if", inputs: [condition])
}
