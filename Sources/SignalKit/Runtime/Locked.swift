import Synchronization

/// A value behind a mutex, for rarely-touched global settings.
final class _LockedBox<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    init(_ value: Value) { mutex = Mutex(value) }

    var value: Value {
        get { mutex.withLock { $0 } }
        set { mutex.withLock { $0 = newValue } }
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
