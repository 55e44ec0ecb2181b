// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#elseif canImport(Darwin)
@preconcurrency import Darwin
#endif

import Synchronization

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

/// Where logging operators write: lines (one call per line, without a
/// trailing newline), or structured records for a logging library.
///
/// ```swift
/// let lines = Atomic<[String]>(value: [])
/// let sink = SignalLogSink { line in lines.modify { $0 + [line] } }
/// _ = (signal |> logAll(to: sink)).start()
/// ```
///
/// A record sink (``init(isEnabled:record:)``) receives a ``SignalLogRecord``
/// per event, and is first asked whether it wants that kind: an event it does
/// not want is not formatted. SignalKitLogging's `SignalLogSink.logger(_:)`
/// is one, for swift-log.
public struct SignalLogSink: Sendable {
    private let writeLine: (@Sendable (String) -> Void)?
    private let writeRecord: (@Sendable (SignalLogRecord) -> Void)?
    private let enabled: (@Sendable (SignalLogEvents) -> Bool)?

    /// A sink calling `write` with each line. `write` may be called from any
    /// thread a logged signal delivers on, concurrently for different
    /// subscriptions.
    public init(_ write: @escaping @Sendable (String) -> Void) {
        self.writeLine = write
        self.writeRecord = nil
        self.enabled = nil
    }

    /// A sink receiving a structured record per event. `isEnabled` is asked
    /// first (with the event's kind); when it says no, nothing is formatted
    /// or recorded. Both may be called from any thread a logged signal
    /// delivers on, concurrently for different subscriptions.
    public init(
        isEnabled: @escaping @Sendable (SignalLogEvents) -> Bool = { _ in true },
        record: @escaping @Sendable (SignalLogRecord) -> Void
    ) {
        self.writeLine = nil
        self.writeRecord = record
        self.enabled = isEnabled
    }

    /// Writes one line (a record sink receives it as a record whose `event`
    /// is empty and whose `signal` is the line).
    public func write(_ line: String) {
        if let writeLine {
            writeLine(line)
        } else {
            writeRecord?(SignalLogRecord(signal: line, event: [], subscription: 0, detail: nil))
        }
    }

    /// Writes one event, formatting `detail` only if the sink wants it.
    @inline(__always)
    func log(_ event: SignalLogEvents, _ signal: String, _ subscription: UInt64, _ detail: @autoclosure () -> String? = nil) {
        if let writeLine {
            writeLine(SignalLogRecord.line(signal: signal, event: event, detail: detail()))
        } else if let writeRecord, enabled?(event) ?? true {
            writeRecord(SignalLogRecord(signal: signal, event: event, subscription: subscription, detail: detail()))
        }
    }

    /// Standard error, one `fputs` per line (the C library locks the stream,
    /// so lines from different threads do not interleave).
    public static let standardError = SignalLogSink { line in
        fputs(line + "\n", stderr)
    }
}

/// One event written by a logging operator to a record sink.
public struct SignalLogRecord: Sendable {
    /// The logged signal's description: its name (`named(_:)`), its operator
    /// chain while naming is on, else its type.
    public let signal: String
    /// The kind of event (exactly one of ``SignalLogEvents``' members; empty
    /// for a raw line written with ``SignalLogSink/write(_:)``).
    public let event: SignalLogEvents
    /// Numbers the logged subscriptions (process-wide, from 1), so that one
    /// subscription's events can be told apart from another's.
    public let subscription: UInt64
    /// The value (`next`) or the error (`error`), formatted; nil otherwise.
    public let detail: String?

    public init(signal: String, event: SignalLogEvents, subscription: UInt64, detail: String?) {
        self.signal = signal
        self.event = event
        self.subscription = subscription
        self.detail = detail
    }

    /// `subscribed`, `next`, `error`, `completed` or `disposed` (empty for a
    /// raw line).
    public var eventName: String {
        Self.name(of: event)
    }

    static func name(of event: SignalLogEvents) -> String {
        switch event {
        case .subscribed: "subscribed"
        case .next: "next"
        case .error: "error"
        case .completed: "completed"
        case .disposed: "disposed"
        default: ""
        }
    }

    /// The line a line sink writes: `quotes next: 42`, `quotes completed`.
    public var line: String {
        event.isEmpty ? signal : Self.line(signal: signal, event: event, detail: detail)
    }

    static func line(signal: String, event: SignalLogEvents, detail: String?) -> String {
        let name = Self.name(of: event)
        return detail.map { "\(signal) \(name): \($0)" } ?? "\(signal) \(name)"
    }
}

/// Numbers logged subscriptions for ``SignalLogRecord/subscription``.
let _logSubscriptionCounter = Synchronization.Atomic<UInt64>(0)

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
            let number = _logSubscriptionCounter.add(1, ordering: .relaxed).newValue
            if events.contains(.subscribed) { sink.log(.subscribed, prefix, number) }
            let handle = signal._start(
                _LogSink(downstream: subscriber, prefix: prefix, subscription: number, events: events, sink: sink)
            )
            guard events.contains(.disposed) else { return handle }
            return ActionDisposable {
                handle.dispose()
                sink.log(.disposed, prefix, number)
            }
        }._derived(operatorName, from: signal)
    }
}

struct _LogSink<T, E>: _InlineSink {
    typealias Input = T
    typealias Failure = E

    let downstream: Subscriber<T, E>
    var downstreamSubscription: _SubscriptionBase? { downstream._subscriptionBase }
    let prefix: String
    let subscription: UInt64
    let events: SignalLogEvents
    let sink: SignalLogSink

    func putNext(_ value: T, from _: _SubscriptionBase) {
        if events.contains(.next) { sink.log(.next, prefix, subscription, "\(value)") }
        downstream.putNext(value)
    }

    func putError(_ error: E) {
        if events.contains(.error) { sink.log(.error, prefix, subscription, "\(error)") }
        downstream.putError(error)
    }

    func putCompletion() {
        if events.contains(.completed) { sink.log(.completed, prefix, subscription) }
        downstream.putCompletion()
    }
}
