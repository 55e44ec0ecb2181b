// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// What the kit's drivers need below SignalKit: thread identities, a pthread
// mutex (recursive where an input is sent to from inside its own delivery),
// a monotonic clock, short sleeps and spins, and the two task-locals the
// checks read on whatever thread a callback runs on.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import SignalKit

/// The calling thread's identity (never 0).
func _currentThread() -> UInt {
    #if canImport(Glibc)
    UInt(pthread_self())
    #else
    UInt(bitPattern: pthread_self())
    #endif
}

/// Seconds on a monotonic clock.
func _now() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1_000_000_000
}

/// Sleeps for `seconds`.
func _sleep(_ seconds: Double) {
    var request = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - Double(Int(seconds))) * 1_000_000_000))
    var remaining = timespec()
    while nanosleep(&request, &remaining) != 0 {
        request = remaining
    }
}

/// Busy-waits for `seconds` (callbacks spin this long in the concurrent
/// scenarios, so that two callbacks that may overlap do).
func _spin(_ seconds: Double) {
    guard seconds > 0 else { return }
    let end = _now() + seconds
    while _now() < end {}
}

/// Polls `condition` until it holds or `timeout` seconds have passed;
/// returns whether it held.
func _eventually(timeout: Double, _ condition: () -> Bool) -> Bool {
    if condition() { return true }
    let end = _now() + timeout
    while _now() < end {
        _sleep(0.0005)
        if condition() { return true }
    }
    return condition()
}

/// A pthread mutex, recursive when asked: an input is locked for a whole
/// send, and a callback may send to the same input again.
///
/// `@unchecked Sendable`: the mutex is the guard, and it lives in memory of
/// its own (never in a Swift stored property). A pthread mutex rather than
/// `Synchronization.Mutex`, whose contended hand-over ThreadSanitizer does
/// not see.
final class _Lock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init(recursive: Bool = false) {
        mutex = .allocate(capacity: 1)
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        if recursive {
            pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_RECURSIVE))
        }
        pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}

/// A value behind a `_Lock`.
///
/// `@unchecked Sendable`: `value` is only touched inside `lock`.
final class _Guarded<Value>: @unchecked Sendable {
    private let lock = _Lock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try lock.withLock { try body(&value) }
    }

    var current: Value { withLock { $0 } }
}

/// The context the kit's propagation carries: the name of the kit action
/// that sent an event ("s12" for the send whose value is 12, "start",
/// "dispose", "clock" for the driver of the virtual clock).
enum _Trace {
    @TaskLocal static var current: String?
}

/// Whether the calling thread is inside one of the kit's actions (a start,
/// a send, a disposal, an advance of the virtual clock): a subject given no
/// queue delivers only on such a thread. `began` is the order at which the
/// outermost of them began: what a callback on the thread may have been
/// caused by was under way from then.
enum _Driving {
    @TaskLocal static var began: Int?

    static var isDriving: Bool { began != nil }

    /// Runs `body` as a kit action: inside the outermost one in progress on
    /// this thread, or as one that begins now.
    static func withAction(clock: _Clock, _ body: () -> Void) {
        $began.withValue(began ?? clock.next(), operation: body)
    }
}

/// The kit's propagation of `_Trace.current` (installed only when the
/// caller asks for the context rules).
struct _TracePropagation: SignalContextPropagation {
    func currentContext() -> String? { _Trace.current }

    func withContext(_ context: String?, _ body: () -> Void) {
        _Trace.$current.withValue(context, operation: body)
    }
}

/// Makes the kit's propagation the installed one, unless it already is:
/// a value sent in a context is delivered on another thread in it only
/// under the kit's propagation. Installs at most once while nothing else is
/// installed after it (an installed propagation stays allocated for the life
/// of the process).
func _ensureKitPropagation() {
    let probe = Queue(name: "SignalKitConformance.context-probe")
    let seen = _Guarded<String?>(nil)
    let done = DispatchSemaphore(value: 0)
    _Trace.$current.withValue("probe") {
        probe.justDispatch {
            seen.withLock { $0 = _Trace.current }
            done.signal()
        }
    }
    done.wait()
    if seen.current != "probe" {
        SignalContext.install(_TracePropagation())
    }
}

/// The context the virtual clock is advanced in: no delivery may run in it.
let _clockContext = "clock"
