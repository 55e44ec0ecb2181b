// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// RACEvents: ReactiveCocoa's `materialize` / `dematerialize` (events as
// values and back), under distinct names because SwiftSignalKit uses the two
// names the other way round: SwiftSignalKit's `dematerialize` is RAC's
// `materialize`, and its `materialize` is RAC's `dematerialize`. Both keep
// their SwiftSignalKit meaning; the RAC operations are `materializeEvents`
// and `dematerializeEvents`. The event type is SwiftSignalKit's
// `SignalEvent` (RAC's `RACEvent`), with RAC's accessors added here.

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
    Signal { subscriber in
        signal._start(_DematerializeSink(downstream: subscriber))
    }._derived("materialize", from: signal)
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
    Signal { subscriber in
        signal._start(_MaterializeSink(downstream: subscriber))
    }._derived("dematerialize", from: signal)
}
