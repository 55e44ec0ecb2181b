// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// Method-chaining forms of the transforming operators: `signal.op(args)` is
// `signal |> op(args)`, the same operator (same semantics, same signal), so
// that autocomplete finds it. Both styles are supported; SwiftSignalKit code
// uses `|>`.

extension Signal {
    /// `self |> map(f)`: transforms every value (see ``map(_:)``).
    @inlinable
    public func map<R>(_ f: @escaping @Sendable (T) -> R) -> Signal<R, E> {
        self |> SignalKit.map(f)
    }

    /// `self |> compactMap(f)`: transforms every value and sends the non-nil
    /// results (see ``compactMap(_:)``).
    @inlinable
    public func compactMap<R>(_ f: @escaping @Sendable (T) -> R?) -> Signal<R, E> {
        self |> SignalKit.compactMap(f)
    }

    /// `self |> mapError(f)`: transforms the error (see ``mapError(_:)``).
    public func mapError<R>(_ f: @escaping @Sendable (E) -> R) -> Signal<T, R> {
        self |> SignalKit.mapError(f)
    }

    /// `self |> startWith(value)`: sends `value` first (see ``startWith(_:)``).
    public func startWith(_ value: T) -> Signal<T, E> where T: Sendable {
        self |> SignalKit.startWith(value)
    }

    /// `self |> mapReplace(value)`: replaces every value with `value`.
    public func mapReplace<R: Sendable>(_ value: R) -> Signal<R, E> {
        self |> SignalKit.mapReplace(value)
    }
}
