// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// Method-chaining forms of the aggregating operators: `signal.op(args)` is
// `signal |> op(args)`, the same operator (same semantics, same signal), so
// that autocomplete finds it. Both styles are supported; SwiftSignalKit code
// uses `|>`.

extension Signal {
    /// `self |> scan(start, reduce)`: every intermediate accumulation.
    public func scan<A: Sendable>(_ start: A, _ reduce: @escaping @Sendable (A, T) -> A) -> Signal<A, E> {
        self |> SignalKit.scan(start, reduce)
    }

    /// `self |> reduceLeft(value:f:)`: the final accumulation, at completion.
    public func reduceLeft(value: T, f: @escaping @Sendable (T, T) -> T) -> Signal<T, E> where T: Sendable {
        self |> SignalKit.reduceLeft(value: value, f: f)
    }

    /// `collect(self)`: every value in one array, at completion.
    public func collect() -> Signal<[T], E> {
        SignalKit.collect(self)
    }
}
