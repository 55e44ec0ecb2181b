// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Synchronization

// Errors: operators that recover from errors, replace them or produce them.
//
// This file: `Signal(catching:)`, ReactiveCocoa's `+try:`.

// MARK: - Signal(catching:)

extension Signal where E: Error {
    /// A signal that, at each subscription, calls `body` and sends its result
    /// then completes, or fails with the error it throws (RAC's `+try:`).
    ///
    /// Marble: `body` returning `a` → `"(a|)"`; throwing `e` → `"#e"`
    ///
    /// - Parameters:
    ///   - body: called once per subscription, synchronously.
    ///
    /// - Threading: `body` runs on the subscribing thread; its outcome is
    ///   delivered before `start` returns.
    /// - Termination: one value then completion, or the error.
    /// - Disposal: nothing to cancel.
    public convenience init(catching body: @escaping @Sendable () throws(E) -> T) {
        self.init { subscriber in
            do throws(E) {
                let value = try body()
                subscriber.putNext(value)
                subscriber.putCompletion()
            } catch {
                subscriber.putError(error)
            }
            return EmptyDisposable
        }
    }
}
