// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// Catch: recovering from errors (`catch`, `retry`, `restartIfError`,
// `restartOrMapError`) and resubscribing on completion (`restart`,
// `recurse`).
//
// The restart family resubscribes from inside the finishing subscription's
// callback, as SwiftSignalKit does, so the new subscription is made before
// the old one is disposed. Where SwiftSignalKit would recurse (a
// resubscription that itself finishes synchronously), SignalKit loops
// instead: a million synchronous iterations run in constant stack (see
// `_StepTrampoline` and Guides/Catch.md for the exact order).

/// What `restartOrMapError` does with an error.
public enum RestartOrMapErrorCondition<E> {
    /// Resubscribe to the source.
    case restart
    /// End with this error.
    case error(E)
}

extension RestartOrMapErrorCondition: Sendable where E: Sendable {}

// MARK: - catch

/// Replaces an error with the signal `f` returns for it.
///
/// Marble: `"a-b-#e"` with `f(e) = "c-|"` → `"a-b-c-|"`
///
/// - Parameters:
///   - f: called with the source's error, synchronously, inside the source's
///     error callback; its signal is subscribed at once and all its events
///     (values, error of the new type `R`, completion) are forwarded.
/// - Returns: a function from the source to a signal with error type `R`.
/// - Threading: `f` and the alternative's subscription run on the thread
///   that delivers the source's error.
/// - Termination: completes when the source completes (without calling
///   `f`) or when the alternative completes; fails when the alternative fails.
/// - Disposal: one `DisposableSet` holds the source, then the alternative;
///   disposing disposes both in that order. The alternative is subscribed
///   before the failed source is disposed (`catch e, b.subscribe#1,
///   a.dispose#1`).
public func `catch`<T, E, R>(_ f: @escaping (E) -> Signal<T, R>) -> (Signal<T, E>) -> Signal<T, R> {
    { signal in
        Signal { subscriber in
            let disposables = DisposableSet()
            disposables.add(signal._start(_CatchSink(downstream: subscriber, handler: f, disposables: disposables)))
            return disposables
        }._derived("catch", from: signal)
    }
}

final class _CatchSink<T, E, R>: _Sink<T, E>, @unchecked Sendable {
    let downstream: Subscriber<T, R>
    override var downstreamSubscription: _SubscriptionBase? { downstream._subscriptionBase }
    let handler: (E) -> Signal<T, R>
    let disposables: DisposableSet

    init(downstream: Subscriber<T, R>, handler: @escaping (E) -> Signal<T, R>, disposables: DisposableSet) {
        self.downstream = downstream
        self.handler = handler
        self.disposables = disposables
    }

    override func putNext(_ value: T) { downstream.putNext(value) }

    override func putError(_ error: E) {
        disposables.add(handler(error)._start(_ForwardSink(downstream: downstream)))
    }

    override func putCompletion() { downstream.putCompletion() }
}

// MARK: - restart, recurse, restartIfError, restartOrMapError

/// Resubscribes to the signal each time it completes; never completes.
///
/// Marble: `"a-|"` → `"a-a-a-…"`; `"a-|"` then `"b-#e"` → `"a-b-#e"`
///
/// - Parameters:
///   - signal: the source; subscribed again inside its completion callback.
/// - Returns: a signal that forwards the source's values and its first
///   error, and never completes. Use it as `signal |> restart`.
/// - Threading: each resubscription runs on the thread that delivered the
///   completion.
/// - Termination: an error is forwarded and ends the restarts.
/// - Disposal: disposes the current subscription, then stops restarting (a
///   completion emitted while it is being disposed still resubscribes once;
///   that subscription is disposed at once).
/// - Order: after an asynchronous completion the new subscription is made
///   before the old one is disposed (`a.subscribe#2, a.dispose#1`), as in
///   SwiftSignalKit. A completion during the first subscription resubscribes
///   inside it, also as in SwiftSignalKit. Resubscriptions that themselves
///   complete synchronously run from a loop in constant stack, where
///   SwiftSignalKit recurses until the stack overflows: each of those is
///   disposed when its subscription returns, before the next one is made
///   (`a.subscribe#2, a.dispose#2, a.subscribe#3, …`). A finished subscription
///   never replaces a live later one (SwiftSignalKit's recursion does, and
///   disposes the live one).
/// - Downstream end: before each resubscription the downstream is checked;
///   once it has ended (terminated, e.g. by `take(n)` or `takeUntil`, or
///   disposed) nothing more is subscribed, so `single(1) |> restart |>
///   take(3)` subscribes three times and returns (<doc:Deviations>;
///   SwiftSignalKit never returns). The same holds for `recurse`,
///   `restartIfError`, `restartOrMapError` and every `retry`.
public func restart<T, E>(_ signal: Signal<T, E>) -> Signal<T, E> {
    Signal { subscriber in
        let run = _RestartRun<T, E, E>(signal: signal, restartsOnCompletion: true) { .error($0) }
        run.start { run.subscribe(subscriber) }
        return run
    }._derived("restart", from: signal)
}

/// `restart`, under SwiftSignalKit's other name: resubscribes each time the
/// signal completes.
///
/// Marble: `"a-|"` → `"a-a-a-…"`
///
/// - Parameters:
///   - latestValue: ignored (kept for source compatibility).
/// - Returns: a function from the source to `source |> restart`.
/// - Threading: as `restart`.
/// - Termination: as `restart`.
/// - Disposal: as `restart`.
public func recurse<T, E>(_ latestValue: T?) -> (Signal<T, E>) -> Signal<T, E> {
    { signal in
        restart(signal)
    }
}

/// Resubscribes to the signal each time it fails; completes when it
/// completes.
///
/// Marble: `"a-#e"` then `"b-|"` → `"a-b-|"`
///
/// - Parameters:
///   - signal: the source; subscribed again inside its error callback.
/// - Returns: a signal that never fails. Use it as `signal |> restartIfError`.
/// - Threading: each resubscription runs on the thread that delivered the
///   error.
/// - Termination: completes when the source completes.
/// - Disposal: disposes the current subscription, then stops; ordering as
///   `restart` (an error plays the part of the completion).
public func restartIfError<T, E>(_ signal: Signal<T, E>) -> Signal<T, NoError> {
    Signal { subscriber in
        let run = _RestartRun<T, E, NoError>(signal: signal, restartsOnCompletion: false) { _ in .restart }
        run.start { run.subscribe(subscriber) }
        return run
    }._derived("restartIfError", from: signal)
}

/// On error, either resubscribes or fails with a mapped error, as
/// `condition` decides.
///
/// Marble: `"a-#x"` (`condition(x) = .restart`) then `"b-#y"`
/// (`condition(y) = .error(z)`) → `"a-b-#z"`
///
/// - Parameters:
///   - condition: called with each error, inside the source's error
///     callback. `.restart` resubscribes at once (as `restartIfError`);
///     `.error(e)` fails with `e`.
/// - Returns: a function from the source to a signal with error type `E2`.
/// - Threading: as `restartIfError`.
/// - Termination: completes when the source completes; fails with the
///   mapped error.
/// - Disposal: as `restartIfError`.
public func restartOrMapError<T, E, E2>(
    condition: @escaping (E) -> RestartOrMapErrorCondition<E2>
) -> (Signal<T, E>) -> Signal<T, E2> {
    { signal in
        Signal { subscriber in
            let run = _RestartRun<T, E, E2>(signal: signal, restartsOnCompletion: false, onError: condition)
            run.start { run.subscribe(subscriber) }
            return run
        }._derived("restartOrMapError", from: signal)
    }
}

/// One subscription of a restart-family operator.
///
/// Holds no reference to the downstream subscriber (the sinks do): it is
/// the generator's disposable, which the downstream subscription holds.
final class _RestartRun<T, E, R>: _StepTrampoline, @unchecked Sendable {
    // `@unchecked Sendable`: `signal` is guarded by the base class's `mutex`.
    /// The source; released once the run is disposed.
    private var signal: Signal<T, E>?
    let restartsOnCompletion: Bool
    let onError: (E) -> RestartOrMapErrorCondition<R>

    init(signal: Signal<T, E>, restartsOnCompletion: Bool, onError: @escaping (E) -> RestartOrMapErrorCondition<R>) {
        self.signal = signal
        self.restartsOnCompletion = restartsOnCompletion
        self.onError = onError
    }

    func subscribe(_ downstream: Subscriber<T, R>) -> any Disposable {
        guard let signal = mutex.withLock({ signal }) else { return EmptyDisposable }
        return signal._start(_RestartSink(run: self, downstream: downstream))
    }

    override func didDispose() {
        let released = mutex.withLock { signal.take() }
        _ = released
    }
}

final class _RestartSink<T, E, R>: _Sink<T, E>, @unchecked Sendable {
    let run: _RestartRun<T, E, R>
    let downstream: Subscriber<T, R>
    override var downstreamSubscription: _SubscriptionBase? { downstream._subscriptionBase }

    init(run: _RestartRun<T, E, R>, downstream: Subscriber<T, R>) {
        self.run = run
        self.downstream = downstream
    }

    override func putNext(_ value: T) { downstream.putNext(value) }

    override func putError(_ error: E) {
        switch run.onError(error) {
        case .restart:
            restart()
        case .error(let mapped):
            run.stop()
            downstream.putError(mapped)
        }
    }

    override func putCompletion() {
        if run.restartsOnCompletion {
            restart()
        } else {
            downstream.putCompletion()
        }
    }

    private func restart() {
        let (run, downstream) = (self.run, self.downstream)
        run.advance(downstream: downstream._subscriptionBase) { run.subscribe(downstream) }
    }
}

// MARK: - retry

/// Resubscribes after a growing delay each time the signal fails; never
/// fails.
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
    { signal in
        let policy = _RetryPolicy<E, NoError>(
            queue: queue,
            delayIncrement: delayIncrement,
            maxDelay: maxDelay,
            maxRetries: nil,
            retryOnError: { _ in true },
            forwardError: nil
        )
        return Signal { subscriber in
            let run = _RetryRun(signal: signal, policy: policy)
            run.subscribe(subscriber)
            return run
        }._derived("retry", from: signal, arguments: "\(delayIncrement)")
    }
}

/// Resubscribes after a growing delay when `retryOnError` accepts the error,
/// up to `maxRetries` subscriptions in all.
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
    retryOnError: @escaping (E) -> Bool,
    delayIncrement: Double,
    maxDelay: Double,
    maxRetries: Int?,
    onQueue queue: Queue
) -> (Signal<T, E>) -> Signal<T, E> {
    { signal in
        let policy = _RetryPolicy<E, E>(
            queue: queue,
            delayIncrement: delayIncrement,
            maxDelay: maxDelay,
            maxRetries: maxRetries,
            retryOnError: retryOnError,
            forwardError: { $0 }
        )
        return Signal { subscriber in
            let run = _RetryRun(signal: signal, policy: policy)
            run.subscribe(subscriber)
            return run
        }._derived("retry", from: signal, arguments: "\(delayIncrement)")
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
        maxRetries: Int?,
        retryOnError: @escaping (E) -> Bool,
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
    // `@unchecked Sendable`: `state` is guarded by `mutex`.
    private struct State {
        var slot = _StepSlot()
        var nextStep = 0
        var delay = 0.0
        var retries = 0
    }

    let policy: _RetryPolicy<E, R>
    private let mutex = _Mutex()
    private var state = State()
    /// The source; released once the run is disposed (see
    /// `_StepTrampoline.didDispose`).
    private var signal: Signal<T, E>?

    init(signal: Signal<T, E>, policy: _RetryPolicy<E, R>) {
        self.signal = signal
        self.policy = policy
    }

    deinit {
        mutex.destroy()
    }

    /// Subscribes the source, unless disposed or the downstream has ended
    /// (a loop never resubscribes for an ended downstream).
    func subscribe(_ downstream: Subscriber<T, R>) {
        guard !downstream._hasEnded else { return }
        let next = mutex.withLock { () -> (Int, Signal<T, E>)? in
            guard !state.slot.isDisposed, let signal else { return nil }
            defer { state.nextStep += 1 }
            return (state.nextStep, signal)
        }
        guard let (step, signal) = next else { return }
        install(signal._start(_RetrySink(run: self, downstream: downstream)), step: step)
    }

    /// Counts a retry; returns its delay, or nil when `maxRetries` is reached.
    func nextDelay() -> Double? {
        mutex.withLock { () -> Double? in
            state.retries += 1
            if let maxRetries = policy.maxRetries, state.retries >= maxRetries { return nil }
            state.delay = min(policy.maxDelay, state.delay + policy.delayIncrement)
            return state.delay
        }
    }

    /// Resubscribes on the policy's queue after `delay` seconds.
    func resubscribe(after delay: Double, _ downstream: Subscriber<T, R>) {
        let step = mutex.withLock { () -> Int in
            defer { state.nextStep += 1 }
            return state.nextStep
        }
        let wait = policy.queue.cancellableAfter(delay) { [self] in
            subscribe(downstream)
        }
        install(wait, step: step)
    }

    private func install(_ disposable: any Disposable, step: Int) {
        let toDispose = mutex.withLock { state.slot.install(disposable, step: step) }
        toDispose?.dispose()
    }

    func dispose() {
        let current = mutex.withLock { state.slot.dispose() }
        current?.dispose()
        let released = mutex.withLock { signal.take() }
        _ = released
    }
}

final class _RetrySink<T, E, R>: _Sink<T, E>, @unchecked Sendable {
    let run: _RetryRun<T, E, R>
    let downstream: Subscriber<T, R>
    override var downstreamSubscription: _SubscriptionBase? { downstream._subscriptionBase }

    init(run: _RetryRun<T, E, R>, downstream: Subscriber<T, R>) {
        self.run = run
        self.downstream = downstream
    }

    override func putNext(_ value: T) { downstream.putNext(value) }

    override func putError(_ error: E) {
        let policy = run.policy
        if policy.retryOnError(error), let delay = run.nextDelay() {
            // No wait for a downstream that has ended: loops stop when it stops.
            guard !downstream._hasEnded else { return }
            run.resubscribe(after: delay, downstream)
        } else if let forwardError = policy.forwardError {
            downstream.putError(forwardError(error))
        }
    }

    override func putCompletion() { downstream.putCompletion() }
}
