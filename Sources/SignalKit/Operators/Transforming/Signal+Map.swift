// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// Transforming: operators that turn each value (or error) into another.
// This file: SwiftSignalKit's `map` and `flatMap` (a map over Optional values).
// Both subscribe upstream synchronously and return the upstream handle
// unchanged: error and completion pass straight through.

/// Transforms every value with `f`.
///
/// SwiftSignalKit's `map` (also ReactiveCocoa's `map:`).
///
/// Marble: `"a-b-c-|"` → `"f(a)-f(b)-f(c)-|"`
///
/// ```swift
/// let doubled = numbers |> map { $0 * 2 }
/// ```
///
/// - Parameters:
///   - f: called once per value per subscription, on the thread that
///     delivers the value.
/// - Returns: a function from a signal to the mapped signal (use with `|>`).
///
/// - Threading: no thread hop: `f` and the downstream callbacks run on the
///   thread the upstream delivers on.
/// - Termination: error and completion are forwarded unchanged.
/// - Disposal: disposing the subscription disposes the upstream subscription
///   (the generator returns the upstream handle).
@inlinable
public func map<T, E, R>(_ f: @escaping @Sendable (T) -> R) -> (Signal<T, E>) -> Signal<R, E> {
    { signal in
        _fusing(
            signal,
            _SignalStage(
                feeding: { next in
                    { value, context in
                        let result = f(value)
                        if !context.terminal.isTerminated { next(result, context) }
                    }
                },
                delivering: {
                    { value, context in
                        let result = f(value)
                        if !context.terminal.isTerminated { context.deliver(result, as: E.self) }
                    }
                }
            )
        )._derived("map", from: signal)
    }
}

/// Transforms the non-nil values of a signal of optionals; `nil` passes as
/// `nil` (an optional map, not a flattening).
///
/// SwiftSignalKit's `flatMap` (ReactiveCocoa's `flattenMap:` is `flattenMap`).
///
/// Marble: `"a-nil-c-|"` → `"f(a)-nil-f(c)-|"`
///
/// - Parameters:
///   - f: called for each non-nil value.
/// - Returns: a function from a `Signal<T?, E>` to a `Signal<R?, E>`.
///
/// - Threading: no thread hop.
/// - Termination: error and completion are forwarded unchanged.
/// - Disposal: returns the upstream handle.
public func flatMap<T, E, R>(_ f: @escaping @Sendable (T) -> R) -> (Signal<T?, E>) -> Signal<R?, E> {
    _lift("flatMap") { subscriber in
        _OptionalMapSink(downstream: subscriber, transform: f)
    }
}

struct _OptionalMapSink<T, E, R>: _PassThroughSink {
    typealias Input = T?
    typealias Output = R?
    typealias Failure = E
    let downstream: Subscriber<R?, E>
    let transform: @Sendable (T) -> R

    func putNext(_ value: T?, from _: _SubscriptionBase) { downstream.putNext(value.map(transform)) }
}
