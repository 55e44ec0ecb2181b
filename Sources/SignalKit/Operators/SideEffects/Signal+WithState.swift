// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// SideEffects: operators that run code at points of a subscription's life without
// changing its events.
//
// This file: SwiftSignalKit's `withState` (per-subscription state).

/// Runs hooks with a per-subscription state: `initialState()` at every
/// subscription, then `next`, `error`, `completed` before the matching event
/// is forwarded, and `disposed` once the subscription ends.
///
/// SwiftSignalKit's `withState`.
///
/// Marble: `"a-b-|"` → `"a-b-|"` (with `next(a, s)` before `a`, …)
///
/// ```swift
/// let timed = request |> { withState($0, { Stopwatch() }, completed: { $0.report("completed") }) }
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
public func withState<T, E, S: Sendable>(
    _ signal: Signal<T, E>,
    _ initialState: @escaping @Sendable () -> S,
    next: @escaping @Sendable (T, S) -> Void = { _, _ in },
    error: @escaping @Sendable (E, S) -> Void = { _, _ in },
    completed: @escaping @Sendable (S) -> Void = { _ in },
    disposed: @escaping @Sendable (S) -> Void = { _ in }
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

struct _WithStateSink<T, E, S>: _InlineSink {
    typealias Input = T
    typealias Failure = E

    let downstream: Subscriber<T, E>
    var downstreamSubscription: _SubscriptionBase? { downstream._subscriptionBase }
    let state: S
    let next: @Sendable (T, S) -> Void
    let error: @Sendable (E, S) -> Void
    let completed: @Sendable (S) -> Void

    func putNext(_ value: T, from _: _SubscriptionBase) {
        next(value, state)
        downstream.putNext(value)
    }
    func putError(_ error: E) {
        self.error(error, state)
        downstream.putError(error)
    }
    func putCompletion() {
        completed(state)
        downstream.putCompletion()
    }
}
