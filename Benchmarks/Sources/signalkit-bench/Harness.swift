// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Glibc

/// The libraries compared in one run.
enum Peer: String, CaseIterable, Sendable {
    case signalkit = "SignalKit"
    case opencombine = "OpenCombine"
    case floor = "floor"
    /// The Swift 6-native peer: the same workload on `AsyncStream` and
    /// swift-async-algorithms (W2, W3, W5, W6, W9; W10's comparison).
    case asyncStream = "AsyncStream"
    /// The physical floor of a bounded hop (W12): a hand-written
    /// single-producer / single-consumer ring whose consumer thread spins.
    case spscRing = "SPSC-ring"

    /// The peers of W1–W9.
    static let standard: [Peer] = [.signalkit, .opencombine, .floor]
    /// The standard peers and the AsyncStream peer, where it has an equivalent.
    static let withAsync: [Peer] = standard + [.asyncStream]
}

/// Latency percentiles, in microseconds.
struct Latency: Sendable {
    var p50: Double
    var p90: Double
    var p99: Double
}

/// What one timed run of one peer measured.
struct RunResult: Sendable {
    /// Nanoseconds per operation (the workload's unit).
    var nanosecondsPerOp: Double
    /// Whether the run's checksum matched its closed-form value.
    var checksumMatches: Bool
    /// W9 only.
    var latency: Latency?
    /// Where a boundary may drop values (W12): how many the run sent and how
    /// many of them were dropped on the way (never hidden in the figure).
    var drops: Drops?
    /// A workload that runs once (W14): its labelled figures (the JSON's
    /// `details`), its table (printed under the comparison table) and its
    /// own verdict on its target.
    var details: [(label: String, value: Double)] = []
    var detailTable: [[String]]?
    var targetMet: Bool?
    /// Rows a workload adds to the comparison table instead of its own (W22:
    /// one per subscription shape).
    var comparisonRows: [[String]] = []

    init(
        nanosecondsPerOp: Double, checksumMatches: Bool, latency: Latency? = nil, drops: Drops? = nil
    ) {
        self.nanosecondsPerOp = nanosecondsPerOp
        self.checksumMatches = checksumMatches
        self.latency = latency
        self.drops = drops
    }
}

/// Values a run sent through a boundary that may drop, and those it dropped.
struct Drops: Sendable {
    var sent: Int
    var dropped: Int
}

/// A shared accumulator: every sink adds into `v` (`&+=`), as the workload
/// definitions require.
final class Box: @unchecked Sendable {
    var v = 0
}

/// Nanoseconds on CLOCK_MONOTONIC.
@inline(never)
func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
}

/// Times `body` and returns nanoseconds per operation. In the allocation
/// pass (a separate process), also counts the allocations `body` makes.
@inline(__always)
func timed(operations: Int, _ body: () -> Void) -> Double {
    if let counter = allocationCounter {
        let before = counter()
        body()
        lastAllocationsPerOp = Double(counter() - before) / Double(operations)
        return .nan
    }
    let start = monotonicNanoseconds()
    body()
    let end = monotonicNanoseconds()
    return Double(end - start) / Double(operations)
}

/// Keeps a second thread alive for the whole run: with only one thread,
/// glibc takes single-threaded fast paths (pthread mutexes cost a third)
/// that a real service never sees.
func startBackgroundThread() {
    var thread = pthread_t()
    pthread_create(
        &thread, nil,
        { _ in
            while true { sleep(3600) }
        }, nil)
    pthread_detach(thread)
}

/// Median and range of a set of samples.
struct Summary: Sendable {
    var median: Double
    var min: Double
    var max: Double

    init(_ samples: [Double]) {
        let sorted = samples.sorted()
        median =
            sorted.count % 2 == 1
            ? sorted[sorted.count / 2]
            : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
        min = sorted.first ?? .nan
        max = sorted.last ?? .nan
    }
}

/// Writes progress to standard error (standard output carries the table).
func progress(_ message: String) {
    var line = message + "\n"
    line.withUTF8 { bytes in
        var offset = 0
        while offset < bytes.count {
            let written = write(2, bytes.baseAddress! + offset, bytes.count - offset)
            if written <= 0 { break }
            offset += written
        }
    }
}
