// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// Method-chaining forms of the looping operators: `signal.op(args)` is
// `signal |> op(args)`, the same operator (same semantics, same signal), so
// that autocomplete finds it. Both styles are supported; SwiftSignalKit code
// uses `|>`.

extension Signal {
    /// `restart(self)`: resubscribes whenever the signal completes.
    public func restart() -> Signal<T, E> {
        SignalKit.restart(self)
    }

    /// `restartIfError(self)`: resubscribes whenever the signal fails.
    public func restartIfError() -> Signal<T, NoError> {
        SignalKit.restartIfError(self)
    }
}
