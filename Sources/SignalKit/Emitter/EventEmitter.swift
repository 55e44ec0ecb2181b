// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Synchronization

/// A typed, hot event emitter in the style of Uber Signals: observers tied to
/// the lifetime of an owner object receive every ``fire(_:)``.
///
/// The arguments are a parameter pack, so an emitter carries any number of
/// values of any types, Optionals included:
///
/// ```swift
/// final class NetworkRequest {
///     let onNetworkResult = EventEmitter<[UInt8]?, NetworkError?>()
///
///     func receivedNetworkResult(_ data: [UInt8]?, _ error: NetworkError?) {
///         onNetworkResult.fire(data, error)
///     }
/// }
///
/// final class ResultView: Sendable {
///     init(request: NetworkRequest) {
///         request.onNetworkResult.addObserver(self) { view, data, error in
///             view.show(data, error)   // `view` is `self`, held strongly for this call
///         }
///     }
///
///     func show(_ data: [UInt8]?, _ error: NetworkError?) {}
/// }
/// ```
///
/// `EventEmitter< >` (with a space) fires without arguments.
///
/// **Owners.** ``addObserver(_:queue:lifetime:callback:)`` holds the owner
/// weakly, so registering never creates a retain cycle, and passes it back to
/// the callback as the first argument (no weak/strong dance). When the owner
/// is deallocated its registrations are removed lazily: the next `fire`,
/// `addObserver` or `removeObserver` purges them and calls
/// ``observerRemoved`` for each; until then ``observerCount`` still counts
/// them. A ``Lifetime`` removes them eagerly instead.
///
/// **Delivery.** `fire` delivers to a snapshot of the registrations present
/// when it starts, in registration order, then to the subscribers of
/// ``signal()``. An observer added during a fire (for example by a callback)
/// does not receive that fire; an observer removed during a fire receives
/// nothing after its removal. Each observer's ``EventObserver/queue`` decides
/// where its callback runs: nil or current → synchronously inside `fire`,
/// otherwise asynchronously on that queue. During a delivery the owner is
/// held strongly, including across the queue hop; afterwards the emitter
/// does not retain it.
///
/// **Threading.** Every member is safe from any thread, and from inside
/// callbacks and hooks (add, remove, cancel, fire re-entrantly). Delivering
/// takes no lock: the observer list is CSignalRuntime's lock-free bag (a
/// fire walks a snapshot while other threads add and remove), the last data
/// and each observer's queue are lock-free atomic references. No lock is
/// held while a callback, a hook or a value's `deinit` runs. Concurrent fires deliver concurrently (as
/// SwiftSignalKit's `ValuePipe`): fire from one thread, or give observers a
/// serial queue, when order matters.
///
/// **Sendable.** Argument types are `Sendable`: the arguments of one fire are
/// stored once, immutable, and handed to every observer: to callbacks on the
/// firing thread and, through their queues, on other threads. An observer's
/// owner is `Sendable` too (a main-actor or actor-isolated object, or a
/// thread-safe class), since its callback receives it on those threads.
///
/// **Lifetime.** Nothing keeps an emitter alive but its owner's references:
/// observer tokens hold it weakly and ``signal()`` does not reference it.
/// When it is released, `cancel()` and `firePreviousData()` on its tokens do
/// nothing (a token is not marked cancelled until `cancel()` is called), the
/// subscriptions to its signal end silently, and deliveries already
/// dispatched to observers' queues still run.
///
/// Differences from Uber Signals, all deliberate: no 5-argument limit and no
/// object-only restriction (packs, not `id` varargs); ``EventObserver/cancelsAfterNextFire``
/// delivers exactly once even with queued deliveries; `observerRemoved` is
/// called once per registration (Uber calls it on every `cancel`); a removed
/// observer is never delivered to again, also by `fire(for:)` and
/// `firePreviousData()`; `fire(for:)` requires a token of this emitter.
public final class EventEmitter<each Argument: Sendable>: CustomDebugStringConvertible, Sendable, _EventObserverHost {
    // `observers` and `subscribers` are CSignalRuntime's thread-safe bags;
    // `lastData` is an atomic strong reference; `settings` is guarded by
    // `_LockedState`; the rest is immutable.
    private let observers = _SubscriberBag<EventObserver>()
    private let subscribers: _SubscriberBag<Subscriber<(repeat each Argument), NoError>>
    private let sharedSignal: Signal<(repeat each Argument), NoError>
    /// The last fired arguments, or nil (lock-free to store and to read).
    private let lastData = _AtomicReference<_EventArguments<repeat each Argument>>()
    /// Whether the emitter has arguments (arity 0 keeps no data).
    private let keepsLastData: Bool
    private let settings = _LockedState(_EventEmitterSettings())

    /// Creates an emitter with no observers, no last data and
    /// ``maxObservers`` 100.
    public init() {
        let subscribers = _SubscriberBag<Subscriber<(repeat each Argument), NoError>>()
        self.subscribers = subscribers
        // The signal holds the bag, not the emitter (like ValuePipe): the
        // emitter empties and closes the bag when it dies, which ends every
        // subscription.
        sharedSignal = Signal { subscriber in
            guard let key = subscribers.insert(subscriber) else { return EmptyDisposable }
            subscriber.registerSourceEntry(bag: subscribers, key: key, owner: nil)
            return EmptyDisposable
        }
        keepsLastData = _packCount(repeat (each Argument).self) > 0
    }

    deinit {
        subscribers.close()
        subscribers.removeAll()
        observers.close()
        observers.removeAll()
    }

    // MARK: Firing

    /// Delivers the arguments to every current observer, then to the
    /// subscribers of ``signal()``.
    ///
    /// Stores the arguments as the last data (unless the emitter has no
    /// arguments) before delivering, for ``EventObserver/firePreviousData()``.
    /// Purges registrations whose owner was deallocated, calling
    /// ``observerRemoved`` for each.
    ///
    /// - Parameter arguments: the values, in the order of the emitter's type
    ///   parameters.
    ///
    /// Threading: synchronous observers run on the calling thread before
    /// `fire` returns; queued ones are dispatched (`fire` does not wait for
    /// them). Takes no lock. Re-entrant.
    public func fire(_ arguments: repeat each Argument) {
        let box = _EventArguments<repeat each Argument>(repeat each arguments)
        remember(box)
        observers.forEach { registration in
            if let owner = registration.owner {
                registration.deliver(box, owner: owner)
            } else {
                _ = registration.detach(notify: true)
            }
        }
        subscribers.forEach { $0.putNext(box.values) }
    }

    /// Delivers the arguments to one observer only (not to the other
    /// observers, nor to the ``signal()``), through its normal delivery path
    /// (queue, ``EventObserver/cancelsAfterNextFire``). Also stores them as
    /// the last data, as Uber Signals does.
    ///
    /// A removed observer receives nothing; one whose owner was deallocated
    /// is purged instead.
    ///
    /// - Parameters:
    ///   - observer: a token this emitter returned. Passing another
    ///     emitter's token is a programming error (a precondition failure).
    ///   - arguments: the values.
    public func fire(for observer: EventObserver, _ arguments: repeat each Argument) {
        guard let emitter = observer.emitter, emitter === self else {
            _signalKitMisuse(
                "EventEmitter.fire(for:): \(observer.debugDescription) was not added to this emitter "
                    + "(\(_emitterTypeName)); pass a token returned by this emitter's addObserver"
            )
        }
        let box = _EventArguments<repeat each Argument>(repeat each arguments)
        remember(box)
        if let owner = observer.owner {
            observer.deliver(box, owner: owner)
        } else {
            _ = observer.detach(notify: true)
        }
    }

    /// The emitter as a hot ``Signal`` (the same object every time): each
    /// fire is delivered to its subscribers as one value, the arguments as a
    /// tuple (a single argument as itself, none as `()`). It never completes
    /// or fails, does not replay, and does not keep the emitter alive; when
    /// the emitter is released, its subscriptions end silently.
    ///
    /// ```swift
    /// let handle = (request.onNetworkResult.signal()
    ///     |> map { data, error in error == nil }
    ///     |> filter { $0 }
    /// ).start(next: { _ in print("success") })
    /// ```
    ///
    /// Subscribers are not observers: they do not count in ``observerCount``
    /// and receive nothing from ``fire(for:_:)`` or `firePreviousData()`.
    /// Within one fire they are called after the observers, on the firing
    /// thread.
    public func signal() -> Signal<(repeat each Argument), NoError> {
        sharedSignal
    }

    // MARK: Observers

    /// Registers `callback` to run on every fire while `owner` lives.
    ///
    /// - Parameters:
    ///   - owner: the object the registration is tied to, held weakly. The
    ///     registration ends when it is deallocated (lazily, see the type's
    ///     documentation), or when removed through the token,
    ///     ``removeObserver(_:)`` or ``removeAllObservers()``.
    ///   - queue: where the callback runs (``EventObserver/queue``): nil
    ///     (the default) or a queue that is current when firing → inside
    ///     `fire`; otherwise asynchronously on `queue`. Changeable later
    ///     through the token.
    ///   - lifetime: optional; when it ends (typically when the object that
    ///     holds it is deallocated), the registration is cancelled at once.
    ///   - callback: receives the owner (strongly held for the duration of
    ///     the call, including a queue hop) and the fired arguments. It is
    ///     held strongly by the token until the token is released; it need
    ///     not, and should not, capture the owner.
    /// - Returns: the registration's token. Ignoring it is fine.
    ///
    /// Calls ``observerAdded`` with the token. Exceeding ``maxObservers`` is
    /// reported (debug assertion or ``maxObserversHandler``) but the observer
    /// is still added. An observer added during a fire does not receive it.
    @discardableResult
    public func addObserver<Owner: AnyObject & Sendable>(
        _ owner: Owner,
        queue: Queue? = nil,
        lifetime: Lifetime? = nil,
        callback: @escaping @Sendable (Owner, repeat each Argument) -> Void
    ) -> EventObserver {
        purgeDeallocatedOwners()
        let registration = EventObserver(emitter: self, owner: owner, queue: queue) { owner, arguments in
            // The token only ever passes its own owner back, and this
            // emitter's arguments box.
            let arguments = unsafeDowncast(arguments, to: _EventArguments<repeat each Argument>.self)
            callback(unsafeDowncast(owner, to: Owner.self), repeat each arguments.values)
        }
        guard let key = observers.insert(registration) else {
            _signalKitMisuse("EventEmitter.addObserver: the observer list is closed (the emitter is being deallocated)")
        }
        // A removal that raced with the insertion may have missed the key
        // (see `EventObserver.detach`).
        registration.key.store(key, ordering: .sequentiallyConsistent)
        if registration.isCancelledAfterInsert {
            observers.remove(key)
        }
        let (limit, added) = settings.withLock { ($0.maxObservers, $0.observerAdded) }
        let count = observers.count
        if count > limit {
            reportObserverLimit(
                "EventEmitter.addObserver: \(count) observers exceed maxObservers (\(limit)) on \(_emitterTypeName); "
                    + "observers are leaking (remove them, or tie them to owners that go away), or raise maxObservers"
            )
        }
        added?(registration)
        lifetime?.add(registration)
        return registration
    }

    /// Removes every registration whose owner is `owner` (and purges those
    /// whose owner was deallocated), calling ``observerRemoved`` for each.
    public func removeObserver(_ owner: AnyObject) {
        observers.forEach { registration in
            if let current = registration.owner {
                if current === owner { _ = registration.detach(notify: true) }
            } else {
                _ = registration.detach(notify: true)
            }
        }
    }

    /// Removes every registration without calling ``observerRemoved`` (as
    /// Uber Signals does). Their tokens report ``EventObserver/isCancelled``.
    /// Subscriptions to ``signal()`` are not affected.
    public func removeAllObservers() {
        observers.forEach { registration in
            _ = registration.detach(notify: false)
        }
    }

    /// The number of registrations, including those whose owner was
    /// deallocated but that were not purged yet (see the type's
    /// documentation). A snapshot: other threads may change it at once.
    public var observerCount: Int {
        observers.count
    }

    /// The number of registrations above which adding one is reported as a
    /// probable leak (default 100). Lowering it below ``observerCount`` is
    /// reported too.
    ///
    /// A report calls ``maxObserversHandler`` if set; otherwise it is an
    /// `assertionFailure` (debug builds stop with a message naming the
    /// emitter, the count and the limit; release builds ignore it). Nothing is
    /// refused either way.
    public var maxObservers: Int {
        get { settings.withLock { $0.maxObservers } }
        set {
            settings.withLock { $0.maxObservers = newValue }
            let count = observers.count
            if count > newValue {
                reportObserverLimit(
                    "EventEmitter.maxObservers: lowered to \(newValue) below the current \(count) observers on "
                        + "\(_emitterTypeName); remove observers first, or keep the limit above the count"
                )
            }
        }
    }

    /// Called with a message instead of the debug assertion when
    /// ``maxObservers`` is exceeded or lowered below the count (in every build
    /// configuration): log it, count it, or fail a test. Runs on the thread
    /// that added the observer or set the limit, with no lock held.
    public var maxObserversHandler: (@Sendable (_ message: String) -> Void)? {
        get { settings.withLock { $0.maxObserversHandler } }
        set { replaceSetting { $0.maxObserversHandler = newValue } }
    }

    /// Called with the token after each ``addObserver(_:queue:lifetime:callback:)``,
    /// on the adding thread, with no lock held.
    public var observerAdded: (@Sendable (EventObserver) -> Void)? {
        get { settings.withLock { $0.observerAdded } }
        set { replaceSetting { $0.observerAdded = newValue } }
    }

    /// Called with the token once per registration when it is removed by
    /// ``EventObserver/cancel()`` (or `dispose()`, or a ``Lifetime``), by an
    /// ``EventObserver/cancelsAfterNextFire`` delivery (before its callback),
    /// by ``removeObserver(_:)``, or when a registration whose owner was
    /// deallocated is purged. Not called by ``removeAllObservers()``. Runs on
    /// the removing thread (for a purge, inside `fire`, `addObserver` or
    /// `removeObserver`), with no lock held.
    public var observerRemoved: (@Sendable (EventObserver) -> Void)? {
        get { settings.withLock { $0.observerRemoved } }
        set { replaceSetting { $0.observerRemoved = newValue } }
    }

    /// The emitter's type, address, observers and signal subscribers.
    public var debugDescription: String {
        var lines: [String] = []
        observers.forEach { lines.append("  " + $0.debugDescription) }
        var description =
            "\(_emitterTypeName)(\(_address(of: self)), observers: \(lines.count), signal subscribers: \(subscribers.count)"
        description += lines.isEmpty ? ")" : ")\n" + lines.joined(separator: "\n")
        return description
    }

    // MARK: Internal

    /// Removes a detached registration's entry and calls the hook.
    func unregister(_ registration: EventObserver, notify: Bool) {
        let key = registration.key.load(ordering: .sequentiallyConsistent)
        if key != 0 {
            observers.remove(key)
        }
        if notify, let removed = settings.withLock({ $0.observerRemoved }) {
            removed(registration)
        }
    }

    /// The last fired arguments, or nil if there are none.
    func lastArguments() -> _EventArgumentsBase? {
        keepsLastData ? lastData.load() : nil
    }

    /// Stores the arguments as the last data. The previous arguments are
    /// released outside any lock (their deinit may run user code).
    private func remember(_ arguments: _EventArguments<repeat each Argument>) {
        guard keepsLastData else { return }
        lastData.store(arguments)
    }

    /// Removes registrations whose owner was deallocated (with hooks).
    private func purgeDeallocatedOwners() {
        observers.forEach { registration in
            if registration.owner == nil { _ = registration.detach(notify: true) }
        }
    }

    private func reportObserverLimit(_ message: String) {
        if let handler = settings.withLock({ $0.maxObserversHandler }) {
            handler(message)
        } else {
            assertionFailure(message)
        }
    }

    /// Changes a setting; the replaced closure is released after the lock.
    private func replaceSetting(_ change: (inout _EventEmitterSettings) -> Void) {
        let previous = settings.withLock { (settings: inout _EventEmitterSettings) -> _EventEmitterSettings in
            let previous = settings
            change(&settings)
            return previous
        }
        withExtendedLifetime(previous) {}
    }

    private var _emitterTypeName: String {
        "EventEmitter<" + _packTypeNames(repeat (each Argument).self).joined(separator: ", ") + ">"
    }
}

/// The arguments of one fire, stored once and shared by every delivery of
/// that fire and by the last-data slot.
///
/// Immutable after `init`; shared by every observer of one fire.
final class _EventArguments<each Argument: Sendable>: _EventArgumentsBase, @unchecked Sendable {
    // `@unchecked Sendable`: immutable, and the values are `Sendable` (a
    // subclass cannot restate a checked conformance).
    let values: (repeat each Argument)

    init(_ values: repeat each Argument) {
        self.values = (repeat each values)
    }
}

/// The untyped base of `_EventArguments`, as tokens and their callbacks see
/// it.
///
/// `@unchecked Sendable`: no state (a non-final class cannot be checked).
class _EventArgumentsBase: @unchecked Sendable {}

/// An emitter's rarely changed settings (behind its `_LockedState`).
struct _EventEmitterSettings: Sendable {
    var maxObservers = 100
    var maxObserversHandler: (@Sendable (String) -> Void)?
    var observerAdded: (@Sendable (EventObserver) -> Void)?
    var observerRemoved: (@Sendable (EventObserver) -> Void)?
}

/// The number of types in a pack.
func _packCount<each T>(_ types: repeat (each T).Type) -> Int {
    var count = 0
    for _ in repeat each types { count += 1 }
    return count
}

/// The names of the types in a pack.
func _packTypeNames<each T>(_ types: repeat (each T).Type) -> [String] {
    var names: [String] = []
    for type in repeat each types { names.append(String(describing: type)) }
    return names
}

/// "0x…" for an object's address.
func _address(of object: AnyObject) -> String {
    "0x" + String(UInt(bitPattern: Unmanaged.passUnretained(object).toOpaque()), radix: 16)
}
