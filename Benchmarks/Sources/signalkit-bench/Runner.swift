// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Foundation

struct Options {
    var filter: Set<String>?
    var quick = false
    var repetitions = 7
    var jsonPath: String?
    var allocationPass = false
    var bytesPass = false
    var countAllocations = true
    var onlyPeer: Peer?
    var printSamples = false
    /// Sizes given with --size, by workload id.
    var sizes: [String: Int] = [:]

    static let usage = """
        usage: signalkit-bench [--filter W1,W2] [--quick] [--reps N] [--json PATH] [--no-allocations] [--peer NAME] [--samples] [--size ID=N]

          --filter IDS      run only these workloads (comma-separated, e.g. W2,W5)
          --quick           smaller sizes: the whole run takes at most ~90 s after the build
          --reps N          timed repetitions per workload (default 7, at least 3)
          --json PATH       also write the results as JSON
          --no-allocations  skip the allocation-counting pass
          --peer NAME       run only one peer (SignalKit, OpenCombine, floor or AsyncStream), e.g. for profiling
          --samples         also print every timed run's figure (standard error), in the order run
          --size ID=N       one workload's size instead of its default (repeatable); W14's is the
                            milliseconds each buffer policy runs: --filter W14 --size W14=10000 is
                            the issue's 10 s per policy
        """

    static func parse(_ arguments: [String]) -> Options? {
        var options = Options()
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--filter":
                guard let value = iterator.next() else { return nil }
                options.filter = Set(value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).uppercased() })
            case "--quick":
                options.quick = true
            case "--reps":
                guard let value = iterator.next(), let reps = Int(value), reps >= 3 else { return nil }
                options.repetitions = reps
            case "--json":
                guard let value = iterator.next() else { return nil }
                options.jsonPath = value
            case "--allocation-pass":
                options.allocationPass = true
            case "--bytes-pass":
                options.bytesPass = true
            case "--no-allocations":
                options.countAllocations = false
            case "--samples":
                options.printSamples = true
            case "--peer":
                guard let value = iterator.next(),
                    let peer = Peer.allCases.first(where: { $0.rawValue.lowercased() == value.lowercased() })
                else {
                    return nil
                }
                options.onlyPeer = peer
            case "--size":
                guard let value = iterator.next() else { return nil }
                let parts = value.split(separator: "=")
                guard parts.count == 2, let size = Int(parts[1]), size > 0 else { return nil }
                options.sizes[parts[0].uppercased()] = size
            case "--help", "-h":
                return nil
            default:
                return nil
            }
        }
        return options
    }
}

/// Everything measured for one workload.
struct WorkloadResult {
    let workload: Workload
    var summaries: [Peer: Summary] = [:]
    var latencies: [Peer: Latency] = [:]
    var allocations: [Peer: Double] = [:]
    var checksumFailures: [Peer] = []
    /// Extra measurements (W4 scaling, W8 lock-free floor, AsyncStream
    /// variants), by label.
    var extras: [(label: String, value: Double)] = []
    /// Values sent and dropped over the timed runs, by peer (W12).
    var drops: [Peer: Drops] = [:]
    /// A single-run workload's figures, table and verdict (W14).
    var details: [(label: String, value: Double)] = []
    var detailTable: [[String]]?
    var targetMet: Bool?
    /// W22's rows (one per subscription shape).
    var comparisonRows: [[String]] = []

    func median(_ peer: Peer) -> Double? { summaries[peer]?.median }
}

func run(options: Options) -> Int32 {
    var workloads = allWorkloads.filter { options.filter?.contains($0.id) ?? true }
    if let peer = options.onlyPeer {
        workloads = workloads.map { $0.restricted(to: peer) }
    }
    if let filter = options.filter {
        let unknown = filter.subtracting(allWorkloads.map(\.id))
        if !unknown.isEmpty {
            progress(
                "unknown workload(s): \(unknown.sorted().joined(separator: ", ")); known: \(allWorkloads.map(\.id).joined(separator: ", "))"
            )
            return 2
        }
    }
    if options.bytesPass {
        return runLiveBytesPass(count: options.sizes["W22"] ?? 100_000, repetitions: 3)
    }
    if options.allocationPass {
        return runAllocationPass(workloads: workloads, quick: options.quick)
    }
    startBackgroundThread()
    let allocations = options.countAllocations ? measureAllocations(workloads: workloads, quick: options.quick) : [:]
    var results: [WorkloadResult] = []
    for workload in workloads {
        var result = WorkloadResult(workload: workload)
        result.allocations = allocations[workload.id] ?? [:]
        let size = options.sizes[workload.id] ?? (options.quick ? workload.quickSize : workload.fullSize)
        // A single-run workload (W14) has no warm-up and one repetition.
        let repetitions = workload.singleRun ? 1 : options.repetitions
        if !workload.singleRun {
            progress("\(workload.id) \(workload.title): warm-up")
            for peer in workload.peers { _ = workload.run(peer, size) }
        }
        var samples: [Peer: [Double]] = [:]
        var latencySamples: [Peer: [Latency]] = [:]
        for repetition in 0..<repetitions {
            let order = rotated(workload.peers, by: repetition)
            progress(
                "\(workload.id): repetition \(repetition + 1)/\(repetitions) (\(order.map(\.rawValue).joined(separator: ", ")))"
            )
            for peer in order {
                let outcome = workload.run(peer, size)
                if !outcome.checksumMatches {
                    progress("CHECK FAILED: \(workload.id) \(peer.rawValue)")
                    result.checksumFailures.append(peer)
                }
                samples[peer, default: []].append(outcome.nanosecondsPerOp)
                if options.printSamples { progress("  \(peer.rawValue): \(outcome.nanosecondsPerOp)") }
                if let latency = outcome.latency { latencySamples[peer, default: []].append(latency) }
                if let drops = outcome.drops {
                    result.drops[peer, default: Drops(sent: 0, dropped: 0)].sent += drops.sent
                    result.drops[peer, default: Drops(sent: 0, dropped: 0)].dropped += drops.dropped
                    if drops.dropped > 0 {
                        progress("  \(peer.rawValue) dropped \(drops.dropped) of \(drops.sent) values")
                    }
                }
                // A repeated workload's figures are per peer (medians in the notes).
                result.details +=
                    workload.singleRun
                    ? outcome.details : outcome.details.map { ("\(peer.rawValue) \($0.label)", $0.value) }
                if let table = outcome.detailTable { result.detailTable = table }
                if !outcome.comparisonRows.isEmpty { result.comparisonRows = outcome.comparisonRows }
                if let met = outcome.targetMet { result.targetMet = (result.targetMet ?? true) && met }
            }
        }
        for (peer, values) in samples { result.summaries[peer] = Summary(values) }
        for (peer, values) in latencySamples {
            result.latencies[peer] = Latency(
                p50: Summary(values.map(\.p50)).median,
                p90: Summary(values.map(\.p90)).median,
                p99: Summary(values.map(\.p99)).median
            )
        }
        let extras = extraMeasurements(for: workload, size: size, repetitions: options.repetitions)
        result.extras = extras.values
        result.checksumFailures += extras.failures
        results.append(result)
    }
    let report = Report(results: results, quick: options.quick, repetitions: options.repetitions)
    print(report.table())
    if let path = options.jsonPath {
        do {
            try report.json().write(to: URL(fileURLWithPath: path))
            progress("wrote \(path)")
        } catch {
            progress("could not write \(path): \(error)")
            return 1
        }
    }
    return results.contains { !$0.checksumFailures.isEmpty } ? 1 : 0
}

/// Workload-specific extra rows: W1's dispose on the starting thread and from
/// another, W4's scaling check, W8's lock-free floor and
/// the AsyncStream peer's variants (W2: an AsyncStream source; W5, W6: sends
/// back to back), after the interleaved repetitions; with the peers whose
/// extra failed its check.
func extraMeasurements(
    for workload: Workload, size: Int, repetitions: Int
) -> (values: [(label: String, value: Double)], failures: [Peer]) {
    /// Median of `repetitions` runs of an AsyncStream variant (one warm-up).
    func asyncVariant(_ label: String, _ body: (Int) -> RunResult) -> (values: [(label: String, value: Double)], failures: [Peer])
    {
        _ = body(size)
        var samples: [Double] = []
        var failed = false
        for _ in 0..<repetitions {
            let outcome = body(size)
            if !outcome.checksumMatches {
                progress("CHECK FAILED: \(workload.id) \(label)")
                failed = true
            }
            samples.append(outcome.nanosecondsPerOp)
        }
        return ([(label, Summary(samples).median)], failed ? [.asyncStream] : [])
    }
    // The AsyncStream variants only when the AsyncStream peer runs (--peer).
    if !workload.peers.contains(.asyncStream) && ["W2", "W5", "W6"].contains(workload.id) { return ([], []) }
    switch workload.id {
    case "W2":
        progress("W2: AsyncStream variant (AsyncStream source filled by this thread)")
        return asyncVariant("AsyncStream, AsyncStream source", runW2AsyncStreamSource)
    case "W5":
        progress("W5: AsyncStream variant (sends back to back)")
        return asyncVariant("AsyncStream, sends back to back", runW5AsyncFreeRunning)
    case "W6":
        progress("W6: AsyncStream variant (sends back to back)")
        return asyncVariant("AsyncStream, sends back to back", runW6AsyncFreeRunning)
    case "W4":
        var extras: [(String, Double)] = []
        for standing in [10, 1_000, 10_000] {
            var samples: [Double] = []
            for _ in 0..<repetitions { samples.append(runW4(.signalkit, size, standing: standing).nanosecondsPerOp) }
            extras.append(("SignalKit with \(standing) standing", Summary(samples).median))
        }
        return (extras, [])
    case "W1":
        // Disposing live subscriptions that received a value on their
        // starting thread: there, and from another thread (interleaved).
        var here: [Double] = []
        var there: [Double] = []
        var failed = false
        for _ in 0..<repetitions {
            let onStartingThread = runW1Dispose(size, fromAnotherThread: false)
            let onAnother = runW1Dispose(size, fromAnotherThread: true)
            failed = failed || !onStartingThread.checksumMatches || !onAnother.checksumMatches
            here.append(onStartingThread.nanosecondsPerOp)
            there.append(onAnother.nanosecondsPerOp)
        }
        if failed { progress("CHECK FAILED: W1 dispose extras") }
        let values = [
            ("SignalKit dispose only, starting thread", Summary(here).median),
            ("SignalKit dispose only, another thread", Summary(there).median),
        ]
        return (values, failed ? [.signalkit] : [])
    case "W8":
        var samples: [Double] = []
        for _ in 0..<repetitions { samples.append(runW8NoLockFloor(size)) }
        return ([("floor, no lock", Summary(samples).median)], [])
    default:
        return ([], [])
    }
}

func rotated<Element>(_ elements: [Element], by count: Int) -> [Element] {
    guard !elements.isEmpty else { return elements }
    let shift = count % elements.count
    return Array(elements[shift...] + elements[..<shift])
}
