// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// Transforming: operators that turn each value (or error) into another.
// This file: ReactiveCocoa's `mapReplace`.

// MARK: - mapReplace, ignore

/// Replaces every value with `value` (RAC's `mapReplace:`).
///
/// Marble: `"a-b-|"` with `mapReplace(x)` → `"x-x-|"`
///
/// - Parameters:
///   - value: sent for every upstream value.
/// - Returns: a function from a signal to the signal of `value`s.
///
/// - Threading: no thread hop.
/// - Termination: forwarded unchanged.
/// - Disposal: returns the upstream handle.
public func mapReplace<T, R: Sendable, E>(_ value: R) -> (Signal<T, E>) -> Signal<R, E> {
    { signal in
        (signal |> map { _ in value })._derived("mapReplace", from: signal, arguments: _debugArgument(value))
    }
}
