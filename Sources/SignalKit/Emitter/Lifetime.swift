// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

/// Disposes what was added to it when it ends: when ``end()`` is called, or
/// when it is deallocated.
///
/// An object keeps a `Lifetime` in a stored property and ties registrations
/// to it; they end with the object, eagerly, instead of waiting for an
/// emitter to notice that their weakly held owner is gone:
///
/// ```swift
/// final class ResultView: Sendable {
///     private let lifetime = Lifetime()
///
///     init(request: NetworkRequest) {
///         request.onNetworkResult.addObserver(self, lifetime: lifetime) { view, data, error in
///             view.show(data, error)
///         }
///     }
///
///     func show(_ data: [UInt8]?, _ error: NetworkError?) {}
/// }   // deinit → lifetime ends → the registration is cancelled (observerRemoved runs now)
/// ```
///
/// Unlike SignalKit's other containers (``DisposableSet``,
/// ``MetaDisposable``), a `Lifetime` **does** dispose on `deinit`: that is its
/// purpose. Anything ``Disposable`` can be added (subscription handles too).
///
/// Memory: cancelled ``EventObserver`` tokens are dropped from the list as it
/// grows; other disposables stay until the lifetime ends.
///
/// Threading: safe from any thread; disposables are disposed outside the
/// lock, in the order they were added, on the thread that ends the lifetime
/// (for `deinit`, the thread releasing the last reference).
public final class Lifetime: Sendable {
    // `entries` and `pruneThreshold` are guarded by `_LockedState`.
    private struct State {
        /// nil once ended.
        var entries: [any Disposable]? = []
        var pruneThreshold = 16
    }

    private let state = _LockedState(State())

    /// Creates a lifetime that has not ended.
    public init() {}

    deinit {
        end()
    }

    /// Whether the lifetime has ended.
    public var hasEnded: Bool {
        state.withLock { $0.entries == nil }
    }

    /// Adds a disposable to dispose when the lifetime ends; if it has ended
    /// already, disposes it at once.
    public func add(_ disposable: any Disposable) {
        var pruned: [any Disposable] = []
        let added = state.withLock { (state: inout State) -> Bool in
            guard state.entries != nil else { return false }
            state.entries!.append(disposable)
            if state.entries!.count >= state.pruneThreshold {
                // Drop cancelled tokens; release them after the lock (their
                // callbacks' captures may have a deinit that runs user code).
                var kept: [any Disposable] = []
                kept.reserveCapacity(state.entries!.count)
                for entry in state.entries! {
                    if let observer = entry as? EventObserver, observer.isCancelled {
                        pruned.append(entry)
                    } else {
                        kept.append(entry)
                    }
                }
                state.entries = kept
                state.pruneThreshold = max(16, kept.count * 2)
            }
            return true
        }
        if !added { disposable.dispose() }
        withExtendedLifetime(pruned) {}
    }

    /// Ends the lifetime now: disposes everything added, in order.
    /// Idempotent; later ``add(_:)`` calls dispose at once.
    public func end() {
        let ended = state.withLock { state in
            state.entries.take()
        }
        for disposable in ended ?? [] {
            disposable.dispose()
        }
    }
}
