// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

public import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A lock for critical sections of a few dozen instructions that never call
/// out: no user closure, no downstream call, no release that could run a
/// `deinit`, no waiting.
///
/// Taking it is one compare-and-swap; releasing it is a release store (a
/// plain `mov` on x86-64), where a blocking mutex (`_Mutex`) needs a second
/// atomic read-modify-write to learn whether a sleeper must be woken. The
/// signal-of-signals engine takes it three times per inner signal; what that
/// saves on W6 is measured in Benchmarks/README.md.
/// A thread that finds it held spins on a load for a short while, then
/// yields the CPU on every further attempt: a holder preempted on a 2-core
/// machine gets the CPU back instead of being waited out.
///
/// Stored inline in its owner (a class's `let`): the atomic word has a
/// stable address there and costs no allocation of its own. Not recursive.
@usableFromInline
struct _SpinLock: ~Copyable, Sendable {
    /// true while held.
    @usableFromInline let held = Synchronization.Atomic<Bool>(false)

    @inlinable
    init() {}

    /// Takes the lock. Ordering: acquire.
    @inlinable @inline(__always)
    func lock() {
        if held.compareExchange(expected: false, desired: true, successOrdering: .acquiring, failureOrdering: .relaxed)
            .exchanged
        {
            return
        }
        lockContended()
    }

    /// Releases the lock, which the calling thread holds. Ordering: release.
    @inlinable @inline(__always)
    func unlock() {
        held.store(false, ordering: .releasing)
    }

    /// Runs `body` with the lock held.
    @inlinable @inline(__always)
    func withLock<R>(_ body: () throws -> R) rethrows -> R {
        lock()
        defer { unlock() }
        return try body()
    }

    /// The lock was held: spin on a load (no write traffic on the holder's
    /// line), then yield between attempts.
    @usableFromInline @inline(never)
    func lockContended() {
        var attempts = 0
        while true {
            if !held.load(ordering: .relaxed),
                held.compareExchange(expected: false, desired: true, successOrdering: .acquiring, failureOrdering: .relaxed)
                    .exchanged
            {
                return
            }
            attempts += 1
            if attempts >= 128 { sched_yield() }
        }
    }
}
