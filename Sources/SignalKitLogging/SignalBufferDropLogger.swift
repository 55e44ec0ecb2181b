// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if Logging
public import Logging
public import SignalKit

/// Logs what the bounded boundaries drop (``SignalKitDebug/bufferStatistics()``):
/// the first drop of each signal name at once, then at most one summary line
/// per name and interval while it keeps dropping.
///
/// * First drop: `SignalKit: a bounded boundary dropped its first value`,
///   logged on the thread that dropped, with the metadata `signal` (the
///   buffered signal's name), `policy` and `depth`. Once per name's entry:
///   an entry lives while a subscription of its name does and for
///   ``SignalKitDebug/bufferStatisticsRetention`` after, so a name
///   whose entry went away logs its first drop again.
/// * Summary, every `interval` on `queue`, for each name whose counters grew:
///   `SignalKit: 1234 values dropped in the last 10 seconds`, with `signal`,
///   `policy`, `drops` (in the interval), `dropsTotal`, `overflows` and
///   `blockedSends` (in the interval) and `depth`. A boundary that drops a
///   million values a second costs one line per interval, not a million.
///   `dropsTotal` is the entry's: a name's new entry counts from zero. Log
///   more often than the retention: what an entry dropped after the
///   previous summary is not logged once the entry has gone.
///
/// ```swift
/// let dropLogging = SignalBufferDropLogger.start(logger: Logger(label: "signalkit"), on: Queue(name: "drop-log"))
/// // ... at shutdown:
/// dropLogging.dispose()
/// ```
///
/// Disposing the result stops the summaries and removes the first-drop
/// handler (``SignalKitDebug/firstBufferDropHandler``; one logger at a time).
public enum SignalBufferDropLogger {
    /// Starts logging drops to `logger` at `level`, with a summary every
    /// `interval` on `queue`, until the result is disposed.
    public static func start(
        logger: Logger,
        level: Logger.Level = .warning,
        every interval: Duration = .seconds(10),
        on queue: Queue
    ) -> any Disposable {
        let summaries = _DropSummaries(logger: logger, level: level, interval: interval)
        summaries.remember()
        SignalKitDebug.firstBufferDropHandler = { statistics in
            logger.log(
                level: level,
                "SignalKit: a bounded boundary dropped its first value",
                metadata: [
                    "signal": "\(statistics.name)",
                    "policy": "\(statistics.policy)",
                    "depth": "\(statistics.depth)",
                ]
            )
        }
        let timer = SignalKit.interval(interval, queue: queue).start(next: { _ in summaries.logGrowth() })
        return ActionDisposable {
            timer.dispose()
            SignalKitDebug.firstBufferDropHandler = nil
        }
    }
}

/// The counters as last logged, by name.
final class _DropSummaries: Sendable {
    private let logger: Logger
    private let level: Logger.Level
    private let interval: Duration
    /// The statistics last logged by name, with the serial of their entry.
    private let logged = _LockedState<[String: (entry: UInt64, statistics: SignalBufferStatistics)]>([:])

    init(logger: Logger, level: Logger.Level, interval: Duration) {
        self.logger = logger
        self.level = level
        self.interval = interval
    }

    /// Takes the counters as they are as the baseline.
    func remember() {
        let current = SignalKitDebug._bufferStatisticsByEntry()
        logged.withLock { logged in
            for (entry, statistics) in current { logged[statistics.name] = (entry, statistics) }
        }
    }

    /// Logs one line per name whose counters grew since the last call.
    func logGrowth() {
        let current = SignalKitDebug._bufferStatisticsByEntry()
        let grown = logged.withLock { logged -> [(SignalBufferStatistics, SignalBufferStatistics?)] in
            // The names whose entry went away (see `bufferStatisticsRetention`).
            let names = Set(current.map(\.statistics.name))
            logged = logged.filter { names.contains($0.key) }
            var grown: [(SignalBufferStatistics, SignalBufferStatistics?)] = []
            for (entry, statistics) in current {
                // Another entry than the one logged: the name's entry went
                // away and this one counts from zero.
                let previous = logged[statistics.name].flatMap { $0.entry == entry ? $0.statistics : nil }
                if statistics.drops != previous?.drops ?? 0 || statistics.overflows != previous?.overflows ?? 0
                    || statistics.blockedSends != previous?.blockedSends ?? 0
                {
                    grown.append((statistics, previous))
                }
                logged[statistics.name] = (entry, statistics)
            }
            return grown
        }
        for (statistics, previous) in grown {
            let drops = statistics.drops - (previous?.drops ?? 0)
            logger.log(
                level: level,
                "SignalKit: \(drops) values dropped in the last \(interval)",
                metadata: [
                    "signal": "\(statistics.name)",
                    "policy": "\(statistics.policy)",
                    "drops": "\(drops)",
                    "dropsTotal": "\(statistics.drops)",
                    "overflows": "\(statistics.overflows - (previous?.overflows ?? 0))",
                    "blockedSends": "\(statistics.blockedSends - (previous?.blockedSends ?? 0))",
                    "depth": "\(statistics.depth)",
                ]
            )
        }
    }
}

#endif  // Logging
