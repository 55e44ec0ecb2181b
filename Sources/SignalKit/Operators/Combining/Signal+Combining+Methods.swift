// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// Method-chaining forms of the combining operators: `signal.op(args)` is
// `signal |> op(args)`, the same operator (same semantics, same signal), so
// that autocomplete finds it. Both styles are supported; SwiftSignalKit code
// uses `|>`.

extension Signal where T: Sendable, E: Sendable {
    /// `combineLatest(self, other)`: a tuple of the latest values, on each
    /// value of either.
    public func combineLatest<U: Sendable>(with other: Signal<U, E>) -> Signal<(T, U), E> {
        SignalKit.combineLatest(self, other)
    }

    /// `zip(self, other)`: pairs values in order.
    public func zip<U: Sendable>(with other: Signal<U, E>) -> Signal<(T, U), E> {
        SignalKit.zip(self, other)
    }

    /// `self |> sample(sampler)`: the latest value, on each value of `sampler`.
    public func sample<U>(_ sampler: Signal<U, E>) -> Signal<T, E> {
        self |> SignalKit.sample(sampler)
    }
}
