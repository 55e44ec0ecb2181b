// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// Transforming: operators that turn each value (or error) into another.
// This file: SwiftSignalKit's `mapError` and `castError`. Values and
// completion pass straight through.

/// Transforms the error with `f`.
///
/// SwiftSignalKit's `mapError`.
///
/// Marble: `"a-b-#e"` → `"a-b-#f(e)"`
///
/// - Parameters:
///   - f: called with the upstream error, at most once per subscription.
/// - Returns: a function from a `Signal<T, E>` to a `Signal<T, R>`.
///
/// - Threading: no thread hop.
/// - Termination: the mapped error terminates; completion is forwarded.
/// - Disposal: returns the upstream handle.
public func mapError<T, E, R>(_ f: @escaping @Sendable (E) -> R) -> (Signal<T, E>) -> Signal<T, R> {
    _lift("mapError") { subscriber in
        _MapErrorSink(downstream: subscriber, transform: f)
    }
}

/// Retypes a signal that cannot fail as one that fails with `E`.
///
/// SwiftSignalKit's `castError`.
///
/// Marble: `"a-b-|"` → `"a-b-|"`
///
/// - Parameters:
///   - type: the new error type.
/// - Returns: a function from a `Signal<T, NoError>` to a `Signal<T, E>`.
///
/// - Threading: no thread hop.
/// - Termination: completion is forwarded; the result never fails.
/// - Disposal: returns the upstream handle.
public func castError<T, E>(_ type: E.Type) -> (Signal<T, NoError>) -> Signal<T, E> {
    _lift("castError", arguments: "\(E.self)") { subscriber in
        _CastErrorSink(downstream: subscriber)
    }
}

struct _MapErrorSink<T, E, R>: _InlineSink {
    typealias Input = T
    typealias Failure = E

    let downstream: Subscriber<T, R>
    var downstreamSubscription: _SubscriptionBase? { downstream._subscriptionBase }
    let transform: @Sendable (E) -> R

    func putNext(_ value: T, from _: _SubscriptionBase) { downstream.putNext(value) }
    func putError(_ error: E) { downstream.putError(transform(error)) }
    func putCompletion() { downstream.putCompletion() }
}

struct _CastErrorSink<T, E>: _InlineSink {
    typealias Input = T
    typealias Failure = NoError

    let downstream: Subscriber<T, E>
    var downstreamSubscription: _SubscriptionBase? { downstream._subscriptionBase }

    func putNext(_ value: T, from _: _SubscriptionBase) { downstream.putNext(value) }
    func putError(_ error: NoError) {}
    func putCompletion() { downstream.putCompletion() }
}
