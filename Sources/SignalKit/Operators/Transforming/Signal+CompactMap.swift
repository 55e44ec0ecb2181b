// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

/// Transforms every value with `f` and sends the non-nil results: a `map`
/// and a `filter` in one step (Combine's, RxSwift's and the standard
/// library's `compactMap`).
///
/// Not in SwiftSignalKit, whose `flatMap` maps the non-nil values of a
/// signal of optionals and keeps the `nil`s.
///
/// Marble (`f` returns nil for `b`): `"a-b-c-|"` → `"f(a)---f(c)-|"`
///
/// ```swift
/// let ports = lines |> compactMap { Int($0) }
/// ```
///
/// - Parameters:
///   - f: called once per value per subscription, on the thread that
///     delivers the value.
/// - Returns: a function from a signal to the transformed signal.
///
/// - Threading: no thread hop.
/// - Termination: error and completion are forwarded unchanged.
/// - Disposal: returns the upstream handle. Fused with neighbouring `map`
///   and `filter` stages like they are.
@inlinable
public func compactMap<T, E, R>(_ f: @escaping @Sendable (T) -> R?) -> (Signal<T, E>) -> Signal<R, E> {
    { signal in
        _fusing(
            signal,
            _SignalStage(
                feeding: { next in
                    { value, context in
                        if let result = f(value), !context.terminal.isTerminated { next(result, context) }
                    }
                },
                delivering: {
                    { value, context in
                        if let result = f(value), !context.terminal.isTerminated {
                            context.deliver(result, as: E.self)
                        }
                    }
                }
            )
        )._derived("compactMap", from: signal)
    }
}
