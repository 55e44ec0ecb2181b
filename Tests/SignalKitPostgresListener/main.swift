// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// A change-feed listener process for SignalKitPostgresTests:
// `SignalKitPostgresListener CHANNEL APPLICATION_NAME`, connecting to the
// server named by SIGNALKIT_PG_HOST, SIGNALKIT_PG_PORT, SIGNALKIT_PG_USER
// and SIGNALKIT_PG_DATABASE. Prints one line per event (`listening N`,
// `notification PAYLOAD`, `error E`) and exits when its standard input
// closes, after disposing its subscription.

#if Postgres
import Foundation
import PostgresNIO
import SignalKit
import SignalKitPostgres

let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    FileHandle.standardError.write(Data("usage: SignalKitPostgresListener CHANNEL APPLICATION_NAME\n".utf8))
    exit(2)
}
let environment = ProcessInfo.processInfo.environment
var configuration = PostgresConnection.Configuration(
    host: environment["SIGNALKIT_PG_HOST"] ?? "127.0.0.1",
    port: Int(environment["SIGNALKIT_PG_PORT"] ?? "") ?? 5432,
    username: environment["SIGNALKIT_PG_USER"] ?? "postgres",
    password: nil,
    database: environment["SIGNALKIT_PG_DATABASE"] ?? "postgres",
    tls: .disable
)
configuration.options.additionalStartupParameters = [("application_name", arguments[2])]

@Sendable func emit(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let handle = configuration.notifications(
    channel: arguments[1],
    reconnect: PostgresReconnectPolicy(initialDelay: .milliseconds(20), maximumDelay: .milliseconds(500))
)
.start(
    next: { event in
        switch event {
        case .listening(let epoch): emit("listening \(epoch)")
        case .notification(let payload): emit("notification \(payload)")
        }
    },
    error: { emit("error \($0)") }
)
while readLine() != nil {}
handle.dispose()
// Let the feed send UNLISTEN and close its connection.
Thread.sleep(forTimeInterval: 0.2)
exit(0)
#endif
