// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Dispatch
import Foundation
import Glibc
import Histogram
import SignalKit

// W14 overload: the producer is ten times faster than the consumer. This
// thread sends UInt64s (0, 1, …) into a `ValuePipe`, one every µs (paced on
// the clock), for `milliseconds`; the subscriber receives them on a serial
// queue through `deliverOn(queue, buffer: policy)` and busy-waits 10 µs per
// value. One run per policy, one after another, the bounded ones first
// (droppingOldest, droppingNewest and failing with `overloadCapacity`,
// latest), then `unbounded` (SwiftSignalKit's one Dispatch block per value,
// for comparison; its queue grows by ~0.9 M values a second, so it runs for
// the same duration only). Per policy:
// * peak RSS growth: resident set size sampled from /proc/self/statm every
//   10 ms by the producer, and /proc/self/status VmHWM after resetting it
//   (`echo 5 > /proc/self/clear_refs`, where the kernel allows it) at the
//   start of the run; growth = the higher peak − the RSS at the start (after
//   `malloc_trim`, so that what an earlier run freed is not reused unseen);
//   target: ≤ capacity × value size + 16 MB for every bounded policy;
// * values sent, delivered, dropped (SignalKit's own counter,
//   `SignalKitDebug.bufferStatistics()`) and not taken (the rest: waiting
//   when the run was disposed, or — `failing` — sent after the overflow ended
//   the subscription, into a pipe with no subscriber);
// * the producer's cost per send (`putNext`), timed around every send with
//   the clock's own cost (calibrated, median of back-to-back reads)
//   subtracted: mean, p50 and p99.
// The row's figure (ns/send) is the worst mean send cost of the bounded
// policies that stay subscribed (droppingOldest, droppingNewest, latest):
// the fast path under overload. `failing`'s sends after its overflow go to a
// pipe with no subscriber and measure nothing of the hop.

/// W14's buffer limit.
let overloadCapacity = 4_096
/// The producer sends one value per `overloadSendInterval` ns …
let overloadSendInterval: UInt64 = 1_000
/// … and the consumer busy-waits this long per value.
let overloadConsumerWork: UInt64 = 10_000
/// How often the producer samples the resident set size.
let overloadSampleInterval: UInt64 = 10_000_000

/// The error of the `failing` policy.
struct OverloadError: Error, Sendable {}

/// W14's consumer: busy-waits per value, checks the order.
final class OverloadConsumer: @unchecked Sendable {
    // `@unchecked Sendable`: written only on the receiving queue, read after
    // a `sync` on it.
    var delivered = 0
    var ordered = true
    var failed = false
    private var previous: UInt64?

    @inline(never)
    func receive(_ value: UInt64) {
        if let previous, value <= previous { ordered = false }
        previous = value
        delivered += 1
        let start = monotonicNanoseconds()
        while monotonicNanoseconds() &- start < overloadConsumerWork {}
    }
}

/// The resident set size, in bytes (/proc/self/statm), or 0 if unreadable.
func residentBytes() -> Int {
    let descriptor = open("/proc/self/statm", O_RDONLY)
    guard descriptor >= 0 else { return 0 }
    defer { close(descriptor) }
    var buffer = [UInt8](repeating: 0, count: 128)
    let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
    guard count > 0 else { return 0 }
    let fields = buffer[..<count].split(separator: UInt8(ascii: " "))
    guard fields.count > 1, let pages = Int(String(decoding: fields[1], as: UTF8.self)) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// glibc's `malloc_trim(0)` (not in the Glibc module: looked up by name):
/// returns the heap's free memory to the kernel.
func releaseFreeMemory() {
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return }
    _ = unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)(0)
}

/// VmHWM from /proc/self/status, in bytes.
func peakResidentBytes() -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
    guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) else { return nil }
    let kilobytes = line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
    return kilobytes.map { $0 * 1024 }
}

/// Resets VmHWM to the current RSS; false where the kernel does not allow it.
func resetPeakResident() -> Bool {
    let descriptor = open("/proc/self/clear_refs", O_WRONLY)
    guard descriptor >= 0 else { return false }
    defer { close(descriptor) }
    return write(descriptor, "5", 1) == 1
}

/// The cost of one `monotonicNanoseconds()` read: the median of 10,001
/// back-to-back differences.
func clockReadCost() -> UInt64 {
    var differences: [UInt64] = []
    differences.reserveCapacity(10_001)
    for _ in 0..<10_001 {
        let first = monotonicNanoseconds()
        let second = monotonicNanoseconds()
        differences.append(second &- first)
    }
    differences.sort()
    return differences[differences.count / 2]
}

/// What one policy's run measured.
struct OverloadOutcome {
    let policy: String
    /// The buffer limit, nil for unbounded.
    let capacity: Int?
    let sent: Int
    let delivered: Int
    let dropped: Int
    let baselineBytes: Int
    let sampledGrowthBytes: Int
    /// nil where VmHWM could not be reset.
    let highWaterGrowthBytes: Int?
    let sendMean: Double
    let sendP50: Double
    let sendP99: Double
    let ordered: Bool
    let failed: Bool

    var growthBytes: Int { max(sampledGrowthBytes, highWaterGrowthBytes ?? 0) }
    /// capacity × value size + 16 MB; nil for unbounded.
    var boundBytes: Int? { capacity.map { $0 * MemoryLayout<UInt64>.size + (16 << 20) } }
    var withinBound: Bool? { boundBytes.map { growthBytes <= $0 } }
    var notTaken: Int { sent - delivered - dropped }
}

@inline(never)
func runOverload(
    policy: String, buffer: SignalBuffer<OverloadError>, milliseconds: Int, clockCost: UInt64
) -> OverloadOutcome {
    let name = "w14.\(policy)"
    let pipe = ValuePipe<UInt64>()
    let queue = Queue(name: name)
    let consumer = OverloadConsumer()
    var histogram = Histogram<UInt64>(highestTrackableValue: 60_000_000_000, numberOfSignificantValueDigits: .three)
    let droppedBefore = signalKitDrops(named: name)
    releaseFreeMemory()
    let baseline = residentBytes()
    let highWaterReset = resetPeakResident()

    let handle =
        (pipe.signal()
        |> castError(OverloadError.self)
        |> named(name)
        |> deliverOn(queue, buffer: buffer))
        .start(next: { consumer.receive($0) }, error: { _ in consumer.failed = true })

    var peak = baseline
    var sent = 0
    var sendTotal: UInt64 = 0
    let start = monotonicNanoseconds()
    let end = start &+ UInt64(milliseconds) &* 1_000_000
    var nextSample = start &+ overloadSampleInterval
    var now = start
    while true {
        let due = start &+ UInt64(sent) &* overloadSendInterval
        while now < due { now = monotonicNanoseconds() }
        if now >= end { break }
        pipe.putNext(UInt64(sent))
        let after = monotonicNanoseconds()
        let cost = after &- now
        sendTotal &+= cost
        _ = histogram.record(cost)
        sent += 1
        now = after
        if now >= nextSample {
            peak = max(peak, residentBytes())
            now = monotonicNanoseconds()
            nextSample = now &+ overloadSampleInterval
        }
    }
    peak = max(peak, residentBytes())
    let highWater = highWaterReset ? peakResidentBytes() : nil
    let dropped = signalKitDrops(named: name) - droppedBefore

    handle.dispose()
    queue.queue.sync {}
    let delivered = queue.queue.sync { consumer.delivered }

    let calibration = Double(clockCost)
    return OverloadOutcome(
        policy: buffer.description,
        capacity: buffer.limit,
        sent: sent,
        delivered: delivered,
        dropped: dropped,
        baselineBytes: baseline,
        sampledGrowthBytes: peak - baseline,
        highWaterGrowthBytes: highWater.map { $0 - baseline },
        sendMean: max(0, Double(sendTotal) / Double(max(sent, 1)) - calibration),
        sendP50: max(0, Double(histogram.valueAtPercentile(50)) - calibration),
        sendP99: max(0, Double(histogram.valueAtPercentile(99)) - calibration),
        ordered: consumer.ordered,
        failed: consumer.failed
    )
}

@inline(never)
func runW14(_ peer: Peer, _ milliseconds: Int) -> RunResult {
    precondition(peer == .signalkit, "W14 measures SignalKit's buffer policies only")
    let clockCost = clockReadCost()
    let policies: [(String, SignalBuffer<OverloadError>)] = [
        ("droppingOldest", .droppingOldest(beyond: overloadCapacity)),
        ("droppingNewest", .droppingNewest(beyond: overloadCapacity)),
        ("latest", .latest),
        ("failing", .failing(beyond: overloadCapacity, with: OverloadError())),
        ("unbounded", .unbounded),
    ]
    var outcomes: [OverloadOutcome] = []
    for (name, buffer) in policies {
        progress("W14: \(buffer) for \(milliseconds) ms")
        outcomes.append(runOverload(policy: name, buffer: buffer, milliseconds: milliseconds, clockCost: clockCost))
    }

    func megabytes(_ bytes: Int) -> String { format(Double(bytes) / 1_048_576) }
    var table: [[String]] = [
        [
            "policy", "sent", "delivered", "dropped", "not taken", "RSS at start (MB)", "peak growth sampled (MB)",
            "peak growth VmHWM (MB)", "bound (MB)", "within", "send mean (ns)", "send p50 (ns)", "send p99 (ns)",
        ]
    ]
    var details: [(label: String, value: Double)] = [
        ("clock read (ns, subtracted from send costs)", Double(clockCost)),
        ("milliseconds per policy", Double(milliseconds)),
    ]
    for outcome in outcomes {
        table.append([
            outcome.policy,
            "\(outcome.sent)",
            "\(outcome.delivered)",
            "\(outcome.dropped)",
            "\(outcome.notTaken)",
            megabytes(outcome.baselineBytes),
            megabytes(outcome.sampledGrowthBytes),
            outcome.highWaterGrowthBytes.map(megabytes) ?? "n/a",
            outcome.boundBytes.map(megabytes) ?? "–",
            outcome.withinBound.map { $0 ? "yes" : "NO" } ?? "report",
            format(outcome.sendMean),
            format(outcome.sendP50),
            format(outcome.sendP99),
        ])
        let key = outcome.policy
        details += [
            ("\(key): sent", Double(outcome.sent)),
            ("\(key): delivered", Double(outcome.delivered)),
            ("\(key): dropped", Double(outcome.dropped)),
            ("\(key): not taken", Double(outcome.notTaken)),
            ("\(key): peak RSS growth (MB)", Double(outcome.growthBytes) / 1_048_576),
            ("\(key): send mean (ns)", outcome.sendMean),
            ("\(key): send p99 (ns)", outcome.sendP99),
        ]
        if let bound = outcome.boundBytes { details.append(("\(key): bound (MB)", Double(bound) / 1_048_576)) }
    }

    let bounded = outcomes.filter { $0.capacity != nil }
    let fastPath = bounded.filter { !$0.policy.hasPrefix("failing") }.map(\.sendMean).max() ?? .nan
    let ok =
        outcomes.allSatisfy { $0.ordered && $0.dropped >= 0 && $0.notTaken >= 0 }
        && (outcomes.first { $0.policy.hasPrefix("failing") }.map(\.failed) ?? false)
    var result = RunResult(nanosecondsPerOp: fastPath, checksumMatches: ok)
    result.details = details
    result.detailTable = table
    result.targetMet = bounded.allSatisfy { $0.withinBound == true }
    return result
}
