// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Foundation
import SignalKitNATS

/// The run's settings.
struct Settings: Sendable {
    var url = "nats://127.0.0.1:4222"
    var reps = 5
    var quick = false
    var messages: Int?
    var filter: Set<String> = ["W19", "W20", "W21"]
    /// `--peer`: one peer only (for callgrind).
    var peer: Peer?
}

/// A row of the table: one figure of a workload.
struct Row {
    let title: String
    let higherIsBetter: Bool
    let target: String
    /// Whether the target is met, from SignalKit's, nats-py's and the
    /// floor's medians (nil: report only).
    let met: ((Double, Double?, Double?) -> Bool)?
    var signalKit: [Double] = []
    var python: [Double] = []
    var floor: [Double] = []
}

enum Peer: String, CaseIterable, Sendable {
    case signalKit = "SignalKit"
    case python = "nats-py"
    case floor = "floor"
}

/// Runs `body` for each peer once untimed, then `reps` times with the
/// peer order rotating; each run's figures go to `rows` (one per row).
func interleave(
    _ workload: String,
    reps: Int,
    rows: inout [Row],
    peers: [Peer],
    _ body: (Peer, Int) throws -> [Double]
) throws {
    for peer in peers {
        progress("\(workload) warm-up: \(peer.rawValue)")
        _ = try body(peer, -1)
    }
    for rep in 0..<reps {
        for offset in 0..<peers.count {
            let peer = peers[(rep + offset) % peers.count]
            let figures = try body(peer, rep)
            progress("\(workload) rep \(rep + 1)/\(reps) \(peer.rawValue): \(figures.map { format($0) }.joined(separator: ", "))")
            for (index, figure) in figures.enumerated() where index < rows.count {
                switch peer {
                case .signalKit: rows[index].signalKit.append(figure)
                case .python: rows[index].python.append(figure)
                case .floor: rows[index].floor.append(figure)
                }
            }
        }
    }
}

func median(_ values: [Double]) -> Double? {
    guard !values.isEmpty else { return nil }
    let sorted = values.sorted()
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

/// Three significant digits, thousands separated.
func format(_ value: Double) -> String {
    if value >= 1_000 {
        let rounded = Int((value / pow(10, floor(log10(value)) - 2)).rounded() * pow(10, floor(log10(value)) - 2))
        var digits = String(rounded)
        var grouped = ""
        while digits.count > 3 {
            grouped = "," + digits.suffix(3) + grouped
            digits.removeLast(3)
        }
        return digits + grouped
    }
    if value >= 100 { return String(Int(value.rounded())) }
    if value >= 10 { return String(format: "%.1f", value) }
    return String(format: "%.2f", value)
}

/// The comparison table, in Markdown, on standard output.
func printTable(_ rows: [Row]) {
    print(
        "| workload (unit) | SignalKit (min–max) | nats-py | floor | SK / floor | SK vs nats-py | target | met |")
    print("|---|---|---|---|---|---|---|---|")
    for row in rows {
        guard let signalKit = median(row.signalKit) else { continue }
        let python = median(row.python)
        let floorValue = median(row.floor)
        let range = "\(format(row.signalKit.min()!))–\(format(row.signalKit.max()!))"
        let ratio = floorValue.map { String(format: "%.2f×", signalKit / $0) } ?? "–"
        // How many times better SignalKit is than nats-py.
        let speedup = python.map { String(format: "%.1f×", row.higherIsBetter ? signalKit / $0 : $0 / signalKit) } ?? "–"
        let met = row.met.map { $0(signalKit, python, floorValue) ? "**yes**" : "no" } ?? "report"
        print(
            "| \(row.title) | \(format(signalKit)) (\(range)) | \(python.map(format) ?? "–") | "
                + "\(floorValue.map(format) ?? "–") | \(ratio) | \(speedup) | \(row.target) | \(met) |")
    }
}

func progress(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

/// Runs the selected workloads and prints the table.
func runBenchmarks(_ settings: Settings) throws {
    let server = try Server(url: settings.url)
    let python = try PythonPeer(url: settings.url)
    let peers = settings.peer.map { [$0] } ?? Peer.allCases
    var table: [Row] = []
    let run = "\(UInt32.random(in: 0...UInt32.max))"

    if settings.filter.contains("W19") {
        let count = settings.messages ?? (settings.quick ? 50_000 : 200_000)
        var rows = [
            Row(
                title: "W19 publish → subscribe, 64 B (msg/s end to end)", higherIsBetter: true,
                target: "≥ 0.7× floor, ≥ 5× nats-py",
                met: { signalKit, python, floor in
                    signalKit >= 0.7 * (floor ?? .infinity) && signalKit >= 5 * (python ?? .infinity)
                }),
            Row(title: "W19 publisher alone, to its flush (msg/s)", higherIsBetter: true, target: "report only", met: nil),
        ]
        progress("W19: \(count) messages of 64 bytes per run")
        let publisher = try connectSignalKit(server, name: "w19-publisher")
        let subscriber = try connectSignalKit(server, name: "w19-subscriber")
        try interleave("W19", reps: settings.reps, rows: &rows, peers: peers) { peer, rep in
            let subject = "w19.\(run).\(rep + 1).\(peer)"
            switch peer {
            case .signalKit:
                return try signalKitPublishSubscribe(
                    publisher: publisher, subscriber: subscriber, subject: subject, count: count)
            case .python: return try python.publishSubscribe(subject: subject, count: count)
            case .floor: return try floorPublishSubscribe(server: server, subject: subject, count: count)
            }
        }
        publisher.close()
        subscriber.close()
        table += rows
    }

    if settings.filter.contains("W20") {
        let count = settings.messages ?? (settings.quick ? 1_000 : 5_000)
        var rows = [
            Row(
                title: "W20 request/reply p50 (µs)", higherIsBetter: false, target: "≤ 1.5× floor",
                met: { signalKit, _, floor in signalKit <= 1.5 * (floor ?? 0) }),
            Row(title: "W20 request/reply p99 (µs)", higherIsBetter: false, target: "report only", met: nil),
            // The peers' figures are those of the rows above (the same runs).
            Row(
                title: "W20 awaited (requestReply) p50 (µs)", higherIsBetter: false, target: "≤ 1.5× floor",
                met: { signalKit, _, floor in signalKit <= 1.5 * (floor ?? 0) }),
            Row(title: "W20 awaited (requestReply) p99 (µs)", higherIsBetter: false, target: "report only", met: nil),
        ]
        let subject = "w20.\(run).service"
        progress("W20: \(count) requests per run, answered by the raw-socket responder on \(subject)")
        let responder = try RawResponder(host: server.host, port: server.port, subject: subject)
        let connection = try connectSignalKit(server, name: "w20-requester")
        try interleave("W20", reps: settings.reps, rows: &rows, peers: peers) { peer, rep in
            switch peer {
            case .signalKit:
                return try signalKitRequests(connection, subject: subject, count: count)
                    + signalKitAwaitedRequests(connection, subject: subject, count: count)
            case .python:
                let figures = try python.requests(subject: subject, count: count)
                return figures + figures
            case .floor:
                let figures = try floorRequests(
                    server: server, subject: subject, inbox: "w20.\(run).reply.\(rep + 1)", count: count)
                return figures + figures
            }
        }
        connection.close()
        responder.stop()
        table += rows
    }

    if settings.filter.contains("W21") {
        let count = settings.messages ?? (settings.quick ? 10_000 : 50_000)
        var rows = [
            Row(
                title: "W21 JetStream consume + ack, 64 B (msg/s)", higherIsBetter: true, target: "report only",
                met: nil)
        ]
        let stream = "W21_\(run)"
        let subjects = "w21.\(run).>"
        progress("W21: a memory stream of \(count) messages of 64 bytes, a fresh consumer per run")
        let connection = try connectSignalKit(server, name: "w21-consumer")
        try prepareStream(
            connection, server: server, stream: stream, subjects: subjects, subject: "w21.\(run).m", count: count)
        try interleave("W21", reps: settings.reps, rows: &rows, peers: peers.filter { $0 != .floor }) { peer, rep in
            switch peer {
            case .signalKit: return try signalKitConsume(connection, stream: stream, count: count)
            case .python:
                return try python.consume(stream: stream, subject: subjects, count: count, consumer: "py\(rep + 2)")
            case .floor: return []
            }
        }
        try? blocking { try await connection.jetStream().deleteStream(stream) }
        connection.close()
        table += rows
    }

    printTable(table)
}
