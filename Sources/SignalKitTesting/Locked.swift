// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit

/// A value behind a pthread mutex (SignalKit's `Atomic`).
///
/// Test support deliberately avoids `Synchronization.Mutex`: when contended
/// it hands the lock over through raw futex calls that ThreadSanitizer does
/// not see, which shows up as false race reports in stress tests.
final class Locked<Value>: @unchecked Sendable {
    // `@unchecked Sendable`: `value` is only accessed inside `atomic`.
    private let atomic: SignalKit.Atomic<Value>

    init(_ value: Value) {
        atomic = SignalKit.Atomic(value: value)
    }

    /// Runs `body` with exclusive access to the value.
    func withLock<R>(_ body: (inout Value) -> R) -> R {
        var result: R?
        atomic.modify { value in
            var copy = value
            result = body(&copy)
            return copy
        }
        return result!
    }
}
