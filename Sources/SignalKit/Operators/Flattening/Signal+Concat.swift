// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// Flattening: operators that turn a signal of signals (or several signals) into one,
// keeping the values of every inner signal.
//
// This file: ReactiveCocoa's `concat` (a pair, an array, a signal of signals),
// on the merge engine of Signal+Flatten.swift with one inner signal at a time.

// MARK: - concat

/// Forwards this signal, then, when it completes, `other` (RAC's `concat:`;
/// SwiftSignalKit's `then(_:)`).
///
/// Marble: `"a-b-|"` concat `"c-|"` → `"a-b-c-|"`
///
/// - Parameters:
///   - other: subscribed when this signal completes.
/// - Returns: a function from a signal to the concatenated signal.
///
/// - Threading: as `then(_:)`.
/// - Termination: as `then(_:)`.
/// - Disposal: as `then(_:)`; stack-safe like it.
public func concat<T, E>(_ other: Signal<T, E>) -> (Signal<T, E>) -> Signal<T, E> {
    { signal in
        (signal |> then(other))._derived("concat", from: signal, arguments: other.description)
    }
}

/// Runs the signals one after another, in array order (RAC's `+concat:`).
///
/// Marble: `["a-|", "b-|", "c-|"]` → `"a-b-c-|"`; `[]` → `"|"`
///
/// - Parameters:
///   - signals: the signals; each is subscribed when the previous one
///     completes.
/// - Returns: the concatenation.
///
/// - Threading: as `then(_:)`.
/// - Termination: completes when the last signal completes; the first error
///   ends it (later signals are never subscribed).
/// - Disposal: as `then(_:)`; a chain of any length runs in constant stack.
public func concat<T, E>(_ signals: [Signal<T, E>]) -> Signal<T, E> {
    guard var result = signals.first else {
        return Signal<T, E>.complete()._combined("concat", inputs: [])
    }
    for signal in signals.dropFirst() {
        result = result |> then(signal)
    }
    return result._combined("concat", inputs: signals)
}

/// Runs the inner signals one after another, in arrival order (RAC's
/// `concat` on a signal of signals; SwiftSignalKit's `queue`).
///
/// Marble: outer `"AB-|"` with `A = "a--a-|"`, `B = "b-|"` → `"a--a-b-|"`
///
/// - Parameters:
///   - signal: a signal of signals.
/// - Returns: `queue(signal)`. Use it as `outer |> concat`.
///
/// - Threading: as `queue(_:)`.
/// - Termination: as `queue(_:)`.
/// - Disposal: as `queue(_:)`.
public func concat<T, E>(_ signal: Signal<Signal<T, E>, E>) -> Signal<T, E> {
    queue(signal)._derived("concat", from: signal)
}
