// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// Method-chaining forms of the timing operators: `signal.op(args)` is
// `signal |> op(args)`, the same operator (same semantics, same signal), so
// that autocomplete finds it. Both styles are supported; SwiftSignalKit code
// uses `|>`.

extension Signal {
    /// `self |> delay(interval, queue:)`: subscribes after `interval`.
    public func delay(_ interval: Duration, queue: Queue) -> Signal<T, E> {
        self |> SignalKit.delay(interval, queue: queue)
    }

    /// `self |> delay(for:queue:)`: subscribes after `interval` (delays the
    /// subscription, not each event: see ``delayEvents(for:queue:)``).
    public func delay(for interval: Duration, queue: Queue) -> Signal<T, E> {
        self |> SignalKit.delay(for: interval, queue: queue)
    }

    /// `self |> timeout(interval, queue:, alternate:)`.
    public func timeout(_ interval: Duration, queue: Queue, alternate: Signal<T, E>) -> Signal<T, E> {
        self |> SignalKit.timeout(interval, queue: queue, alternate: alternate)
    }
}

extension Signal where T: Sendable {
    /// `self |> throttle(for:queue:latest:)`: at most one value per window.
    public func throttle(for interval: Duration, queue: Queue, latest: Bool = true) -> Signal<T, E> {
        self |> SignalKit.throttle(for: interval, queue: queue, latest: latest)
    }

    /// `self |> debounce(for:queue:)`: a value once `interval` passed
    /// without a newer one.
    public func debounce(for interval: Duration, queue: Queue) -> Signal<T, E> {
        self |> SignalKit.debounce(for: interval, queue: queue)
    }
}

extension Signal where T: Sendable, E: Sendable {
    /// `self |> delayEvents(for:queue:)`: every value and the completion
    /// `interval` later, on `queue`; an error at once.
    public func delayEvents(for interval: Duration, queue: Queue) -> Signal<T, E> {
        self |> SignalKit.delayEvents(for: interval, queue: queue)
    }
}
