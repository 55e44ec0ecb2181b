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
    private let mutex = _Mutex()
    // Unsafe: `value` and `generation` are guarded by `mutex`.
    private nonisolated(unsafe) var value: T?
    /// Counts the stores of an `ignoreRepeated` promise (see `set`).
    private nonisolated(unsafe) var generation: UInt = 0
    private let subscribers = _SubscriberBag<Subscriber<T, NoError>>()
    public let ignoreRepeated: Bool

    public init(_ value: T, ignoreRepeated: Bool = false) {
        self.value = value
        self.ignoreRepeated = ignoreRepeated
    }

    public init(ignoreRepeated: Bool = false) {
        self.ignoreRepeated = ignoreRepeated
    }

    deinit {
        mutex.destroy()
    }

    public func set(_ value: T) {
        if ignoreRepeated {
            setIgnoringRepeated(value)
            return
        }
        var replaced: T? = value
        mutex.lock()
        swap(&self.value, &replaced)
        var read = subscribers.beginRead()
        mutex.unlock()
        // Released outside the lock: its deinit may use this promise.
        replaced = nil
        subscribers.finishRead(&read) { $0.putNext(value) }
    }

    /// `set` with `ignoreRepeated`. The user's `==` runs outside the lock (it
    /// may use this promise, and so may the deinit of what it releases): the
    /// stored value is compared to a copy, and stored only if no other `set`
    /// replaced it meanwhile (`generation` unchanged), else compared again.
    private func setIgnoringRepeated(_ value: T) {
        while true {
            mutex.lock()
            var current = self.value
            let observed = generation
            mutex.unlock()
            if let stored = current, stored == value {
                return
            }
            var replaced: T? = value
            mutex.lock()
            if generation != observed {
                mutex.unlock()
                continue
            }
            generation &+= 1
            swap(&self.value, &replaced)
            var read = subscribers.beginRead()
            mutex.unlock()
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
            self.mutex.lock()
            let current = self.value
            let key = self.subscribers.insert(subscriber)
            self.mutex.unlock()
            if let current {
                subscriber.putNext(current)
            }
            // The entry keeps the promise alive until the subscription ends.
            if let key { subscriber.registerSourceEntry(bag: self.subscribers, key: key, owner: self) }
            return EmptyDisposable
        }
    }
}
