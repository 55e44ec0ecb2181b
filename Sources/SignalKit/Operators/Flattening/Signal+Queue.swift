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
    _signalQueue(signal, mode: .queueing, transform: { $0 })._derived("queue", from: signal)
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
        _signalQueue(signal, mode: .queueing, transform: f)._derived("mapToQueue", from: signal)
    }
}

// MARK: - Bounded forms

/// Runs the inner signals one after another, keeping at most `buffer`'s
/// limit of them waiting for the running one.
///
/// SignalKit's bounded form of SwiftSignalKit's `queue` (`.unbounded` is
/// `queue` itself). The waiting inners are the buffer: a dropped inner is
/// never subscribed (see ``SignalBuffer``).
///
/// Marble (`.droppingOldest(beyond: 1)`): outer `"ABC-|"` with `A = "a---|"`,
/// `B = "b|"`, `C = "c|"` → `"a---c|"` (`B` waited, `C` replaced it)
///
/// - Parameters:
///   - buffer: how many inners may wait, and what happens to one more:
///     dropped (the oldest waiting or the arriving one, counted), the output
///     failed with your error (`.failing`), or the outer's thread held until
///     one starts (`.blocking`).
/// - Returns: a function from a signal of signals to the queued signal.
/// - Threading: as `queue`. `.blocking` holds the thread that delivers the
///   outer value until the running inner completes (on another thread); an
///   outer value sent while subscribing the running inner, on the same
///   thread, stops the process with a message naming the deadlock. An inner
///   that can only complete on the outer's thread (its events delivered on
///   the queue the outer sends from) would wait for itself: SignalKit cannot
///   see that, so choose `.blocking` only where the inners run elsewhere.
/// - Termination: completes when the outer has completed and every inner
///   still waiting has run; any error (and `.failing`'s overflow) fails the
///   output at once, and nothing waiting is subscribed after it (the inners
///   waiting are counted as drops: subscribed + dropped == sent, see
///   ``SignalBufferStatistics/drops``).
/// - Disposal: disposes the running inner, then the outer; the waiting inners
///   are released at once, never subscribed.
public func queue<T, E: Sendable>(buffer: SignalBuffer<E>) -> (Signal<Signal<T, E>, E>) -> Signal<T, E> {
    { signal in
        if buffer.isUnbounded { return queue(signal) }
        return _boundedQueue(signal, buffer: buffer, transform: { $0 })._derived(
            "queue", from: signal, arguments: "buffer: \(buffer)")
    }
}

/// Maps each value to a signal and runs those one after another, keeping at
/// most `buffer`'s limit of them waiting (`map(f) |> queue(buffer:)`).
///
/// SignalKit's bounded form of SwiftSignalKit's `mapToQueue` (`.unbounded`
/// is `mapToQueue(f)` itself). `f` is still called when a value arrives,
/// also for a value whose signal is then dropped.
///
/// Marble (`.latest`): `"123-|"` with `f(1) = "a---|"`, `f(2) = "b|"`,
/// `f(3) = "c|"` → `"a---c|"`
///
/// ```swift
/// // One save at a time; while one runs, only the newest document waits.
/// let saves = edits |> mapToQueue(buffer: .latest) { document in save(document) }
/// ```
///
/// - Parameters:
///   - buffer: how many inner signals may wait (see `queue(buffer:)`).
///   - f: called with each value when it arrives.
/// - Returns: a function from the outer signal to the queued signal.
/// - Threading, Termination, Disposal: as `queue(buffer:)`.
public func mapToQueue<T, R, E: Sendable>(
    buffer: SignalBuffer<E>,
    _ f: @escaping @Sendable (T) -> Signal<R, E>
) -> (Signal<T, E>) -> Signal<R, E> {
    { signal in
        if buffer.isUnbounded { return signal |> mapToQueue(f) }
        return _boundedQueue(signal, buffer: buffer, transform: f)._derived(
            "mapToQueue", from: signal, arguments: "buffer: \(buffer)")
    }
}
