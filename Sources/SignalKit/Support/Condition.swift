// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A pthread condition variable in C-allocated storage, waited on with a
/// `_Mutex` (its address must be stable, which a stored property's is not).
struct _Condition: @unchecked Sendable {
    // `@unchecked Sendable`: a pthread condition is thread-safe.
    private let pointer: UnsafeMutablePointer<pthread_cond_t>

    init() {
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: pthread_cond_t())
        let status = pthread_cond_init(pointer, nil)
        _signalKitRequire(status == 0, "SignalKit: pthread_cond_init failed (\(status))")
    }

    /// Frees the condition. The owner calls it exactly once, from its `deinit`.
    func destroy() {
        pthread_cond_destroy(pointer)
        pointer.deinitialize(count: 1)
        pointer.deallocate()
    }

    /// Waits (the mutex held by the caller is released while waiting).
    func wait(_ mutex: _Mutex) { pthread_cond_wait(pointer, mutex.pointer) }

    /// Wakes every waiter.
    func broadcast() { pthread_cond_broadcast(pointer) }

    /// Wakes one waiter.
    func signal() { pthread_cond_signal(pointer) }
}
