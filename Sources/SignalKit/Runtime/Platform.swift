// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

internal import CSignalRuntime

/// Whether the calling thread is the main thread (cached per thread).
@inline(__always)
func _isMainThread() -> Bool {
    csr_is_main_thread()
}

/// The CPU's spin-wait hint, `count` times (see `csr_cpu_pause`).
@inline(__always)
func _cpuPause(_ count: UInt32) {
    csr_cpu_pause(count)
}

/// Spins (with the CPU's spin-wait hint, reading the clock every few
/// hints) for about `nanoseconds`, without leaving the CPU.
func _pauseFor(nanoseconds: UInt64) {
    let start = _monotonicNanoseconds()
    repeat {
        csr_cpu_pause(8)
    } while _monotonicNanoseconds() &- start < nanoseconds
}
