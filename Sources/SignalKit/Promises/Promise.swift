// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

/// A hot holder of the latest value of a source signal, replayed to new
/// subscribers.
///
/// * `set(signal)` subscribes the new source (before disposing the previous
///   one) and clears the current value; each value the source sends becomes
///   the current value and is delivered to the subscribers. The source's
///   completion and error are ignored: the value survives them.
/// * `get()` replays the current value (if any) synchronously on subscribe,
///   then delivers later values. It never completes.
/// * `init(initializeOnFirstAccess:)` sets that signal as the source at the
///   first `get()` subscription.
/// * A subscription keeps the promise alive; the source does not. When the
///   promise is released, `onDeinit` runs and the source is disposed.
///
/// Threading: values are delivered on the source's thread, outside the
/// promise's lock; a subscriber added during a delivery gets only the
/// current value, once. A value the promise drops (replaced by a newer one,
/// or cleared by `set`) is released outside the lock, so its `deinit` may
/// use the same promise.
///
/// `T` is `Sendable`: the stored value is replayed to subscribers on their
/// threads.
public final class Promise<T: Sendable>: Sendable {
    private struct State: _PromiseState {
        var value: T?
        var initializer: Signal<T, NoError>?
    }

    private let state: _LockedState<State>
    private let source = MetaDisposable()
    private let subscribers = _SubscriberBag<Subscriber<T, NoError>>()

    /// Runs when the promise is released, before its source is disposed.
    ///
    /// A plain stored property, as in SwiftSignalKit: set it before sharing
    /// the promise.
    public nonisolated(unsafe) var onDeinit: (@Sendable () -> Void)?

    public init(initializeOnFirstAccess: Signal<T, NoError>?) {
        state = _LockedState(State(initializer: initializeOnFirstAccess))
    }

    public init(_ value: T) {
        state = _LockedState(State(value: value))
    }

    public init() {
        state = _LockedState(State())
    }

    deinit {
        onDeinit?()
        source.dispose()
    }

    /// Makes `signal` the source.
    public func set(_ signal: Signal<T, NoError>) {
        // The cleared value is released after unlocking: its deinit may use
        // this promise.
        var cleared: T?
        state.withLock { swap(&cleared, &$0.value) }
        cleared = nil
        source.set(
            signal.start(next: { [weak self] value in
                guard let self else { return }
                _storeAndDeliver(value, in: state, to: subscribers)
            })
        )
    }

    /// The current value, then every later one. Never completes.
    public func get() -> Signal<T, NoError> {
        Signal { subscriber in
            let (initializer, current, key) = self.state.withLock { state in
                (state.initializer.take(), state.value, self.subscribers.insert(subscriber))
            }
            if let current {
                subscriber.putNext(current)
            }
            if let initializer {
                self.set(initializer)
            }
            // The entry keeps the promise alive until the subscription ends.
            if let key { subscriber.registerSourceEntry(bag: self.subscribers, key: key, owner: self) }
            return EmptyDisposable
        }
    }
}

/// The locked state of `Promise` and `ValuePromise`: the current value.
protocol _PromiseState<Value> {
    associatedtype Value
    var value: Value? { get set }
}

/// Stores `value` as a promise's current value and delivers it to the
/// promise's subscribers, outside the lock; the replaced value is released
/// outside the lock too (its deinit may use the promise).
func _storeAndDeliver<State: _PromiseState>(
    _ value: State.Value,
    in state: borrowing _LockedState<State>,
    to subscribers: _SubscriberBag<Subscriber<State.Value, NoError>>
) {
    var replaced: State.Value? = value
    var read = state.withLock { state in
        swap(&state.value, &replaced)
        return subscribers.beginRead()
    }
    replaced = nil
    subscribers.finishRead(&read) { $0.putNext(value) }
}
