// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

/// Thrown by `Atomic.tryWith` when the lock is held (also by the caller).
public enum AtomicLockError: Error {
    case isLocked
}

/// A value behind a (non-recursive) mutex.
///
/// `with`, `modify` and `swap` run their closure under the lock: calling the
/// same `Atomic` from inside its own closure deadlocks (use `tryWith` to
/// detect that). A value replaced by `modify` or `swap` is released after the
/// lock is released, so its `deinit` may use the same `Atomic`.
///
/// The name clashes with the standard library's `Synchronization.Atomic`
/// (a different, lock-free type for atomic integers and references): in a
/// file that imports both modules, an unqualified `Atomic` is ambiguous;
/// write `SignalKit.Atomic` (and `Synchronization.Atomic`).
///
/// `Sendable` when `T` is.
public final class Atomic<T> {
    private let mutex = _Mutex()
    private var value: T

    public init(value: T) {
        self.value = value
    }

    deinit {
        mutex.destroy()
    }

    /// Calls `f` with the value under the lock and returns its result.
    public func with<R>(_ f: (T) -> R) -> R {
        mutex.lock()
        defer { mutex.unlock() }
        return f(value)
    }

    /// Like `with`, but throws `AtomicLockError.isLocked` instead of waiting
    /// when the lock is held (also when the caller itself holds it).
    public func tryWith<R>(_ f: (T) -> R) throws -> R {
        guard mutex.tryLock() else { throw AtomicLockError.isLocked }
        defer { mutex.unlock() }
        return f(value)
    }

    /// Stores `f(value)` and returns it.
    @discardableResult
    public func modify(_ f: (T) -> T) -> T {
        mutex.lock()
        let updated = f(value)
        let previous = value
        value = updated
        mutex.unlock()
        withExtendedLifetime(previous) {}
        return updated
    }

    /// Stores `value` and returns the previous value.
    @discardableResult
    public func swap(_ value: T) -> T {
        mutex.lock()
        let previous = self.value
        self.value = value
        mutex.unlock()
        return previous
    }
}

// `@unchecked`: `value` is only accessed with `mutex` held.
extension Atomic: @unchecked Sendable where T: Sendable {}

/// A non-recursive mutex.
public final class Lock: Sendable {
    private let mutex = _Mutex()

    public init() {}

    deinit {
        mutex.destroy()
    }

    /// Runs `f` with the lock held.
    public func locked(_ f: () -> Void) {
        mutex.lock()
        f()
        mutex.unlock()
    }

    /// Runs `f` with the lock held; unlocks, then rethrows what `f` throws.
    public func throwingLocked(_ f: () throws -> Void) throws {
        mutex.lock()
        defer { mutex.unlock() }
        try f()
    }
}
