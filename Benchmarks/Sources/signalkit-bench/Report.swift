// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Foundation
import Glibc

/// Turns results into the comparison table and the JSON document.
struct Report {
    let results: [WorkloadResult]
    let quick: Bool
    let repetitions: Int

    // MARK: Verdicts

    /// Whether the in-run check of workloads.md holds (nil: not applicable).
    func inRunCheck(_ result: WorkloadResult) -> Bool? {
        guard let signalkit = result.median(.signalkit) else { return nil }
        let floor = result.median(.floor)
        let opencombine = result.median(.opencombine)
        switch result.workload.id {
        case "W1": return floor.map { signalkit <= 6 * $0 }
        case "W2": return opencombine.map { $0 / signalkit >= 12 }
        case "W3": return floor.map { signalkit <= 1.5 * $0 }
        case "W4":
            guard let floor else { return nil }
            return signalkit <= 3 * floor && (scalingSpread(result).map { $0 <= 0.25 } ?? false)
        case "W5": return signalkit <= 50
        case "W6": return floor.map { signalkit <= 8 * $0 }
        case "W7": return floor.map { signalkit <= 1.2 * $0 }
        case "W9":
            guard let floor, let latency = result.latencies[.signalkit], let floorLatency = result.latencies[.floor] else {
                return nil
            }
            return signalkit <= 1.3 * floor && latency.p50 <= floorLatency.p50 + 0.3
        case "W12":
            // A run that dropped values measured drops, not the hop.
            guard let floor, let drops = result.drops[.signalkit] else { return nil }
            return floor / signalkit >= 15 && drops.dropped == 0
        case "W13":
            guard let latency = result.latencies[.signalkit], let floorLatency = result.latencies[.floor] else {
                return nil
            }
            return latency.p50 <= 1 && latency.p99 <= floorLatency.p99
        case "W14", "W22", "W23": return result.targetMet
        default: return nil
        }
    }

    /// W4: relative spread of the cost between 10 and 10,000 standing subscribers.
    func scalingSpread(_ result: WorkloadResult) -> Double? {
        let values = result.extras.filter { $0.label.hasPrefix("SignalKit with") }.map(\.value)
        guard let low = values.min(), let high = values.max(), low > 0 else { return nil }
        return (high - low) / low
    }

    /// nil for report-only workloads.
    func met(_ result: WorkloadResult) -> Bool? {
        let target = result.workload.target
        if target.reportOnly { return nil }
        guard let signalkit = result.median(.signalkit), result.checksumFailures.isEmpty else { return false }
        if let limit = target.nanoseconds, signalkit > limit { return false }
        if let limit = target.allocations {
            guard let allocations = result.allocations[.signalkit] else { return false }
            if allocations > limit + 0.005 { return false }
        }
        return inRunCheck(result) ?? true
    }

    // MARK: Table

    func table() -> String {
        var rows: [[String]] = [
            [
                "workload", "unit", "SignalKit (min–max)", "OpenCombine", "floor", "AsyncStream", "SK/floor", "OC/SK", "AS/SK",
                "allocs/op SK", "target", "met",
            ]
        ]
        for result in results {
            if !result.comparisonRows.isEmpty {
                rows += result.comparisonRows
                continue
            }
            let workload = result.workload
            let signalkit = result.median(.signalkit)
            let floor = result.median(.floor)
            let opencombine = result.median(.opencombine)
            let asyncStream = result.median(.asyncStream)
            let range = result.summaries[.signalkit].map { "\(format($0.median)) (\(format($0.min))–\(format($0.max)))" } ?? "–"
            var targetText: [String] = []
            if let ns = workload.target.nanoseconds { targetText.append("≤\(format(ns))") }
            if let allocations = workload.target.allocations { targetText.append("≤\(format(allocations)) alloc") }
            targetText.append(workload.target.check)
            let verdict: String
            switch met(result) {
            case .some(true): verdict = "yes"
            case .some(false): verdict = "NO"
            case .none: verdict = "report"
            }
            rows.append([
                "\(workload.id) \(workload.title)",
                workload.unit,
                range,
                opencombine.map(format) ?? "n/a",
                floor.map(format) ?? "n/a",
                asyncStream.map(format) ?? "n/a",
                ratio(signalkit, floor),
                ratio(opencombine, signalkit),
                ratio(asyncStream, signalkit),
                result.allocations[.signalkit].map(format) ?? "–",
                targetText.joined(separator: "; "),
                verdict,
            ])
        }
        var text = render(rows)
        var notes: [String] = []
        for result in results {
            for (peer, latency) in result.latencies.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
                notes.append(
                    "\(result.workload.id) latency \(peer.rawValue): p50 \(format(latency.p50)) µs, p90 \(format(latency.p90)) µs, p99 \(format(latency.p99)) µs"
                )
            }
            for peer in result.workload.peers where !Peer.standard.contains(peer) {
                guard let summary = result.summaries[peer] else { continue }
                notes.append(
                    "\(result.workload.id) \(peer.rawValue): \(format(summary.median)) (\(format(summary.min))–\(format(summary.max))) "
                        + "\(result.workload.unit); \(peer.rawValue)/SignalKit \(ratio(summary.median, result.median(.signalkit)))"
                )
            }
            if !result.workload.singleRun {
                var byLabel: [String: [Double]] = [:]
                for detail in result.details { byLabel[detail.label, default: []].append(detail.value) }
                for (label, values) in byLabel.sorted(by: { $0.key < $1.key }) {
                    notes.append("\(result.workload.id) \(label): \(format(Summary(values).median)) (median)")
                }
            }
            for extra in result.extras {
                notes.append("\(result.workload.id) \(extra.label): \(format(extra.value)) \(result.workload.unit)")
            }
            if !result.drops.isEmpty {
                let peers = result.workload.peers.compactMap { peer in
                    result.drops[peer].map { "\(peer.rawValue) \($0.dropped) of \($0.sent)" }
                }
                notes.append("\(result.workload.id) values dropped (timed runs): " + peers.joined(separator: ", "))
            }
            if result.workload.id == "W12", let signalkit = result.median(.signalkit), let floor = result.median(.floor) {
                notes.append("\(result.workload.id) q.async floor / SignalKit: \(ratio(floor, signalkit)) (target >= 15x)")
            }
            if let spread = scalingSpread(result) {
                notes.append("\(result.workload.id) scaling spread 10 → 10,000 standing: \(format(spread * 100))% (target ≤ 25%)")
            }
            let others = result.allocations.filter { $0.key != .signalkit }.sorted { $0.key.rawValue < $1.key.rawValue }
            if !others.isEmpty {
                notes.append(
                    "\(result.workload.id) allocs/op "
                        + others.map { "\($0.key.rawValue) \(format($0.value))" }.joined(separator: ", "))
            }
            for peer in result.checksumFailures {
                notes.append("\(result.workload.id) CHECK FAILED for \(peer.rawValue)")
            }
        }
        text += "\n" + notes.joined(separator: "\n")
        for result in results {
            guard let table = result.detailTable, table.count > 1 else { continue }
            text += "\n\n\(result.workload.id) \(result.workload.title):\n" + render(table)
        }
        text +=
            "\n\nMedian of \(repetitions) interleaved repetitions (peer order rotated each repetition)\(quick ? ", --quick sizes" : ""); "
            + singleRunNote
            + "a second thread alive; allocations counted in a separate process.\n"
            + "Machine: \(machineDescription())\nToolchain: \(toolchainDescription())\n"
        return text
    }

    /// Which workloads ran once instead of `repetitions` times.
    private var singleRunNote: String {
        let ids = results.filter(\.workload.singleRun).map(\.workload.id)
        return ids.isEmpty ? "" : "\(ids.joined(separator: ", ")) ran once (no warm-up, no repetitions); "
    }

    private func ratio(_ numerator: Double?, _ denominator: Double?) -> String {
        guard let numerator, let denominator, denominator > 0 else { return "–" }
        return format(numerator / denominator) + "x"
    }

    private func render(_ rows: [[String]]) -> String {
        var widths = [Int](repeating: 0, count: rows[0].count)
        for row in rows {
            for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) }
        }
        var lines: [String] = []
        for (index, row) in rows.enumerated() {
            let cells = row.enumerated().map { column, cell in
                cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
            }
            lines.append("| " + cells.joined(separator: " | ") + " |")
            if index == 0 {
                lines.append("|" + widths.map { String(repeating: "-", count: $0 + 2) }.joined(separator: "|") + "|")
            }
        }
        return lines.joined(separator: "\n")
    }

    // MARK: JSON

    func json() throws -> Data {
        var workloads: [[String: Any]] = []
        for result in results {
            var entry: [String: Any] = [
                "id": result.workload.id,
                "title": result.workload.title,
                "unit": result.workload.unit,
                "signalkit": jsonNumber(result.median(.signalkit)),
                "opencombine": jsonNumber(result.median(.opencombine)),
                "floor": jsonNumber(result.median(.floor)),
                "asyncstream": jsonNumber(result.median(.asyncStream)),
                "signalkit_allocs": jsonNumber(result.allocations[.signalkit]),
                "target": jsonNumber(result.workload.target.nanoseconds),
                "target_allocs": jsonNumber(result.workload.target.allocations),
                "check": result.workload.target.check,
                "met": met(result).map { $0 as Any } ?? NSNull(),
                "in_run_check": inRunCheck(result).map { $0 as Any } ?? NSNull(),
                "checksums_ok": result.checksumFailures.isEmpty,
            ]
            if let summary = result.summaries[.signalkit] {
                entry["signalkit_min"] = jsonNumber(summary.min)
                entry["signalkit_max"] = jsonNumber(summary.max)
            }
            if let summary = result.summaries[.asyncStream] {
                entry["asyncstream_min"] = jsonNumber(summary.min)
                entry["asyncstream_max"] = jsonNumber(summary.max)
            }
            for (peer, allocations) in result.allocations where peer != .signalkit {
                entry["\(peer.jsonKey)_allocs"] = jsonNumber(allocations)
            }
            if let latency = result.latencies[.signalkit] {
                entry["p50_us"] = latency.p50
                entry["p90_us"] = latency.p90
                entry["p99_us"] = latency.p99
                entry["latency_us"] = Dictionary(
                    uniqueKeysWithValues: result.latencies.map {
                        ($0.key.rawValue.lowercased(), ["p50": $0.value.p50, "p90": $0.value.p90, "p99": $0.value.p99])
                    })
            }
            if !result.extras.isEmpty {
                entry["extras"] = Dictionary(uniqueKeysWithValues: result.extras.map { ($0.label, $0.value) })
            }
            // Peers beyond the four columns (W12's SPSC ring).
            for peer in result.workload.peers where !Peer.withAsync.contains(peer) {
                guard let summary = result.summaries[peer] else { continue }
                entry[peer.jsonKey] = jsonNumber(summary.median)
                entry["\(peer.jsonKey)_min"] = jsonNumber(summary.min)
                entry["\(peer.jsonKey)_max"] = jsonNumber(summary.max)
            }
            if !result.drops.isEmpty {
                entry["drops"] = Dictionary(
                    uniqueKeysWithValues: result.drops.map {
                        ($0.key.jsonKey, ["sent": $0.value.sent, "dropped": $0.value.dropped])
                    })
            }
            if !result.details.isEmpty {
                entry["details"] = Dictionary(
                    result.details.filter { $0.value.isFinite }.map { ($0.label, $0.value) }, uniquingKeysWith: { $1 })
            }
            workloads.append(entry)
        }
        let document: [String: Any] = [
            "toolchain": toolchainDescription(),
            "machine": machineDescription(),
            "repetitions": repetitions,
            "quick": quick,
            "workloads": workloads,
        ]
        return try JSONSerialization.data(withJSONObject: document, options: [.prettyPrinted, .sortedKeys])
    }

    private func jsonNumber(_ value: Double?) -> Any {
        guard let value, value.isFinite else { return NSNull() }
        return value
    }
}

func format(_ value: Double) -> String {
    guard value.isFinite else { return "–" }
    if value >= 100 { return String(format: "%.0f", value) }
    if value >= 10 { return String(format: "%.1f", value) }
    return String(format: "%.2f", value)
}

func machineDescription() -> String {
    let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
    let model =
        cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }?
        .split(separator: ":", maxSplits: 1).last?.trimmingCharacters(in: .whitespaces) ?? "unknown CPU"
    let cores = sysconf(Int32(_SC_NPROCESSORS_ONLN))
    var name = utsname()
    uname(&name)
    let kernel = withUnsafeBytes(of: &name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    return "\(model), \(cores) cores, Linux \(kernel)"
}

func toolchainDescription() -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["swift", "--version"]
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = Pipe()
    guard (try? process.run()) != nil else { return "unknown" }
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? "unknown"
}

extension Peer {
    /// The peer's key in the JSON document (`spsc_ring`).
    var jsonKey: String { rawValue.lowercased().replacingOccurrences(of: "-", with: "_") }
}
