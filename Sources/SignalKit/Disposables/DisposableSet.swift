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
    /// The disposables, in insertion order; nil once disposed.
    private let contents = _LockedState<[any Disposable]?>([])

    public init() {}

    public func add(_ disposable: any Disposable) {
        let accepted = contents.withLock { contents -> Bool in
            guard contents != nil else { return false }
            contents!.append(disposable)
            return true
        }
        if !accepted { disposable.dispose() }
    }

    public func remove(_ disposable: any Disposable) {
        let removed = contents.withLock { contents -> (any Disposable)? in
            guard let index = contents?.firstIndex(where: { $0 === disposable }) else { return nil }
            return contents!.remove(at: index)
        }
        _ = removed  // released outside the lock
    }

    /// Removes the most recently added disposable without disposing it.
    /// Does nothing when the set is empty (SwiftSignalKit crashes there).
    public func removeLast() {
        let removed = contents.withLock { $0?.popLast() }
        _ = removed  // released outside the lock
    }

    public func dispose() {
        guard let taken = contents.withLock({ $0.take() }) else { return }
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
    /// The disposables by key; nil once disposed.
    private let contents = _LockedState<[T: any Disposable]?>([:])

    public init() {}

    public func set(_ disposable: (any Disposable)?, forKey key: T) {
        let (accepted, previous) = contents.withLock { contents -> (Bool, (any Disposable)?) in
            guard contents != nil else { return (false, nil) }
            if let disposable { return (true, contents!.updateValue(disposable, forKey: key)) }
            return (true, contents!.removeValue(forKey: key))
        }
        if !accepted { disposable?.dispose() }
        previous?.dispose()
    }

    public func dispose() {
        guard let taken = contents.withLock({ $0.take() }) else { return }
        for (_, disposable) in taken {
            disposable.dispose()
        }
    }
}
