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
    let start = csr_monotonic_nanoseconds()
    repeat {
        csr_cpu_pause(8)
    } while csr_monotonic_nanoseconds() &- start < nanoseconds
}

/// The calling thread's current inspected stage, unretained (see
/// `csr_inspection_current`; used by `_SignalInspection`).
var _inspectionCurrent: UnsafeMutableRawPointer? {
    @inline(__always) get { csr_inspection_current() }
    @inline(__always) set { csr_inspection_set_current(newValue) }
}
