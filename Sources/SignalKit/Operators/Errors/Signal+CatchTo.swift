// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Synchronization

// Errors: operators that recover from errors, replace them or produce them.
//
// This file: ReactiveCocoa's `catchTo:`.

// MARK: - catchTo

/// On error, switches to `replacement` (RAC's `catchTo:`;
/// `catch { _ in replacement }`).
///
/// Marble: `"a-#e"` with `catchTo("x-|")` → `"a-x-|"`
///
/// - Parameters:
///   - replacement: subscribed when the signal fails, inside the error
///     callback.
/// - Returns: a function from a signal to the recovered signal (with the
///   replacement's error type).
///
/// - Threading: as `catch(_:)`.
/// - Termination: completes when the signal completes or, after an error,
///   when `replacement` completes; fails when `replacement` fails.
/// - Disposal: as `catch(_:)`.
public func catchTo<T, E, R>(_ replacement: Signal<T, R>) -> (Signal<T, E>) -> Signal<T, R> {
    { signal in
        (signal |> `catch` { _ in replacement })._derived("catchTo", from: signal, arguments: replacement.description)
    }
}
