// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Dispatch
import Glibc
import SignalKit
import Synchronization

/// One price update of one instrument (`Codable`: instances pass it on
/// over gRPC as JSON).
public struct Tick: Sendable, Equatable, Codable {
    /// The instrument's index.
    public var instrument: Int
    /// Numbers the instrument's ticks from 1, without gaps.
    public var sequence: UInt64
    public var price: Double
    /// When the feed produced it: CLOCK_MONOTONIC nanoseconds, the clock
    /// every process on the machine shares (the load client measures the
    /// tick-to-client latency with it).
    public var timestamp: UInt64
}

/// Nanoseconds on CLOCK_MONOTONIC.
func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
}

/// Where a service's ticks come from: its own `Feed`, or another instance's
/// feed over gRPC (`RemoteFeed`).
public protocol TickSource: Sendable {
    /// The number of instruments, numbered from 0.
    var instruments: Int { get }
    /// The instrument's ticks (hot, never completes).
    func ticks(of instrument: Int) -> Signal<Tick, NoError>
    /// The instrument's latest tick, then every later one.
    func latestTick(of instrument: Int) -> Signal<Tick, NoError>
}

/// A simulated market feed: `instruments` instruments, ticking round-robin at
/// `ticksPerSecond` in all, on a thread of its own. Each instrument is a hot
/// `ValuePipe` (its subscribers get the ticks from now on) and a
/// `ValuePromise` holding its latest tick (the snapshot).
public final class Feed: TickSource {
    public let instruments: Int
    private let pipes: [ValuePipe<Tick>]
    private let latest: [ValuePromise<Tick>]
    private let running = Synchronization.Atomic<Bool>(false)
    private let stopped = DispatchSemaphore(value: 0)
    /// The AsyncStream fan-out, when the service runs that engine.
    let fanOut: AsyncStreamFanOut?

    public init(instruments: Int, fanOut: AsyncStreamFanOut? = nil) {
        precondition(instruments > 0, "Feed: at least one instrument")
        self.instruments = instruments
        self.fanOut = fanOut
        pipes = (0..<instruments).map { _ in ValuePipe<Tick>() }
        latest = (0..<instruments).map { _ in ValuePromise<Tick>(ignoreRepeated: false) }
    }

    /// The instrument's ticks from now on (hot, never completes).
    public func ticks(of instrument: Int) -> Signal<Tick, NoError> {
        pipes[instrument].signal()
    }

    /// The instrument's latest tick, then every later one (a snapshot is its
    /// first value).
    public func latestTick(of instrument: Int) -> Signal<Tick, NoError> {
        latest[instrument].get()
    }

    /// Starts producing on a thread of its own; `stop()` ends it.
    public func start(ticksPerSecond: Int) {
        precondition(ticksPerSecond > 0, "Feed.start: ticksPerSecond must be positive")
        guard !running.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let thread = DispatchQueue(label: "market.feed")
        thread.async { [self] in
            produce(ticksPerSecond: ticksPerSecond)
            stopped.signal()
        }
    }

    /// Stops the feed and waits until its thread has sent its last tick.
    public func stop() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        stopped.wait()
    }

    private func produce(ticksPerSecond: Int) {
        var sequences = [UInt64](repeating: 0, count: instruments)
        var prices = (0..<instruments).map { 100 + Double($0) }
        var next = 0
        var sent = 0
        let start = monotonicNanoseconds()
        while running.load(ordering: .relaxed) {
            let elapsed = monotonicNanoseconds() &- start
            let due = Int(elapsed / 1_000 * UInt64(ticksPerSecond) / 1_000_000)
            if sent >= due {
                usleep(200)
                continue
            }
            while sent < due {
                let instrument = next
                next = (next + 1) % instruments
                sequences[instrument] += 1
                prices[instrument] += sequences[instrument] % 2 == 0 ? 0.01 : -0.005
                let tick = Tick(
                    instrument: instrument,
                    sequence: sequences[instrument],
                    price: prices[instrument],
                    timestamp: monotonicNanoseconds()
                )
                latest[instrument].set(tick)
                pipes[instrument].putNext(tick)
                fanOut?.publish(tick)
                sent += 1
            }
        }
    }
}
