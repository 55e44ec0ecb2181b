// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// Method-chaining forms of the taking operators: `signal.op(args)` is
// `signal |> op(args)`, the same operator (same semantics, same signal), so
// that autocomplete finds it. Both styles are supported; SwiftSignalKit code
// uses `|>`.

extension Signal {
    /// `self |> take(count)`: the first `count` values, then completes.
    public func take(_ count: Int) -> Signal<T, E> {
        self |> SignalKit.take(count)
    }

    /// `self |> take(until:)`: values until the action says to complete.
    public func take(until: @escaping @Sendable (T) -> SignalTakeAction) -> Signal<T, E> {
        self |> SignalKit.take(until: until)
    }

    /// `self |> takeWhile(predicate)`.
    public func takeWhile(_ predicate: @escaping @Sendable (T) -> Bool) -> Signal<T, E> {
        self |> SignalKit.takeWhile(predicate)
    }

    /// `self |> takeUntil(trigger)`: completes when `trigger` sends a value
    /// or completes.
    public func takeUntil<U, F>(_ trigger: Signal<U, F>) -> Signal<T, E> {
        self |> SignalKit.takeUntil(trigger)
    }

    /// `self |> takeLast(count)`: the last `count` values, at completion.
    public func takeLast(_ count: Int) -> Signal<T, E> {
        self |> SignalKit.takeLast(count)
    }
}
