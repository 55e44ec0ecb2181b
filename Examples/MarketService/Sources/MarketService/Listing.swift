// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Logging
import PostgresNIO
import ServiceLifecycle
import SignalKit
import SignalKitPostgres
import Synchronization

/// Where an instance finds PostgreSQL: `postgres://user@host:port/database`
/// (trust authentication, no TLS: a server on the same machine).
public struct PostgresEndpoint: Sendable, Equatable {
    public var host: String
    public var port: Int
    public var username: String
    public var database: String

    public init(host: String, port: Int, username: String, database: String) {
        self.host = host
        self.port = port
        self.username = username
        self.database = database
    }

    /// Parses `postgres://user@host:port/database`; nil if malformed.
    public init?(url: String) {
        guard url.hasPrefix("postgres://") else { return nil }
        let rest = url.dropFirst("postgres://".count)
        let parts = rest.split(separator: "/", maxSplits: 1)
        let userAndAddress = parts[0].split(separator: "@", maxSplits: 1)
        guard parts.count == 2, userAndAddress.count == 2 else { return nil }
        let address = userAndAddress[1].split(separator: ":")
        guard address.count == 2, let port = Int(address[1]), !userAndAddress[0].isEmpty, !parts[1].isEmpty else {
            return nil
        }
        self.init(host: String(address[0]), port: port, username: String(userAndAddress[0]), database: String(parts[1]))
    }
}

/// The instrument list the instances share: through PostgreSQL
/// (`InstrumentListing`) or a JetStream stream (`NATSInstrumentListing`).
/// A WebSocket asking for a delisted instrument is refused.
public protocol SharedInstrumentList: Sendable {
    /// The instruments delisted, as this instance knows them now.
    var delisted: Set<Int> { get }
    /// How far this instance's list has come: the change feed's listening
    /// epoch (PostgreSQL), the last change's stream sequence (NATS).
    var epoch: Int { get }
    /// Takes `instrument` off the list; false if it was not listed.
    func delist(_ instrument: Int) async throws -> Bool
    /// Puts `instrument` back on the list; false if it was listed.
    func list(_ instrument: Int) async throws -> Bool
}

/// The instrument list every instance shares through PostgreSQL.
///
/// The durable state is the table `market_delisted` (the instruments taken
/// off the list; every other one is listed). `list` and `delist` change it
/// and announce the change on the channel `market_instruments` in the same
/// statement, so in the same transaction: the announcement is delivered
/// when, and only if, the change commits.
///
/// Every instance follows the channel with SignalKitPostgres's change feed
/// and reloads the table on each of its events, one reload at a time
/// (`mapToQueue`): on `.listening(epoch:)` (the first `LISTEN`, and again
/// after a reconnection, when announcements may have been lost) and on every
/// notification. A reload reads what committed before it started, so
/// applying the reloads in order leaves every instance with the list as of
/// the last announcement it received.
///
/// As a lifecycle service, `run()` creates the table if missing, follows
/// the channel until graceful shutdown, then disposes the feed (which sends
/// `UNLISTEN` and closes its connection). `client` must run as a service of
/// the same group.
public final class InstrumentListing: SharedInstrumentList, Service {
    public static let channel = "market_instruments"

    private struct State {
        var delisted: Set<Int> = []
        /// The change feed's current epoch (0 before the first `LISTEN`).
        var epoch = 0
    }

    /// The queries' connection pool (a lifecycle service of its own).
    public let client: PostgresClient
    private let connection: PostgresConnection.Configuration
    private let state = Mutex(State())
    private let logger: Logger

    public init(endpoint: PostgresEndpoint, logger: Logger) {
        client = PostgresClient(
            configuration: .init(
                host: endpoint.host,
                port: endpoint.port,
                username: endpoint.username,
                password: nil,
                database: endpoint.database,
                tls: .disable
            ),
            backgroundLogger: logger
        )
        connection = PostgresConnection.Configuration(
            host: endpoint.host,
            port: endpoint.port,
            username: endpoint.username,
            password: nil,
            database: endpoint.database,
            tls: .disable
        )
        self.logger = logger
    }

    /// The instruments delisted, as of the last reload.
    public var delisted: Set<Int> {
        state.withLock { $0.delisted }
    }

    /// The change feed's current listening epoch (0 before the first).
    public var epoch: Int {
        state.withLock { $0.epoch }
    }

    /// Takes `instrument` off the list; false if it was not listed.
    public func delist(_ instrument: Int) async throws -> Bool {
        try await announce(
            """
            WITH changed AS (
                INSERT INTO market_delisted VALUES (\(instrument)) ON CONFLICT DO NOTHING RETURNING instrument
            ) SELECT pg_notify(\(Self.channel), 'delisted:' || instrument) FROM changed
            """
        )
    }

    /// Puts `instrument` back on the list; false if it was listed.
    public func list(_ instrument: Int) async throws -> Bool {
        try await announce(
            """
            WITH changed AS (
                DELETE FROM market_delisted WHERE instrument = \(instrument) RETURNING instrument
            ) SELECT pg_notify(\(Self.channel), 'listed:' || instrument) FROM changed
            """
        )
    }

    /// Runs a change-and-announce statement; whether it returned a row (made a change).
    private func announce(_ query: PostgresQuery) async throws -> Bool {
        let rows = try await client.query(query, logger: logger)
        var changed = false
        for try await _ in rows { changed = true }
        return changed
    }

    public func run() async throws {
        try await createTable()
        let reloads =
            connection.notifications(channel: Self.channel, logger: logger)
            |> mapToQueue { [weak self] event -> Signal<Void, PostgresChangeFeedError> in
                guard let self else { return .complete() }
                return self.reload(after: event)
            }
        let subscription = reloads.start(error: { [logger] error in
            logger.error("instrument-list feed failed", metadata: ["error": "\(error)"])
        })
        try? await gracefulShutdown()
        subscription.dispose()
    }

    /// Creates `market_delisted` if missing. Two instances starting together
    /// may race (`CREATE TABLE IF NOT EXISTS` is not atomic): retried.
    private func createTable() async throws {
        for attempt in 1... {
            do {
                try await client.query(
                    "CREATE TABLE IF NOT EXISTS market_delisted (instrument integer PRIMARY KEY)",
                    logger: logger
                )
                return
            } catch  where attempt < 5 {
                try await Task.sleep(for: .milliseconds(50 * attempt))
            }
        }
    }

    /// Reads the table and makes it the current list (after `event`, for the
    /// epoch and the log); completes when done, also when the read failed
    /// (logged: the next event reloads).
    private func reload(after event: PostgresChangeEvent) -> Signal<Void, PostgresChangeFeedError> {
        Signal { subscriber in
            let task = Task {
                do {
                    let rows = try await self.client.query("SELECT instrument FROM market_delisted", logger: self.logger)
                    var delisted: Set<Int> = []
                    for try await instrument in rows.decode(Int.self) {
                        delisted.insert(instrument)
                    }
                    self.state.withLock { state in
                        state.delisted = delisted
                        if case .listening(let epoch) = event { state.epoch = epoch }
                    }
                    switch event {
                    case .listening(let epoch):
                        self.logger.info(
                            "instrument list resynced",
                            metadata: ["epoch": "\(epoch)", "delisted": "\(delisted.count)"]
                        )
                    case .notification(let payload):
                        self.logger.info("instrument list changed", metadata: ["change": "\(payload)"])
                    }
                } catch {
                    self.logger.warning("instrument list reload failed", metadata: ["error": "\(error)"])
                }
                subscriber.putCompletion()
            }
            return ActionDisposable { task.cancel() }
        }
    }
}
