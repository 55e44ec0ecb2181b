// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Sleeps for `seconds` (short waits in leak checks only; timing tests use
/// `VirtualTimeScheduler`).
func usleepSeconds(_ seconds: Double) {
    var request = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - Double(Int(seconds))) * 1_000_000_000))
    var remaining = timespec()
    while nanosleep(&request, &remaining) != 0 {
        request = remaining
    }
}
