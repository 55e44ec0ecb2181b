// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Foundation

/// nats-py's peer: `nats_py_peer.py` (next to this package's
/// Package.swift, or `SIGNALKIT_NATS_PY_PEER`) run by `python3` as a child
/// process per run; it prints its figures as one line of JSON.
struct PythonPeer: Sendable {
    let script: String
    let url: String

    init(url: String) throws(BenchError) {
        let path =
            ProcessInfo.processInfo.environment["SIGNALKIT_NATS_PY_PEER"]
            ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("nats_py_peer.py").path
        guard FileManager.default.fileExists(atPath: path) else { throw BenchError("nats-py peer not found at \(path)") }
        script = path
        self.url = url
    }

    /// A started child with its standard output read line by line.
    final class Child: @unchecked Sendable {  // used by the one thread that runs the workload
        let process = Process()
        private let output = Pipe()
        private var pending = Data()

        init(script: String, arguments: [String]) throws {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3", script] + arguments
            process.standardOutput = output
            try process.run()
        }

        /// The next line of JSON the child prints.
        func nextObject() throws -> [String: Any] {
            while true {
                if let newline = pending.firstIndex(of: 0x0A) {
                    let line = pending[pending.startIndex..<newline]
                    pending = Data(pending[(newline + 1)...])
                    guard let object = try JSONSerialization.jsonObject(with: line) as? [String: Any] else {
                        throw BenchError("nats-py printed \(String(decoding: line, as: UTF8.self))")
                    }
                    return object
                }
                let data = output.fileHandleForReading.availableData
                if data.isEmpty { throw BenchError("nats-py's peer exited without its figures (\(process.arguments ?? []))") }
                pending += data
            }
        }

        func finish() {
            process.waitUntilExit()
        }
    }

    private func number(_ object: [String: Any], _ key: String) throws -> Double {
        guard let value = object[key] as? NSNumber else { throw BenchError("nats-py's figures lack \(key): \(object)") }
        return value.doubleValue
    }

    /// W19: a subscribing process, then a publishing one. End-to-end
    /// messages/s (the publisher's first publish to the subscriber's last
    /// message, on CLOCK_MONOTONIC) and the publisher's alone.
    func publishSubscribe(subject: String, count: Int) throws -> [Double] {
        let subscriber = try Child(script: script, arguments: ["w19-sub", url, subject, String(count)])
        _ = try subscriber.nextObject()  // ready
        let publisher = try Child(script: script, arguments: ["w19-pub", url, subject, String(count)])
        let published = try publisher.nextObject()
        let received = try subscriber.nextObject()
        publisher.finish()
        subscriber.finish()
        let got = Int(try number(received, "count"))
        guard got == count else { throw BenchError("CHECK FAILED: nats-py W19 received \(got) of \(count)") }
        let start = try number(published, "start_ns")
        return [
            Double(count) / ((try number(received, "end_ns") - start) / 1e9),
            Double(count) / ((try number(published, "end_ns") - start) / 1e9),
        ]
    }

    /// W20: p50 and p99 in µs of `count` requests one after the other.
    func requests(subject: String, count: Int) throws -> [Double] {
        let child = try Child(script: script, arguments: ["w20", url, subject, String(count)])
        let figures = try child.nextObject()
        child.finish()
        return [try number(figures, "p50_us"), try number(figures, "p99_us")]
    }

    /// W21: messages/s of a fresh pull consumer fetching and acknowledging
    /// the whole stream.
    func consume(stream: String, subject: String, count: Int, consumer: String) throws -> [Double] {
        let child = try Child(script: script, arguments: ["w21", url, stream, subject, String(count), consumer])
        let figures = try child.nextObject()
        child.finish()
        let got = Int(try number(figures, "count"))
        guard got == count else { throw BenchError("CHECK FAILED: nats-py W21 consumed \(got) of \(count)") }
        return [Double(count) / (try number(figures, "seconds"))]
    }
}
