// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// The clocks SignalKit reads, in one place: the monotonic clock (deadlines,
// timers, spans) and the wall clock (timestamps users read).

/// CLOCK_MONOTONIC in nanoseconds: the clock of `_WorkRing.pop`'s deadline
/// (the C core's `csr_monotonic_nanoseconds` reads the same clock), the
/// dedicated thread's timers and the buffer statistics.
@inline(__always)
func _monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
}

/// Seconds on CLOCK_MONOTONIC (a Dispatch queue's `currentTime`).
func _monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1_000_000_000
}

/// Seconds on CLOCK_REALTIME (wall clock: keeps counting while suspended).
func _wallClockSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1_000_000_000
}

/// Nanoseconds on the wall clock, read cheaply (CLOCK_REALTIME_COARSE where
/// there is one: a few milliseconds' resolution, no system call): the
/// inspection's per-event timestamp.
@inline(__always)
func _coarseWallClockNanoseconds() -> UInt64 {
    var now = timespec()
    #if canImport(Glibc)
    clock_gettime(CLOCK_REALTIME_COARSE, &now)
    #else
    clock_gettime(CLOCK_REALTIME, &now)
    #endif
    return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
}
