// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// Small internal helpers shared by every room of SignalKit.

/// Moves a non-`Sendable` value across a concurrency boundary.
///
/// `@unchecked Sendable` because the hand-off is a transfer: whoever creates the
/// box stops using the value, and exactly one party uses it afterwards. Its one
/// use: `Queue.sync` hands its non-escaping, non-`Sendable` closure to a
/// Dispatch queue while the caller waits for it.
struct _UncheckedSendable<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}

/// Runs `body` and returns its result, keeping `object` alive until it returns.
@inline(__always)
func _withExtendedLifetime<Object: AnyObject, Result>(_ object: Object, _ body: () -> Result) -> Result {
    withExtendedLifetime(object, body)
}
