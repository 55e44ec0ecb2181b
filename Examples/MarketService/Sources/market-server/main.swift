// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Logging
import MarketService
import SignalKit

// market-server [--port N] [--instruments N] [--rate TICKS_PER_SECOND] [--rate-limit-ms N]
//               [--engine signalkit|asyncstream]
// Binds to 127.0.0.1. Stops gracefully on SIGTERM or SIGINT and then prints
// SignalKit's live-object counters.

var configuration = MarketConfiguration()
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    if argument == "--engine" {
        guard let engine = arguments.next().flatMap(MarketConfiguration.Engine.init(rawValue:)) else {
            fatalError("market-server: --engine takes signalkit or asyncstream")
        }
        configuration.engine = engine
        continue
    }
    guard let value = arguments.next().flatMap({ Int($0) }) else {
        fatalError("market-server: \(argument) needs an integer value")
    }
    switch argument {
    case "--port": configuration.port = value
    case "--instruments": configuration.instruments = value
    case "--rate": configuration.ticksPerSecond = value
    case "--rate-limit-ms": configuration.rateLimit = .milliseconds(value)
    default: fatalError("market-server: unknown option \(argument)")
    }
}
var logger = Logger(label: "market")
logger.logLevel = .info
/// Runs the service; everything it built is released when this returns.
func serve(_ configuration: MarketConfiguration, logger: Logger) async throws {
    let service = MarketService(configuration: configuration, logger: logger)
    try await service.run()
}

try await serve(configuration, logger: logger)
// Connection tasks may still be finishing when the server returns: give
// them up to 5 s to release what they hold before reading the counters.
let clock = ContinuousClock()
let stoppedAt = clock.now
let deadline = stoppedAt.advanced(by: .seconds(5))
while clock.now < deadline,
    SignalKitDebug.liveSubscriptions + SignalKitDebug.liveBags + SignalKitDebug.liveBagArrays
        + SignalKitDebug.retiredBagItems > 0
{
    try await Task.sleep(for: .milliseconds(10))
}
print(
    "market-server stopped (counters read \(clock.now - stoppedAt) after the server returned): liveSubscriptions=\(SignalKitDebug.liveSubscriptions) liveBags=\(SignalKitDebug.liveBags) "
        + "liveBagArrays=\(SignalKitDebug.liveBagArrays) retiredBagItems=\(SignalKitDebug.retiredBagItems)"
)
