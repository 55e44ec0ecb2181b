// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit

/// A value a test shares with the callbacks it hands to SignalKit.
///
/// SignalKit's callbacks are `@Sendable`, so a test cannot capture and
/// mutate a local `var` in them (Swift 6 rejects it, rightly: SignalKit may
/// call them on another thread). Capture a `Shared` instead:
///
/// ```swift
/// let received = Shared<[Int]>([])
/// _ = signal.start(next: { value in received.withLock { $0.append(value) } })
/// #expect(received.value == [1, 2])
/// ```
///
/// Every access takes a mutex. `value`'s setter replaces the value; use
/// `withLock` for a read-modify-write that must not interleave with other
/// threads.
public final class Shared<Value> {
    private let locked: Locked<Value>

    public init(_ value: Value) {
        locked = Locked(value)
    }

    /// The value (read or replaced under the mutex).
    public var value: Value {
        get { locked.withLock { $0 } }
        set { locked.withLock { $0 = newValue } }
    }

    /// Runs `body` with exclusive access to the value.
    @discardableResult
    public func withLock<R>(_ body: (inout Value) -> R) -> R {
        locked.withLock(body)
    }
}

// `@unchecked`: the value is only accessed with the mutex held.
extension Shared: @unchecked Sendable where Value: Sendable {}
