// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Logging
import NIOCore
import SignalKit
import SignalKitLogging
import SignalKitMetrics
import SignalKitNIO

/// The name of every client's graph: its log lines, its metrics and its
/// buffer's statistics are under it.
let clientGraphName = "client-graph"

/// One WebSocket client's signal graph: the latest tick of each of its
/// instruments (`combineLatest`), only when something changed
/// (`distinctUntilChanged`), at most one update per `rateLimit` window
/// (`throttle(for:latest:)`: the newest state of each window), delivered on
/// the connection's event loop. Logged (subscription, disposal, errors) and
/// metered as "client-graph". Its stages are named ("ticks", "changes",
/// "rate-limited", "client-graph") for the inspector (`--inspector`); with
/// inspection off, naming costs nothing per event. `emitted`, if given, sees each update as the
/// rate limit sends it, before the hop to the loop (the service's latency
/// recording).
///
/// Nothing runs until it is started; disposing the subscription (the
/// connection's task does when the client goes) tears the whole graph down.
public func clientGraph(
    feed: some TickSource,
    instruments: [Int],
    rateLimit: Duration,
    eventLoop: any EventLoop,
    logger: Logger,
    emitted: (@Sendable ([Tick]) -> Void)? = nil
) -> Signal<[Tick], NoError> {
    var limited =
        combineLatest(instruments.map { feed.ticks(of: $0) |> named("ticks") })
        |> distinctUntilChanged
        |> named("changes")
        |> throttle(for: rateLimit, queue: Queue(eventLoop: eventLoop), latest: true)
        |> named("rate-limited")
    if let emitted {
        limited = limited |> beforeNext(emitted)
    }
    return limited
        |> deliverOn(eventLoop)
        |> named(clientGraphName)
        |> logEvents([.subscribed, .error, .disposed], to: .logger(logger))
        |> metered("client-graph")
}
