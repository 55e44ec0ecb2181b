// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Synchronization

/// A value behind a pthread mutex, for rarely-touched global settings.
/// (Not `Synchronization.Mutex`: contended, it hands over through futex calls
/// ThreadSanitizer cannot see.)
final class _LockedBox<Value: Sendable>: @unchecked Sendable {
    // `@unchecked Sendable`: `stored` is only accessed with `mutex` held.
    private let mutex = _Mutex()
    private var stored: Value

    init(_ value: Value) { stored = value }

    deinit { mutex.destroy() }

    var value: Value {
        get { mutex.withLock { stored } }
        set { mutex.withLock { stored = newValue } }
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
