// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Synchronization

/// The same per-client pipeline as `clientGraph`, written the way a Swift
/// server engineer would without SignalKit: the feed fans each tick out to
/// the `AsyncStream` continuations of the clients that asked for its
/// instrument; each client's task keeps the latest tick per instrument and
/// sends the state at most once per rate-limit window (first change at once,
/// then the newest state at the end of each window that changed it).
///
/// It exists to be measured against SignalKit (the benchmark's W11 row runs
/// the service with `--engine asyncstream`).
public final class AsyncStreamFanOut: Sendable {
    private struct Registry {
        var nextID = 0
        /// Per instrument, the continuations of the clients that want it.
        var byInstrument: [[Int: AsyncStream<Tick>.Continuation]]
    }

    private let registry: Mutex<Registry>

    public init(instruments: Int) {
        registry = Mutex(Registry(byInstrument: Array(repeating: [:], count: instruments)))
    }

    /// Called by the feed thread for every tick.
    ///
    /// The continuations are copied under the lock and yielded to outside it:
    /// yielding under the lock deadlocks (measured here) against a client's
    /// cancellation, which runs `onTermination` (taking this lock) while the
    /// runtime holds the task's status lock, which `yield` needs to resume
    /// the task.
    func publish(_ tick: Tick) {
        let continuations = registry.withLock { Array($0.byInstrument[tick.instrument].values) }
        for continuation in continuations {
            continuation.yield(tick)
        }
    }

    /// The ticks of `instruments`, merged, until the stream is dropped.
    func subscribe(_ instruments: [Int], buffer: Int) -> AsyncStream<Tick> {
        let (stream, continuation) = AsyncStream.makeStream(of: Tick.self, bufferingPolicy: .bufferingNewest(buffer))
        let id = registry.withLock { registry -> Int in
            registry.nextID += 1
            for instrument in instruments { registry.byInstrument[instrument][registry.nextID] = continuation }
            return registry.nextID
        }
        continuation.onTermination = { [weak self] _ in
            self?.registry.withLock { registry in
                for instrument in instruments { registry.byInstrument[instrument][id] = nil }
            }
        }
        return stream
    }

    /// Sends `instruments`' latest ticks through `send`, at most once per
    /// `rateLimit`, until cancelled or `send` throws; `emitted`, if given,
    /// sees each update when it is taken (the service's latency recording).
    func serve(
        _ instruments: [Int],
        rateLimit: Duration,
        buffer: Int,
        emitted: (@Sendable ([Tick]) -> Void)? = nil,
        send: @escaping @Sendable ([Tick]) async throws -> Void
    ) async throws {
        let ticks = subscribe(instruments, buffer: buffer)
        let state = ClientStateBox(ClientState(instruments: instruments))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await tick in ticks {
                    state.mutex.withLock { $0.update(tick) }
                }
            }
            group.addTask {
                let clock = ContinuousClock()
                while !Task.isCancelled {
                    if let update = state.mutex.withLock({ $0.takeIfChanged() }) {
                        emitted?(update)
                        try await send(update)
                    }
                    try await clock.sleep(for: rateLimit)
                }
            }
            try await group.next()
            group.cancelAll()
        }
    }
}

/// A client's state, shared by its two tasks.
final class ClientStateBox: Sendable {
    let mutex: Mutex<ClientState>

    init(_ state: ClientState) {
        mutex = Mutex(state)
    }
}

/// A client's latest tick per instrument and whether it changed since sent.
struct ClientState: Sendable {
    let instruments: [Int]
    var latest: [Int: Tick] = [:]
    var changed = false

    init(instruments: [Int]) {
        self.instruments = instruments
    }

    mutating func update(_ tick: Tick) {
        latest[tick.instrument] = tick
        changed = true
    }

    /// The state of every instrument once each has ticked, if it changed.
    mutating func takeIfChanged() -> [Tick]? {
        guard changed, latest.count == instruments.count else { return nil }
        changed = false
        return instruments.map { latest[$0]! }
    }
}
