// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A pthread mutex in C-allocated storage.
///
/// SignalKit's classes cannot embed a `pthread_mutex_t` in a stored property
/// (its address is not stable in Swift), so the mutex lives in malloc'ed
/// storage that the owner frees in its `deinit`. Non-recursive. Used where user
/// code may run while the lock is held or where a hold can be long (`Atomic`,
/// `Lock`, containers, promises); the subscriber hot paths use
/// `CSignalRuntime` instead.
///
/// `@usableFromInline` for SignalKit's `@inlinable` operator code; its
/// methods are not inlinable (Glibc is imported internally), so specialised
/// client code makes one direct call per lock or unlock.
@usableFromInline
struct _Mutex: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<pthread_mutex_t>

    @usableFromInline
    init() {
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: pthread_mutex_t())
        let status = pthread_mutex_init(pointer, nil)
        precondition(status == 0, "SignalKit: pthread_mutex_init failed (\(status))")
    }

    /// Frees the mutex. The owner calls it exactly once, from its `deinit`.
    @usableFromInline
    func destroy() {
        pthread_mutex_destroy(pointer)
        pointer.deinitialize(count: 1)
        pointer.deallocate()
    }

    @usableFromInline @inline(__always) func lock() { pthread_mutex_lock(pointer) }
    @usableFromInline @inline(__always) func unlock() { pthread_mutex_unlock(pointer) }
    @usableFromInline @inline(__always) func tryLock() -> Bool { pthread_mutex_trylock(pointer) == 0 }

    @inline(__always)
    func withLock<R>(_ body: () throws -> R) rethrows -> R {
        lock()
        defer { unlock() }
        return try body()
    }
}
