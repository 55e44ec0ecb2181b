// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Synchronization

// RACCatch: ReactiveCocoa's error handling that SwiftSignalKit lacks:
// `retry(n)` / `retry()` (resubscribe at once; SwiftSignalKit's `retry` forms
// wait with a back-off and keep their signatures), `catchTo`, and the
// throwing transforms that replace RAC's `NSError **` blocks: `tryMap` and
// `Signal(catching:)` (RAC's `+try:`).

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
    precondition(count >= 0, "retry(_:): count must be 0 (no limit) or positive, got \(count)")
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

// MARK: - catchTo

/// On error, switches to `replacement` (RAC's `catchTo:`;
/// `catch { _ in replacement }`).
///
/// Marble: `"a-#e"` with `catchTo("x-|")` → `"a-x-|"`
///
/// - Parameters:
///   - replacement: subscribed when the signal fails, inside the error
///     callback.
/// - Returns: a function from a signal to the recovered signal (with the
///   replacement's error type).
///
/// - Threading: as `catch(_:)`.
/// - Termination: completes when the signal completes or, after an error,
///   when `replacement` completes; fails when `replacement` fails.
/// - Disposal: as `catch(_:)`.
public func catchTo<T, E, R>(_ replacement: Signal<T, R>) -> (Signal<T, E>) -> Signal<T, R> {
    { signal in
        (signal |> `catch` { _ in replacement })._derived("catchTo", from: signal, arguments: replacement.description)
    }
}

// MARK: - tryMap

/// Maps each value with a throwing function; the first error thrown fails
/// the signal with it (RAC's `tryMap:`, with Swift's typed `throws` instead
/// of an `NSError **` out-parameter).
///
/// Marble: `"1-2-3-|"` with `f` throwing at 2 → `"f(1)-#e"`
///
/// ```swift
/// let parsed = lines |> tryMap { (line: String) throws(ParseError) -> Int in try parse(line) }
/// ```
///
/// - Parameters:
///   - transform: called once per value until it throws; its error type is
///     the signal's.
/// - Returns: a function from a signal to the mapped signal.
///
/// - Threading: no thread hop.
/// - Termination: fails with the first thrown error (then the upstream is
///   disposed, and `transform` is not called again); upstream errors and
///   completion are forwarded.
/// - Disposal: returns the upstream handle.
public func tryMap<T, R, E: Error>(_ transform: @escaping (T) throws(E) -> R) -> (Signal<T, E>) -> Signal<R, E> {
    { signal in
        Signal { subscriber in
            signal._start(_TryMapSink<T, R, E, E>(downstream: subscriber, transform: transform, mapError: { $0 }))
        }._derived("tryMap", from: signal)
    }
}

/// Maps each value with a function that throws any error; the first error
/// thrown is converted by `mapError` and fails the signal.
///
/// Marble: `"1-2-3-|"` with `f` throwing `x` at 2 → `"f(1)-#mapError(x)"`
///
/// ```swift
/// let decoded = payloads |> tryMap({ try decoder.decode(Event.self, from: $0) },
///                                  mapError: { RequestError.decoding($0) })
/// ```
///
/// - Parameters:
///   - transform: called once per value until it throws.
///   - mapError: turns the thrown error into the signal's error type.
/// - Returns: a function from a signal to the mapped signal.
///
/// - Threading: no thread hop.
/// - Termination: fails with the first mapped error; upstream errors and
///   completion are forwarded.
/// - Disposal: returns the upstream handle.
public func tryMap<T, R, E>(
    _ transform: @escaping (T) throws -> R,
    mapError: @escaping (any Error) -> E
) -> (Signal<T, E>) -> Signal<R, E> {
    { signal in
        Signal { subscriber in
            signal._start(_TryMapSink<T, R, any Error, E>(downstream: subscriber, transform: transform, mapError: mapError))
        }._derived("tryMap", from: signal)
    }
}

final class _TryMapSink<T, R, Thrown: Error, E>: _Sink<T, E>, @unchecked Sendable {
    // `@unchecked Sendable`: `failed` is atomic; the rest is immutable.
    let downstream: Subscriber<R, E>
    override var downstreamSubscription: _SubscriptionBase? { downstream._subscriptionBase }
    let transform: (T) throws(Thrown) -> R
    let mapError: (Thrown) -> E
    let failed = Synchronization.Atomic<Bool>(false)

    init(downstream: Subscriber<R, E>, transform: @escaping (T) throws(Thrown) -> R, mapError: @escaping (Thrown) -> E) {
        self.downstream = downstream
        self.transform = transform
        self.mapError = mapError
    }

    override func putNext(_ value: T) {
        guard !failed.load(ordering: .acquiring) else { return }
        let result: R
        do {
            result = try transform(value)
        } catch {
            failed.store(true, ordering: .releasing)
            downstream.putError(mapError(error))
            return
        }
        downstream.putNext(result)
    }

    override func putError(_ error: E) { downstream.putError(error) }
    override func putCompletion() { downstream.putCompletion() }
}

// MARK: - Signal(catching:)

extension Signal where E: Error {
    /// A signal that, at each subscription, calls `body` and sends its result
    /// then completes, or fails with the error it throws (RAC's `+try:`).
    ///
    /// Marble: `body` returning `a` → `"(a|)"`; throwing `e` → `"#e"`
    ///
    /// - Parameters:
    ///   - body: called once per subscription, synchronously.
    ///
    /// - Threading: `body` runs on the subscribing thread; its outcome is
    ///   delivered before `start` returns.
    /// - Termination: one value then completion, or the error.
    /// - Disposal: nothing to cancel.
    public convenience init(catching body: @escaping () throws(E) -> T) {
        self.init { subscriber in
            do throws(E) {
                let value = try body()
                subscriber.putNext(value)
                subscriber.putCompletion()
            } catch {
                subscriber.putError(error)
            }
            return EmptyDisposable
        }
    }
}
