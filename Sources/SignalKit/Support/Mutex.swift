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
/// `CSignalRuntime` instead, and the signal-of-signals engine, whose critical
/// sections only move state, `_SpinLock`.
///
/// `@usableFromInline` for SignalKit's `@inlinable` operator code; its
/// methods are not inlinable (Glibc is imported internally), so specialised
/// client code makes one direct call per lock or unlock.
@usableFromInline
struct _Mutex: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<pthread_mutex_t>

    /// A mutex; `adaptive`: one that spins briefly before sleeping when it
    /// finds the lock held (glibc's adaptive mutex; elsewhere a plain one),
    /// for locks two cores take at once for a few dozen instructions each.
    @usableFromInline
    init(adaptive: Bool = false) {
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: pthread_mutex_t())
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        #if canImport(Glibc)
        if adaptive { pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ADAPTIVE_NP)) }
        #endif
        let status = pthread_mutex_init(pointer, &attributes)
        pthread_mutexattr_destroy(&attributes)
        _signalKitRequire(status == 0, "SignalKit: pthread_mutex_init failed (\(status))")
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

/// State and the pthread mutex that guards it, in one C allocation that the
/// box frees when it is destroyed (its owner needs no `deinit`). The state is
/// reachable only inside `withLock`.
///
/// The package's integrations use it too, in place of
/// `Synchronization.Mutex`: contended, that one hands the lock over through
/// futex calls in code ThreadSanitizer does not instrument, so a user's
/// ThreadSanitizer run reported races on state it guards (two threads and a
/// `Mutex<[Int]>` show it); ThreadSanitizer sees a pthread mutex.
///
/// `body` must not call out (no user closures, no downstream calls) and must
/// not release anything that can run arbitrary code: a replaced value is
/// returned from `body` and dropped by the caller after the lock is released,
/// so a re-entrant `deinit` cannot deadlock on this lock.
package struct _LockedState<State>: ~Copyable, @unchecked Sendable {
    // `@unchecked Sendable`: the state is only accessed with the mutex held.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    /// The state follows the mutex, aligned for `State`.
    @inline(__always)
    private static var stateOffset: Int {
        let alignment = MemoryLayout<State>.alignment
        return (MemoryLayout<pthread_mutex_t>.size + alignment - 1) / alignment * alignment
    }

    @inline(__always)
    private var state: UnsafeMutablePointer<State> {
        (UnsafeMutableRawPointer(mutex) + Self.stateOffset).assumingMemoryBound(to: State.self)
    }

    package init(_ initial: consuming State) {
        let raw = UnsafeMutableRawPointer.allocate(
            // At least one byte of state: `withLock` passes the state
            // `inout`, and ThreadSanitizer records an inout access even of
            // an empty state (`_LockedState(())`) at its address; one past
            // the end of the block, that address is the next block's, whose
            // reuse the sanitizer then reports as a race.
            byteCount: Self.stateOffset + max(1, MemoryLayout<State>.size),
            alignment: max(MemoryLayout<pthread_mutex_t>.alignment, MemoryLayout<State>.alignment))
        mutex = raw.bindMemory(to: pthread_mutex_t.self, capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let status = pthread_mutex_init(mutex, nil)
        _signalKitRequire(status == 0, "SignalKit: pthread_mutex_init failed (\(status))")
        (raw + Self.stateOffset).bindMemory(to: State.self, capacity: 1).initialize(to: initial)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        state.deinitialize(count: 1)
        mutex.deinitialize(count: 1)
        UnsafeMutableRawPointer(mutex).deallocate()
    }

    /// Runs `body` on the state with the mutex held.
    @inline(__always)
    package func withLock<R, Failure: Error>(_ body: (inout State) throws(Failure) -> R) throws(Failure) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state.pointee)
    }
}
