// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if Logging
public import Logging
public import SignalKit

/// The swift-log level of each kind of event a logging operator writes.
///
/// The defaults suit a production service: subscriptions, completions and
/// disposals at `.debug`, values at `.trace` (the busiest kind), errors at
/// `.warning`.
public struct SignalLogLevels: Sendable, Hashable {
    public var subscribed: Logger.Level
    public var next: Logger.Level
    public var error: Logger.Level
    public var completed: Logger.Level
    public var disposed: Logger.Level

    public init(
        subscribed: Logger.Level = .debug,
        next: Logger.Level = .trace,
        error: Logger.Level = .warning,
        completed: Logger.Level = .debug,
        disposed: Logger.Level = .debug
    ) {
        self.subscribed = subscribed
        self.next = next
        self.error = error
        self.completed = completed
        self.disposed = disposed
    }

    /// The level of one kind of event.
    public subscript(event: SignalLogEvents) -> Logger.Level {
        switch event {
        case .subscribed: subscribed
        case .next: next
        case .error: error
        case .completed: completed
        default: disposed
        }
    }
}

extension SignalLogSink {
    /// A sink that writes each event to `logger`, at the level `levels` gives
    /// its kind, with metadata: `signal` (the signal's description: its name
    /// or operator chain), `event` (`subscribed`, `next`, `error`,
    /// `completed`, `disposed`) and `subscription` (a process-wide number
    /// per logged subscription, to follow one subscription's events).
    ///
    /// ```swift
    /// let logger = Logger(label: "quotes")
    /// let logged = quotes |> named("quotes") |> logAll(to: .logger(logger))
    /// ```
    ///
    /// An event whose level is below the logger's `logLevel` costs a
    /// comparison: the value is not even formatted.
    public static func logger(_ logger: Logger, levels: SignalLogLevels = SignalLogLevels()) -> SignalLogSink {
        SignalLogSink(
            isEnabled: { event in logger.logLevel <= levels[event] },
            record: { record in
                logger.log(
                    level: levels[record.event],
                    "\(record.line)",
                    metadata: [
                        "signal": "\(record.signal)",
                        "event": "\(record.eventName)",
                        "subscription": "\(record.subscription)",
                    ]
                )
            }
        )
    }
}

#endif  // Logging
