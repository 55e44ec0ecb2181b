// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

/// A hot holder of a value set imperatively, replayed to new subscribers.
///
/// `set(v)` stores `v` and delivers it to the subscribers. With
/// `ignoreRepeated`, a value equal to the stored one is dropped (the stored
/// instance is kept); the first `set` on an empty promise always passes.
/// `get()` replays the stored value synchronously on subscribe and never
/// completes. A subscription keeps the promise alive.
///
/// Threading: `set` delivers synchronously on the caller's thread, outside
/// the lock. The replaced value is released, and `==` (for
/// `ignoreRepeated`) runs, outside the lock too, so both may use the same
/// promise. A `set` from inside a subscriber's callback delivers to every
/// subscriber before the outer delivery continues (so a later subscriber may
/// see the nested value, then the outer one); the stored value is the nested
/// one.
///
/// `T` is `Sendable`: the stored value is replayed to subscribers on their
/// threads.
public final class ValuePromise<T: Equatable & Sendable>: Sendable {
    private struct State: _PromiseState {
        var value: T?
        /// Counts the stores of an `ignoreRepeated` promise (see `set`).
        var generation: UInt = 0
    }

    private let state: _LockedState<State>
    private let subscribers = _SubscriberBag<Subscriber<T, NoError>>()
    public let ignoreRepeated: Bool

    public init(_ value: T, ignoreRepeated: Bool = false) {
        state = _LockedState(State(value: value))
        self.ignoreRepeated = ignoreRepeated
    }

    public init(ignoreRepeated: Bool = false) {
        state = _LockedState(State())
        self.ignoreRepeated = ignoreRepeated
    }

    public func set(_ value: T) {
        if ignoreRepeated {
            setIgnoringRepeated(value)
            return
        }
        _storeAndDeliver(value, in: state, to: subscribers)
    }

    /// `set` with `ignoreRepeated`. The user's `==` runs outside the lock (it
    /// may use this promise, and so may the deinit of what it releases): the
    /// stored value is compared to a copy, and stored only if no other `set`
    /// replaced it meanwhile (`generation` unchanged), else compared again.
    private func setIgnoringRepeated(_ value: T) {
        while true {
            var current: T?
            let observed = state.withLock { state in
                current = state.value
                return state.generation
            }
            if let stored = current, stored == value {
                return
            }
            var replaced: T? = value
            let stored = state.withLock { state -> _BagRead? in
                guard state.generation == observed else { return nil }
                state.generation &+= 1
                swap(&state.value, &replaced)
                return subscribers.beginRead()
            }
            guard var read = stored else { continue }
            // Released outside the lock: their deinit may use this promise.
            current = nil
            replaced = nil
            subscribers.finishRead(&read) { $0.putNext(value) }
            return
        }
    }

    /// The stored value (if any), then every later one. Never completes.
    public func get() -> Signal<T, NoError> {
        Signal { subscriber in
            let (current, key) = self.state.withLock { state in
                (state.value, self.subscribers.insert(subscriber))
            }
            if let current {
                subscriber.putNext(current)
            }
            // The entry keeps the promise alive until the subscription ends.
            if let key { subscriber.registerSourceEntry(bag: self.subscribers, key: key, owner: self) }
            return EmptyDisposable
        }
    }
}
