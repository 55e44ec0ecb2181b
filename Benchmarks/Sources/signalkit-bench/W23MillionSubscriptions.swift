// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Glibc
import SignalKit

// W23 a million live subscriptions (SignalKit only, runs once):
// * one `ValuePipe<Int>` with `size` subscribers (1,000,000), each
//   `pipe.signal().start(next:)` into a `Box`;
// * 100,000 five-stage chains (`size / 10`) on one pipe:
//   `pipe.signal() |> map |> map |> map |> map |> map` then `start(next:)`.
// For each: the resident set before, after subscribing and after disposing
// (`/proc/self/statm`, after `malloc_trim`; less the holder array's own
// 16 bytes per handle), the time to subscribe them all and to dispose them all,
// and the cost per delivery with them standing, against the same shape with
// 100 subscribers on a pipe of its own (W3's fan-out, for the plain ones)
// and against a floor of as many plain closures, each adding into an object
// of its own allocated in turn (the memory a delivery has to reach),
// interleaved (3 repetitions each, medians).
// Live-object tracking (`SignalKitDebug.isTrackingLiveObjects`, one relaxed
// atomic add per subscription made or destroyed) is on for the whole
// workload; after disposal the live subscriptions, bags and retired bag
// items must be back where they started.

/// Sends `sends` values into `pipe`; ns per delivery for `subscribers`.
@inline(never)
func timeDeliveries(_ pipe: ValuePipe<Int>, sends: Int, subscribers: Int) -> Double {
    timed(operations: sends * subscribers) {
        for i in 0..<sends { pipe.putNext(i) }
    }
}

/// The floor: `sends` values into every closure of `sinks`; ns per delivery.
@inline(never)
func timeFloorDeliveries(_ sinks: [(Int) -> Void], sends: Int) -> Double {
    timed(operations: sends * sinks.count) {
        for i in 0..<sends {
            for sink in sinks { sink(i) }
        }
    }
}

/// What one standing population measured.
struct StandingFigures {
    var subscribeSeconds = 0.0
    var disposeSeconds = 0.0
    var rssPerSubscription = 0.0
    var rssAfterDispose = 0.0
    var deliveryNanoseconds = 0.0
    var referenceNanoseconds = 0.0
    var floorNanoseconds = 0.0
    var checksumOK = true
    var countersBack = true
    var liveAtPeak = 0
}

@inline(never)
func measureStanding(
    count: Int, sendsPerRepetition: Int, stages: Int
) -> StandingFigures {
    var figures = StandingFigures()
    let box = Box()
    let pipe = ValuePipe<Int>()
    func subscribe(_ pipe: ValuePipe<Int>, _ box: Box) -> any Disposable {
        if stages == 0 { return pipe.signal().start(next: { box.v &+= $0 }) }
        return
            (pipe.signal() |> map { $0 &+ 1 } |> map { $0 &+ 1 } |> map { $0 &+ 1 } |> map { $0 &+ 1 }
            |> map { $0 &+ 1 }).start(next: { box.v &+= $0 })
    }
    // The reference: the same shape, 100 subscribers on a pipe of its own.
    let referenceBox = Box()
    let reference = ValuePipe<Int>()
    var referenceHandles: [any Disposable] = []
    for _ in 0..<100 { referenceHandles.append(subscribe(reference, referenceBox)) }
    var handles: [any Disposable] = []
    handles.reserveCapacity(count)
    releaseFreeMemory()
    let rssBefore = residentBytes()
    let subscribeStart = monotonicNanoseconds()
    for _ in 0..<count { handles.append(subscribe(pipe, box)) }
    figures.subscribeSeconds = Double(monotonicNanoseconds() - subscribeStart) / 1e9
    // Less the holder's own pages (reserved before, touched while appending).
    let holderBytes = count * MemoryLayout<any Disposable>.stride
    figures.rssPerSubscription = Double(residentBytes() - rssBefore - holderBytes) / Double(count)
    figures.liveAtPeak = SignalKitDebug.liveSubscriptions
    // Interleaved: the 100-subscriber reference, this population, the floor.
    let referenceSends = max(1, sendsPerRepetition * count / 100)
    // The floor: as many closures, each with an object of its own (gone
    // before the resident set is read again).
    var sent = 0
    do {
        let floorSinks: [(Int) -> Void] = (0..<count).map { _ in
            let own = Box()
            return { own.v &+= $0 }
        }
        var mine: [Double] = []
        var theirs: [Double] = []
        var floors: [Double] = []
        for _ in 0..<3 {
            theirs.append(timeDeliveries(reference, sends: referenceSends, subscribers: 100))
            mine.append(timeDeliveries(pipe, sends: sendsPerRepetition, subscribers: count))
            floors.append(timeFloorDeliveries(floorSinks, sends: sendsPerRepetition))
            sent += sendsPerRepetition
        }
        figures.deliveryNanoseconds = Summary(mine).median
        figures.referenceNanoseconds = Summary(theirs).median
        figures.floorNanoseconds = Summary(floors).median
    }
    // Sum over the sends of (i + stages) per subscriber.
    let perSubscriber = (0..<sendsPerRepetition).reduce(0, +) * 3 + stages * sent
    figures.checksumOK = box.v == perSubscriber &* count
    let disposeStart = monotonicNanoseconds()
    for handle in handles { handle.dispose() }
    handles = []
    figures.disposeSeconds = Double(monotonicNanoseconds() - disposeStart) / 1e9
    for handle in referenceHandles { handle.dispose() }
    referenceHandles = []
    releaseFreeMemory()
    figures.rssAfterDispose = Double(residentBytes() - rssBefore)
    return figures
}

@inline(never)
func runW23(_ count: Int) -> RunResult {
    let wasTracking = SignalKitDebug.isTrackingLiveObjects
    SignalKitDebug.isTrackingLiveObjects = true
    defer { SignalKitDebug.isTrackingLiveObjects = wasTracking }
    progress("W23: \(count) subscribers on one pipe…")
    // The counters before, and after each population and its pipes are gone.
    let baseline = (SignalKitDebug.liveSubscriptions, SignalKitDebug.liveBags, SignalKitDebug.retiredBagItems)
    func countersBack() -> Bool {
        SignalKitDebug.liveSubscriptions == baseline.0 && SignalKitDebug.liveBags == baseline.1
            && SignalKitDebug.retiredBagItems == baseline.2
    }
    var flat = measureStanding(count: count, sendsPerRepetition: 10, stages: 0)
    flat.countersBack = countersBack()
    progress("W23: \(count / 10) five-stage chains on one pipe…")
    var chains = measureStanding(count: count / 10, sendsPerRepetition: 10, stages: 5)
    chains.countersBack = countersBack()
    let liveBags = SignalKitDebug.liveBags
    let liveSubscriptions = SignalKitDebug.liveSubscriptions
    var result = RunResult(
        nanosecondsPerOp: flat.deliveryNanoseconds, checksumMatches: flat.checksumOK && chains.checksumOK)
    func row(_ name: String, _ figures: StandingFigures, _ count: Int) -> [String] {
        [
            name, format(Double(count)), format(figures.subscribeSeconds * 1e3),
            format(figures.subscribeSeconds * 1e9 / Double(count)), format(figures.disposeSeconds * 1e3),
            format(figures.disposeSeconds * 1e9 / Double(count)), format(figures.rssPerSubscription),
            format(figures.rssAfterDispose / 1_048_576), format(figures.deliveryNanoseconds),
            format(figures.referenceNanoseconds),
            format((figures.deliveryNanoseconds / figures.referenceNanoseconds - 1) * 100) + "%",
            format(figures.floorNanoseconds),
            figures.countersBack ? "yes (\(figures.liveAtPeak) at peak)" : "NO",
        ]
    }
    result.detailTable = [
        [
            "population", "subscriptions", "subscribe (ms)", "ns/sub", "dispose (ms)", "ns/dispose", "RSS B/sub",
            "RSS kept after dispose, trimmed (MB)", "ns/delivery", "same shape, 100 subs", "vs 100", "floor, as many closures",
            "live counters back to 0",
        ],
        row("one ValuePipe, plain subscribers", flat, count),
        row("one ValuePipe, 5-map chains", chains, count / 10),
    ]
    result.details = [
        ("flat subscribe ns", flat.subscribeSeconds * 1e9 / Double(count)),
        ("flat dispose ns", flat.disposeSeconds * 1e9 / Double(count)),
        ("flat RSS bytes per subscription", flat.rssPerSubscription),
        ("flat ns per delivery", flat.deliveryNanoseconds),
        ("flat W3 reference ns per delivery", flat.referenceNanoseconds),
        ("flat floor ns per delivery", flat.floorNanoseconds),
        ("chains subscribe ns", chains.subscribeSeconds * 1e9 / Double(count / 10)),
        ("chains dispose ns", chains.disposeSeconds * 1e9 / Double(count / 10)),
        ("chains RSS bytes per subscription", chains.rssPerSubscription),
        ("chains ns per delivery", chains.deliveryNanoseconds),
        ("chains 100-chain reference ns per delivery", chains.referenceNanoseconds),
        ("chains floor ns per delivery", chains.floorNanoseconds),
        ("live subscriptions after", Double(liveSubscriptions)),
        ("live bags after", Double(liveBags)),
    ]
    result.targetMet =
        flat.countersBack && chains.countersBack
        && flat.deliveryNanoseconds <= 1.25 * flat.referenceNanoseconds
    return result
}
