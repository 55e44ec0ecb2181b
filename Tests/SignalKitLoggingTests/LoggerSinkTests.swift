// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if Logging
import InMemoryLogging
import Logging
import SignalKit
import SignalKitLogging
import SignalKitTesting
import Testing

private enum Boom: Error { case boom }

@Suite struct LoggerSinkTests {
    private func logger(level: Logger.Level) -> (Logger, InMemoryLogHandler) {
        let handler = InMemoryLogHandler()
        var logger = Logger(label: "test") { _ in handler }
        logger.logLevel = level
        return (logger, handler)
    }

    @Test func eachEventIsLoggedAtItsLevelWithMetadata() throws {
        let (logger, handler) = logger(level: .trace)
        let signal = Signal<Int, Boom>.sequence([1, 2]) |> named("quotes") |> logAll(to: .logger(logger))
        _ = signal.start()
        let entries = handler.entries
        #expect(
            entries.map(\.message.description) == [
                "quotes subscribed", "quotes next: 1", "quotes next: 2", "quotes completed", "quotes disposed",
            ])
        #expect(entries.map(\.level) == [.debug, .trace, .trace, .debug, .debug])
        #expect(Set(entries.compactMap { $0.metadata["signal"]?.description }) == ["quotes"])
        #expect(
            entries.compactMap { $0.metadata["event"]?.description } == [
                "subscribed", "next", "next", "completed", "disposed",
            ])
        let subscriptions = Set(entries.compactMap { $0.metadata["subscription"]?.description })
        #expect(subscriptions.count == 1)
    }

    @Test func errorsUseTheirLevelAndTwoSubscriptionsHaveTwoNumbers() {
        let (logger, handler) = logger(level: .debug)
        let signal = Signal<Int, String>.fail("timeout") |> named("login") |> logEvents([.error], to: .logger(logger))
        _ = signal.start()
        _ = signal.start()
        let entries = handler.entries
        #expect(entries.map(\.message.description) == ["login error: timeout", "login error: timeout"])
        #expect(entries.map(\.level) == [.warning, .warning])
        #expect(Set(entries.compactMap { $0.metadata["subscription"]?.description }).count == 2)
    }

    @Test func eventsBelowTheLoggersLevelAreNotFormatted() {
        let (logger, handler) = logger(level: .info)
        let formatted = Shared(0)
        struct Counted: CustomStringConvertible, Sendable {
            let formatted: Shared<Int>
            var description: String {
                formatted.withLock { $0 += 1 }
                return "counted"
            }
        }
        let signal = Signal<Counted, NoError>.single(Counted(formatted: formatted)) |> logAll(to: .logger(logger))
        _ = signal.start()
        #expect(handler.entries.isEmpty)
        #expect(formatted.value == 0)
    }

    @Test func levelsAreConfigurable() {
        let (logger, handler) = logger(level: .info)
        let levels = SignalLogLevels(next: .info)
        _ = (Signal<Int, NoError>.single(5) |> named("n") |> logAll(to: .logger(logger, levels: levels))).start()
        #expect(handler.entries.map(\.message.description) == ["n next: 5"])
    }
}

@Suite struct SignalBufferDropLoggerTests {
    @Test func logsTheFirstDropAtOnceThenOneSummaryPerInterval() {
        let handler = InMemoryLogHandler()
        let logger = Logger(label: "drops") { _ in handler }
        let scheduler = VirtualTimeScheduler()
        let logging = SignalBufferDropLogger.start(logger: logger, every: .seconds(10), on: scheduler.makeQueue())
        let pipe = ValuePipe<Int>()
        let handle =
            (pipe.signal() |> named("logging.drops") |> deliverOn(scheduler.makeQueue(), buffer: .droppingNewest(beyond: 1)))
            .start()
        for value in 1...4 { pipe.putNext(value) }
        #expect(handler.entries.map(\.message.description) == ["SignalKit: a bounded boundary dropped its first value"])
        #expect(handler.entries.first?.metadata["signal"]?.description == "logging.drops")
        #expect(handler.entries.first?.metadata["policy"]?.description == "droppingNewest(beyond: 1)")
        #expect(handler.entries.first?.level == .warning)
        scheduler.advance(by: 10)
        var entries = handler.entries
        #expect(entries.count == 2)
        #expect(entries.last?.message.description == "SignalKit: 3 values dropped in the last 10.0 seconds")
        #expect(entries.last?.metadata["dropsTotal"]?.description == "3")
        // Nothing more dropped: no line.
        scheduler.advance(by: 10)
        #expect(handler.entries.count == 2)
        // The queue ran: 5 waits, 6 is dropped.
        pipe.putNext(5)
        pipe.putNext(6)
        scheduler.advance(by: 10)
        entries = handler.entries
        #expect(entries.count == 3)
        #expect(entries.last?.metadata["drops"]?.description == "1")
        #expect(entries.last?.metadata["dropsTotal"]?.description == "4")
        logging.dispose()
        #expect(SignalKitDebug.firstBufferDropHandler == nil)
        handle.dispose()
    }
}

#endif  // Logging
