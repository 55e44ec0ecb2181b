// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SignalKit
import SignalKitTesting
import Synchronization

// Helpers for the Errors, Looping, Flattening, Switching and StackSafety tests. `take` belongs to
// another operator family; these tests use a legacy-shaped stand-in.

/// SwiftSignalKit's `take(1)` shape, for tests: forwards the first value,
/// then completes downstream. Like `take`, it does not stop the upstream
/// before the upstream's generator returns (termination does not travel
/// upstream), which is what SwiftSignalKit's `then`/`restart` tests rely on.
/// Unlike SignalKit's `take`, it subscribes with `start(next:…)`, so the loop
/// operators cannot see that its downstream ended (that check applies to
/// SignalKit's own operators); the tests using it keep SwiftSignalKit's logs.
func firstValueOnlyForCatchMetaTests<T, E>() -> (Signal<T, E>) -> Signal<T, E> {
    { signal in
        Signal { subscriber in
            signal.start(
                next: { value in
                    subscriber.putNext(value)
                    subscriber.putCompletion()
                },
                error: { subscriber.putError($0) },
                completed: { subscriber.putCompletion() }
            )
        }
    }
}

/// A source whose n-th subscription (1-based) runs `body(n, subscriber)`,
/// logging `"<name>.subscribe#n"` and `"<name>.dispose#n"` like `TestSource`,
/// and keeping every subscriber reachable through `subscriber(n)`.
final class ScriptedSource<T, E>: @unchecked Sendable {
    // `@unchecked Sendable`: the mutable state is guarded by `lock` (a
    // pthread mutex, which ThreadSanitizer sees).
    let name: String
    private let log: EventLog?
    private let body: @Sendable (Int, Subscriber<T, E>) -> Void
    private let lock = Lock()
    private var count = 0
    private var disposed: [Int: Int] = [:]
    private var subscribers: [Int: Subscriber<T, E>] = [:]

    init(_ name: String, log: EventLog?, body: @escaping @Sendable (Int, Subscriber<T, E>) -> Void) {
        self.name = name
        self.log = log
        self.body = body
    }

    var signal: Signal<T, E> {
        Signal { [self] subscriber in
            var assigned = 0
            lock.locked {
                count += 1
                assigned = count
                subscribers[assigned] = subscriber
            }
            let index = assigned
            log?.append("\(name).subscribe#\(index)")
            body(index, subscriber)
            return ActionDisposableLogging { [self] in
                lock.locked { disposed[index, default: 0] += 1 }
                log?.append("\(name).dispose#\(index)")
            }
        }
    }

    var subscribeCount: Int {
        var result = 0
        lock.locked { result = count }
        return result
    }

    /// Whether every subscription's disposable was disposed exactly once.
    var everySubscriptionDisposedOnce: Bool {
        var result = false
        lock.locked { result = (0..<count).allSatisfy { disposed[$0 + 1] == 1 } }
        return result
    }

    func subscriber(_ index: Int) -> Subscriber<T, E> {
        var result: Subscriber<T, E>?
        lock.locked { result = subscribers[index] }
        return result!
    }

    func releaseSubscribers() {
        var released: [Int: Subscriber<T, E>] = [:]
        lock.locked { swap(&released, &subscribers) }
        _ = released
    }
}

/// Serialises `captureStandardOutputForMetaTests`: standard output is one
/// descriptor per process, so two captures at once (parallel tests) would
/// take each other's output and restore each other's pipes.
private let standardOutputCapture = _LockedState<Void>(())

/// Runs `body` with standard output redirected to a pipe; returns what was
/// printed. Swift Testing reports on standard error, so nothing else is
/// swallowed unless another test prints at the same moment; captures run one
/// at a time.
func captureStandardOutputForMetaTests(_ body: () -> Void) -> String {
    standardOutputCapture.withLock { _ in capturingStandardOutput(body) }
}

private func capturingStandardOutput(_ body: () -> Void) -> String {
    fflush(nil)
    var fds: [Int32] = [0, 0]
    precondition(pipe(&fds) == 0)
    let saved = dup(STDOUT_FILENO)
    dup2(fds[1], STDOUT_FILENO)
    close(fds[1])
    body()
    fflush(nil)
    dup2(saved, STDOUT_FILENO)
    close(saved)
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = read(fds[0], &buffer, buffer.count)
        if count <= 0 { break }
        bytes.append(contentsOf: buffer[0..<count])
    }
    close(fds[0])
    return String(decoding: bytes, as: UTF8.self)
}

/// Logs each event with the virtual time and whether it arrives on `queue`.
func timedLog<T, E>(
    _ signal: Signal<T, E>,
    _ log: EventLog,
    _ scheduler: VirtualTimeScheduler,
    _ queue: Queue
) -> any Disposable {
    signal.start(
        next: { log.append("next \($0) at \(scheduler.now) onQueue=\(queue.isCurrent())") },
        error: { log.append("error \($0) at \(scheduler.now)") },
        completed: { log.append("completed at \(scheduler.now)") }
    )
}

/// The stack-safety tests' scale and stack: a loop that must run in constant
/// stack runs `iterations` times on a thread with a 1 MiB stack, where a
/// recursive scheme (a few frames per iteration) overflows within a few
/// thousand. 100,000 iterations (a million in the release pass, stress scale
/// 10): the sanitizer passes slow these loops tenfold and more, and they
/// would otherwise hold the test runner's threads for minutes.
enum StackSafety {
    static let iterations = 100_000 * min(stressScale, 10)
    static let stackSize = 1 << 20

    /// Runs `body` on a thread with the small stack and returns its result
    /// (check it afterwards: `#expect` does not work on that thread).
    static func run<Result: Sendable>(_ body: @escaping @Sendable () -> Result) -> Result {
        onThread(stackSize: stackSize, body)
    }
}
