// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Synchronization

/// A hot signal driven by hand: ReactiveCocoa's `RACSubject`.
///
/// `putNext`, `putError` and `putCompletion` deliver the event to the
/// subscribers subscribed at that moment; nothing is remembered. A subject
/// can also be fed by other signals (`subscribe(to:)`), which is how
/// `publish` and `multicast(_:)` turn a cold signal hot.
///
/// ```swift
/// let subject = Subject<String, NoError>()
/// let first = subject.signal().start(next: { print("1:", $0) })
/// subject.putNext("a")                     // 1: a
/// let second = subject.signal().start(next: { print("2:", $0) })
/// subject.putNext("b")                     // 1: b, 2: b
/// subject.putCompletion()
/// ```
///
/// **Grammar:** any number of values, then at most one error or completion;
/// everything sent after the first terminal event is ignored.
///
/// **After termination:** the subject does not remember that it terminated
/// (RAC semantics). Starting its signal later delivers nothing, not even the
/// terminal event: the late subscription ends silently at once (its callbacks
/// are released, as when a source drops its subscriber). `subscribe(to:)`
/// does not subscribe the source any more. Use a ``ReplaySubject`` to hand
/// late subscribers the values and the terminal event.
///
/// **Delivery order:** subscribers are called in subscription order. A
/// subscriber added while an event is being delivered does not receive that
/// event; one removed during a delivery (its handle disposed) receives
/// nothing more.
///
/// **Threading:** events are delivered synchronously on the thread that sends
/// them, outside any lock. Like a ``Subscriber``, a subject expects its
/// events serially (one call at a time, from any thread): concurrent sends
/// are memory-safe, but each subscriber may then see values concurrently
/// and in an unspecified order. Subscribing and disposing are safe from any
/// thread at any time, including during a delivery.
///
/// **Lifetime:** the subject's signal and the subscriptions of its feeders
/// (`subscribe(to:)`) keep the subject's state alive; a subscription does
/// not. When nothing refers to the state any more, its subscriptions end
/// silently.
///
/// `Sendable` when `T` and `E` are.
public class Subject<T, E> {
    let core: _SubjectCore<T, E>
    private let sharedSignal: Signal<T, E>

    /// Creates a plain subject (no replay).
    public convenience init() {
        self.init(core: _PlainSubjectCore<T, E>())
    }

    init(core: _SubjectCore<T, E>) {
        self.core = core
        sharedSignal = Signal { [core] subscriber in
            core.subscribe(subscriber)
        }
    }

    /// The subject's hot signal (the same object every time). Starting it
    /// subscribes to the subject's future events (for a ``ReplaySubject``,
    /// after a replay).
    public func signal() -> Signal<T, E> {
        sharedSignal
    }

    /// Delivers `value` to every current subscriber. Ignored after
    /// termination.
    public func putNext(_ value: T) {
        core.putNext(value)
    }

    /// Terminates the subject with `error`: delivers it to every current
    /// subscriber, then disposes the feeder subscriptions
    /// (`subscribe(to:)`). Ignored after termination.
    public func putError(_ error: E) {
        core.putError(error)
    }

    /// Terminates the subject with completion: delivers it to every current
    /// subscriber, then disposes the feeder subscriptions
    /// (`subscribe(to:)`). Ignored after termination.
    public func putCompletion() {
        core.putCompletion()
    }

    /// Feeds the subject from `source` (RAC's `[source subscribe:subject]`):
    /// subscribes to `source` now and forwards its values, its error and its
    /// completion to the subject.
    ///
    /// A subject may have several feeders; the first terminal event from any
    /// of them (or from `putError` / `putCompletion`) terminates the subject
    /// and disposes every feeder subscription.
    ///
    /// - Parameters:
    ///   - source: the signal to forward; subscribed once, synchronously, on
    ///     the caller's thread (what it sends synchronously is delivered
    ///     before this returns).
    /// - Returns: a disposable that disposes the subscription to `source`
    ///   (the subject itself stays open). If the subject has already
    ///   terminated, `source` is not subscribed and the result does nothing.
    @discardableResult
    public func subscribe(to source: Signal<T, E>) -> any Disposable {
        core.attach(source)
    }
}

// `@unchecked`: immutable; the state it refers to is thread-safe.
extension Subject: @unchecked Sendable where T: Sendable, E: Sendable {}

// ---------------------------------------------------------------------------
// Internals
// ---------------------------------------------------------------------------

/// The state of a subject: subscribers, events, feeders. Subclasses implement
/// delivery; the base class keeps the feeder subscriptions.
///
/// `@unchecked Sendable`: the feeder table is guarded by its `_LockedState`;
/// the subclasses name their own guards.
class _SubjectCore<T, E>: @unchecked Sendable {
    private struct Feeders {
        var handles: [UInt64: any Disposable] = [:]
        var nextKey: UInt64 = 0
        var closed = false
    }

    private let feeders = _LockedState(Feeders())

    init() {}

    /// Adds `subscriber` (a generator's subscriber); returns the generator's
    /// disposable.
    func subscribe(_ subscriber: Subscriber<T, E>) -> any Disposable {
        preconditionFailure("_SubjectCore.subscribe is abstract")  // invariant
    }

    func putNext(_ value: T) {}
    func putError(_ error: E) {}
    func putCompletion() {}

    /// Whether the subject has terminated.
    var isTerminated: Bool { false }

    /// See `Subject.subscribe(to:)`.
    final func attach(_ source: Signal<T, E>) -> any Disposable {
        if isTerminated { return EmptyDisposable }
        let handle = source._start(_ForwardSink(downstream: self))
        let added = feeders.withLock { feeders -> UInt64? in
            // Closed: the subject terminated meanwhile (perhaps through this
            // source).
            guard !feeders.closed else { return nil }
            let key = feeders.nextKey
            feeders.nextKey += 1
            feeders.handles[key] = handle
            return key
        }
        guard let key = added else {
            handle.dispose()
            return EmptyDisposable
        }
        return ActionDisposable { [self] in
            let removed = feeders.withLock { $0.handles.removeValue(forKey: key) }
            removed?.dispose()
        }
    }

    /// Disposes every feeder subscription and refuses new ones. Subclasses
    /// call it once, after delivering the terminal event.
    final func disposeFeeders() {
        let taken = feeders.withLock { feeders in
            feeders.closed = true
            defer { feeders.handles = [:] }
            return feeders.handles
        }
        for (_, handle) in taken.sorted(by: { $0.key < $1.key }) {
            handle.dispose()
        }
    }
}

/// A plain subject: forwards to the current subscribers, remembers nothing.
///
/// `@unchecked Sendable`: `subscribers` is CSignalRuntime's lock-free bag;
/// `terminated` is an atomic once-flag.
final class _PlainSubjectCore<T, E>: _SubjectCore<T, E>, @unchecked Sendable {
    private let subscribers = _SubscriberBag<Subscriber<T, E>>()
    private let terminated = _OnceFlag()

    deinit {
        // Each subscription's entry refers to the bag: empty it, or the
        // subscriptions would keep each other alive through it.
        subscribers.close()
        subscribers.removeAll()
    }

    override var isTerminated: Bool { terminated.isSet }

    override func subscribe(_ subscriber: Subscriber<T, E>) -> any Disposable {
        // A closed bag (terminated subject) refuses the subscriber: it is
        // released when the generator returns, which ends it silently.
        guard let key = subscribers.insert(subscriber) else { return EmptyDisposable }
        subscriber.registerSourceEntry(bag: subscribers, key: key, owner: nil)
        return EmptyDisposable
    }

    override func putNext(_ value: T) {
        // After termination the bag is closed and every subscriber in it is
        // terminated: nothing is delivered, no check needed.
        subscribers.forEach { $0.putNext(value) }
    }

    override func putError(_ error: E) {
        guard terminated.set() else { return }
        // Close first: a subscriber inserted before the close is in the walk
        // below; one inserted after it is refused.
        subscribers.close()
        subscribers.forEach { $0.putError(error) }
        disposeFeeders()
    }

    override func putCompletion() {
        guard terminated.set() else { return }
        subscribers.close()
        subscribers.forEach { $0.putCompletion() }
        disposeFeeders()
    }
}

/// A `_ForwardSink` forwards a feeder's events to a subject. The subject has
/// any number of subscribers, so the sink names no downstream subscription.
extension _SubjectCore: _EventReceiver {
    typealias Value = T
    typealias Failure = E
    var _forwardedSubscription: _SubscriptionBase? { nil }
}
