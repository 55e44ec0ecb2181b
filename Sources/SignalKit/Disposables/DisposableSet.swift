// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

/// A set of disposables disposed together, in insertion order.
///
/// * `add` after `dispose()` disposes the new disposable at once.
/// * `remove(d)` removes the first occurrence of `d` (identity) without
///   disposing it; unknown disposables are ignored.
/// * `removeLast()` removes the most recently added disposable without
///   disposing it; on an empty set it does nothing.
/// * Releasing a `DisposableSet` does not dispose its contents.
///
/// Disposables are disposed and released outside the internal lock, so a
/// disposable may touch the same set from its `dispose()` or `deinit`.
public final class DisposableSet: Disposable, Sendable {
    private let mutex = _Mutex()
    // Unsafe: `disposed` and `disposables` are guarded by `mutex`.
    private nonisolated(unsafe) var disposed = false
    private nonisolated(unsafe) var disposables: [any Disposable] = []

    public init() {}

    deinit {
        mutex.destroy()
    }

    public func add(_ disposable: any Disposable) {
        mutex.lock()
        if disposed {
            mutex.unlock()
            disposable.dispose()
            return
        }
        disposables.append(disposable)
        mutex.unlock()
    }

    public func remove(_ disposable: any Disposable) {
        mutex.lock()
        var removed: (any Disposable)?
        if let index = disposables.firstIndex(where: { $0 === disposable }) {
            removed = disposables.remove(at: index)
        }
        mutex.unlock()
        _ = removed  // released outside the lock
    }

    /// Removes the most recently added disposable without disposing it.
    /// Does nothing when the set is empty (SwiftSignalKit crashes there).
    public func removeLast() {
        mutex.lock()
        let removed = disposables.popLast()
        mutex.unlock()
        _ = removed
    }

    public func dispose() {
        mutex.lock()
        if disposed {
            mutex.unlock()
            return
        }
        disposed = true
        let taken = disposables
        disposables = []
        mutex.unlock()
        for disposable in taken {
            disposable.dispose()
        }
    }
}

/// Disposables stored by key; replacing a key's disposable disposes the old one.
///
/// * `set(d, forKey: k)` stores `d` and disposes the previous disposable of
///   `k` (even when it is the same object). `set(nil, forKey: k)` disposes
///   the previous one and removes the entry (SwiftSignalKit keeps a stale
///   entry that it disposes again later).
/// * After `dispose()`, `set` disposes the new disposable at once.
/// * Releasing a `DisposableDict` does not dispose its contents.
public final class DisposableDict<T: Hashable & Sendable>: Disposable, Sendable {
    private let mutex = _Mutex()
    // Unsafe: `disposed` and `disposables` are guarded by `mutex`.
    private nonisolated(unsafe) var disposed = false
    private nonisolated(unsafe) var disposables: [T: any Disposable] = [:]

    public init() {}

    deinit {
        mutex.destroy()
    }

    public func set(_ disposable: (any Disposable)?, forKey key: T) {
        mutex.lock()
        if disposed {
            mutex.unlock()
            disposable?.dispose()
            return
        }
        let previous: (any Disposable)?
        if let disposable {
            previous = disposables.updateValue(disposable, forKey: key)
        } else {
            previous = disposables.removeValue(forKey: key)
        }
        mutex.unlock()
        previous?.dispose()
    }

    public func dispose() {
        mutex.lock()
        if disposed {
            mutex.unlock()
            return
        }
        disposed = true
        let taken = disposables
        disposables = [:]
        mutex.unlock()
        for (_, disposable) in taken {
            disposable.dispose()
        }
    }
}
