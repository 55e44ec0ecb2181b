// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import NIOCore
import Synchronization

/// Server-side latency, recorded the same way for both engines so the load
/// client's tick-to-client figure can be split by stage.
///
/// Each stage is a fixed-bucket histogram (10 µs buckets up to 1 s, then one
/// overflow bucket), all behind one `Mutex`: one lock and one increment per
/// sample. `GET /latency` reports p50 / p99 / p99.9 / max and the count of
/// each stage; `POST /latency/reset` empties them (the load client does both
/// around its measuring window).
public final class LatencyRecorder: Sendable {
    /// Where in an update's way out a sample is taken.
    public enum Stage: Int, CaseIterable, Sendable {
        /// Tick age when the rate limiter sends the update (SignalKit: out of
        /// `throttle`, before `deliverOn`; AsyncStream: when the sender task
        /// takes the state after its sleep).
        case emitted
        /// Tick age right before `outbound.write`.
        case beforeWrite
        /// Tick age when `outbound.write` returns (the frame is queued to
        /// the channel, not necessarily on the socket).
        case afterWrite
        /// Time from `emitted` to `beforeWrite` of the same update
        /// (SignalKit: `deliverOn`, the `values()` buffer and the resumption
        /// of the writing task; AsyncStream: nothing, the same task).
        case handOff
        /// How late a rate-limit window ended: the time between two updates
        /// of one client minus the rate limit (SignalKit: the throttle's
        /// event-loop timer; AsyncStream: the send plus `clock.sleep`).
        case windowLate
        /// How late a 1 ms timer fires on the connections' event loops (how
        /// long a loop was busy; the same probe for both engines).
        case loopLag
        /// Not a time: per update, how many updates (of all clients) the
        /// service emitted in the same millisecond (10 per ms when spread
        /// evenly at 10,000/s; more when the clients' windows bunch up).
        case burst

        var name: String {
            switch self {
            case .emitted: "emitted"
            case .beforeWrite: "before_write"
            case .afterWrite: "after_write"
            case .handOff: "hand_off"
            case .windowLate: "window_late"
            case .loopLag: "loop_lag"
            case .burst: "burst"
            }
        }
    }

    static let bucketNanoseconds: UInt64 = 10_000
    static let buckets = 100_000  // 1 s; index `buckets` is the overflow

    private struct Histogram {
        var counts = [UInt32](repeating: 0, count: LatencyRecorder.buckets + 1)
        var total = 0

        mutating func add(bucket: Int, weight: Int = 1) {
            counts[min(bucket, LatencyRecorder.buckets)] &+= UInt32(weight)
            total += weight
        }

        /// The bucket holding the `fraction` quantile (nil if empty).
        func quantile(_ fraction: Double) -> Int? {
            guard total > 0 else { return nil }
            let rank = min(total - 1, Int(fraction * Double(total)))
            var seen = 0
            for (index, count) in counts.enumerated() {
                seen += Int(count)
                if seen > rank { return index }
            }
            return nil
        }
    }

    private struct State {
        var stages = Stage.allCases.map { _ in Histogram() }
        /// The millisecond of the latest emission, and the emissions in it.
        var burstMillisecond: UInt64 = 0
        var burstCount = 0
    }

    private let state = Mutex(State())

    public init() {}

    /// Records `nanoseconds` (negative clamps to 0) for `stage`.
    func record(_ stage: Stage, nanoseconds: Int64) {
        let bucket = Int(UInt64(max(nanoseconds, 0)) / Self.bucketNanoseconds)
        state.withLock { $0.stages[stage.rawValue].add(bucket: bucket) }
    }

    /// Counts an update emitted at `time` (CLOCK_MONOTONIC ns) for `burst`.
    func countEmission(at time: UInt64) {
        let millisecond = time / 1_000_000
        state.withLock { state in
            if millisecond == state.burstMillisecond {
                state.burstCount += 1
                return
            }
            if state.burstCount > 0 {
                state.stages[Stage.burst.rawValue].add(bucket: state.burstCount, weight: state.burstCount)
            }
            state.burstMillisecond = millisecond
            state.burstCount = 1
        }
    }

    /// Records the age of `ticks`' newest tick now (CLOCK_MONOTONIC) for
    /// `stage`; returns now and that tick's timestamp.
    @discardableResult
    func recordAge(_ stage: Stage, of ticks: [Tick]) -> (now: UInt64, newest: UInt64) {
        let now = monotonicNanoseconds()
        let newest = ticks.reduce(0) { max($0, $1.timestamp) }
        record(stage, nanoseconds: Int64(bitPattern: now &- newest))
        return (now, newest)
    }

    public func reset() {
        state.withLock { $0 = State() }
    }

    /// One JSON object: per stage, `p50`, `p99`, `p99.9`, `max` (µs;
    /// `burst` in updates) and `count`.
    public func report() -> String {
        let entries = Stage.allCases.map { stage -> String in
            let (p50, p99, p999, max, count) = state.withLock { state in
                let histogram = state.stages[stage.rawValue]
                return (
                    histogram.quantile(0.5), histogram.quantile(0.99), histogram.quantile(0.999), histogram.quantile(1),
                    histogram.total
                )
            }
            // A time bucket reports its upper edge in µs; `burst` its count.
            func json(_ bucket: Int?) -> String {
                guard let bucket else { return "null" }
                return String(stage == .burst ? bucket : (bucket + 1) * Int(Self.bucketNanoseconds / 1_000))
            }
            return "\"\(stage.name)\": {\"p50\": \(json(p50)), \"p99\": \(json(p99)), \"p99.9\": \(json(p999)), "
                + "\"max\": \(json(max)), \"count\": \(count)}"
        }
        return "{" + entries.joined(separator: ", ") + "}"
    }
}

/// One client's samples between stages: when its last update was emitted
/// (for `windowLate`) and which update that was (for `handOff`).
final class ClientLatencyProbe: Sendable {
    private struct State {
        var lastEmitted: UInt64 = 0
        var lastNewest: UInt64 = 0
    }

    let recorder: LatencyRecorder
    let rateLimit: Int64
    private let state = Mutex(State())

    init(recorder: LatencyRecorder, rateLimit: Duration) {
        self.recorder = recorder
        let (seconds, attoseconds) = rateLimit.components
        self.rateLimit = seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    /// The rate limiter sent `ticks`.
    func emitted(_ ticks: [Tick]) {
        let (time, newest) = recorder.recordAge(.emitted, of: ticks)
        recorder.countEmission(at: time)
        let previous = state.withLock { state -> UInt64 in
            defer { state = State(lastEmitted: time, lastNewest: newest) }
            return state.lastEmitted
        }
        if previous != 0 {
            recorder.record(.windowLate, nanoseconds: Int64(bitPattern: time &- previous) - rateLimit)
        }
    }

    /// `ticks` is about to be written.
    func willWrite(_ ticks: [Tick]) {
        let (time, newest) = recorder.recordAge(.beforeWrite, of: ticks)
        let emittedAt = state.withLock { state -> UInt64? in
            state.lastNewest == newest ? state.lastEmitted : nil
        }
        if let emittedAt {
            recorder.record(.handOff, nanoseconds: Int64(bitPattern: time &- emittedAt))
        }
    }

    /// The write of `ticks` returned.
    func written(_ ticks: [Tick]) {
        recorder.recordAge(.afterWrite, of: ticks)
    }
}

/// Measures how late a 1 ms timer fires on each event loop it is started on
/// (`LatencyRecorder.Stage.loopLag`), once per loop, for the life of the
/// process.
final class EventLoopLagProbe: Sendable {
    let recorder: LatencyRecorder
    private let started = Mutex(Set<ObjectIdentifier>())

    init(recorder: LatencyRecorder) {
        self.recorder = recorder
    }

    /// Starts probing `eventLoop` unless it already is.
    func start(on eventLoop: any EventLoop) {
        guard started.withLock({ $0.insert(ObjectIdentifier(eventLoop)).inserted }) else { return }
        tick(on: eventLoop, due: monotonicNanoseconds() + 1_000_000)
    }

    private func tick(on eventLoop: any EventLoop, due: UInt64) {
        eventLoop.scheduleTask(in: .milliseconds(1)) { [self] in
            let now = monotonicNanoseconds()
            recorder.record(.loopLag, nanoseconds: Int64(bitPattern: now &- due))
            tick(on: eventLoop, due: now + 1_000_000)
        }
    }
}
