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

#endif  // Logging
