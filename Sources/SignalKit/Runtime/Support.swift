// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// Small internal helpers shared by every room of SignalKit.

/// Moves a non-`Sendable` value across a concurrency boundary.
///
/// `@unchecked Sendable` because the hand-off is a transfer: whoever creates the
/// box stops using the value, and exactly one party (a queue block, a timer
/// handler) uses it afterwards. SignalKit's public API takes non-`Sendable`
/// closures for SwiftSignalKit source compatibility; the threading contract of
/// each API documents where those closures run.
struct _UncheckedSendable<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}

/// Runs `body` and returns its result, keeping `object` alive until it returns.
@inline(__always)
func _withExtendedLifetime<Object: AnyObject, Result>(_ object: Object, _ body: () -> Result) -> Result {
    withExtendedLifetime(object, body)
}
