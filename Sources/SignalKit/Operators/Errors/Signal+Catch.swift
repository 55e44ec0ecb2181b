// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// Errors: operators that recover from errors, replace them or produce them.
// Resubscribing on completion or on error without a delay (`restart`,
// `restartIfError`, …) is in Looping.
//
// This file: SwiftSignalKit's `catch`.

// MARK: - catch

/// Replaces an error with the signal `f` returns for it.
///
/// SwiftSignalKit's `catch`.
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
public func `catch`<T, E, R>(_ f: @escaping @Sendable (E) -> Signal<T, R>) -> (Signal<T, E>) -> Signal<T, R> {
    { signal in
        Signal { subscriber in
            let disposables = DisposableSet()
            disposables.add(signal._start(_CatchSink(downstream: subscriber, handler: f, disposables: disposables)))
            return disposables
        }._derived("catch", from: signal)
    }
}

struct _CatchSink<T, E, R>: _InlineSink {
    typealias Input = T
    typealias Failure = E

    let downstream: Subscriber<T, R>
    var downstreamSubscription: _SubscriptionBase? { downstream._subscriptionBase }
    let handler: @Sendable (E) -> Signal<T, R>
    let disposables: DisposableSet

    func putNext(_ value: T, from _: _SubscriptionBase) { downstream.putNext(value) }

    func putError(_ error: E) {
        disposables.add(handler(error)._start(_ForwardSink(downstream: downstream)))
    }

    func putCompletion() { downstream.putCompletion() }
}
