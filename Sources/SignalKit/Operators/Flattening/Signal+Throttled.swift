// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Synchronization

// Flattening: operators that turn a signal of signals (or several signals) into one,
// keeping the values of every inner signal.
//
// This file: SwiftSignalKit's `throttled` and `mapToThrottled` (inner signals
// one at a time, keeping only the latest waiting one; no clock: ReactiveCocoa's
// time-based `throttle` is in Timing). The signal-of-signals engine is in
// Engine/SignalQueueState.swift.

// MARK: - throttled, mapToThrottled

/// Runs inner signals one at a time, keeping only the latest one that waits.
///
/// SwiftSignalKit's `throttled`.
///
/// Marble: outer `"ABC-|"` with `A = "a--|"` running → `B` is dropped
/// unsubscribed, `C` runs after `A`: `"a--c…"`
///
/// - Parameters:
///   - signal: a signal of signals (the outer).
/// - Returns: a signal of the inners' values. Use it as
///   `outer |> throttled`.
/// - Threading: as `queue`.
/// - Termination: completes when the outer has completed, no inner is
///   running and none waits. Any error fails the output.
/// - Disposal: a waiting inner replaced by a newer one is released without
///   being subscribed. Otherwise as `queue`.
@inlinable
public func throttled<T, E>(_ signal: Signal<Signal<T, E>, E>) -> Signal<T, E> {
    _signalQueue(signal, mode: .throttling, transform: { $0 })._derived("throttled", from: signal)
}

/// Maps each value to a signal and runs them as `throttled` does
/// (`map(f) |> throttled`).
///
/// SwiftSignalKit's `mapToThrottled`.
///
/// Marble: `"123-|"` with `f(1) = "a--|"` running → `f(2)` dropped, then
/// `f(3)`: `"a--c…"`
///
/// - Parameters:
///   - f: called with EVERY value when it arrives, including values whose
///     signal is then dropped.
/// - Returns: a function from the outer signal to the throttled signal.
/// - Threading: as `throttled`.
/// - Termination: as `throttled`.
/// - Disposal: as `throttled`.
@inlinable
public func mapToThrottled<T, R, E>(_ f: @escaping @Sendable (T) -> Signal<R, E>) -> (Signal<T, E>) -> Signal<R, E> {
    { signal in
        _signalQueue(signal, mode: .throttling, transform: f)._derived("mapToThrottled", from: signal)
    }
}
