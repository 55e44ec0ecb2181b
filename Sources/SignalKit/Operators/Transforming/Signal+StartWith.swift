// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// Transforming: operators that turn each value (or error) into another.
// This file: ReactiveCocoa's `startWith`.

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
public func startWith<T: Sendable, E>(_ value: T) -> (Signal<T, E>) -> Signal<T, E> {
    { signal in
        Signal { subscriber in
            subscriber.putNext(value)
            return signal._start(_ForwardSink(downstream: subscriber))
        }._derived("startWith", from: signal, arguments: _debugArgument(value))
    }
}
