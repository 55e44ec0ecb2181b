// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Synchronization

// Errors: operators that recover from errors, replace them or produce them.
//
// This file: SwiftSignalKit's `retry` forms (wait with a back-off) and
// ReactiveCocoa's `retry(n)` / `retry()` (resubscribe at once).

// MARK: - retry

/// Resubscribes after a growing delay each time the signal fails; never
/// fails.
///
/// SwiftSignalKit's `retry` (with a back-off).
///
/// Marble (increment 1): `"a-#"` … 1 s … `"b-#"` … 2 s … `"c-|"` → `"a-b-c-|"`
///
/// - Parameters:
///   - delayIncrement: the n-th retry waits `min(maxDelay, n × delayIncrement)`
///     seconds (the delay grows by `delayIncrement` per error and is never
///     reset, not even by values).
///   - maxDelay: the longest wait.
///   - queue: where the waits run and the resubscriptions happen.
/// - Returns: a function from the source to a signal that never fails.
/// - Threading: the first subscription is made on the caller's thread,
///   every resubscription on `queue` (through its timer, so a
///   `VirtualTimeScheduler` queue drives it in tests).
/// - Termination: completes when the source completes; errors are never
///   forwarded.
/// - Disposal: disposes the current subscription or cancels the pending
///   wait; nothing is subscribed afterwards.
public func retry<T, E>(
    _ delayIncrement: Double,
    maxDelay: Double,
    onQueue queue: Queue
) -> (Signal<T, E>) -> Signal<T, NoError> {
    _retry(_RetryPolicy<E, NoError>(queue: queue, delayIncrement: delayIncrement, maxDelay: maxDelay, forwardError: nil))
}

/// Resubscribes after a growing delay when `retryOnError` accepts the error,
/// up to `maxRetries` subscriptions in all.
///
/// SwiftSignalKit's `retry` (with a back-off).
///
/// Marble (`maxRetries: 3`): `"#"` … `"#"` … `"#e"` → `"#e"` (three
/// subscriptions, the third error forwarded)
///
/// - Parameters:
///   - retryOnError: called with each error inside the source's error
///     callback; `false` forwards the error at once.
///   - delayIncrement: the n-th retry waits `min(maxDelay, n × delayIncrement)`
///     seconds; the delay is never reset.
///   - maxDelay: the longest wait.
///   - maxRetries: the number of subscriptions in all: the error of the
///     `maxRetries`-th one is forwarded (`0` or `1`: the first retryable
///     error is forwarded). `nil`: no limit.
///   - queue: where the waits run and the resubscriptions happen.
/// - Returns: a function from the source to a signal of the same type.
/// - Threading: the first subscription is made on the caller's thread,
///   every resubscription on `queue`.
/// - Termination: completes when the source completes; fails with an error
///   `retryOnError` rejects or with the error of the last allowed subscription.
/// - Disposal: disposes the current subscription or cancels the pending
///   wait; nothing is subscribed afterwards.
public func retry<T, E>(
    retryOnError: @escaping @Sendable (E) -> Bool,
    delayIncrement: Double,
    maxDelay: Double,
    maxRetries: Int?,
    onQueue queue: Queue
) -> (Signal<T, E>) -> Signal<T, E> {
    _retry(
        _RetryPolicy(
            queue: queue,
            delayIncrement: delayIncrement,
            maxDelay: maxDelay,
            maxRetries: maxRetries,
            retryOnError: retryOnError,
            forwardError: { $0 }
        )
    )
}

/// The shell of the back-off `retry` forms: each subscription is a
/// `_RetryRun` under `policy`, which subscribes the source at once.
private func _retry<T, E, R>(_ policy: _RetryPolicy<E, R>) -> (Signal<T, E>) -> Signal<T, R> {
    { signal in
        Signal { subscriber in
            let run = _RetryRun(signal: signal, policy: policy)
            run.subscribe(subscriber)
            return run
        }._derived("retry", from: signal, arguments: "\(policy.delayIncrement)")
    }
}

/// A `retry` operator's parameters, shared by its subscriptions.
final class _RetryPolicy<E, R>: @unchecked Sendable {
    // `@unchecked Sendable`: immutable.
    let queue: Queue
    let delayIncrement: Double
    let maxDelay: Double
    let maxRetries: Int?
    let retryOnError: (E) -> Bool
    /// How a forwarded error is converted; nil for the variant that never
    /// forwards errors (it also has no retry limit).
    let forwardError: ((E) -> R)?

    init(
        queue: Queue,
        delayIncrement: Double,
        maxDelay: Double,
        maxRetries: Int? = nil,
        retryOnError: @escaping @Sendable (E) -> Bool = { _ in true },
        forwardError: ((E) -> R)?
    ) {
        self.queue = queue
        self.delayIncrement = delayIncrement
        self.maxDelay = maxDelay
        self.maxRetries = maxRetries
        self.retryOnError = retryOnError
        self.forwardError = forwardError
    }
}

/// One subscription of `retry`: the current source subscription or the
/// pending wait, in a step slot (a synchronous error inside a subscription
/// installs the wait before that subscription's handle comes back).
///
/// Holds no reference to the downstream subscriber (the sinks and the
/// pending wait do).
final class _RetryRun<T, E, R>: Disposable, @unchecked Sendable {
    // `@unchecked Sendable`: `state` is guarded by `_LockedState`; `policy`
    // is immutable.
    private struct State {
        var slot = _StepSlot<any Disposable>()
        var nextStep = 0
        var delay = 0.0
        var retries = 0
        /// The source; released once the run is disposed (see
        /// `_StepTrampoline.didDispose`).
        var signal: Signal<T, E>?
    }

    let policy: _RetryPolicy<E, R>
    private let state: _LockedState<State>
    /// The context current at `start` (the run is made by the signal's
    /// generator): a resubscription runs in it, not in the context of the
    /// code that sent the error (see `SignalContextPropagation`).
    private let startContext = _ContextHook.capture()

    init(signal: Signal<T, E>, policy: _RetryPolicy<E, R>) {
        self.state = _LockedState(State(signal: signal))
        self.policy = policy
    }

    /// Subscribes the source, unless disposed or the downstream has ended
    /// (a loop never resubscribes for an ended downstream).
    func subscribe(_ downstream: Subscriber<T, R>) {
        guard !downstream._hasEnded else { return }
        let next = state.withLock { state -> (Int, Signal<T, E>)? in
            guard !state.slot.isDisposed, let signal = state.signal else { return nil }
            defer { state.nextStep += 1 }
            return (state.nextStep, signal)
        }
        guard let (step, signal) = next else { return }
        install(signal._start(_LoopSink(run: self, downstream: downstream)), step: step)
    }

    /// Counts a retry; returns its delay, or nil when `maxRetries` is reached.
    func nextDelay() -> Double? {
        let policy = self.policy
        return state.withLock { state -> Double? in
            state.retries += 1
            if let maxRetries = policy.maxRetries, state.retries >= maxRetries { return nil }
            state.delay = min(policy.maxDelay, state.delay + policy.delayIncrement)
            return state.delay
        }
    }

    /// Resubscribes on the policy's queue after `delay` seconds.
    func resubscribe(after delay: Double, _ downstream: Subscriber<T, R>) {
        let step = state.withLock { state -> Int in
            defer { state.nextStep += 1 }
            return state.nextStep
        }
        // `_cancellableAfter`: not in the failing sender's context.
        let wait = policy.queue._cancellableAfter(delay) { [self] in
            _run(in: startContext) { subscribe(downstream) }
        }
        install(wait, step: step)
    }

    private func install(_ disposable: any Disposable, step: Int) {
        let toDispose = state.withLock { $0.slot.install(disposable, step: step) }
        toDispose?.dispose()
    }

    func dispose() {
        let current = state.withLock { $0.slot.dispose() }
        current?.dispose()
        let released = state.withLock { $0.signal.take() }
        _ = released
    }
}

extension _RetryRun: _LoopRun {
    func sourceFailed(_ error: E, downstream: Subscriber<T, R>) {
        if policy.retryOnError(error), let delay = nextDelay() {
            // No wait for a downstream that has ended: loops stop when it stops.
            guard !downstream._hasEnded else { return }
            resubscribe(after: delay, downstream)
        } else if let forwardError = policy.forwardError {
            downstream.putError(forwardError(error))
        }
    }

    func sourceCompleted(downstream: Subscriber<T, R>) { downstream.putCompletion() }
}

// MARK: - retry

/// Resubscribes at once each time the signal fails, up to `count` times
/// (RAC's `retry:`); the error after the last retry is forwarded.
///
/// Marble (`count` 2): `"a-#"`, `"b-#"`, `"c-#e"` → `"a-b-c-#e"`; `"a-#"`,
/// `"b-|"` → `"a-b-|"`
///
/// As in ReactiveCocoa, `retry(0)` retries without limit (like `retry()`).
/// Not SwiftSignalKit's `retry(_:maxDelay:onQueue:)` and
/// `retry(retryOnError:…)`, which wait between attempts.
///
/// - Parameters:
///   - count: the most resubscriptions (so at most `count + 1`
///     subscriptions); `0`: no limit. Must not be negative.
/// - Returns: a function from a signal to the retrying signal.
///
/// - Threading: each resubscription runs on the thread that delivered the
///   error, inside its callback; synchronous failures are retried from a
///   loop, in constant stack (as `restartIfError`).
/// - Termination: completes when a subscription completes; fails with the
///   error of the last allowed subscription.
/// - Disposal: disposes the current subscription; nothing is subscribed
///   afterwards.
public func retry<T, E>(_ count: Int) -> (Signal<T, E>) -> Signal<T, E> {
    _signalKitRequire(count >= 0, "retry(_:): count must be 0 (no limit) or positive, got \(count)")
    return { signal in
        Signal { subscriber in
            let retries = _GuardedValue(0)
            let run = _RestartRun<T, E, E>(signal: signal, restartsOnCompletion: false) { error in
                if count == 0 { return .restart }
                let attempt = retries.withLock { value -> Int in
                    value += 1
                    return value
                }
                return attempt <= count ? .restart : .error(error)
            }
            run.start { run.subscribe(subscriber) }
            return run
        }._derived("retry", from: signal, arguments: "\(count)")
    }
}

/// Resubscribes at once each time the signal fails, without limit (RAC's
/// `retry`).
///
/// Marble: `"a-#"`, `"b-#"`, `"c-|"` → `"a-b-c-|"`
///
/// Like SwiftSignalKit's `restartIfError`, but the result keeps the error
/// type `E` (it never fails).
///
/// - Returns: a function from a signal to the retrying signal.
///
/// - Threading: as `retry(_:)`.
/// - Termination: completes when a subscription completes; never fails.
/// - Disposal: as `retry(_:)`.
public func retry<T, E>() -> (Signal<T, E>) -> Signal<T, E> {
    retry(0)
}
