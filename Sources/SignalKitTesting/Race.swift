// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// Runs `body` on `threads` threads at once and waits for all of them.
///
/// Threads are created up front and released together from a spin barrier,
/// so that they really race (a thread pool would serialise on a 2-core
/// machine). `body` receives the thread index (0 ..< threads).
public func race(threads: Int, _ body: @escaping @Sendable (Int) -> Void) {
    guard threads > 0 else { fatalError("race(threads:) needs at least one thread") }
    let ready = Synchronization.Atomic<Int>(0)
    let go = Synchronization.Atomic<Bool>(false)
    var handles: [pthread_t] = []
    for index in 0..<threads {
        let context = _RaceContext {
            ready.add(1, ordering: .acquiringAndReleasing)
            while !go.load(ordering: .acquiring) { sched_yield() }
            body(index)
        }
        handles.append(_startThread(context, caller: "race(threads:)"))
    }
    while ready.load(ordering: .acquiring) < threads { sched_yield() }
    go.store(true, ordering: .releasing)
    for thread in handles {
        pthread_join(thread, nil)
    }
}

/// Runs `body` on a thread of its own and returns its result once it has
/// returned, without holding a Swift concurrency thread meanwhile.
///
/// For a synchronous stress body that waits (spinning or blocking) for tasks
/// it starts: run directly in a test, such a wait holds one of the few
/// threads those tasks need (as many as the machine has cores: two here, one
/// on a single-core runner), and the test hangs as soon as other tests hold
/// the rest. Record issues after it returns, on the test's task.
public func onDedicatedThread<Result: Sendable>(_ body: @escaping @Sendable () -> Result) async -> Result {
    await withCheckedContinuation { (continuation: CheckedContinuation<Result, Never>) in
        let thread = _startThread(_RaceContext { continuation.resume(returning: body()) }, caller: "onDedicatedThread(_:)")
        pthread_detach(thread)
    }
}

/// Runs `body` on a new thread whose stack is `stackSize` bytes, waits for it
/// and returns its result.
///
/// For stack-safety tests: a loop that should run in constant stack is run
/// on a small stack, so that a regression to recursion crashes after a few
/// thousand iterations instead of needing millions to exhaust the default
/// 8 MiB (a test that runs ten times faster, and fails the same way).
/// Record issues after it returns, on the test's task: `#expect` needs the
/// task-local state of the test that a new thread does not have.
///
/// - Parameters:
///   - stackSize: the thread's stack in bytes, at least `PTHREAD_STACK_MIN`.
///   - body: runs once, on the new thread.
public func onThread<Result: Sendable>(stackSize: Int, _ body: @escaping @Sendable () -> Result) -> Result {
    let result = Shared<Result?>(nil)
    let attributes = UnsafeMutablePointer<pthread_attr_t>.allocate(capacity: 1)
    pthread_attr_init(attributes)
    defer {
        pthread_attr_destroy(attributes)
        attributes.deallocate()
    }
    let status = pthread_attr_setstacksize(attributes, max(stackSize, Int(PTHREAD_STACK_MIN)))
    guard status == 0 else { fatalError("onThread(stackSize:): pthread_attr_setstacksize failed (\(status))") }
    let thread = _startThread(_RaceContext { result.value = body() }, attributes: attributes, caller: "onThread(stackSize:)")
    pthread_join(thread, nil)
    return result.value!
}

private final class _RaceContext: Sendable {
    let body: @Sendable () -> Void
    init(body: @escaping @Sendable () -> Void) {
        self.body = body
    }
}

/// Starts a thread that runs `context.body` (the thread owns the context);
/// `caller` names the failing function if the thread cannot be created.
private func _startThread(
    _ context: _RaceContext,
    attributes: UnsafePointer<pthread_attr_t>? = nil,
    caller: StaticString
) -> pthread_t {
    let raw = Unmanaged.passRetained(context).toOpaque()
    var thread = pthread_t()
    let status = pthread_create(
        &thread, attributes,
        { raw in
            let context = Unmanaged<_RaceContext>.fromOpaque(raw!).takeRetainedValue()
            context.body()
            return nil
        }, raw)
    guard status == 0 else { fatalError("\(caller): pthread_create failed (\(status))") }
    return thread
}

/// Scale factor for stress tests: `SIGNALKIT_STRESS_SCALE` (default 1).
/// `scripts/test` runs the release pass with a scale that gives at least a
/// million operations per stress test, and the sanitizer passes at 1.
public var stressScale: Int {
    guard let raw = getenv("SIGNALKIT_STRESS_SCALE"), let value = Int(String(cString: raw)), value > 0 else {
        return 1
    }
    return value
}

/// Runs `rounds` short races on `threads` persistent threads.
///
/// For each round, `setup(round)` runs on the calling thread and returns the
/// round's state; then every thread runs `body(threadIndex, state)` at the
/// same moment (a spin barrier releases them together); then `check(state)`
/// runs on the calling thread. Thread creation happens once, not per round,
/// so tens of thousands of rounds are cheap.
public func raceRounds<State>(
    threads: Int,
    rounds: Int,
    setup: (Int) -> State,
    body: @escaping @Sendable (Int, State) -> Void,
    check: (State) -> Void = { _ in }
) {
    guard threads > 0 else { fatalError("raceRounds(threads:) needs at least one thread") }
    let round = Synchronization.Atomic<Int>(0)
    let finished = Synchronization.Atomic<Int>(0)
    let state = _RoundState<State>()
    var handles: [pthread_t] = []
    for index in 0..<threads {
        let context = _RaceContext {
            var seen = 0
            while true {
                var current = round.load(ordering: .acquiring)
                var spins = 0
                while current == seen {
                    spins += 1
                    if spins > 64 { sched_yield() }
                    current = round.load(ordering: .acquiring)
                }
                if current < 0 { return }
                seen = current
                body(index, state.value!)
                finished.add(1, ordering: .acquiringAndReleasing)
            }
        }
        handles.append(_startThread(context, caller: "raceRounds"))
    }
    for index in stride(from: 1, through: rounds, by: 1) {
        state.value = setup(index - 1)
        round.store(index, ordering: .releasing)
        var spins = 0
        while finished.load(ordering: .acquiring) < threads * index {
            spins += 1
            if spins > 64 { sched_yield() }
        }
        check(state.value!)
        state.value = nil
    }
    round.store(-1, ordering: .releasing)
    for thread in handles {
        pthread_join(thread, nil)
    }
}

/// The state of the current round: written by the coordinator before it
/// publishes the round number (release), read by workers after they see it
/// (acquire).
private final class _RoundState<State>: @unchecked Sendable {
    var value: State?
}
