// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// SideEffects: operators that run code at points of a subscription's life without
// changing its events.
//
// This file: ReactiveCocoa's side-effect injection under its own names:
// `doNext`, `doError`, `doCompleted`, `initially`, `finally`. Every one runs
// its block BEFORE the event is forwarded (RAC design guideline: side
// effects are explicit and happen before the value reaches downstream).
// `doError` and `finally` have no SwiftSignalKit counterpart
// (`withState(error:)` comes closest).

/// Runs `f` with each value before forwarding it (RAC's `doNext:`; the same
/// as SwiftSignalKit's `beforeNext`).
///
/// Marble: `"a-b-|"` → `"a-b-|"` (with `f(a)` before `a`, `f(b)` before `b`)
///
/// - Parameters:
///   - f: called with each value, before the downstream gets it.
/// - Returns: a function from a signal to the same signal with the side
///   effect.
///
/// - Threading: `f` runs on the delivering thread.
/// - Termination: forwarded unchanged (`f` is not called).
/// - Disposal: returns the upstream handle.
public func doNext<T, E>(_ f: @escaping @Sendable (T) -> Void) -> (Signal<T, E>) -> Signal<T, E> {
    _lift("doNext") { subscriber in
        _DoSink(downstream: subscriber, next: f)
    }
}

/// Runs `f` with the error before forwarding it (RAC's `doError:`).
///
/// Marble: `"a-#e"` → `"a-#e"` (with `f(e)` before `#e`)
///
/// - Parameters:
///   - f: called with the error, before the downstream gets it.
/// - Returns: a function from a signal to the same signal with the side
///   effect.
///
/// - Threading: `f` runs on the thread that delivers the error.
/// - Termination: forwarded unchanged; `f` is not called on completion or
///   disposal.
/// - Disposal: returns the upstream handle.
public func doError<T, E>(_ f: @escaping @Sendable (E) -> Void) -> (Signal<T, E>) -> Signal<T, E> {
    _lift("doError") { subscriber in
        _DoSink<T, E, Void>(downstream: subscriber, error: f)
    }
}

/// Runs `f` before forwarding the completion (RAC's `doCompleted:`; the same
/// as SwiftSignalKit's `beforeCompleted`).
///
/// Marble: `"a-|"` → `"a-|"` (with `f()` before `|`)
///
/// - Parameters:
///   - f: called on completion, before the downstream gets it.
/// - Returns: a function from a signal to the same signal with the side
///   effect.
///
/// - Threading: `f` runs on the completing thread.
/// - Termination: forwarded unchanged; `f` is not called on error or
///   disposal.
/// - Disposal: returns the upstream handle.
public func doCompleted<T, E>(_ f: @escaping @Sendable () -> Void) -> (Signal<T, E>) -> Signal<T, E> {
    _lift("doCompleted") { subscriber in
        _DoSink<T, E, Void>(downstream: subscriber, completed: f)
    }
}

/// Runs `f` at each subscription, before subscribing the upstream (RAC's
/// `initially:`; the same as SwiftSignalKit's `beforeStarted`).
///
/// Marble: `"a-|"` → `"a-|"` (with `f()` before the upstream's subscription)
///
/// - Parameters:
///   - f: called once per subscription.
/// - Returns: a function from a signal to the same signal with the side
///   effect.
///
/// - Threading: `f` runs on the subscribing thread, inside `start`.
/// - Termination: forwarded unchanged.
/// - Disposal: returns the upstream handle.
public func initially<T, E>(_ f: @escaping @Sendable () -> Void) -> (Signal<T, E>) -> Signal<T, E> {
    _runningFirst("initially", f)
}

/// Runs `f` when the signal completes or fails, before forwarding that event
/// (RAC's `finally:`); not when the subscription is disposed.
///
/// Marble: `"a-|"` → `"a-|"` and `"a-#e"` → `"a-#e"` (with `f()` before the
/// terminal event)
///
/// For code that must run however the subscription ends, disposal included,
/// use SwiftSignalKit's `afterDisposed`.
///
/// - Parameters:
///   - f: called at most once per subscription, before the terminal event is
///     forwarded.
/// - Returns: a function from a signal to the same signal with the side
///   effect.
///
/// - Threading: `f` runs on the thread that delivers the terminal event.
/// - Termination: forwarded unchanged.
/// - Disposal: returns the upstream handle; disposal does not call `f`.
public func finally<T, E>(_ f: @escaping @Sendable () -> Void) -> (Signal<T, E>) -> Signal<T, E> {
    _lift("finally") { subscriber in
        _DoSink<T, E, Void>(downstream: subscriber, error: { _ in f() }, completed: f)
    }
}

/// `initially` and `beforeStarted`: runs `f` at each subscription, then
/// subscribes the upstream through a forwarding sink.
func _runningFirst<T, E>(_ name: StaticString, _ f: @escaping @Sendable () -> Void) -> (Signal<T, E>) -> Signal<T, E> {
    { signal in
        Signal { subscriber in
            f()
            return signal._start(_ForwardSink(downstream: subscriber))
        }._derived(name, from: signal)
    }
}

/// The sink of the event hooks of this family (ReactiveCocoa's `doNext`,
/// `doError`, `doCompleted`, `finally`; SwiftSignalKit's `beforeNext`,
/// `afterNext`, `beforeCompleted`, `afterCompleted`): each hook that is set
/// runs before its event is forwarded; `next` and `completed` run after it
/// instead when `hooksRunAfter` (no operator runs `error` after). The
/// result of `next` is ignored.
struct _DoSink<T, E, R>: _InlineSink {
    typealias Input = T
    typealias Failure = E

    let downstream: Subscriber<T, E>
    var downstreamSubscription: _SubscriptionBase? { downstream._subscriptionBase }
    let next: (@Sendable (T) -> R)?
    let error: (@Sendable (E) -> Void)?
    let completed: (@Sendable () -> Void)?
    let hooksRunAfter: Bool

    init(
        downstream: Subscriber<T, E>,
        next: (@Sendable (T) -> R)? = nil,
        error: (@Sendable (E) -> Void)? = nil,
        completed: (@Sendable () -> Void)? = nil,
        hooksRunAfter: Bool = false
    ) {
        self.downstream = downstream
        self.next = next
        self.error = error
        self.completed = completed
        self.hooksRunAfter = hooksRunAfter
    }

    func putNext(_ value: T, from _: _SubscriptionBase) {
        if hooksRunAfter {
            downstream.putNext(value)
            _ = next?(value)
        } else {
            _ = next?(value)
            downstream.putNext(value)
        }
    }

    func putError(_ error: E) {
        self.error?(error)
        downstream.putError(error)
    }

    func putCompletion() {
        if hooksRunAfter {
            downstream.putCompletion()
            completed?()
        } else {
            completed?()
            downstream.putCompletion()
        }
    }
}
