// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// Looping: operators that resubscribe or iterate: SwiftSignalKit's `restart`,
// `recurse`, `restartIfError`, `restartOrMapError` and `feedbackLoop`.
//
// This file: the restart family. It resubscribes from inside the finishing
// subscription's callback, as SwiftSignalKit does, so the new subscription is
// made before the old one is disposed. Where SwiftSignalKit would recurse (a
// resubscription that itself finishes synchronously), SignalKit loops
// instead: a million synchronous iterations run in constant stack (see
// `_StepTrampoline` and Guides/Looping.md for the exact order).

/// What `restartOrMapError` does with an error.
///
/// SwiftSignalKit's `RestartOrMapErrorCondition`.
public enum RestartOrMapErrorCondition<E> {
    /// Resubscribe to the source.
    case restart
    /// End with this error.
    case error(E)
}

extension RestartOrMapErrorCondition: Sendable where E: Sendable {}

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
/// SwiftSignalKit's `restartIfError`.
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
/// SwiftSignalKit's `restartOrMapError`.
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
    condition: @escaping @Sendable (E) -> RestartOrMapErrorCondition<E2>
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

    init(signal: Signal<T, E>, restartsOnCompletion: Bool, onError: @escaping @Sendable (E) -> RestartOrMapErrorCondition<R>) {
        self.signal = signal
        self.restartsOnCompletion = restartsOnCompletion
        self.onError = onError
    }

    func subscribe(_ downstream: Subscriber<T, R>) -> any Disposable {
        guard let signal = mutex.withLock({ signal }) else { return EmptyDisposable }
        return signal._start(_LoopSink(run: self, downstream: downstream))
    }

    override func didDispose() {
        let released = mutex.withLock { signal.take() }
        _ = released
    }
}

extension _RestartRun: _LoopRun {
    func sourceFailed(_ error: E, downstream: Subscriber<T, R>) {
        switch onError(error) {
        case .restart:
            restart(downstream)
        case .error(let mapped):
            stop()
            downstream.putError(mapped)
        }
    }

    func sourceCompleted(downstream: Subscriber<T, R>) {
        if restartsOnCompletion {
            restart(downstream)
        } else {
            downstream.putCompletion()
        }
    }

    private func restart(_ downstream: Subscriber<T, R>) {
        advance(downstream: downstream._subscriptionBase) { subscribe(downstream) }
    }
}
