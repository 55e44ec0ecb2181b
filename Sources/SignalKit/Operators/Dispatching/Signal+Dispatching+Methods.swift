// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// Method-chaining forms of the dispatching operators: `signal.op(args)` is
// `signal |> op(args)`, the same operator (same semantics, same signal), so
// that autocomplete finds it. Both styles are supported; SwiftSignalKit code
// uses `|>`.

extension Signal {
    /// `self |> runOn(queue)`: subscribes on `queue`.
    public func runOn(_ queue: Queue) -> Signal<T, E> {
        self |> SignalKit.runOn(queue)
    }
}

extension Signal where T: Sendable, E: Sendable {
    /// `self |> deliverOn(queue)`: delivers every event on `queue`.
    public func deliverOn(_ queue: Queue) -> Signal<T, E> {
        self |> SignalKit.deliverOn(queue)
    }

    /// `self |> deliverOn(queue, buffer: buffer)`: delivers every event on
    /// `queue`, keeping at most `buffer`'s limit of values waiting.
    public func deliverOn(_ queue: Queue, buffer: SignalBuffer<E>) -> Signal<T, E> {
        self |> SignalKit.deliverOn(queue, buffer: buffer)
    }
}
