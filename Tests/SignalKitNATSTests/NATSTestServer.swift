// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if NATS
import Foundation
import SignalKit
import SignalKitNATS
import Synchronization
import Testing

/// A nats-server of a test's own: started on 127.0.0.1 on a port it picks
/// (`-p -1`, read back from its log), stopped by the test (`stop()`, also
/// on deinit). `SIGNALKIT_NATS_SERVER` names the binary (default
/// `/usr/sbin/nats-server`, else `nats-server` on PATH).
final class NATSTestServer: @unchecked Sendable {  // mutated by the one test that owns it
    static let binary: String = {
        if let path = ProcessInfo.processInfo.environment["SIGNALKIT_NATS_SERVER"] { return path }
        if FileManager.default.isExecutableFile(atPath: "/usr/sbin/nats-server") { return "/usr/sbin/nats-server" }
        return "nats-server"
    }()

    /// Whether a server binary is there; the tests fail without one.
    static var isAvailable: Bool {
        binary.hasPrefix("/") ? FileManager.default.isExecutableFile(atPath: binary) : true
    }

    let directory: URL
    let extraArguments: [String]
    private(set) var port = 0
    private var process: Process?

    var url: String { "nats://127.0.0.1:\(port)" }

    /// Starts a server; `arguments` are added to its command line
    /// (`--auth`, `-c`, …); with `jetStream`, JetStream is on with its
    /// storage in the server's temporary directory.
    init(arguments: [String] = [], config: String? = nil, jetStream: Bool = false) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("signalkit-nats-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var extra = arguments
        if jetStream { extra += ["-js", "-sd", directory.appendingPathComponent("jetstream").path] }
        if let config {
            let file = directory.appendingPathComponent("server.conf")
            // `@DIR@` in a configuration is the server's temporary directory.
            try config.replacingOccurrences(of: "@DIR@", with: directory.path)
                .write(to: file, atomically: true, encoding: .utf8)
            extra += ["-c", file.path]
        }
        extraArguments = extra
        try start(port: -1)
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    private var logFile: URL { directory.appendingPathComponent("server.log") }

    /// Starts the process and waits until it listens.
    private func start(port requested: Int) throws {
        try? FileManager.default.removeItem(at: logFile)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary.hasPrefix("/") ? Self.binary : "/usr/bin/env")
        process.arguments =
            (Self.binary.hasPrefix("/") ? [] : [Self.binary])
            + ["-a", "127.0.0.1", "-p", String(requested), "-l", logFile.path] + extraArguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if let log = try? String(contentsOf: logFile, encoding: .utf8),
                let line = log.split(separator: "\n").first(where: { $0.contains("Listening for client connections on") }),
                let port = line.split(separator: ":").last.flatMap({ Int($0.trimmingCharacters(in: .whitespaces)) })
            {
                self.port = port
                return
            }
            if !process.isRunning { break }
            usleep(5_000)
        }
        let log = (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
        stop()
        throw ServerError(description: "nats-server did not start: \(log.suffix(500))")
    }

    /// Kills the server with SIGKILL (no shutdown) and waits for it to exit.
    func kill() {
        guard let process, process.isRunning else { return }
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        self.process = nil
    }

    /// Stops (SIGSTOP) or continues (SIGCONT) the server: a stopped server
    /// keeps its connections open and answers nothing.
    ///
    /// A signal is delivered asynchronously: `pause(true)` returns only once
    /// every thread of the server is stopped (state `T` in
    /// `/proc/PID/task/*/stat`), so the server reads nothing after it.
    func pause(_ paused: Bool) {
        guard let process, process.isRunning else { return }
        let pid = process.processIdentifier
        Glibc.kill(pid, paused ? SIGSTOP : SIGCONT)
        guard paused else { return }
        let deadline = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < deadline, !Self.allThreadsStopped(pid) { usleep(1_000) }
    }

    /// Whether every thread of `pid` is in the stopped state.
    private static func allThreadsStopped(_ pid: Int32) -> Bool {
        let tasks = "/proc/\(pid)/task"
        guard let threads = try? FileManager.default.contentsOfDirectory(atPath: tasks), !threads.isEmpty else {
            return false
        }
        return threads.allSatisfy { thread in
            // The state follows the command name, which is in parentheses.
            guard let stat = try? String(contentsOfFile: "\(tasks)/\(thread)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { return false }
            let state = stat[close...].dropFirst().drop(while: { $0 == " " }).first
            return state == "T" || state == "t"
        }
    }

    /// Starts the server again on the same port.
    func restart() throws {
        let port = self.port
        var lastError: (any Error)?
        // The port was just freed: a few tries while the kernel lets it go.
        for _ in 0..<50 {
            do {
                try start(port: port)
                return
            } catch {
                lastError = error
                usleep(20_000)
            }
        }
        throw lastError!
    }

    /// Stops the server (SIGTERM, SIGKILL after 5 s).
    func stop() {
        guard let process else { return }
        self.process = nil
        guard process.isRunning else { return }
        Glibc.kill(process.processIdentifier, SIGCONT)
        process.terminate()
        let deadline = ContinuousClock.now + .seconds(5)
        while process.isRunning && ContinuousClock.now < deadline { usleep(5_000) }
        if process.isRunning {
            Glibc.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    struct ServerError: Error, CustomStringConvertible {
        let description: String
    }
}

/// Events recorded by test callbacks, from any thread.
final class Recorder<Value: Sendable>: Sendable {
    private let values = _LockedState<[Value]>([])

    func append(_ value: Value) { values.withLock { $0.append(value) } }
    var all: [Value] { values.withLock { $0 } }
    var count: Int { values.withLock { $0.count } }
}

/// Runs the Python `script` (saved as `name` in a temporary folder) with
/// `arguments`, its output and errors into a file; returns the process and
/// the file.
func runPythonScript(_ script: String, named name: String, arguments: [String]) throws -> (Process, URL) {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("signalkit-nats-py-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let file = directory.appendingPathComponent(name)
    try script.write(to: file, atomically: true, encoding: .utf8)
    let output = directory.appendingPathComponent("out.txt")
    _ = FileManager.default.createFile(atPath: output.path, contents: nil)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", file.path] + arguments
    process.standardOutput = try FileHandle(forWritingTo: output)
    process.standardError = process.standardOutput
    try process.run()
    return (process, output)
}

/// Polls `condition` every 2 ms until it holds or `timeout` passes;
/// whether it held.
func eventually(timeout: Duration = .seconds(10), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(2))
    }
    return condition()
}

extension NATSConnection {
    /// The latest state.
    var currentState: NATSConnectionState {
        let latest = _LockedState<NATSConnectionState?>(nil)
        state.start(next: { value in latest.withLock { $0 = value } }).dispose()
        return latest.withLock { $0 } ?? .connecting
    }

    var isConnected: Bool {
        if case .connected = currentState { return true }
        return false
    }

    /// A connection to `server`, connected (or the test fails).
    static func connected(
        to server: NATSTestServer,
        _ configure: (inout NATSOptions) -> Void = { _ in }
    ) async throws -> NATSConnection {
        var options = NATSOptions(servers: [server.url])
        configure(&options)
        let connection = NATSConnection(options)
        // What went wrong, in the test's output.
        _ = connection.errors.start(next: { print("NATS connection error: \($0)") })
        guard await eventually({ connection.isConnected }) else {
            connection.close()
            throw NATSTestServer.ServerError(description: "no connection to \(server.url): \(connection.currentState)")
        }
        return connection
    }
}
#endif
