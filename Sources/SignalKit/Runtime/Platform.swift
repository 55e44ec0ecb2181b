internal import CSignalRuntime

/// Whether the calling thread is the main thread (cached per thread).
@inline(__always)
func _isMainThread() -> Bool {
    csr_is_main_thread()
}
