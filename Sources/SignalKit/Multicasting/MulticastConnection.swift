// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Synchronization

/// One shared subscription to a cold signal, feeding a subject:
/// ReactiveCocoa's `RACMulticastConnection`. Made by `publish` and
/// `multicast(_:)`.
///
/// Subscribers start ``signal`` (the subject's hot signal). The source is
/// subscribed once, when ``connect()`` is first called (or, through
/// ``autoconnect()``, when the first subscriber arrives), however many
/// subscribers there are: its side effects happen once and are shared.
///
/// ```swift
/// let connection = fetchConfig() |> publish
/// let a = connection.signal.start(next: { print("a:", $0) })
/// let b = connection.signal.start(next: { print("b:", $0) })
/// let link = connection.connect()     // fetchConfig runs once; a and b see its values
/// // ...
/// link.dispose()                      // disposes the source subscription
/// ```
///
/// **Not SwiftSignalKit's `Multicast`:** ``Multicast`` (kept for
/// compatibility) makes an upstream subscription per `get(key:signal:)`
/// subscription and forwards only values. A connection shares one upstream
/// subscription, forwards the error and the completion, and (through
/// ``autoconnect()``) connects only once: it never reconnects.
///
/// **Threading:** `connect()` subscribes the source synchronously on the
/// calling thread; whatever the source sends synchronously reaches the
/// subscribers before `connect()` returns. Events are delivered on the
/// source's thread (see ``Subject``). All members are thread-safe.
///
/// `T` and `E` are `Sendable`: a subject may replay stored values to
/// subscribers on other threads.
public final class MulticastConnection<T: Sendable, E: Sendable>: Sendable {
    // Immutable apart from `connected` (an atomic once-flag), `connection` (a
    // `MetaDisposable`) and `autoconnectCount` (an atomic).
    /// The hot signal subscribers start: the subject's signal.
    public let signal: Signal<T, E>

    private let source: Signal<T, E>
    private let subject: Subject<T, E>
    private let connected = _OnceFlag()
    private let connection = MetaDisposable()
    private let autoconnectCount = Synchronization.Atomic<Int>(0)

    init(source: Signal<T, E>, subject: Subject<T, E>) {
        self.source = source
        self.subject = subject
        signal = subject.signal()
    }

    /// Subscribes the subject to the source, the first time it is called.
    ///
    /// Idempotent: the source is subscribed at most once, and every call
    /// returns the same disposable. Disposing it disposes the source
    /// subscription (exactly once) and does not terminate the subject: its
    /// subscribers simply receive nothing more (a ``ReplaySubject`` still
    /// replays what it kept). A connection is never re-established.
    ///
    /// - Returns: the connection's disposable (the same object every time).
    ///   A concurrent call may return it before the first call finished
    ///   subscribing; disposing it then disposes the subscription as soon as
    ///   it exists.
    @discardableResult
    public func connect() -> any Disposable {
        if connected.set() {
            connection.set(subject.subscribe(to: source))
        }
        return connection
    }

    /// The subject's signal, connecting on its first subscription and
    /// disconnecting when it has no subscriber left, once: it never
    /// reconnects.
    ///
    /// Marble (with `publish`): source `"-a-b-c-d-"`; subscriber 1 from `a`
    /// to `b`, subscriber 2 after `c` → subscriber 1 `"a-b"`, subscriber 2
    /// `""` (the connection was disposed when subscriber 1 left).
    ///
    /// **Never reconnects (RAC semantics).** Each subscriber increments a
    /// count shared by every autoconnect signal of this connection; the
    /// first one also calls ``connect()``. When a subscription ends
    /// (disposal, or termination) the count goes down, and when it reaches 0
    /// the connection is disposed. A later subscriber calls `connect()`
    /// again, which does nothing: with `publish` it receives nothing, ever;
    /// with a ``ReplaySubject`` it receives the replay and nothing after.
    /// SwiftSignalKit's ``Multicast`` behaves differently: each `get(key:signal:)`
    /// subscription starts its own upstream subscription.
    ///
    /// - Returns: a signal that subscribes to the subject, then connects.
    ///
    /// **Threading:** the first subscriber connects on its own thread,
    /// inside `start`.
    ///
    /// **Termination:** the subject's; a subscription that terminates counts
    /// as gone.
    ///
    /// **Disposal:** disposing a subscription removes it from the subject;
    /// disposing the last one disposes the connection.
    public func autoconnect() -> Signal<T, E> {
        let subject = self.subject
        return Signal { [self] subscriber in
            autoconnectCount.add(1, ordering: .acquiringAndReleasing)
            // Subscribe first, so that what the source sends synchronously
            // on connection reaches this subscriber.
            let subscription = subject.core.subscribe(subscriber)
            let connection = connect()
            return ActionDisposable { [self] in
                subscription.dispose()
                if autoconnectCount.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 {
                    connection.dispose()
                }
            }
        }
    }
}

/// Shares one subscription to the signal through a plain ``Subject``
/// (RAC's `-publish`): nothing flows until the connection's `connect()`.
///
/// Marble: source `"a-b-|"`, connect at the start → every subscriber of
/// `connection.signal` that was there: `"a-b-|"`; a late one: `""`.
///
/// - Parameters:
///   - signal: the cold source.
/// - Returns: a ``MulticastConnection`` over a new ``Subject``.
///
/// **Threading:** the source is subscribed by `connect()`, on the caller's
/// thread; events are delivered where the source sends them.
///
/// **Termination:** the source's terminal event reaches the current
/// subscribers; later subscribers receive nothing (a plain subject does not
/// remember it).
///
/// **Disposal:** disposing a subscriber leaves the source running; dispose
/// the disposable `connect()` returns to stop it (or use `autoconnect()`).
public func publish<T: Sendable, E: Sendable>(_ signal: Signal<T, E>) -> MulticastConnection<T, E> {
    MulticastConnection(source: signal, subject: Subject())
}

/// Shares one subscription to the signal through `subject` (RAC's
/// `-multicast:`); for example a ``ReplaySubject`` for late subscribers.
///
/// Marble (`ReplaySubject()`): source `"a-b-|"`, connected → a subscriber
/// that starts after the completion: `"(ab|)"`.
///
/// - Parameters:
///   - subject: the subject that receives the source's events and whose
///     signal becomes the connection's `signal`. It may already have
///     subscribers, and may be fed by other sources too; its first terminal
///     event ends it.
/// - Returns: a function from a signal to a ``MulticastConnection``.
///
/// **Threading:** as `publish`.
///
/// **Termination:** as the subject's (see ``Subject`` and
/// ``ReplaySubject``).
///
/// **Disposal:** as `publish`.
public func multicast<T: Sendable, E: Sendable>(_ subject: Subject<T, E>) -> (Signal<T, E>) -> MulticastConnection<T, E> {
    { signal in
        MulticastConnection(source: signal, subject: subject)
    }
}
