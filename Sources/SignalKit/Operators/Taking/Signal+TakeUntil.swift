// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Synchronization

// Taking: operators that end a signal early or keep only some of its values by
// position (first, last).
// This file: ReactiveCocoa's `takeUntil` (a trigger signal, or a predicate)
// and `takeWhile`.

// MARK: - takeUntil(trigger)

/// Forwards the signal until `trigger` sends a value or completes, then
/// completes (RAC's `takeUntil:`).
///
/// Marble: `"a-b-c-d-|"` until `"----x"` → `"a-b-|"`; a trigger that fails
/// (`"--#"`) is ignored: `"a-b-c-d-|"`.
///
/// ```swift
/// let untilLogout = events |> takeUntil(logout)
/// ```
///
/// - Parameters:
///   - trigger: subscribed first; its first value or its completion
///     completes the result. Its error is ignored (the result goes on until
///     the signal itself terminates), as in ReactiveCocoa. Its value and
///     error types are free.
/// - Returns: a function from a signal to the truncated signal.
///
/// - Threading: events are delivered on the thread of the input that sent
///   them, one at a time (the trigger's completion never overlaps a value).
/// - Termination: completes on the trigger's first value or completion;
///   otherwise forwards the signal's error or completion. If the trigger
///   fires while being subscribed, the signal is never subscribed.
/// - Disposal: termination or disposal disposes the trigger's subscription,
///   then the signal's.
public func takeUntil<T, E, U, F>(_ trigger: Signal<U, F>) -> (Signal<T, E>) -> Signal<T, E> {
    { signal in
        Signal { subscriber in
            let delivery = _SerialDelivery(downstream: subscriber)
            let triggerHandle = trigger._start(_TakeUntilTriggerSink<U, F, T, E>(delivery: delivery))
            if delivery.isClosed {
                return triggerHandle
            }
            let source = signal._start(_ForwardSink(downstream: delivery))
            return ActionDisposable {
                triggerHandle.dispose()
                source.dispose()
            }
        }._derived("takeUntil", from: signal, arguments: trigger.description)
    }
}

struct _TakeUntilTriggerSink<U, F, T, E>: _InlineSink {
    typealias Input = U
    typealias Failure = F

    let delivery: _SerialDelivery<T, E>

    func putNext(_ value: U, from _: _SubscriptionBase) { delivery.putCompletion() }
    func putError(_ error: F) {}
    func putCompletion() { delivery.putCompletion() }
}

// MARK: - takeUntil / takeWhile (predicates)

/// Forwards values until `predicate` returns `true` for one, then completes
/// without forwarding that value (RAC's `takeUntilBlock:`).
///
/// Marble: `"1-2-3-4-|"` with `predicate = { $0 == 3 }` → `"1-2-|"`
///
/// - Parameters:
///   - predicate: called with each value until it returns `true`.
/// - Returns: a function from a signal to the truncated signal.
///
/// - Threading: no thread hop.
/// - Termination: completes when `predicate` returns `true`; otherwise
///   forwards the upstream's error or completion.
/// - Disposal: returns the upstream handle (the downstream's completion
///   disposes it).
public func takeUntil<T, E>(_ predicate: @escaping @Sendable (T) -> Bool) -> (Signal<T, E>) -> Signal<T, E> {
    _lift("takeUntilBlock") { subscriber in
        _TakeWhileSink(downstream: subscriber, passes: { !predicate($0) })
    }
}

/// Forwards values while `predicate` returns `true`; completes at the first
/// value for which it returns `false` (that value is dropped) (RAC's
/// `takeWhileBlock:`).
///
/// Marble: `"1-2-3-1-|"` with `predicate = { $0 < 3 }` → `"1-2-|"`
///
/// - Parameters:
///   - predicate: called with each value until it returns `false`.
/// - Returns: a function from a signal to the truncated signal.
///
/// - Threading: no thread hop.
/// - Termination: completes when `predicate` returns `false`; otherwise
///   forwards the upstream's error or completion.
/// - Disposal: returns the upstream handle.
public func takeWhile<T, E>(_ predicate: @escaping @Sendable (T) -> Bool) -> (Signal<T, E>) -> Signal<T, E> {
    _lift("takeWhileBlock") { subscriber in
        _TakeWhileSink(downstream: subscriber, passes: predicate)
    }
}

struct _TakeWhileSink<T, E>: _PassThroughSink, ~Copyable {
    typealias Input = T
    typealias Output = T
    typealias Failure = E
    let downstream: Subscriber<T, E>
    let passes: @Sendable (T) -> Bool
    let done = Synchronization.Atomic<Bool>(false)

    func putNext(_ value: T, from _: _SubscriptionBase) {
        // After completing, a source still emitting inside its generator
        // does not get `passes` called again.
        guard !done.load(ordering: .acquiring) else { return }
        if passes(value) {
            downstream.putNext(value)
        } else if !done.exchange(true, ordering: .acquiringAndReleasing) {
            downstream.putCompletion()
        }
    }
}
