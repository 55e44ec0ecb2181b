// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if Postgres
import Foundation
import Logging
import PostgresNIO
import SignalKit
import SignalKitPostgres
import SignalKitTesting
import Testing

/// The server `scripts/test`'s postgres stage starts, named by
/// SIGNALKIT_PG_HOST, SIGNALKIT_PG_PORT (required), SIGNALKIT_PG_USER and
/// SIGNALKIT_PG_DATABASE.
enum PostgresTestServer {
    static let environment = ProcessInfo.processInfo.environment

    /// Whether a server is named; the tests that need one are skipped
    /// otherwise.
    static let isConfigured = environment["SIGNALKIT_PG_PORT"] != nil

    static let skipReason: Comment =
        "SIGNALKIT_PG_PORT is not set: no PostgreSQL server to test against (scripts/test's remote stage starts one)"

    static func configuration(applicationName: String? = nil) -> PostgresConnection.Configuration {
        var configuration = PostgresConnection.Configuration(
            host: environment["SIGNALKIT_PG_HOST"] ?? "127.0.0.1",
            port: Int(environment["SIGNALKIT_PG_PORT"] ?? "") ?? 5432,
            username: environment["SIGNALKIT_PG_USER"] ?? "postgres",
            password: nil,
            database: environment["SIGNALKIT_PG_DATABASE"] ?? "postgres",
            tls: .disable
        )
        if let applicationName {
            configuration.options.additionalStartupParameters = [("application_name", applicationName)]
        }
        return configuration
    }

    static let logger = Logger(label: "SignalKitPostgresTests", factory: { _ in SwiftLogNoOpLogHandler() })

    /// Runs `body` on a fresh connection, closed afterwards.
    static func withConnection<R: Sendable>(_ body: (PostgresConnection) async throws -> R) async throws -> R {
        let connection = try await PostgresConnection.connect(configuration: configuration(), id: 0, logger: logger)
        do {
            let result = try await body(connection)
            try await connection.close()
            return result
        } catch {
            try? await connection.close()
            throw error
        }
    }

    /// Backends whose application_name is `name`.
    static func backends(named name: String) async throws -> Int {
        try await count("SELECT count(*)::int FROM pg_stat_activity WHERE application_name = \(name)")
    }

    /// Terminates the backends whose application_name is `name`; returns
    /// how many.
    static func terminateBackends(named name: String) async throws -> Int {
        try await count(
            "SELECT count(*)::int FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = \(name)) AS terminated"
        )
    }

    /// The one integer `query` returns, on a fresh connection.
    private static func count(_ query: PostgresQuery) async throws -> Int {
        try await withConnection { connection in
            let rows = try await connection.query(query, logger: logger)
            var count = 0
            for try await (value) in rows.decode(Int.self) { count = value }
            return count
        }
    }

    /// A channel name of its own for each test.
    static func uniqueChannel(_ prefix: String) -> String {
        "\(prefix)_\(UInt32.random(in: 0...UInt32.max))"
    }
}

/// Polls `condition` every 5 ms until it holds or `seconds` pass; returns
/// whether it held.
@discardableResult
func waitUntil(seconds: Double = 10, _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return try await condition()
}

/// A listener process (`SignalKitPostgresListener`): its output lines, and
/// its standard input to close.
final class ListenerProcess: @unchecked Sendable {
    // `@unchecked Sendable`: `process` and `input` are set in init and only
    // read afterwards (Foundation's types are not marked Sendable); `lines`
    // is a `Shared`.
    let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private let lines = Shared<[String]>([])
    private let partial = Shared<String>("")

    init(channel: String, applicationName: String) throws {
        let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        process.executableURL = directory.appendingPathComponent("SignalKitPostgresListener")
        process.arguments = [channel, applicationName]
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        // A thread of its own reads the output with blocking reads until the
        // end of the file (no readabilityHandler: its dispatch source has
        // crashed the test process on Linux).
        let reader = output.fileHandleForReading
        Thread { [self] in
            while true {
                let data = reader.availableData
                if data.isEmpty { return }
                let text = String(decoding: data, as: UTF8.self)
                let complete = partial.withLock { partial -> [String] in
                    partial += text
                    var parts = partial.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
                    partial = parts.removeLast()
                    return parts
                }
                if !complete.isEmpty { lines.withLock { $0 += complete } }
            }
        }.start()
    }

    var events: [String] { lines.withLock { $0 } }

    /// Closes its standard input and waits (at most 10 s) for it to exit;
    /// returns its exit status, nil if it did not exit.
    func stop() async -> Int32? {
        try? input.fileHandleForWriting.close()
        let exited = await waitUntil { !process.isRunning }
        if !exited {
            process.terminate()
            return nil
        }
        return process.terminationStatus
    }
}
#endif
