// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

internal import CSignalRuntime

/// Whether the calling thread is the main thread (cached per thread).
@inline(__always)
func _isMainThread() -> Bool {
    csr_is_main_thread()
}
