// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// Method-chaining forms of the switching operators: `signal.op(args)` is
// `signal |> op(args)`, the same operator (same semantics, same signal), so
// that autocomplete finds it. Both styles are supported; SwiftSignalKit code
// uses `|>`.

extension Signal {
    /// `self |> mapToSignal(f)`: the signal of the latest value only.
    public func mapToSignal<R>(_ f: @escaping @Sendable (T) -> Signal<R, E>) -> Signal<R, E> {
        self |> SignalKit.mapToSignal(f)
    }

    /// `switchToLatest(self)`: the latest inner signal only.
    public func switchToLatest<Inner>() -> Signal<Inner, E> where T == Signal<Inner, E> {
        SignalKit.switchToLatest(self)
    }
}
