// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Foundation

// Allocation counting happens in a separate process: the benchmark runs
// itself with LD_PRELOAD pointing at libSignalKitMallocCounter.so (built by
// this package) and reads the counts it prints. The timed process never
// loads the counter, so counting cannot distort timings.

/// Set in the allocation pass: the counter function found in the preloaded
/// library.
nonisolated(unsafe) var allocationCounter: (@convention(c) () -> Int)?
/// Allocations per operation measured by the last `timed` call.
nonisolated(unsafe) var lastAllocationsPerOp: Double = .nan

/// Looks up the preloaded counter. Returns false if the library is absent.
func loadAllocationCounter() -> Bool {
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "signalkit_bench_allocation_count") else {
        return false
    }
    allocationCounter = unsafeBitCast(symbol, to: (@convention(c) () -> Int).self)
    return true
}

/// Allocations per op for every (workload, peer), measured in a child process.
func measureAllocations(workloads: [Workload], quick: Bool) -> [String: [Peer: Double]] {
    // A single-run workload (W14) measures memory over seconds, not allocations per operation.
    let workloads = workloads.filter { !$0.singleRun }
    if workloads.isEmpty { return [:] }
    let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    let library = executable.deletingLastPathComponent().appendingPathComponent("libSignalKitMallocCounter.so")
    guard FileManager.default.fileExists(atPath: library.path) else {
        progress("allocation pass skipped: \(library.path) not found (build the SignalKitMallocCounter product)")
        return [:]
    }
    let process = Process()
    process.executableURL = executable
    process.arguments =
        ["--allocation-pass", "--filter", workloads.map(\.id).joined(separator: ",")] + (quick ? ["--quick"] : [])
    var environment = ProcessInfo.processInfo.environment
    environment["LD_PRELOAD"] = library.path
    process.environment = environment
    let output = Pipe()
    process.standardOutput = output
    progress("allocation pass (separate process, LD_PRELOAD malloc counter)…")
    do {
        try process.run()
    } catch {
        progress("allocation pass failed to start: \(error)")
        return [:]
    }
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        progress("allocation pass exited with status \(process.terminationStatus)")
        return [:]
    }
    var counts: [String: [Peer: Double]] = [:]
    for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
        let fields = line.split(separator: " ")
        guard fields.count == 4, fields[0] == "ALLOC", let peer = Peer(rawValue: String(fields[2])),
            let value = Double(fields[3])
        else { continue }
        counts[String(fields[1]), default: [:]][peer] = value
    }
    return counts
}

/// The child side: runs each workload once per peer after a warm-up and
/// prints `ALLOC <id> <peer> <allocations per op>` lines.
func runAllocationPass(workloads: [Workload], quick: Bool) -> Int32 {
    guard loadAllocationCounter() else {
        progress("--allocation-pass needs LD_PRELOAD=libSignalKitMallocCounter.so")
        return 2
    }
    for workload in workloads {
        let size = max(1_000, (quick ? workload.quickSize : workload.fullSize) / 10)
        for peer in workload.peers {
            _ = workload.run(peer, size)
            _ = workload.run(peer, size)
            print("ALLOC \(workload.id) \(peer.rawValue) \(lastAllocationsPerOp)")
        }
    }
    return 0
}
