// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// Method-chaining forms of the flattening operators: `signal.op(args)` is
// `signal |> op(args)`, the same operator (same semantics, same signal), so
// that autocomplete finds it. Both styles are supported; SwiftSignalKit code
// uses `|>`.

extension Signal {
    /// `self |> merge(other)`: the values of both, as they come.
    public func merge(with other: Signal<T, E>) -> Signal<T, E> {
        self |> SignalKit.merge(other)
    }

    /// `self |> then(next)`: `next` after this signal completes.
    public func then(_ next: Signal<T, E>) -> Signal<T, E> {
        self |> SignalKit.then(next)
    }

    /// `self |> flattenMap(f)`: every value's signal, merged.
    public func flattenMap<R>(_ f: @escaping @Sendable (T) -> Signal<R, E>) -> Signal<R, E> {
        self |> SignalKit.flattenMap(f)
    }

    /// `self |> mapToQueue(f)`: every value's signal, one after another.
    public func mapToQueue<R>(_ f: @escaping @Sendable (T) -> Signal<R, E>) -> Signal<R, E> {
        self |> SignalKit.mapToQueue(f)
    }

    /// `self |> mapToQueue(buffer: buffer, f)`: every value's signal, one
    /// after another, at most `buffer`'s limit of them waiting.
    public func mapToQueue<R>(buffer: SignalBuffer<E>, _ f: @escaping @Sendable (T) -> Signal<R, E>) -> Signal<R, E>
    where E: Sendable {
        self |> SignalKit.mapToQueue(buffer: buffer, f)
    }

    /// `self |> mapToThrottled(f)`: the value's signal, the latest waiting
    /// while one runs.
    public func mapToThrottled<R>(_ f: @escaping @Sendable (T) -> Signal<R, E>) -> Signal<R, E> {
        self |> SignalKit.mapToThrottled(f)
    }
}
