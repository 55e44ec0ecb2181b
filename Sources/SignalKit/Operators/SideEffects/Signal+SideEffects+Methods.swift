// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// Method-chaining forms of the side-effect operators: `signal.op(args)` is
// `signal |> op(args)`, the same operator (same semantics, same signal), so
// that autocomplete finds it. Both styles are supported; SwiftSignalKit code
// uses `|>`.

extension Signal {
    /// `self |> beforeNext(f)`: calls `f` with each value before sending it.
    public func beforeNext<R>(_ f: @escaping @Sendable (T) -> R) -> Signal<T, E> {
        self |> SignalKit.beforeNext(f)
    }

    /// `self |> afterNext(f)`: calls `f` with each value after sending it.
    public func afterNext<R>(_ f: @escaping @Sendable (T) -> R) -> Signal<T, E> {
        self |> SignalKit.afterNext(f)
    }

    /// `self |> doError(f)`: calls `f` with the error before sending it.
    public func doError(_ f: @escaping @Sendable (E) -> Void) -> Signal<T, E> {
        self |> SignalKit.doError(f)
    }

    /// `self |> afterDisposed(f)`: calls `f` once the subscription ended.
    public func afterDisposed<R>(_ f: @escaping @Sendable () -> R) -> Signal<T, E> {
        self |> SignalKit.afterDisposed(f)
    }
}
