// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// Method-chaining forms of the errors operators: `signal.op(args)` is
// `signal |> op(args)`, the same operator (same semantics, same signal), so
// that autocomplete finds it. Both styles are supported; SwiftSignalKit code
// uses `|>`.

extension Signal {
    /// `self |> catch(f)`: on error, continues with `f(error)`.
    public func `catch`<R>(_ f: @escaping @Sendable (E) -> Signal<T, R>) -> Signal<T, R> {
        self |> SignalKit.catch(f)
    }

    /// `self |> retry(count)`: resubscribes up to `count` times on error.
    public func retry(_ count: Int) -> Signal<T, E> {
        self |> SignalKit.retry(count)
    }
}
