// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Synchronization

/// A subject that remembers: ReactiveCocoa's `RACReplaySubject`.
///
/// Keeps the last `capacity` values (all of them by default) and the terminal
/// event. A new subscriber first receives the remembered values, in order,
/// then, if the subject has terminated, the terminal event; otherwise it
/// goes on with the live events. Values are never missed or duplicated
/// between the replay and the live events, even when a subscription races a
/// send on another thread.
///
/// ```swift
/// let subject = ReplaySubject<Int, NoError>(capacity: 2)
/// subject.putNext(1)
/// subject.putNext(2)
/// subject.putNext(3)
/// subject.putCompletion()
/// let handle = subject.signal().start(next: { print($0) }, completed: { print("done") })
/// // 2, 3, done
/// ```
///
/// **After termination:** remembered values and the terminal event are
/// replayed to every later subscriber, synchronously inside `start`. Sends
/// after the terminal event are ignored (they do not change the buffer).
///
/// **Delivery order:** live events go to subscribers in subscription order.
/// A subscriber added during a delivery gets that value through its replay
/// (if the value was already stored) or not at all, never twice.
///
/// **Threading:** as ``Subject``: delivery is synchronous on the sender's
/// thread, outside the lock; sends are expected serially (concurrent sends
/// are memory-safe). The replay runs on the subscribing thread, inside
/// `start`; live events that arrive meanwhile are queued for that
/// subscriber and delivered, in order, by the subscribing thread before
/// the subscriber gets live events directly.
///
/// **Memory:** the buffer holds up to `capacity` values for the subject's
/// whole life; with the default (unlimited) capacity it grows with every
/// value.
public final class ReplaySubject<T, E>: Subject<T, E> {

    /// The number of values kept for replay (`Int.max`: unlimited).
    public let capacity: Int

    /// Creates a replay subject.
    ///
    /// - Parameters:
    ///   - capacity: how many of the latest values are replayed; `Int.max`
    ///     (the default) keeps them all, `1` keeps only the latest, `0` keeps
    ///     none (only the terminal event is replayed). Must not be negative.
    public init(capacity: Int = .max) {
        _signalKitRequire(
            capacity >= 0,
            "ReplaySubject(capacity:): capacity must be 0 or more (Int.max for unlimited), got \(capacity)"
        )
        self.capacity = capacity
        super.init(core: _ReplaySubjectCore<T, E>(capacity: capacity))
    }
}

// ---------------------------------------------------------------------------
// Internals
// ---------------------------------------------------------------------------

/// A terminal event, remembered.
enum _Terminal<E> {
    case error(E)
    case completion
}

/// The last `capacity` values: a ring once full.
struct _ReplayBuffer<T> {
    let capacity: Int
    private var storage: [T] = []
    /// Index of the oldest value once the ring is full.
    private var head = 0

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// Appends `value`; returns the value it evicts (for the caller to
    /// release outside its lock).
    mutating func append(_ value: T) -> T? {
        if capacity == 0 { return value }
        if storage.count < capacity {
            storage.append(value)
            return nil
        }
        let evicted = storage[head]
        storage[head] = value
        head += 1
        if head == capacity { head = 0 }
        return evicted
    }

    /// The values, oldest first. O(1) (copy on write) until the ring wraps.
    var values: [T] {
        head == 0 ? storage : Array(storage[head...] + storage[..<head])
    }
}

/// The replaying subject's state.
///
/// `@unchecked Sendable`: `buffer` and `terminal` (and every entry's pending
/// queue) are guarded by `mutex`; `subscribers` is CSignalRuntime's bag.
final class _ReplaySubjectCore<T, E>: _SubjectCore<T, E>, @unchecked Sendable {
    let mutex = _Mutex()
    private var buffer: _ReplayBuffer<T>
    private var terminal: _Terminal<E>?
    private let subscribers = _SubscriberBag<_ReplayEntry<T, E>>()

    init(capacity: Int) {
        buffer = _ReplayBuffer(capacity: capacity)
    }

    deinit {
        // Each subscription's entry refers to the bag: empty it, or the
        // subscriptions would keep each other alive through it.
        subscribers.close()
        subscribers.removeAll()
        mutex.destroy()
    }

    override var isTerminated: Bool {
        mutex.withLock { terminal != nil }
    }

    override func subscribe(_ subscriber: Subscriber<T, E>) -> any Disposable {
        mutex.lock()
        let values = buffer.values
        let terminal = self.terminal
        var entry: _ReplayEntry<T, E>?
        var key: UInt64?
        if terminal == nil {
            // Live: insert now (under the lock, so no send falls between the
            // copy above and the insertion); live events are queued in the
            // entry until the replay is done.
            let created = _ReplayEntry(subscriber: subscriber, mutex: mutex)
            key = subscribers.insert(created)
            entry = created
        }
        mutex.unlock()
        if let key {
            subscriber.registerSourceEntry(bag: subscribers, key: key, owner: nil)
        }
        for value in values {
            subscriber.putNext(value)
        }
        if let terminal {
            _deliver(terminal, to: subscriber)
        } else {
            entry?.finishReplay()
        }
        return EmptyDisposable
    }

    override func putNext(_ value: T) {
        mutex.lock()
        guard terminal == nil else {
            mutex.unlock()
            return
        }
        let evicted = buffer.append(value)
        var read = subscribers.beginRead()
        mutex.unlock()
        withExtendedLifetime(evicted) {}  // released here, outside the lock
        subscribers.finishRead(&read) { $0.putNext(value) }
    }

    override func putError(_ error: E) {
        terminate(.error(error))
    }

    override func putCompletion() {
        terminate(.completion)
    }

    private func terminate(_ event: _Terminal<E>) {
        mutex.lock()
        guard terminal == nil else {
            mutex.unlock()
            return
        }
        terminal = event
        // Later subscribers get the replay instead.
        subscribers.close()
        var read = subscribers.beginRead()
        mutex.unlock()
        subscribers.finishRead(&read) { $0.put(event) }
        disposeFeeders()
    }
}

@inline(__always)
func _deliver<T, E>(_ terminal: _Terminal<E>, to subscriber: Subscriber<T, E>) {
    switch terminal {
    case .error(let error): subscriber.putError(error)
    case .completion: subscriber.putCompletion()
    }
}

/// One subscriber of a replay subject. While its replay runs (on the
/// subscribing thread), live events are queued here; afterwards they go
/// straight to the subscriber.
///
/// `@unchecked Sendable`: `pending` is guarded by the subject's `mutex`;
/// `replaying` is an atomic that only goes from true to false, under that
/// mutex.
final class _ReplayEntry<T, E>: @unchecked Sendable {
    private enum Pending {
        case next(T)
        case terminal(_Terminal<E>)
    }

    let subscriber: Subscriber<T, E>
    /// The subject's mutex. Used only while the subject is alive: from its
    /// delivery (a send) or its subscription (the replay).
    private let mutex: _Mutex
    private let replaying = Synchronization.Atomic<Bool>(true)
    private var pending: [Pending] = []

    init(subscriber: Subscriber<T, E>, mutex: _Mutex) {
        self.subscriber = subscriber
        self.mutex = mutex
    }

    func putNext(_ value: T) {
        if queuedWhileReplaying(.next(value)) { return }
        subscriber.putNext(value)
    }

    func put(_ terminal: _Terminal<E>) {
        if queuedWhileReplaying(.terminal(terminal)) { return }
        _deliver(terminal, to: subscriber)
    }

    /// Queues `event` while the replay runs; false once it has finished (the
    /// caller delivers the event itself).
    @inline(__always)
    private func queuedWhileReplaying(_ event: @autoclosure () -> Pending) -> Bool {
        guard replaying.load(ordering: .acquiring) else { return false }
        mutex.lock()
        defer { mutex.unlock() }
        guard replaying.load(ordering: .relaxed) else { return false }
        pending.append(event())
        return true
    }

    /// Called by the subscribing thread after the replay: delivers what was
    /// queued meanwhile, then switches to direct delivery.
    func finishReplay() {
        while true {
            mutex.lock()
            if pending.isEmpty {
                replaying.store(false, ordering: .releasing)
                mutex.unlock()
                return
            }
            let batch = pending
            pending = []
            mutex.unlock()
            for event in batch {
                switch event {
                case .next(let value): subscriber.putNext(value)
                case .terminal(let terminal): _deliver(terminal, to: subscriber)
                }
            }
        }
    }
}

// `@unchecked`: immutable; the state it refers to is thread-safe (restated
// from `Subject`).
extension ReplaySubject: @unchecked Sendable where T: Sendable, E: Sendable {}
