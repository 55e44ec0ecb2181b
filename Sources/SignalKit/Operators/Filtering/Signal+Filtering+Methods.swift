// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// Method-chaining forms of the filtering operators: `signal.op(args)` is
// `signal |> op(args)`, the same operator (same semantics, same signal), so
// that autocomplete finds it. Both styles are supported; SwiftSignalKit code
// uses `|>`.

extension Signal {
    /// `self |> filter(f)`: sends the values `f` accepts (see ``filter(_:)``).
    @inlinable
    public func filter(_ f: @escaping @Sendable (T) -> Bool) -> Signal<T, E> {
        self |> SignalKit.filter(f)
    }

    /// `self |> distinctUntilChanged`: drops a value equal to the previous one.
    public func distinctUntilChanged() -> Signal<T, E> where T: Equatable & SendableMetatype {
        SignalKit.distinctUntilChanged(self)
    }

    /// `self |> distinctUntilChanged(isEqual:)`.
    public func distinctUntilChanged(isEqual: @escaping @Sendable (T, T) -> Bool) -> Signal<T, E> {
        self |> SignalKit.distinctUntilChanged(isEqual: isEqual)
    }

    /// `self |> skip(count)`: drops the first `count` values.
    public func skip(_ count: Int) -> Signal<T, E> {
        self |> SignalKit.skip(count)
    }

    /// `self |> skipWhile(predicate)`.
    public func skipWhile(_ predicate: @escaping @Sendable (T) -> Bool) -> Signal<T, E> {
        self |> SignalKit.skipWhile(predicate)
    }

    /// `self |> ignoreValues`: only the termination.
    public func ignoreValues() -> Signal<Never, E> {
        SignalKit.ignoreValues(self)
    }
}
