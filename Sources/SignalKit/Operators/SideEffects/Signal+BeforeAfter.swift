// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// SideEffects: operators that run code at points of a subscription's life without
// changing its events.
//
// This file: SwiftSignalKit's `beforeNext`, `afterNext`, `beforeStarted`,
// `beforeCompleted`, `afterCompleted` and `afterDisposed`. `beforeNext`,
// `beforeCompleted` and `beforeStarted` do the same as ReactiveCocoa's
// `doNext`, `doCompleted` and `initially` (Signal+Do.swift); `afterNext`,
// `afterCompleted` and `afterDisposed` (after forwarding, or at disposal) have
// no ReactiveCocoa counterpart.

/// Calls `f` with each value, then forwards the value.
///
/// SwiftSignalKit's `beforeNext`.
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
public func beforeNext<T, E, R>(_ f: @escaping @Sendable (T) -> R) -> (Signal<T, E>) -> Signal<T, E> {
    _lift("beforeNext") { subscriber in
        _DoSink(downstream: subscriber, next: f)
    }
}

/// Forwards each value, then calls `f` with it.
///
/// SwiftSignalKit's `afterNext`.
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
public func afterNext<T, E, R>(_ f: @escaping @Sendable (T) -> R) -> (Signal<T, E>) -> Signal<T, E> {
    _lift("afterNext") { subscriber in
        _DoSink(downstream: subscriber, next: f, hooksRunAfter: true)
    }
}

/// Calls `f` at every subscription, before subscribing the upstream.
///
/// SwiftSignalKit's `beforeStarted`.
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
public func beforeStarted<T, E>(_ f: @escaping @Sendable () -> Void) -> (Signal<T, E>) -> Signal<T, E> {
    _runningFirst("beforeStarted", f)
}

/// Calls `f` when the upstream completes, then forwards the completion.
///
/// SwiftSignalKit's `beforeCompleted`.
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
public func beforeCompleted<T, E>(_ f: @escaping @Sendable () -> Void) -> (Signal<T, E>) -> Signal<T, E> {
    _lift("beforeCompleted") { subscriber in
        _DoSink<T, E, Void>(downstream: subscriber, completed: f)
    }
}

/// Forwards the completion, then calls `f`.
///
/// SwiftSignalKit's `afterCompleted`.
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
public func afterCompleted<T, E>(_ f: @escaping @Sendable () -> Void) -> (Signal<T, E>) -> Signal<T, E> {
    _lift("afterCompleted") { subscriber in
        _DoSink<T, E, Void>(downstream: subscriber, completed: f, hooksRunAfter: true)
    }
}

/// Calls `f` once the subscription has been disposed: after an explicit
/// disposal or after termination (error or completion), always after the
/// upstream was disposed.
///
/// SwiftSignalKit's `afterDisposed`.
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
public func afterDisposed<T, E, R>(_ f: @escaping @Sendable () -> R) -> (Signal<T, E>) -> Signal<T, E> {
    { signal in
        Signal { subscriber in
            let disposables = DisposableSet()
            disposables.add(signal._start(_ForwardSink(downstream: subscriber)))
            disposables.add(ActionDisposable { _ = f() })
            return disposables
        }._derived("afterDisposed", from: signal)
    }
}
