// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// SideEffects: running code at points of a subscription's life without
// changing its events: before/after values, at start, at completion, at
// disposal, and with per-subscription state (`withState`).

/// Calls `f` with each value, then forwards the value.
///
/// Marble: `"a-b-|"` → `"a-b-|"` (with `f(a)` before `a`, `f(b)` before `b`)
///
/// - Parameters:
///   - f: called with each value before it is forwarded; its result is
///     ignored.
/// - Returns: a function from a signal to the same signal with the side
///   effect.
///
/// - Threading: `f` runs on the delivering thread, no thread hop.
/// - Termination: error and completion are forwarded unchanged (`f` is not
///   called for them).
/// - Disposal: returns the upstream handle.
public func beforeNext<T, E, R>(_ f: @escaping (T) -> R) -> (Signal<T, E>) -> Signal<T, E> {
    { signal in
        Signal { subscriber in
            signal._start(_BeforeNextSink(downstream: subscriber, action: f))
        }._derived("beforeNext", from: signal)
    }
}

/// Forwards each value, then calls `f` with it.
///
/// Marble: `"a-b-|"` → `"a-b-|"` (with `f(a)` after `a` was delivered)
///
/// `f` runs even when forwarding the value terminated the downstream: after
/// `take(1)` completed and disposed the upstream, `f` still runs for that
/// value (log: `next 1`, `completed`, `a.dispose#1`, then `f(1)`).
///
/// - Parameters:
///   - f: called with each value after it was forwarded; its result is
///     ignored.
/// - Returns: a function from a signal to the same signal with the side
///   effect.
///
/// - Threading: `f` runs on the delivering thread, no thread hop.
/// - Termination: error and completion are forwarded unchanged.
/// - Disposal: returns the upstream handle.
public func afterNext<T, E, R>(_ f: @escaping (T) -> R) -> (Signal<T, E>) -> Signal<T, E> {
    { signal in
        Signal { subscriber in
            signal._start(_AfterNextSink(downstream: subscriber, action: f))
        }._derived("afterNext", from: signal)
    }
}

/// Calls `f` at every subscription, before subscribing the upstream.
///
/// Marble: `"a-|"` → `"a-|"` (with `f()` before `a.subscribe`)
///
/// - Parameters:
///   - f: called once per `start`, on the subscribing thread.
/// - Returns: a function from a signal to the same signal with the side
///   effect.
///
/// - Threading: `f` runs inside `start`, on the caller's thread.
/// - Termination: events are forwarded unchanged.
/// - Disposal: returns the upstream handle.
public func beforeStarted<T, E>(_ f: @escaping () -> Void) -> (Signal<T, E>) -> Signal<T, E> {
    { signal in
        Signal { subscriber in
            f()
            return signal._start(_ForwardSink(downstream: subscriber))
        }._derived("beforeStarted", from: signal)
    }
}

/// Calls `f` when the upstream completes, then forwards the completion.
///
/// Marble: `"a-|"` → `"a-|"` (with `f()` before `|`)
///
/// - Parameters:
///   - f: called on completion only (not on error, not on disposal).
/// - Returns: a function from a signal to the same signal with the side
///   effect.
///
/// - Threading: `f` runs on the completing thread.
/// - Termination: errors are forwarded without calling `f`.
/// - Disposal: returns the upstream handle.
public func beforeCompleted<T, E>(_ f: @escaping () -> Void) -> (Signal<T, E>) -> Signal<T, E> {
    { signal in
        Signal { subscriber in
            signal._start(_BeforeCompletedSink(downstream: subscriber, action: f))
        }._derived("beforeCompleted", from: signal)
    }
}

/// Forwards the completion, then calls `f`.
///
/// Marble: `"a-|"` → `"a-|"` (with `f()` after `|` was delivered)
///
/// For an upstream that completes asynchronously, `f` runs after the
/// downstream has already disposed the upstream (log: `completed`,
/// `a.dispose#1`, `f`); for one that completes inside its generator, `f`
/// runs before the upstream's disposable is disposed (`completed`, `f`,
/// `a.dispose#1`): that disposable is disposed when the generator returns.
///
/// - Parameters:
///   - f: called on completion only (not on error, not on disposal).
/// - Returns: a function from a signal to the same signal with the side
///   effect.
///
/// - Threading: `f` runs on the completing thread.
/// - Termination: errors are forwarded without calling `f`.
/// - Disposal: returns the upstream handle.
public func afterCompleted<T, E>(_ f: @escaping () -> Void) -> (Signal<T, E>) -> Signal<T, E> {
    { signal in
        Signal { subscriber in
            signal._start(_AfterCompletedSink(downstream: subscriber, action: f))
        }._derived("afterCompleted", from: signal)
    }
}

/// Calls `f` once the subscription has been disposed: after an explicit
/// disposal or after termination (error or completion), always after the
/// upstream was disposed.
///
/// Marble: `"a-|"` → `"a-|"` (with `f()` after the upstream's disposal)
///
/// The generator returns a `DisposableSet` of [upstream handle,
/// `ActionDisposable(f)`]: `f` runs at most once.
///
/// - Parameters:
///   - f: called once per subscription; its result is ignored.
/// - Returns: a function from a signal to the same signal with the side
///   effect.
///
/// - Threading: `f` runs on the thread that disposes (the disposing caller,
///   or the thread that delivered the terminal event).
/// - Termination: events are forwarded unchanged; termination disposes the
///   set, so `f` runs right after the upstream is disposed.
/// - Disposal: disposes the upstream, then calls `f`.
public func afterDisposed<T, E, R>(_ f: @escaping () -> R) -> (Signal<T, E>) -> Signal<T, E> {
    { signal in
        Signal { subscriber in
            let disposables = DisposableSet()
            disposables.add(signal._start(_ForwardSink(downstream: subscriber)))
            disposables.add(ActionDisposable { _ = f() })
            return disposables
        }._derived("afterDisposed", from: signal)
    }
}

/// Runs hooks with a per-subscription state: `initialState()` at every
/// subscription, then `next`, `error`, `completed` before the matching event
/// is forwarded, and `disposed` once the subscription ends.
///
/// Marble: `"a-b-|"` → `"a-b-|"` (with `next(a, s)` before `a`, …)
///
/// ```swift
/// let timed = request |> { withState($0, { Stopwatch() }, completed: { $0.report() }) }
/// ```
///
/// - Parameters:
///   - signal: the upstream signal.
///   - initialState: creates the state, at each subscription, before the
///     upstream is subscribed.
///   - next: called with each value and the state, before the value is
///     forwarded.
///   - error: called with the error and the state, before it is forwarded.
///   - completed: called with the state before the completion is forwarded.
///   - disposed: called with the state after the upstream was disposed,
///     on explicit disposal and after termination, at most once.
/// - Returns: the signal with the hooks.
///
/// - Threading: `initialState` runs on the subscribing thread; the event
///   hooks on the delivering thread; `disposed` on the disposing thread.
/// - Termination: events are forwarded unchanged, after their hook;
///   termination then disposes the subscription, which calls `disposed`.
/// - Disposal: an `ActionDisposable` that disposes the upstream, then calls
///   `disposed(state)`.
public func withState<T, E, S>(
    _ signal: Signal<T, E>,
    _ initialState: @escaping () -> S,
    next: @escaping (T, S) -> Void = { _, _ in },
    error: @escaping (E, S) -> Void = { _, _ in },
    completed: @escaping (S) -> Void = { _ in },
    disposed: @escaping (S) -> Void = { _ in }
) -> Signal<T, E> {
    Signal { subscriber in
        let state = initialState()
        let upstream = signal._start(
            _WithStateSink(downstream: subscriber, state: state, next: next, error: error, completed: completed)
        )
        return ActionDisposable {
            upstream.dispose()
            disposed(state)
        }
    }._derived("withState", from: signal)
}

// MARK: - Sinks

final class _BeforeNextSink<T, E, R>: _Sink<T, E>, @unchecked Sendable {
    // `@unchecked Sendable`: immutable; called serially by the source.
    let downstream: Subscriber<T, E>
    override var downstreamSubscription: _SubscriptionBase? { downstream._subscriptionBase }
    let action: (T) -> R

    init(downstream: Subscriber<T, E>, action: @escaping (T) -> R) {
        self.downstream = downstream
        self.action = action
    }

    override func putNext(_ value: T) {
        _ = action(value)
        downstream.putNext(value)
    }
    override func putError(_ error: E) { downstream.putError(error) }
    override func putCompletion() { downstream.putCompletion() }
}

final class _AfterNextSink<T, E, R>: _Sink<T, E>, @unchecked Sendable {
    // `@unchecked Sendable`: immutable; called serially by the source.
    let downstream: Subscriber<T, E>
    override var downstreamSubscription: _SubscriptionBase? { downstream._subscriptionBase }
    let action: (T) -> R

    init(downstream: Subscriber<T, E>, action: @escaping (T) -> R) {
        self.downstream = downstream
        self.action = action
    }

    override func putNext(_ value: T) {
        downstream.putNext(value)
        _ = action(value)
    }
    override func putError(_ error: E) { downstream.putError(error) }
    override func putCompletion() { downstream.putCompletion() }
}

final class _BeforeCompletedSink<T, E>: _Sink<T, E>, @unchecked Sendable {
    // `@unchecked Sendable`: immutable; called serially by the source.
    let downstream: Subscriber<T, E>
    override var downstreamSubscription: _SubscriptionBase? { downstream._subscriptionBase }
    let action: () -> Void

    init(downstream: Subscriber<T, E>, action: @escaping () -> Void) {
        self.downstream = downstream
        self.action = action
    }

    override func putNext(_ value: T) { downstream.putNext(value) }
    override func putError(_ error: E) { downstream.putError(error) }
    override func putCompletion() {
        action()
        downstream.putCompletion()
    }
}

final class _AfterCompletedSink<T, E>: _Sink<T, E>, @unchecked Sendable {
    // `@unchecked Sendable`: immutable; called serially by the source.
    let downstream: Subscriber<T, E>
    override var downstreamSubscription: _SubscriptionBase? { downstream._subscriptionBase }
    let action: () -> Void

    init(downstream: Subscriber<T, E>, action: @escaping () -> Void) {
        self.downstream = downstream
        self.action = action
    }

    override func putNext(_ value: T) { downstream.putNext(value) }
    override func putError(_ error: E) { downstream.putError(error) }
    override func putCompletion() {
        downstream.putCompletion()
        action()
    }
}

final class _WithStateSink<T, E, S>: _Sink<T, E>, @unchecked Sendable {
    // `@unchecked Sendable`: immutable; called serially by the source (the
    // state object is the user's, used by the user's hooks).
    let downstream: Subscriber<T, E>
    override var downstreamSubscription: _SubscriptionBase? { downstream._subscriptionBase }
    let state: S
    let next: (T, S) -> Void
    let error: (E, S) -> Void
    let completed: (S) -> Void

    init(
        downstream: Subscriber<T, E>,
        state: S,
        next: @escaping (T, S) -> Void,
        error: @escaping (E, S) -> Void,
        completed: @escaping (S) -> Void
    ) {
        self.downstream = downstream
        self.state = state
        self.next = next
        self.error = error
        self.completed = completed
    }

    override func putNext(_ value: T) {
        next(value, state)
        downstream.putNext(value)
    }
    override func putError(_ error: E) {
        self.error(error, state)
        downstream.putError(error)
    }
    override func putCompletion() {
        completed(state)
        downstream.putCompletion()
    }
}
