// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Synchronization

/// A value behind a pthread mutex, for rarely-touched global settings.
/// (Not `Synchronization.Mutex`: contended, it hands over through futex calls
/// ThreadSanitizer cannot see.)
final class _LockedBox<Value: Sendable>: @unchecked Sendable {
    // `@unchecked Sendable`: the value is guarded by `_LockedState`.
    private let stored: _LockedState<Value>

    init(_ value: Value) { stored = _LockedState(value) }

    var value: Value {
        get { stored.withLock { $0 } }
        set {
            // The replaced value is released after unlocking.
            var replaced = newValue
            stored.withLock { swap(&$0, &replaced) }
        }
    }
}

/// A flag that goes from unset to set once.
struct _OnceFlag: ~Copyable, Sendable {
    private let storage = Synchronization.Atomic<Bool>(false)

    init() {}

    /// Sets the flag; returns true if this call set it.
    @discardableResult
    func set() -> Bool { !storage.exchange(true, ordering: .acquiringAndReleasing) }

    var isSet: Bool { storage.load(ordering: .acquiring) }
}
