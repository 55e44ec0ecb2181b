// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// Events: events as values and back.
//
// SwiftSignalKit's names are the reverse of Rx's and ReactiveCocoa's:
// `dematerialize` turns events INTO values (RAC's `materialize`), `materialize`
// turns values back into events (RAC's `dematerialize`). The names are kept
// for source compatibility; the RAC operations are `materializeEvents` and
// `dematerializeEvents`. The event type is SwiftSignalKit's `SignalEvent`
// (RAC's `RACEvent`), with RAC's accessors added here.

/// Turns every event into a value: `.Next(v)`, `.Error(e)` or
/// `.Completion`, and completes after the terminal one (Rx's `materialize`).
///
/// SwiftSignalKit's `dematerialize` (ReactiveCocoa's `materialize`; see `materializeEvents`).
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
    _lift(signal, "dematerialize") { _DematerializeSink(downstream: $0) }
}

/// Turns event values back into events (Rx's `dematerialize`): `.Next(v)`
/// emits `v`, `.Error(e)` fails with `e`, `.Completion` completes.
///
/// SwiftSignalKit's `materialize` (ReactiveCocoa's `dematerialize`; see `dematerializeEvents`).
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
    _lift(signal, "materialize") { _MaterializeSink(downstream: $0) }
}

// MARK: - Sinks

struct _DematerializeSink<T, E>: _InlineSink {
    typealias Input = T
    typealias Failure = E

    let downstream: Subscriber<SignalEvent<T, E>, NoError>
    var downstreamSubscription: _SubscriptionBase? { downstream._subscriptionBase }

    func putNext(_ value: T, from _: _SubscriptionBase) {
        downstream.putNext(.Next(value))
    }

    func putError(_ error: E) {
        downstream.putNext(.Error(error))
        downstream.putCompletion()
    }

    func putCompletion() {
        downstream.putNext(.Completion)
        downstream.putCompletion()
    }
}

struct _MaterializeSink<T, E>: _InlineSink {
    typealias Input = SignalEvent<T, E>
    typealias Failure = NoError

    let downstream: Subscriber<T, E>
    var downstreamSubscription: _SubscriptionBase? { downstream._subscriptionBase }

    func putNext(_ event: SignalEvent<T, E>, from _: _SubscriptionBase) {
        switch event {
        case .Next(let value):
            downstream.putNext(value)
        case .Error(let error):
            downstream.putError(error)
        case .Completion:
            downstream.putCompletion()
        }
    }

    func putError(_ error: NoError) {}

    func putCompletion() {
        downstream.putCompletion()
    }
}

extension SignalEvent {
    /// Whether this is an error or a completion (RAC's `finished`).
    public var isTerminal: Bool {
        switch self {
        case .Next: return false
        case .Error, .Completion: return true
        }
    }

    /// The value of a `.Next` event, else nil (RAC's `value`).
    public var value: T? {
        if case .Next(let value) = self { return value }
        return nil
    }

    /// The error of an `.Error` event, else nil (RAC's `error`).
    public var error: E? {
        if case .Error(let error) = self { return error }
        return nil
    }
}

/// Turns every event into a value: `.Next(v)`, then `.Error(e)` or
/// `.Completion`, and completes after that one (RAC's `materialize`;
/// SwiftSignalKit's `dematerialize`).
///
/// Marble: `"a-#e"` → `"Next(a)-(Error(e)|)"`; `"a-|"` →
/// `"Next(a)-(Completion|)"`
///
/// - Parameters:
///   - signal: the upstream signal.
/// - Returns: a signal of events that never fails. Use it as
///   `signal |> materializeEvents`.
///
/// - Threading: no thread hop.
/// - Termination: the upstream's terminal event is sent as a value, then the
///   result completes.
/// - Disposal: returns the upstream handle.
public func materializeEvents<T, E>(_ signal: Signal<T, E>) -> Signal<SignalEvent<T, E>, NoError> {
    _lift(signal, "materialize") { _DematerializeSink(downstream: $0) }
}

/// Turns event values back into events: `.Next(v)` sends `v`, `.Error(e)`
/// fails with `e`, `.Completion` completes (RAC's `dematerialize`;
/// SwiftSignalKit's `materialize`).
///
/// Marble: `"Next(a)-Error(e)"` → `"a-#e"`; `"Next(a)-Completion"` → `"a-|"`
///
/// - Parameters:
///   - signal: a signal of events.
/// - Returns: the signal the events describe; it also completes when the
///   upstream completes. Use it as `events |> dematerializeEvents`.
///
/// - Threading: no thread hop.
/// - Termination: the first `.Error` or `.Completion` value terminates (the
///   upstream is then disposed).
/// - Disposal: returns the upstream handle.
public func dematerializeEvents<T, E>(_ signal: Signal<SignalEvent<T, E>, NoError>) -> Signal<T, E> {
    _lift(signal, "dematerialize") { _MaterializeSink(downstream: $0) }
}
