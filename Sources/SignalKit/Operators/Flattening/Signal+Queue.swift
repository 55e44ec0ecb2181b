// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Synchronization

// Flattening: operators that turn a signal of signals (or several signals) into one,
// keeping the values of every inner signal.
//
// This file: SwiftSignalKit's `queue` and `mapToQueue` (inner signals one after
// another). The signal-of-signals engine is in Engine/SignalQueueState.swift.

// MARK: - queue, mapToQueue

/// Runs the inner signals one after another, in arrival order.
///
/// SwiftSignalKit's `queue`.
///
/// Marble: outer `"AB-|"` with `A = "a--a-|"`, `B = "b-|"` → `"a--a-b-|"`
///
/// - Parameters:
///   - signal: a signal of signals (the outer).
/// - Returns: a signal of the inners' values. Use it as `outer |> queue`.
/// - Threading: an inner is subscribed on the thread that delivers it when
///   none is running, else on the thread that delivers the previous inner's
///   completion.
/// - Termination: completes when the outer has completed and every inner
///   has run. Any error fails the output; waiting inners are then never
///   subscribed.
/// - Disposal: the next inner is subscribed inside the previous one's
///   completion callback, before the previous one is disposed. Inners that
///   complete synchronously are drained by a loop (each disposed when its
///   subscription returns, then the next subscribed): a million queued inners
///   run in constant stack. Disposing disposes the current inner, then the
///   outer; waiting inners are never subscribed.
@inlinable
public func queue<T, E>(_ signal: Signal<Signal<T, E>, E>) -> Signal<T, E> {
    _signalQueue(signal, mode: .queueing, transform: { $0 }, promoteError: { $0 })._derived("queue", from: signal)
}

/// Maps each value to a signal and runs those one after another
/// (`map(f) |> queue`).
///
/// SwiftSignalKit's `mapToQueue`.
///
/// Marble: `"12-|"` with `f(1) = "a--|"`, `f(2) = "b-|"` → `"a--b-|"`
///
/// - Parameters:
///   - f: called with each value when it ARRIVES (eagerly), not when its
///     signal starts.
/// - Returns: a function from the outer signal to the queued signal.
/// - Threading: as `queue`.
/// - Termination: as `queue`.
/// - Disposal: as `queue`.
@inlinable
public func mapToQueue<T, R, E>(_ f: @escaping @Sendable (T) -> Signal<R, E>) -> (Signal<T, E>) -> Signal<R, E> {
    { signal in
        _signalQueue(signal, mode: .queueing, transform: f, promoteError: { $0 })._derived("mapToQueue", from: signal)
    }
}
