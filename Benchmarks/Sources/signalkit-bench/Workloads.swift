// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// The workload registry: ids, units, sizes and SignalKit's targets, the
// definition of each workload. Workload definitions are fixed: change one only
// by adding a new one, so that figures stay comparable over time.

/// SignalKit's target on a workload.
struct Target: Sendable {
    /// SignalKit's median must be at most this (in the workload's unit).
    var nanoseconds: Double?
    /// SignalKit's allocations per operation must be at most this.
    var allocations: Double?
    /// The in-run check, as text (ratios against the floor / peers).
    var check: String
    /// Report-only workloads have no pass/fail.
    var reportOnly = false
}

struct Workload: Sendable {
    let id: String
    let title: String
    let unit: String
    let fullSize: Int
    let quickSize: Int
    let peers: [Peer]
    let target: Target
    /// Runs once, with no warm-up and no repetitions, and is left out of the
    /// allocation pass: a long wall-clock workload that measures memory (W14).
    var singleRun = false
    let run: @Sendable (Peer, Int) -> RunResult
}

extension Workload {
    /// The same workload with a single peer (profiling).
    func restricted(to peer: Peer) -> Workload {
        Workload(
            id: id, title: title, unit: unit, fullSize: fullSize, quickSize: quickSize,
            peers: peers.filter { $0 == peer }, target: target, singleRun: singleRun, run: run
        )
    }
}

let allWorkloads: [Workload] = [
    Workload(
        id: "W1", title: "subscribe+dispose cold 1-value signal", unit: "ns/cycle",
        fullSize: 200_000, quickSize: 50_000, peers: Peer.standard,
        target: Target(nanoseconds: 150, allocations: 3, check: "<= 6x floor"),
        run: { runW1($0, $1) }
    ),
    Workload(
        id: "W2", title: "map→filter→map→sum, synchronous source", unit: "ns/event",
        fullSize: 1_000_000, quickSize: 200_000, peers: Peer.withAsync,
        target: Target(nanoseconds: 12, allocations: 0, check: ">= 12x faster than OpenCombine"),
        run: { runW2($0, $1) }
    ),
    Workload(
        id: "W3", title: "hot fan-out, 100 subscribers", unit: "ns/delivery",
        fullSize: 100_000, quickSize: 20_000, peers: Peer.withAsync,
        target: Target(nanoseconds: 18, allocations: 0, check: "<= 1.5x floor"),
        run: { runW3($0, $1) }
    ),
    Workload(
        id: "W4", title: "churn add+dispose with 1,000 subscribers", unit: "ns/pair",
        fullSize: 100_000, quickSize: 20_000, peers: Peer.standard,
        target: Target(nanoseconds: 200, allocations: 3, check: "<= 3x floor; flat from 10 to 10,000 (±25%)"),
        run: { runW4($0, $1) }
    ),
    Workload(
        id: "W5", title: "combineLatest of 2 hot sources", unit: "ns/send",
        fullSize: 1_000_000, quickSize: 200_000, peers: [.signalkit, .floor, .asyncStream],
        target: Target(nanoseconds: 50, allocations: 0, check: "<= 50 ns absolute (OpenCombine 0.14 has no combineLatest)"),
        run: { runW5($0, $1) }
    ),
    Workload(
        id: "W6", title: "switch-latest, 1-value cold inner", unit: "ns/outer",
        fullSize: 100_000, quickSize: 20_000, peers: Peer.withAsync,
        target: Target(nanoseconds: 200, allocations: 3, check: "<= 8x floor"),
        run: { runW6($0, $1) }
    ),
    Workload(
        id: "W7", title: "serial-disposable swap", unit: "ns/set",
        fullSize: 1_000_000, quickSize: 200_000, peers: Peer.standard,
        target: Target(nanoseconds: 40, allocations: 1, check: "<= 1.2x floor"),
        run: { runW7($0, $1) }
    ),
    Workload(
        id: "W8", title: "2 threads x sends, 1 subscriber (wall)", unit: "ns/value",
        fullSize: 500_000, quickSize: 100_000, peers: Peer.standard,
        target: Target(nanoseconds: nil, allocations: 0, check: "report only: <= 2x serialised floor", reportOnly: true),
        run: { runW8($0, $1) }
    ),
    Workload(
        id: "W9", title: "queue hop (throughput; latency at 2 µs pacing)", unit: "ns/event",
        fullSize: 100_000, quickSize: 20_000, peers: Peer.withAsync,
        target: Target(nanoseconds: nil, allocations: 1, check: "throughput <= 1.3x floor; p50 <= floor + 0.3 µs"),
        run: { runW9($0, $1) }
    ),
    Workload(
        id: "W10", title: "delivery into an actor (start(isolation:))", unit: "ns/value",
        fullSize: 200_000, quickSize: 50_000, peers: [.signalkit, .asyncStream],
        target: Target(nanoseconds: nil, allocations: nil, check: "report only: vs AsyncStream + for await", reportOnly: true),
        run: { runW10($0, $1) }
    ),
    Workload(
        id: "W12", title: "bounded hop, droppingOldest(\(boundedHopCapacity))", unit: "ns/value",
        fullSize: 500_000, quickSize: 100_000, peers: [.signalkit, .opencombine, .floor, .asyncStream, .spscRing],
        target: Target(nanoseconds: 60, allocations: 0, check: ">= 15x faster than the q.async floor; no value dropped"),
        run: { runW12($0, $1) }
    ),
    Workload(
        id: "W13", title: "queue hop on a dedicated thread (spinThenPark 50 µs)", unit: "ns/event",
        fullSize: 100_000, quickSize: 20_000, peers: [.signalkit, .floor],
        target: Target(nanoseconds: nil, allocations: nil, check: "p50 <= 1 µs; p99 <= the q.async floor's p99"),
        run: { runW13($0, $1) }
    ),
    Workload(
        id: "W15", title: "dedicated thread: wait strategies (once each)", unit: "ns/event",
        fullSize: 100_000, quickSize: 20_000, peers: [.signalkit],
        target: Target(
            nanoseconds: nil, allocations: nil, check: "report only: latency against CPU burned", reportOnly: true),
        singleRun: true,
        run: { runW15($0, $1) }
    ),
    Workload(
        // The size is the duration of each policy's run, in milliseconds.
        id: "W14", title: "overload: producer 10x faster than consumer", unit: "ns/send",
        fullSize: 2_000, quickSize: 500, peers: [.signalkit],
        target: Target(
            nanoseconds: nil, allocations: nil,
            check: "peak RSS growth <= capacity x value size + 16 MB per bounded policy"),
        singleRun: true,
        run: { runW14($0, $1) }
    ),
    Workload(
        id: "W16", title: "queue hop, context propagation installed (floor: none installed)", unit: "ns/event",
        fullSize: 100_000, quickSize: 20_000, peers: [.signalkit, .floor],
        target: Target(
            nanoseconds: nil, allocations: nil, check: "report only: the cost of capturing and restoring a context",
            reportOnly: true),
        run: { runW16($0, $1) }
    ),
    Workload(
        id: "W17", title: "W2's chain with 4 named stages, inspection on (floor: off)", unit: "ns/event",
        fullSize: 1_000_000, quickSize: 200_000, peers: [.signalkit, .floor],
        target: Target(
            nanoseconds: nil, allocations: 0, check: "report only: the cost of counting events (off: W2's figure)",
            reportOnly: true),
        run: { runW17($0, $1) }
    ),
    Workload(
        id: "W18", title: "W1's cycle through a named stage, inspection on (floor: off)", unit: "ns/cycle",
        fullSize: 1_000_000, quickSize: 200_000, peers: [.signalkit, .floor],
        target: Target(
            nanoseconds: nil, allocations: nil, check: "report only: the cost of an inspected subscription",
            reportOnly: true),
        run: { runW18($0, $1) }
    ),
    Workload(
        // The size is the number of live subscriptions per shape.
        id: "W22", title: "bytes per live subscription (malloc's usable bytes)", unit: "B/sub",
        fullSize: 100_000, quickSize: 20_000, peers: [.signalkit],
        target: Target(
            nanoseconds: nil, allocations: nil,
            check: "<= SwiftSignalKit v2's bytes; <= 0.75x OpenCombine's where it has the shape"),
        singleRun: true,
        run: { _, size in runW22(size) }
    ),
    Workload(
        // The size is the number of plain subscribers; the chains are a tenth.
        id: "W23", title: "a million live subscriptions on one pipe (and 100,000 five-map chains)", unit: "ns/delivery",
        fullSize: 1_000_000, quickSize: 200_000, peers: [.signalkit],
        target: Target(
            nanoseconds: nil, allocations: nil,
            check: "ns/delivery within 25% of W3's at 100 subscribers; live counters back to 0"),
        singleRun: true,
        run: { _, size in runW23(size) }
    ),
].sorted { $0.id.localizedStandardCompare($1.id) }

extension String {
    /// "W2" < "W10".
    func localizedStandardCompare(_ other: String) -> Bool {
        let lhs = Int(dropFirst()) ?? 0
        let rhs = Int(other.dropFirst()) ?? 0
        return lhs < rhs
    }
}
