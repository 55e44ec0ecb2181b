// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if Postgres
public import Logging
public import PostgresNIO
public import SignalKit
import Synchronization

/// An event of a PostgreSQL change feed (see
/// `PostgresConnection.Configuration.notifications(channel:reconnect:logger:)`).
public enum PostgresChangeEvent: Sendable, Equatable {
    /// The feed listens on its channel, from now on: the server acknowledged
    /// `LISTEN`. Every notification committed after this event is delivered.
    ///
    /// `epoch` counts the feed's `LISTEN`s from 1: a new epoch follows a
    /// reconnection, and what was committed between the connection's loss
    /// and the new epoch is lost. On each epoch, read the durable state the
    /// notifications announce changes of (resync), then apply the
    /// notifications that follow.
    case listening(epoch: Int)

    /// A notification committed on the channel, with its payload (text,
    /// under 8,000 bytes; empty for a bare `NOTIFY channel`).
    case notification(payload: String)
}

/// How a change feed reconnects: SignalKit's jittered exponential backoff
/// (``SignalKit/SignalBackoff``), bounded in delay and optionally in attempts.
///
/// After a connection that was listening for at least `initialDelay` is
/// lost, the feed reconnects at once. Each attempt that fails (the
/// connection or the `LISTEN` fails, or the connection is lost sooner than
/// `initialDelay` after its `LISTEN`) waits `jitteredDelay(afterFailures:)`
/// before the next one: about 50 ms, 100 ms, 200 ms, … up to 2 s (± 20 %)
/// with the defaults. A successful `LISTEN` that lasts resets the count;
/// after `maximumAttempts` failures in a row the feed fails with
/// ``PostgresChangeFeedError/gaveUp(attempts:lastError:)``.
public typealias PostgresReconnectPolicy = SignalBackoff

/// Why a change feed or a NOTIFY sink stopped.
public enum PostgresChangeFeedError: Error {
    /// The channel name cannot be used: empty, longer than 63 bytes, or
    /// containing `"` or NUL (PostgreSQL identifiers; the name is quoted,
    /// so it is case-sensitive).
    case invalidChannel(String)
    /// The reconnect policy's `maximumAttempts` failed attempts in a row;
    /// `lastError` is the last one's error (nil when its connection closed
    /// without one).
    case gaveUp(attempts: Int, lastError: (any Error)?)
}

extension PostgresConnection.Configuration {
    /// The notifications on `channel`, as a hot signal that reconnects.
    ///
    /// ```swift
    /// let feed = configuration.notifications(channel: "instruments")
    /// let handle = feed.start(next: { event in
    ///     switch event {
    ///     case .listening: reloadInstruments()        // resync from the table
    ///     case .notification(let payload): apply(payload)
    ///     }
    /// })
    /// ```
    ///
    /// **Hot and shared.** Every subscriber of the returned signal shares
    /// one connection that listens on `channel`. The first subscriber opens
    /// it; a subscriber receives the notifications committed after it
    /// joined, never earlier ones. Each call of this method makes a new feed
    /// with a connection of its own: call it once and share the signal.
    ///
    /// **Epochs.** When the server acknowledges `LISTEN`, every subscriber
    /// receives ``PostgresChangeEvent/listening(epoch:)``; a subscriber that
    /// joins a feed already listening receives the current epoch first. A
    /// lost connection (the server restarts, the backend is terminated, the
    /// network fails) is reconnected by `reconnect`'s policy and followed by
    /// the next epoch: notifications committed meanwhile are lost, so a
    /// consumer resyncs from durable state on every epoch.
    ///
    /// **Delivery.** PostgreSQL delivers a notification when its
    /// transaction commits, never after a rollback; in commit order, so in
    /// order per sender; identical payloads of one transaction may be
    /// merged into one (see ``PostgresSequencedPayload``).
    ///
    /// **Threading:** events are delivered one at a time on a serial queue
    /// of the feed.
    ///
    /// **Termination:** the signal never completes. It fails with
    /// ``PostgresChangeFeedError/gaveUp(attempts:lastError:)`` when the
    /// policy's `maximumAttempts` is exhausted, or at once with
    /// ``PostgresChangeFeedError/invalidChannel(_:)``. A subscriber that
    /// arrives after a failure starts the feed again.
    ///
    /// **Disposal:** disposing the last subscription stops listening:
    /// the feed sends `UNLISTEN` and closes its connection. A later
    /// subscriber opens a new connection, with the next epoch.
    ///
    /// - Parameters:
    ///   - channel: the channel name, as given to `NOTIFY` or `pg_notify`
    ///     (case-sensitive).
    ///   - reconnect: the backoff between failed attempts.
    ///   - logger: the connection's logger; nil logs nothing.
    /// - Returns: a hot signal of the feed's events.
    public func notifications(
        channel: String,
        reconnect: PostgresReconnectPolicy = .default,
        logger: Logger? = nil
    ) -> Signal<PostgresChangeEvent, PostgresChangeFeedError> {
        let feed = _ChangeFeed(
            configuration: self,
            channel: channel,
            policy: reconnect,
            logger: logger ?? _silentLogger
        )
        return Signal { subscriber in
            feed.subscribe(subscriber)
        }
    }
}

/// A logger that drops everything.
let _silentLogger = Logger(label: "SignalKitPostgres", factory: { _ in SwiftLogNoOpLogHandler() })

/// Whether PostgreSQL takes `channel` as a quoted identifier.
func _isValidChannel(_ channel: String) -> Bool {
    !channel.isEmpty && channel.utf8.count <= 63 && !channel.utf8.contains(0) && !channel.contains("\"")
}

/// Connection identifiers for postgres-nio's logs.
let _connectionIDs = Atomic<Int>(0)

extension PostgresConnection.Configuration {
    /// Connects for a task that may be cancelled: the open connection, or
    /// nil when the task was cancelled before it returned (any connection
    /// made is closed).
    ///
    /// postgres-nio's `connect` closes the channel when its task is
    /// cancelled during the handshake, but can still return the connection
    /// when the handshake completes at that moment; a query on that
    /// connection never completes (seen under ThreadSanitizer's timing: of
    /// 81 tasks that connect and query, cancelled 0-4 ms after they
    /// started, the 4 cancelled 3-4 ms in hung in their first query; with
    /// this check, none of 600 cancelled 0-6 ms in). Cancellation is
    /// sticky, so checking it once `connect` has returned excludes that
    /// connection; a cancellation that comes later no longer reaches
    /// postgres-nio's handler, and a query does not watch for cancellation.
    func _connect(logger: Logger) async throws -> PostgresConnection? {
        let connection = try await PostgresConnection.connect(
            configuration: self,
            id: _connectionIDs.add(1, ordering: .relaxed).newValue,
            logger: logger
        )
        guard !Task.isCancelled else {
            try? await connection.close()
            return nil
        }
        return connection
    }
}

/// One change feed: its subscribers share a subject, fed by one listening
/// task while there is a subscriber.
///
/// Every event reaches the subject on `queue` (serially), and a new
/// subscriber is added on `queue` too, so that the current epoch it is
/// handed first and the events that follow never overlap.
final class _ChangeFeed: Sendable {
    private struct State {
        /// Subscribers counted (added on `queue`, not yet released).
        var subscribers = 0
        /// The subject of the running session; nil when none runs.
        var subject: Subject<PostgresChangeEvent, PostgresChangeFeedError>?
        /// The session's listening task.
        var task: Task<Void, Never>?
        /// Increments with every session: events of an ended session are
        /// dropped.
        var session = 0
        /// The last epoch given out.
        var epoch = 0
        /// The epoch the running session listens in, if it does.
        var listeningEpoch: Int?
    }

    let configuration: PostgresConnection.Configuration
    let channel: String
    let policy: PostgresReconnectPolicy
    let logger: Logger
    private let queue = Queue(name: "SignalKitPostgres.notifications")
    private let state = _LockedState(State())

    init(configuration: PostgresConnection.Configuration, channel: String, policy: PostgresReconnectPolicy, logger: Logger) {
        self.configuration = configuration
        self.channel = channel
        self.policy = policy
        self.logger = logger
    }

    func subscribe(_ subscriber: Subscriber<PostgresChangeEvent, PostgresChangeFeedError>) -> any Disposable {
        guard _isValidChannel(channel) else {
            subscriber.putError(.invalidChannel(channel))
            return EmptyDisposable
        }
        let handle = MetaDisposable()
        queue.async { [self] in
            let (subject, epoch) = state.withLock { state in
                state.subscribers += 1
                if state.subject == nil {
                    state.session += 1
                    state.subject = Subject()
                    state.listeningEpoch = nil
                    let session = state.session
                    state.task = Task { await self.listen(session: session) }
                }
                return (state.subject!, state.listeningEpoch)
            }
            let subscription = subject.signal().start(
                next: { subscriber.putNext($0) },
                error: { subscriber.putError($0) },
                completed: { subscriber.putCompletion() }
            )
            if let epoch {
                subscriber.putNext(.listening(epoch: epoch))
            }
            handle.set(
                ActionDisposable { [self] in
                    subscription.dispose()
                    release()
                }
            )
        }
        return handle
    }

    /// A subscriber left; the last one stops the session.
    private func release() {
        let task = state.withLock { state -> Task<Void, Never>? in
            state.subscribers -= 1
            guard state.subscribers == 0 else { return nil }
            state.subject = nil
            state.listeningEpoch = nil
            defer { state.task = nil }
            return state.task
        }
        task?.cancel()
    }

    /// Delivers `event` to the session's subscribers, if it still runs.
    private func deliver(session: Int, _ event: PostgresChangeEvent) {
        queue.async { [self] in
            let subject = state.withLock { state -> Subject<PostgresChangeEvent, PostgresChangeFeedError>? in
                guard state.session == session else { return nil }
                if case .listening(let epoch) = event {
                    state.listeningEpoch = epoch
                }
                return state.subject
            }
            subject?.putNext(event)
        }
    }

    /// Fails the session's subscribers; the next subscriber starts anew.
    private func fail(session: Int, _ error: PostgresChangeFeedError) {
        queue.async { [self] in
            let subject = state.withLock { state -> Subject<PostgresChangeEvent, PostgresChangeFeedError>? in
                guard state.session == session else { return nil }
                defer {
                    state.subject = nil
                    state.task = nil
                    state.listeningEpoch = nil
                }
                return state.subject
            }
            subject?.putError(error)
        }
    }

    private func nextEpoch() -> Int {
        state.withLock { state in
            state.epoch += 1
            return state.epoch
        }
    }

    /// The session: connect, listen, deliver; reconnect by the policy until
    /// cancelled.
    private func listen(session: Int) async {
        var failures = 0
        let clock = ContinuousClock()
        while !Task.isCancelled {
            var listenedSince: ContinuousClock.Instant?
            var lastError: (any Error)?
            do {
                guard let connection = try await configuration._connect(logger: logger) else { return }
                do {
                    try await connection.listen(on: channel) { notifications in
                        listenedSince = clock.now
                        deliver(session: session, .listening(epoch: nextEpoch()))
                        for try await notification in notifications {
                            deliver(session: session, .notification(payload: notification.payload))
                        }
                    }
                } catch {
                    lastError = error
                }
                try? await connection.close()
            } catch {
                lastError = error
            }
            if Task.isCancelled { return }
            if let listenedSince, clock.now - listenedSince >= policy.initialDelay {
                failures = 0
                continue
            }
            failures += 1
            if policy.isExhausted(afterFailures: failures) {
                fail(session: session, .gaveUp(attempts: failures, lastError: lastError))
                return
            }
            try? await Task.sleep(for: policy.jitteredDelay(afterFailures: failures))
        }
    }
}
#endif
