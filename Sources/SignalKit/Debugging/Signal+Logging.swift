// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#elseif canImport(Darwin)
@preconcurrency import Darwin
#endif

// Debugging, part 2: logging a signal's events (ReactiveCocoa's `logNext`,
// `logError`, `logCompleted`, `logAll`), plus subscriptions and disposals.
// Nothing is logged unless one of these operators is applied; each line goes
// to a pluggable sink, standard error by default.

/// The kinds of events a logging operator writes.
public struct SignalLogEvents: OptionSet, Sendable, Hashable {
    public let rawValue: Int

    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// `<description> subscribed`, before the input is subscribed.
    public static let subscribed = SignalLogEvents(rawValue: 1 << 0)
    /// `<description> next: <value>`, before the value is forwarded.
    public static let next = SignalLogEvents(rawValue: 1 << 1)
    /// `<description> error: <error>`, before the error is forwarded.
    public static let error = SignalLogEvents(rawValue: 1 << 2)
    /// `<description> completed`, before the completion is forwarded.
    public static let completed = SignalLogEvents(rawValue: 1 << 3)
    /// `<description> disposed`, once the subscription's input has been
    /// disposed (after an explicit disposal, or after termination).
    public static let disposed = SignalLogEvents(rawValue: 1 << 4)

    /// Every kind.
    public static let all: SignalLogEvents = [.subscribed, .next, .error, .completed, .disposed]
}

/// Where logging operators write their lines (one call per line, without a
/// trailing newline).
///
/// ```swift
/// let lines = Atomic<[String]>(value: [])
/// let sink = SignalLogSink { line in lines.modify { $0 + [line] } }
/// _ = (signal |> logAll(to: sink)).start()
/// ```
public struct SignalLogSink: Sendable {
    private let writeLine: @Sendable (String) -> Void

    /// A sink calling `write` with each line. `write` may be called from any
    /// thread a logged signal delivers on, concurrently for different
    /// subscriptions.
    public init(_ write: @escaping @Sendable (String) -> Void) {
        self.writeLine = write
    }

    /// Writes one line.
    public func write(_ line: String) {
        writeLine(line)
    }

    /// Standard error, one `fputs` per line (the C library locks the stream,
    /// so lines from different threads do not interleave).
    public static let standardError = SignalLogSink { line in
        fputs(line + "\n", stderr)
    }
}

/// Logs the chosen kinds of events with the signal's description, then
/// forwards everything unchanged.
///
/// Marble: `"a-|"` → `"a-|"` (writing `src subscribed`, `src next: a`,
/// `src completed`, `src disposed`)
///
/// Each line is `<description> <event>`, where `<description>` is the
/// input's `description` when the operator is applied (a name given with
/// `named(_:)`, an operator chain while naming is on, else the signal's
/// type): `login next: 42`, `login error: timeout`, `login completed`,
/// `login subscribed`, `login disposed`.
///
/// - Parameters:
///   - events: which kinds to write.
///   - sink: where to write; standard error by default.
/// - Returns: a function from a signal to the same signal, logged.
///
/// - Threading: lines are written on the thread that subscribes (`subscribed`),
///   delivers (`next`, `error`, `completed`) or disposes (`disposed`), before
///   the event is forwarded.
/// - Termination: unchanged.
/// - Disposal: disposes the input, then writes `disposed` (once per
///   subscription: after termination or after an explicit disposal).
public func logEvents<T, E>(
    _ events: SignalLogEvents,
    to sink: SignalLogSink = .standardError
) -> (Signal<T, E>) -> Signal<T, E> {
    _logging(events, sink, "logEvents")
}

/// Logs every event: subscription, values, error, completion and disposal
/// (`logEvents(.all)`). ReactiveCocoa's `logAll` logs values, error and
/// completion only.
///
/// Marble: `"a-|"` → `"a-|"`
///
/// - Parameters:
///   - sink: where to write; standard error by default.
/// - Returns: a function from a signal to the same signal, logged.
///
/// - Threading: as `logEvents(_:to:)`.
/// - Termination: unchanged.
/// - Disposal: as `logEvents(_:to:)`.
public func logAll<T, E>(to sink: SignalLogSink = .standardError) -> (Signal<T, E>) -> Signal<T, E> {
    _logging(.all, sink, "logAll")
}

/// Logs each value: `<description> next: <value>`.
///
/// Marble: `"a-b-|"` → `"a-b-|"`
///
/// - Parameters:
///   - sink: where to write; standard error by default.
/// - Returns: a function from a signal to the same signal, logged.
///
/// - Threading: as `logEvents(_:to:)`.
/// - Termination: unchanged.
/// - Disposal: returns the input's handle.
public func logNext<T, E>(to sink: SignalLogSink = .standardError) -> (Signal<T, E>) -> Signal<T, E> {
    _logging(.next, sink, "logNext")
}

/// Logs the error: `<description> error: <error>`.
///
/// Marble: `"a-#e"` → `"a-#e"`
///
/// - Parameters:
///   - sink: where to write; standard error by default.
/// - Returns: a function from a signal to the same signal, logged.
///
/// - Threading: as `logEvents(_:to:)`.
/// - Termination: unchanged.
/// - Disposal: returns the input's handle.
public func logError<T, E>(to sink: SignalLogSink = .standardError) -> (Signal<T, E>) -> Signal<T, E> {
    _logging(.error, sink, "logError")
}

/// Logs the completion: `<description> completed`.
///
/// Marble: `"a-|"` → `"a-|"`
///
/// - Parameters:
///   - sink: where to write; standard error by default.
/// - Returns: a function from a signal to the same signal, logged.
///
/// - Threading: as `logEvents(_:to:)`.
/// - Termination: unchanged.
/// - Disposal: returns the input's handle.
public func logCompleted<T, E>(to sink: SignalLogSink = .standardError) -> (Signal<T, E>) -> Signal<T, E> {
    _logging(.completed, sink, "logCompleted")
}

/// The logging stage; `operatorName` names it in description chains.
func _logging<T, E>(
    _ events: SignalLogEvents,
    _ sink: SignalLogSink,
    _ operatorName: StaticString
) -> (Signal<T, E>) -> Signal<T, E> {
    { signal in
        let prefix = signal.description
        return Signal { subscriber in
            if events.contains(.subscribed) { sink.write(prefix + " subscribed") }
            let handle = signal._start(_LogSink(downstream: subscriber, prefix: prefix, events: events, sink: sink))
            guard events.contains(.disposed) else { return handle }
            return ActionDisposable {
                handle.dispose()
                sink.write(prefix + " disposed")
            }
        }._derived(operatorName, from: signal)
    }
}

final class _LogSink<T, E>: _Sink<T, E>, @unchecked Sendable {
    // `@unchecked Sendable`: immutable; called serially by the source.
    let downstream: Subscriber<T, E>
    override var downstreamSubscription: _SubscriptionBase? { downstream._subscriptionBase }
    let prefix: String
    let events: SignalLogEvents
    let sink: SignalLogSink

    init(downstream: Subscriber<T, E>, prefix: String, events: SignalLogEvents, sink: SignalLogSink) {
        self.downstream = downstream
        self.prefix = prefix
        self.events = events
        self.sink = sink
    }

    override func putNext(_ value: T) {
        if events.contains(.next) { sink.write("\(prefix) next: \(value)") }
        downstream.putNext(value)
    }

    override func putError(_ error: E) {
        if events.contains(.error) { sink.write("\(prefix) error: \(error)") }
        downstream.putError(error)
    }

    override func putCompletion() {
        if events.contains(.completed) { sink.write(prefix + " completed") }
        downstream.putCompletion()
    }
}
