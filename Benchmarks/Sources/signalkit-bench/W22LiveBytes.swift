// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Dispatch
import Foundation
import OpenCombine
import OpenCombineDispatch
import SignalKit

// W22 bytes per live subscription: what malloc hands out (the usable size of
// every block, from the malloc counter's live-byte count, so not RSS) for
// `count` live subscriptions of one shape, divided by `count`. The sources
// (pipes, promises, subjects, queues) and the holder array (reserved to
// `count` handles) exist before the count starts, so only the
// subscriptions and what they add to their sources (bag entries) are
// counted. Measured in a child process under LD_PRELOAD (the counter's
// process), three interleaved repetitions, the median; the same process also
// counts allocations per subscription and, in the first repetition, the net
// live blocks by usable size (16-byte classes): where the bytes go.
// Afterwards every subscription is disposed and the sources released; the
// bytes still live are printed as a leak check.

/// One subscription shape, in SignalKit and (where it has one) OpenCombine.
struct LiveShape: Sendable {
    let name: String
    /// SwiftSignalKit v2's published bytes per live subscription (macOS).
    let swiftSignalKitV2: Double?
    /// Builds the sources, and returns a function that makes one live
    /// subscription and a function to call once all are made (a first
    /// outer value, for mapToSignal) and one to call after disposal.
    let signalkit: @Sendable () -> LiveShapeRun<any Disposable>
    let opencombine: (@Sendable () -> LiveShapeRun<AnyCancellable>)?

    /// Shown to break another shape down, with no target of its own.
    var breakdownOnly: Bool { swiftSignalKitV2 == nil && name.hasPrefix("ValuePipe") }
}

struct LiveShapeRun<Handle> {
    let subscribe: () -> Handle
    var afterSubscribing: () -> Void = {}
    var afterDisposing: () -> Void = {}
}

let liveShapes: [LiveShape] = [
    LiveShape(
        name: "never().start()", swiftSignalKitV2: 119,
        signalkit: { LiveShapeRun(subscribe: { Signal<Int, NoError>.never().start() }) },
        opencombine: {
            LiveShapeRun(subscribe: { Empty<Int, Never>(completeImmediately: false).sink(receiveValue: { _ in }) })
        }
    ),
    // The next two are not in the targets: they show what a pipe
    // subscription and one fused stage add (the breakdown of the 5 maps).
    LiveShape(
        name: "ValuePipe, no operator", swiftSignalKitV2: nil,
        signalkit: {
            let pipe = ValuePipe<Int>()
            let box = Box()
            return LiveShapeRun(subscribe: { pipe.signal().start(next: { box.v &+= $0 }) })
        },
        opencombine: {
            let subject = PassthroughSubject<Int, Never>()
            let box = Box()
            return LiveShapeRun(subscribe: { subject.sink(receiveValue: { box.v &+= $0 }) })
        }
    ),
    LiveShape(
        name: "ValuePipe, 1 map", swiftSignalKitV2: nil,
        signalkit: {
            let pipe = ValuePipe<Int>()
            let box = Box()
            return LiveShapeRun(subscribe: { (pipe.signal() |> map { $0 &+ 1 }).start(next: { box.v &+= $0 }) })
        },
        opencombine: {
            let subject = PassthroughSubject<Int, Never>()
            let box = Box()
            return LiveShapeRun(subscribe: { subject.map { $0 &+ 1 }.sink(receiveValue: { box.v &+= $0 }) })
        }
    ),
    LiveShape(
        name: "ValuePipe, 5 maps", swiftSignalKitV2: 1_587,
        signalkit: {
            let pipe = ValuePipe<Int>()
            let box = Box()
            return LiveShapeRun(subscribe: {
                (pipe.signal() |> map { $0 &+ 1 } |> map { $0 &+ 2 } |> map { $0 &+ 3 } |> map { $0 &+ 4 }
                    |> map { $0 &+ 5 }).start(next: { box.v &+= $0 })
            })
        },
        opencombine: {
            let subject = PassthroughSubject<Int, Never>()
            let box = Box()
            return LiveShapeRun(subscribe: {
                subject.map { $0 &+ 1 }.map { $0 &+ 2 }.map { $0 &+ 3 }.map { $0 &+ 4 }.map { $0 &+ 5 }
                    .sink(receiveValue: { box.v &+= $0 })
            })
        }
    ),
    LiveShape(
        name: "combineLatest of 3 Promises", swiftSignalKitV2: 2_512,
        signalkit: {
            let promises = (Promise<Int>(1), Promise<Int>(2), Promise<Int>(3))
            let box = Box()
            return LiveShapeRun(subscribe: {
                combineLatest(promises.0.get(), promises.1.get(), promises.2.get()).start(next: { box.v &+= $0.0 })
            })
        },
        opencombine: nil
    ),
    LiveShape(
        name: "mapToSignal, live inner", swiftSignalKitV2: 1_046,
        signalkit: {
            let outer = ValuePipe<Int>()
            let inner = ValuePipe<Int>()
            let box = Box()
            return LiveShapeRun(
                subscribe: { (outer.signal() |> mapToSignal { _ in inner.signal() }).start(next: { box.v &+= $0 }) },
                afterSubscribing: { outer.putNext(0) }
            )
        },
        opencombine: {
            let outer = PassthroughSubject<Int, Never>()
            let inner = PassthroughSubject<Int, Never>()
            let box = Box()
            return LiveShapeRun(
                subscribe: { outer.map { _ in inner }.switchToLatest().sink(receiveValue: { box.v &+= $0 }) },
                afterSubscribing: { outer.send(0) }
            )
        }
    ),
    LiveShape(
        name: "deliverOn(queue)", swiftSignalKitV2: nil,
        signalkit: {
            let pipe = ValuePipe<Int>()
            let queue = Queue(name: "w22.signalkit")
            let box = Box()
            return LiveShapeRun(
                subscribe: { (pipe.signal() |> deliverOn(queue)).start(next: { box.v &+= $0 }) },
                afterDisposing: { queue.sync {} }
            )
        },
        opencombine: {
            let subject = PassthroughSubject<Int, Never>()
            let queue = DispatchQueue(label: "w22.opencombine")
            let box = Box()
            return LiveShapeRun(
                subscribe: { subject.receive(on: queue.ocombine).sink(receiveValue: { box.v &+= $0 }) },
                afterDisposing: { queue.sync {} }
            )
        }
    ),
    LiveShape(
        name: "deliverOn(queue, buffer: .droppingOldest(beyond: 4096))", swiftSignalKitV2: nil,
        signalkit: {
            let pipe = ValuePipe<Int>()
            let queue = Queue(name: "w22.signalkit.bounded")
            let box = Box()
            return LiveShapeRun(
                subscribe: {
                    (pipe.signal() |> deliverOn(queue, buffer: .droppingOldest(beyond: 4096))).start(next: { box.v &+= $0 })
                },
                afterDisposing: { queue.sync {} }
            )
        },
        opencombine: nil
    ),
]

/// The counter's functions, found in the preloaded library.
struct HeapCounter {
    let liveBytes: @convention(c) () -> Int
    let histogram: @convention(c) (Bool) -> Void
    let sizeClassCount: @convention(c) (Int32) -> Int
    static let sizeClasses: Int32 = 257

    init?() {
        let process = UnsafeMutableRawPointer(bitPattern: 0)
        guard let live = dlsym(process, "signalkit_bench_live_bytes"),
            let histogram = dlsym(process, "signalkit_bench_size_histogram"),
            let sizeClass = dlsym(process, "signalkit_bench_size_class_count")
        else { return nil }
        liveBytes = unsafeBitCast(live, to: (@convention(c) () -> Int).self)
        self.histogram = unsafeBitCast(histogram, to: (@convention(c) (Bool) -> Void).self)
        sizeClassCount = unsafeBitCast(sizeClass, to: (@convention(c) (Int32) -> Int).self)
    }
}

/// What one (shape, peer) measurement found.
struct LiveBytesSample {
    var bytes: Double
    var allocations: Double
    var leftover: Double
    /// Net live blocks per subscription by usable size (bytes), where not 0.
    var blocks: [(size: Int, perSubscription: Double)] = []
}

@inline(never)
func measureLiveBytes<Handle>(
    _ make: () -> LiveShapeRun<Handle>, count: Int, counter: HeapCounter, histogram: Bool,
    dispose: (Handle) -> Void
) -> LiveBytesSample {
    let start = counter.liveBytes()
    var sample = LiveBytesSample(bytes: 0, allocations: 0, leftover: 0)
    do {
        let run = make()
        var holder: [Handle] = []
        holder.reserveCapacity(count)
        let before = counter.liveBytes()
        let allocationsBefore = allocationCounter?() ?? 0
        if histogram { counter.histogram(true) }
        for _ in 0..<count { holder.append(run.subscribe()) }
        run.afterSubscribing()
        let after = counter.liveBytes()
        sample.allocations = Double((allocationCounter?() ?? 0) - allocationsBefore) / Double(count)
        if histogram {
            counter.histogram(false)
            for index in 0..<HeapCounter.sizeClasses {
                let blocks = counter.sizeClassCount(index)
                let perSubscription = Double(blocks) / Double(count)
                if abs(perSubscription) >= 0.01 { sample.blocks.append((Int(index) * 16, perSubscription)) }
            }
        }
        sample.bytes = Double(after - before) / Double(count)
        for handle in holder { dispose(handle) }
        holder = []
        run.afterDisposing()
    }
    sample.leftover = Double(counter.liveBytes() - start) / Double(count)
    return sample
}

/// The child side of W22 (`--bytes-pass`): prints `BYTES <shape index>
/// <peer> <bytes> <allocations> <leftover>` per repetition and `BLOCKS
/// <shape index> <peer> <size>:<per subscription>…` for the first.
func runLiveBytesPass(count: Int, repetitions: Int) -> Int32 {
    guard loadAllocationCounter(), let counter = HeapCounter() else {
        progress("--bytes-pass needs LD_PRELOAD=libSignalKitMallocCounter.so")
        return 2
    }
    for repetition in 0..<(repetitions + 1) {
        // Repetition 0 is the warm-up (it also records the size histogram).
        for (index, shape) in liveShapes.enumerated() {
            var peers: [Peer] = shape.opencombine == nil ? [.signalkit] : [.signalkit, .opencombine]
            peers = rotated(peers, by: repetition)
            for peer in peers {
                let sample: LiveBytesSample
                if peer == .signalkit {
                    sample = measureLiveBytes(
                        shape.signalkit, count: count, counter: counter, histogram: repetition == 0, dispose: { $0.dispose() })
                } else {
                    sample = measureLiveBytes(
                        shape.opencombine!, count: count, counter: counter, histogram: repetition == 0,
                        dispose: { $0.cancel() })
                }
                if repetition == 0 {
                    let blocks = sample.blocks.map { "\($0.size):\($0.perSubscription)" }.joined(separator: " ")
                    print("BLOCKS \(index) \(peer.rawValue) \(blocks)")
                } else {
                    print("BYTES \(index) \(peer.rawValue) \(sample.bytes) \(sample.allocations) \(sample.leftover)")
                }
            }
        }
    }
    return 0
}

/// Runs a child of this executable under LD_PRELOAD with the malloc counter
/// and returns its standard output (nil if it could not run).
func runUnderMallocCounter(arguments: [String]) -> String? {
    let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    let library = executable.deletingLastPathComponent().appendingPathComponent("libSignalKitMallocCounter.so")
    guard FileManager.default.fileExists(atPath: library.path) else {
        progress("\(library.path) not found (build the SignalKitMallocCounter product)")
        return nil
    }
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    var environment = ProcessInfo.processInfo.environment
    environment["LD_PRELOAD"] = library.path
    process.environment = environment
    let output = Pipe()
    process.standardOutput = output
    do { try process.run() } catch {
        progress("child process failed to start: \(error)")
        return nil
    }
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        progress("child process exited with status \(process.terminationStatus)")
        return nil
    }
    return String(decoding: data, as: UTF8.self)
}

/// W22 in the timed process: runs the bytes pass in a child and turns its
/// lines into comparison-table rows and the block table.
@inline(never)
func runW22(_ count: Int) -> RunResult {
    var result = RunResult(nanosecondsPerOp: .nan, checksumMatches: false)
    progress("W22: bytes per live subscription (separate process, LD_PRELOAD malloc counter), \(count) per shape…")
    guard let output = runUnderMallocCounter(arguments: ["--bytes-pass", "--size", "W22=\(count)"]) else { return result }
    var bytes: [Int: [Peer: [Double]]] = [:]
    var allocations: [Int: [Peer: [Double]]] = [:]
    var leftovers: [Int: [Peer: [Double]]] = [:]
    var blocks: [Int: [Peer: String]] = [:]
    for line in output.split(separator: "\n") {
        let fields = line.split(separator: " ")
        guard fields.count >= 3, let index = Int(fields[1]), let peer = Peer(rawValue: String(fields[2])) else { continue }
        if fields[0] == "BYTES", fields.count == 6, let b = Double(fields[3]), let a = Double(fields[4]),
            let l = Double(fields[5])
        {
            bytes[index, default: [:]][peer, default: []].append(b)
            allocations[index, default: [:]][peer, default: []].append(a)
            leftovers[index, default: [:]][peer, default: []].append(l)
        } else if fields[0] == "BLOCKS" {
            blocks[index, default: [:]][peer] = fields.dropFirst(3).map { field -> String in
                let parts = field.split(separator: ":")
                guard parts.count == 2, let size = Int(parts[0]), let per = Double(parts[1]) else { return String(field) }
                return "\(size)–\(size + 15) B ×\(format(per))"
            }.joined(separator: ", ")
        }
    }
    var allMet = true
    var rows: [[String]] = []
    var table: [[String]] = [["shape", "peer", "net live blocks per subscription, by usable size"]]
    for (index, shape) in liveShapes.enumerated() {
        let signalkit = bytes[index]?[.signalkit].map { Summary($0).median }
        let opencombine = bytes[index]?[.opencombine].map { Summary($0).median }
        let skAllocations = allocations[index]?[.signalkit].map { Summary($0).median }
        var targets: [String] = []
        var met = signalkit != nil
        if let v2 = shape.swiftSignalKitV2 {
            targets.append("≤ \(format(v2)) (SwiftSignalKit v2)")
            if let signalkit, signalkit > v2 { met = false }
        }
        if let opencombine, !shape.breakdownOnly {
            targets.append("≤ 0.75× OC (\(format(0.75 * opencombine)))")
            if let signalkit, signalkit > 0.75 * opencombine { met = false }
        }
        if targets.isEmpty { targets.append(shape.breakdownOnly ? "breakdown only" : "report only") }
        let leftover = (leftovers[index]?.values.flatMap { $0 } ?? []).map { abs($0) }.max() ?? .nan
        if !shape.breakdownOnly { allMet = allMet && met }
        rows.append([
            "W22 bytes per live subscription: \(shape.name)", "B/sub",
            signalkit.map(format) ?? "–", opencombine.map(format) ?? "n/a", "n/a", "n/a", "–",
            signalkit.flatMap { sk in opencombine.map { format($0 / sk) + "x" } } ?? "–", "–",
            skAllocations.map(format) ?? "–",
            targets.joined(separator: "; ") + "; leftover after dispose ≤ \(format(leftover)) B/sub",
            shape.breakdownOnly || (shape.swiftSignalKitV2 == nil && opencombine == nil) ? "report" : (met ? "yes" : "NO"),
        ])
        for peer in [Peer.signalkit, .opencombine] {
            guard let text = blocks[index]?[peer] else { continue }
            table.append([shape.name, peer.rawValue, text])
        }
        result.details.append(("\(shape.name) SignalKit bytes", signalkit ?? .nan))
        result.details.append(("\(shape.name) OpenCombine bytes", opencombine ?? .nan))
        result.details.append(("\(shape.name) SignalKit allocations", skAllocations ?? .nan))
        if let ocAllocations = allocations[index]?[.opencombine].map({ Summary($0).median }) {
            result.details.append(("\(shape.name) OpenCombine allocations", ocAllocations))
        }
    }
    result.checksumMatches = !rows.isEmpty && bytes.count == liveShapes.count
    result.comparisonRows = rows
    result.detailTable = table
    result.targetMet = allMet
    return result
}
