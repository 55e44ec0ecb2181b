// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

public import SignalKit

/// An ordered, thread-safe log of events as strings, for exact event-log
/// assertions (callback, subscription and disposal order).
///
/// The notation follows SwiftSignalKit's behaviour suite:
/// `"a.subscribe#1"`, `"a.dispose#1"` (from a `TestSource`),
/// `"next 1"`, `"error e"`, `"completed"` (from `start`).
///
/// ```swift
/// let log = EventLog()
/// let a = TestSource<Int, String>("a", log: log) { s in s.putNext(1); s.putCompletion() }
/// _ = log.start(a.signal |> map { $0 * 2 })
/// #expect(log.events == ["a.subscribe#1", "next 2", "completed", "a.dispose#1"])
/// ```
public final class EventLog: Sendable {
    private let entries = Locked<[String]>([])

    public init() {}

    /// Appends an entry.
    public func append(_ entry: String) {
        entries.withLock { $0.append(entry) }
    }

    /// Everything logged so far.
    public var events: [String] { entries.withLock { $0 } }

    /// Returns the events logged so far and clears the log.
    @discardableResult
    public func take() -> [String] {
        entries.withLock { entries in
            defer { entries.removeAll() }
            return entries
        }
    }

    /// Subscribes to `signal`, logging `"\(prefix)next v"`, `"\(prefix)error e"`
    /// and `"\(prefix)completed"`.
    public func start<T, E>(_ signal: Signal<T, E>, prefix: String = "") -> any Disposable {
        signal.start(
            next: { [self] value in append("\(prefix)next \(value)") },
            error: { [self] error in append("\(prefix)error \(error)") },
            completed: { [self] in append("\(prefix)completed") }
        )
    }

    /// A subscriber logging like `start`.
    public func subscriber<T, E>(prefix: String = "") -> Subscriber<T, E> {
        Subscriber(
            next: { [self] value in append("\(prefix)next \(value)") },
            error: { [self] error in append("\(prefix)error \(error)") },
            completed: { [self] in append("\(prefix)completed") }
        )
    }

    /// A disposable that logs `"\(name).dispose"` each time it is disposed.
    public func disposable(_ name: String) -> any Disposable {
        _LoggingDisposable(name: name, log: self)
    }
}

private final class _LoggingDisposable: Disposable {
    let name: String
    let log: EventLog

    init(name: String, log: EventLog) {
        self.name = name
        self.log = log
    }

    func dispose() { log.append("\(name).dispose") }
}

/// A cold signal that records its subscriptions and disposals in an
/// `EventLog` and lets a test drive its subscribers.
///
/// Each subscription logs `"<name>.subscribe#n"`, runs `body` with the
/// subscriber (synchronous emissions happen there), and returns a disposable
/// that logs `"<name>.dispose#n"` on every `dispose()` call (so double
/// disposal shows up). The subscribers stay reachable through
/// `subscribers` / `putNext` until `releaseSubscribers()` is called. The
/// returned disposables do not reference the source, so holding subscribers
/// creates no reference cycle.
public final class TestSource<T, E>: Sendable {
    // Mutable state is guarded by the two mutexes.
    public let name: String
    private let log: EventLog
    private let body: @Sendable (Subscriber<T, E>) -> Void
    private let keepsSubscribers: Bool
    private let counts = _SourceCounts()
    private let held = Locked<[Subscriber<T, E>]>([])

    /// - Parameters:
    ///   - keepsSubscribers: whether the source holds its subscribers (a hot
    ///     source does; a source that only emits synchronously need not).
    public init(
        _ name: String,
        log: EventLog,
        keepsSubscribers: Bool = true,
        body: @escaping @Sendable (Subscriber<T, E>) -> Void = { _ in }
    ) {
        self.name = name
        self.log = log
        self.body = body
        self.keepsSubscribers = keepsSubscribers
    }

    /// The signal; every start is one subscription.
    public var signal: Signal<T, E> {
        Signal { [self] subscriber in
            let index = counts.subscribed()
            if keepsSubscribers { held.withLock { $0.append(subscriber) } }
            log.append("\(name).subscribe#\(index)")
            body(subscriber)
            let (counts, log, name) = (counts, log, name)
            return ActionDisposableLogging {
                counts.disposed()
                log.append("\(name).dispose#\(index)")
            }
        }
    }

    /// How many times the generator ran.
    public var subscribeCount: Int { counts.subscribeCount }

    /// How many `dispose()` calls reached the returned disposables.
    public var disposeCount: Int { counts.disposeCount }

    /// The subscribers held so far, in subscription order.
    public var subscribers: [Subscriber<T, E>] { held.withLock { $0 } }

    /// Sends to the most recent subscriber.
    public func putNext(_ value: T) { subscribers.last?.putNext(value) }
    public func putError(_ error: E) { subscribers.last?.putError(error) }
    public func putCompletion() { subscribers.last?.putCompletion() }

    /// Drops the held subscribers (as a source that lets go of them).
    public func releaseSubscribers() {
        let released = held.withLock { subscribers -> [Subscriber<T, E>] in
            defer { subscribers.removeAll() }
            return subscribers
        }
        _ = released
    }
}

private final class _SourceCounts: Sendable {
    private let counts = Locked<(subscribe: Int, dispose: Int)>((0, 0))

    func subscribed() -> Int {
        counts.withLock {
            $0.subscribe += 1; return $0.subscribe
        }
    }
    func disposed() { counts.withLock { $0.dispose += 1 } }
    var subscribeCount: Int { counts.withLock { $0.subscribe } }
    var disposeCount: Int { counts.withLock { $0.dispose } }
}

/// Like `ActionDisposable`, but runs its action on every `dispose()` call, so
/// that a test sees double disposal.
public final class ActionDisposableLogging: Disposable, Sendable {
    private let action: @Sendable () -> Void

    public init(_ action: @escaping @Sendable () -> Void) {
        self.action = action
    }

    public func dispose() { action() }
}
