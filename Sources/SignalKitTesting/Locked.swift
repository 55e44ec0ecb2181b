// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SignalKit

/// A value behind a pthread mutex, changed in place (a heap or an array
/// inside it stays uniquely referenced, so a change costs what it costs
/// outside the lock, not a copy of the whole value).
///
/// Test support deliberately avoids `Synchronization.Mutex`: when contended
/// it hands the lock over through raw futex calls that ThreadSanitizer does
/// not see, which shows up as false race reports in stress tests.
final class Locked<Value>: @unchecked Sendable {
    // `@unchecked Sendable`: `value` is only accessed with `mutex` held.
    /// In C-allocated storage: a pthread mutex must not move, which a stored
    /// property may.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let status = pthread_mutex_init(mutex, nil)
        _signalKitRequire(status == 0, "SignalKitTesting: pthread_mutex_init failed (\(status))")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value (not re-entrant).
    func withLock<R>(_ body: (inout Value) -> R) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body(&value)
    }
}
