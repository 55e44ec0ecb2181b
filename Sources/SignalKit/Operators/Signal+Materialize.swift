// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// Materialize: events as values and back. SwiftSignalKit's names are the
// reverse of Rx's: `dematerialize` turns events INTO values (Rx's
// `materialize`), `materialize` turns values back into events (Rx's
// `dematerialize`). The names are kept for source compatibility.

/// Turns every event into a value: `.Next(v)`, `.Error(e)` or
/// `.Completion`, and completes after the terminal one (Rx's `materialize`).
///
/// Marble: `"a-#e"` → `"Next(a)-(Error(e)|)"`; `"a-|"` →
/// `"Next(a)-(Completion|)"`
///
/// - Parameters:
///   - signal: the upstream signal.
/// - Returns: a signal that never fails: the upstream's error arrives as the
///   value `.Error(e)`, followed by completion.
///
/// - Threading: no thread hop.
/// - Termination: an upstream error emits `.Error(e)` then completes; an
///   upstream completion emits `.Completion` then completes.
/// - Disposal: returns the upstream handle.
public func dematerialize<T, E>(signal: Signal<T, E>) -> Signal<SignalEvent<T, E>, NoError> {
    Signal { subscriber in
        signal._start(_DematerializeSink(downstream: subscriber))
    }._derived("dematerialize", from: signal)
}

/// Turns event values back into events (Rx's `dematerialize`): `.Next(v)`
/// emits `v`, `.Error(e)` fails with `e`, `.Completion` completes.
///
/// Marble: `"Next(a)-Error(e)"` → `"a-#e"`; `"Next(a)-Completion"` → `"a-|"`
///
/// - Parameters:
///   - signal: a signal of events.
/// - Returns: the signal those events describe. It also completes when the
///   upstream itself completes.
///
/// - Threading: no thread hop.
/// - Termination: the first `.Error`/`.Completion` value (or the upstream's
///   own completion) terminates; the downstream then disposes the upstream.
/// - Disposal: returns the upstream handle.
public func materialize<T, E>(signal: Signal<SignalEvent<T, E>, NoError>) -> Signal<T, E> {
    Signal { subscriber in
        signal._start(_MaterializeSink(downstream: subscriber))
    }._derived("materialize", from: signal)
}

// MARK: - Sinks

final class _DematerializeSink<T, E>: _Sink<T, E>, @unchecked Sendable {
    // `@unchecked Sendable`: immutable; called serially by the source.
    let downstream: Subscriber<SignalEvent<T, E>, NoError>
    override var downstreamSubscription: _SubscriptionBase? { downstream._subscriptionBase }

    init(downstream: Subscriber<SignalEvent<T, E>, NoError>) {
        self.downstream = downstream
    }

    override func putNext(_ value: T) {
        downstream.putNext(.Next(value))
    }

    override func putError(_ error: E) {
        downstream.putNext(.Error(error))
        downstream.putCompletion()
    }

    override func putCompletion() {
        downstream.putNext(.Completion)
        downstream.putCompletion()
    }
}

final class _MaterializeSink<T, E>: _Sink<SignalEvent<T, E>, NoError>, @unchecked Sendable {
    // `@unchecked Sendable`: immutable; called serially by the source.
    let downstream: Subscriber<T, E>
    override var downstreamSubscription: _SubscriptionBase? { downstream._subscriptionBase }

    init(downstream: Subscriber<T, E>) {
        self.downstream = downstream
    }

    override func putNext(_ event: SignalEvent<T, E>) {
        switch event {
        case .Next(let value):
            downstream.putNext(value)
        case .Error(let error):
            downstream.putError(error)
        case .Completion:
            downstream.putCompletion()
        }
    }

    override func putError(_ error: NoError) {}

    override func putCompletion() {
        downstream.putCompletion()
    }
}
